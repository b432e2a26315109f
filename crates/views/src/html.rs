//! The HTML report: one self-contained file (CSS, JS and data inlined; no
//! network) with a zoomable per-thread timeline, CPU utilisation over time,
//! self-time histograms per task class (log scale) with the findings, and the
//! class table.
//!
//! Large traces stay responsive because the Rust side sends the browser time
//! buckets per thread (`timeline::buckets`) plus at most
//! [`MAX_EXECUTIONS_SHOWN`] individual executions (the longest ones), never
//! every execution. Everything shown is computed by `weft-analysis`.

use std::fmt::Write as _;

use serde_json::{json, Value};
use weft_analysis::findings::class_site;
use weft_analysis::timeline::{self, Histogram, HISTOGRAM_BINS_PER_DECADE};
use weft_analysis::{human_ns, Analysis, TaskKind};

/// Individual executions embedded in the page; beyond this, the longest ones.
pub const MAX_EXECUTIONS_SHOWN: usize = 20_000;
/// Lock waits and other waits embedded in the page; beyond this, the longest ones.
pub const MAX_WAITS_SHOWN: usize = 20_000;
/// Time buckets per thread lane (fewer when there are many threads).
pub const MAX_BUCKETS: u32 = 2_000;
/// Upper bound of lanes × buckets.
pub const MAX_CELLS: u64 = 600_000;
/// Task classes that get a histogram.
pub const MAX_HISTOGRAMS: usize = 12;
/// Rows of the class table.
pub const MAX_CLASS_ROWS: usize = 60;

pub(crate) const CSS: &str = include_str!("../assets/report.css");
pub(crate) const JS: &str = include_str!("../assets/report.js");

/// The timeline's controls and canvases, drawn by the script from the page data
/// (the rest of the timeline section).
pub(crate) const TIMELINE_CANVASES: &str = "<div class=\"controls\"><button id=\"zin\" title=\"zoom in\">+</button><button id=\"zout\" title=\"zoom out\">−</button><button id=\"zreset\">whole recording</button>\
<span id=\"range\" class=\"muted\"></span><span class=\"hint\">wheel: zoom · drag: pan · double-click: reset · hover: details</span></div>\
<div id=\"legend\" class=\"legend\"></div>\
<div id=\"note\" class=\"muted small\"></div>\
<div id=\"timeline\" class=\"tl-wrap\"><canvas id=\"tl-canvas\"></canvas></div>\
<h3 id=\"cpu\">CPU utilisation</h3><div id=\"cpu-wrap\" class=\"tl-wrap\"><canvas id=\"cpu-canvas\"></canvas></div>\
<div id=\"tip\" class=\"tip\" hidden></div></section>\n";

/// One box of the summary row.
pub(crate) fn push_stat(h: &mut String, k: &str, v: &str) {
    let _ = write!(
        h,
        "<div class=\"stat\"><div class=\"v\">{}</div><div class=\"k\">{}</div></div>",
        esc(v),
        esc(k)
    );
}

/// Escapes text for HTML (and SVG) content and attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// The data the page's script draws (timeline, CPU).
pub(crate) fn page_data(a: &Analysis) -> Value {
    let m = &a.model;
    let dur = m.duration_ns.max(1);
    let lanes_n = m.threads.len().max(1) as u64;
    let nb = (MAX_CELLS / lanes_n).clamp(100, MAX_BUCKETS as u64) as u32;
    let buckets = timeline::buckets(&a.tasks, 0, dur, nb);
    let ex = &a.tasks.executions;
    let non_thread = ex.iter().filter(|e| e.kind != TaskKind::Thread).count();
    let shown = timeline::longest(&a.tasks, MAX_EXECUTIONS_SHOWN);
    let shown_tasks = shown
        .iter()
        .filter(|&&i| ex[i].kind != TaskKind::Thread)
        .count();
    let levels = timeline::levels(&a.tasks);
    let rows = timeline::class_rows(&a.tasks);
    let mut sites: Vec<String> = Vec::new();
    let mut site_idx = std::collections::HashMap::new();
    let mut site_of = |s: Option<&str>| -> i64 {
        match s {
            None => -1,
            Some(s) => *site_idx.entry(s.to_string()).or_insert_with(|| {
                sites.push(s.to_string());
                sites.len() as i64 - 1
            }),
        }
    };
    let (mut et, mut eb, mut ed, mut es, mut ec, mut el, mut eq, mut ecs, mut ess, mut ef) = (
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
    );
    for &i in &shown {
        let e = &ex[i];
        et.push(json!(e.thread));
        eb.push(json!(e.begin_ns));
        ed.push(json!(e.duration_ns()));
        es.push(json!(e.self_ns));
        ec.push(json!(if rows[i] == u32::MAX {
            -1
        } else {
            rows[i] as i64
        }));
        // Level -1: a thread execution, drawn as the lane's life band.
        el.push(json!(if e.kind == TaskKind::Thread {
            -1
        } else {
            levels[i] as i64
        }));
        eq.push(json!(e.queue_wait_ns().map_or(-1, |q| q as i64)));
        ecs.push(json!(site_of(e.created_site())));
        ess.push(json!(site_of(e.submitted_site())));
        ef.push(json!(
            u8::from(!e.reported()) | (u8::from(e.incomplete()) << 1)
        ));
    }
    let lanes: Vec<Value> = m
        .threads
        .values()
        .map(|t| {
            let cells = buckets
                .lanes
                .iter()
                .find(|l| l.thread == t.index)
                .map(|l| {
                    let mut v = Vec::with_capacity(l.cells.len() * 4);
                    for c in &l.cells {
                        v.push(json!(c.bucket));
                        // busy share of the bucket in 1/1000
                        v.push(json!((c.busy_ns * 1000)
                            .div_ceil(buckets.bucket_ns)
                            .min(1000)));
                        v.push(json!(c.begun));
                        v.push(json!(if c.top_class == u32::MAX {
                            -1
                        } else {
                            c.top_class as i64
                        }));
                    }
                    v
                })
                .unwrap_or_default();
            json!({
                "t": t.index,
                "name": t.display_name(),
                "s": t.start_ns.unwrap_or(t.first_ns),
                "e": t.end_ns.unwrap_or(m.duration_ns),
                "ended": t.end_ns.is_some(),
                "daemon": t.daemon,
                "cpu": t.cpu_ns,
                "cells": cells,
            })
        })
        .collect();
    let classes: Vec<Value> = a
        .tasks
        .classes
        .iter()
        .map(|c| json!({"n": c.class, "k": c.kind.as_str()}))
        .collect();
    let mut gc = Vec::new();
    for g in &m.gc_pauses {
        gc.push(json!(g.start_ns));
        gc.push(json!(g.end_ns));
    }
    let mut cpu = Vec::new();
    for p in &a.cpu.points {
        cpu.push(json!(p.start_ns));
        cpu.push(json!(p.end_ns));
        cpu.push(json!((p.utilisation * 1000.0).round() / 1000.0));
        cpu.push(json!((p.cs_per_100ms * 10.0).round() / 10.0));
    }
    let waits = waits_data(a);
    // CSP series of the lock groups the page charts, drawn on the timeline's axis.
    let csp: Vec<Value> = top_lock_groups(a)
        .into_iter()
        .map(|(i, l)| {
            let mut series = Vec::with_capacity(l.phases.len() * 2);
            for &(t, c) in &l.phases {
                series.push(json!(t));
                series.push(json!((c * 10_000.0).round() / 10_000.0));
            }
            json!({
                "c": i % 12,
                "iv": a.locks.interval_ns.max(1),
                // No peak box for a lock whose peak reads 0%.
                "pk": (l.max_phase_csp >= 0.005).then(|| json!([l.max_phase_start_ns, l.max_phase_csp])),
                "s": series,
            })
        })
        .collect();
    json!({
        "dur": dur,
        "waits": waits,
        "csp": csp,
        "bucket_ns": buckets.bucket_ns,
        "lanes": lanes,
        "classes": classes,
        "ex": {"t": et, "b": eb, "d": ed, "s": es, "c": ec, "l": el, "q": eq, "cs": ecs, "ss": ess, "f": ef},
        "sites": sites,
        "tasks_total": non_thread,
        "tasks_shown": shown_tasks,
        "gc": gc,
        "cpu": cpu,
        "cpus": a.cpu.cpus,
        "cpus_known": a.cpu.cpus_known,
        "profile": profile_data(a),
    })
}

/// Sampled stacks for the flame graph of the report (docs/sampling.md): frame
/// names, stacks root first (frame indices), the task classes and locks samples
/// are tied to, and rows `[stack, mode 0 cpu / 1 wall, class or -1, lock or -1,
/// samples]`; the page adds the rows a filter keeps into a tree.
fn profile_data(a: &Analysis) -> Value {
    use std::collections::HashMap;
    use weft_analysis::profile::Mode;
    let p = &a.profile;
    let mut frames: Vec<String> = Vec::new();
    let mut frame_ix: HashMap<String, usize> = HashMap::new();
    let mut stacks: Vec<Vec<usize>> = Vec::new();
    let mut stack_ix: HashMap<u32, usize> = HashMap::new();
    let mut classes: Vec<String> = Vec::new();
    let mut class_ix: HashMap<&str, i64> = HashMap::new();
    let mut locks: Vec<String> = Vec::new();
    let mut lock_ix: HashMap<usize, i64> = HashMap::new();
    let mut rows: HashMap<(usize, u8, i64, i64), u64> = HashMap::new();
    for s in &p.samples {
        let st = *stack_ix.entry(s.stack).or_insert_with(|| {
            let names = p.stack_names(s.stack, false);
            let ids = names
                .into_iter()
                .map(|n| {
                    *frame_ix.entry(n.clone()).or_insert_with(|| {
                        frames.push(n);
                        frames.len() - 1
                    })
                })
                .collect();
            stacks.push(ids);
            stacks.len() - 1
        });
        let class = s
            .execution
            .and_then(|i| a.tasks.executions.get(i))
            .map_or(-1, |e| {
                *class_ix.entry(a.tasks.class(e)).or_insert_with(|| {
                    classes.push(a.tasks.class(e).to_string());
                    classes.len() as i64 - 1
                })
            });
        let lock = s.lock.map_or(-1, |l| {
            *lock_ix.entry(l).or_insert_with(|| {
                locks.push(
                    a.locks
                        .locks
                        .get(l)
                        .map_or_else(String::new, |x| x.id.clone()),
                );
                locks.len() as i64 - 1
            })
        });
        let mode = match s.mode {
            Mode::Cpu => 0,
            Mode::Wall => 1,
        };
        *rows.entry((st, mode, class, lock)).or_default() += 1;
    }
    let mut rows: Vec<_> = rows.into_iter().collect();
    rows.sort();
    let rows: Vec<[i64; 5]> = rows
        .into_iter()
        .map(|((st, mode, c, l), n)| [st as i64, mode as i64, c, l, n as i64])
        .collect();
    json!({
        "frames": frames,
        "stacks": stacks,
        "classes": classes,
        "locks": locks,
        "rows": rows,
    })
}

/// The flame graph of the sampled stacks, with its filters (drawn by report.js).
fn profile_section(a: &Analysis) -> String {
    let p = &a.profile;
    if p.samples.is_empty() {
        return String::new();
    }
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<section id=\"profile\"><h2>Sampled stacks</h2><p class=\"muted small\">{} CPU samples (every {} of a thread's CPU time), {} wall-clock samples (every {}); {} of CPU samples could not be walked. \
         Root at the top; width = samples. A task class keeps the samples taken inside its executions; a lock keeps, in CPU mode, what its holders ran while others were blocked on it and, in wall mode, where the blocked threads were.</p>\
         <div class=\"fg-controls small\">samples <select id=\"fg-mode\"><option value=\"0\">CPU</option><option value=\"1\">wall-clock</option></select> \
         task class <select id=\"fg-class\"><option value=\"\">all</option></select> \
         lock <select id=\"fg-lock\"><option value=\"\">all</option></select> <span id=\"fg-total\" class=\"muted\"></span></div>\
         <div id=\"fg\" class=\"flame\"></div></section>",
        p.cpu_samples,
        human_ns(p.cpu_period_ns),
        p.wall_samples,
        human_ns(p.wall_period_ns),
        pct(p.broken_share(weft_analysis::profile::Mode::Cpu)),
    );
    h
}

/// The blocked periods and waits of the lock analysis for the timeline: the
/// [`MAX_WAITS_SHOWN`] longest, in begin order, as parallel arrays (thread, begin,
/// duration, kind 0 blocked / 1 wait, label, owner, site; strings in `strs`, -1 none).
fn waits_data(a: &Analysis) -> Value {
    let la = &a.locks;
    let mut strs: Vec<String> = Vec::new();
    let mut idx: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
    let mut str_of = |s: &str| -> i64 {
        if let Some(&i) = idx.get(s) {
            return i;
        }
        strs.push(s.to_string());
        idx.insert(s.to_string(), strs.len() as i64 - 1);
        strs.len() as i64 - 1
    };
    // (duration, begin, blocked index or wait index + blocked.len())
    let nb = la.blocked.len();
    let mut all: Vec<(u64, u64, usize)> = la
        .blocked
        .iter()
        .enumerate()
        .map(|(i, b)| (b.end_ns - b.start_ns, b.start_ns, i))
        .chain(
            la.wait_intervals
                .iter()
                .enumerate()
                .map(|(i, w)| (w.end_ns - w.start_ns, w.start_ns, nb + i)),
        )
        .collect();
    let total = all.len();
    if all.len() > MAX_WAITS_SHOWN {
        all.select_nth_unstable_by(MAX_WAITS_SHOWN - 1, |x, y| {
            y.0.cmp(&x.0).then(x.1.cmp(&y.1))
        });
        all.truncate(MAX_WAITS_SHOWN);
    }
    all.sort_by_key(|x| (x.1, x.2));
    let (mut t, mut b, mut d, mut k, mut n, mut o, mut s) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for (dur, begin, i) in all {
        b.push(json!(begin));
        d.push(json!(dur));
        if i < nb {
            let bl = &la.blocked[i];
            let lock = &la.locks[bl.lock];
            t.push(json!(bl.thread));
            k.push(json!(0));
            n.push(json!(str_of(&format!("{} ({})", lock.id, lock.kind))));
            o.push(json!(bl.owner.as_deref().map_or(-1, &mut str_of)));
            s.push(json!(bl.site.as_deref().map_or(-1, &mut str_of)));
        } else {
            let w = &la.wait_intervals[i - nb];
            t.push(json!(w.thread));
            k.push(json!(1));
            n.push(json!(str_of(w.kind)));
            o.push(json!(-1));
            s.push(json!(-1));
        }
    }
    json!({"t": t, "b": b, "d": d, "k": k, "n": n, "o": o, "s": s, "strs": strs,
           "total": total, "blocked": nb})
}

const DECADES: [&str; 12] = [
    "1 ns", "10 ns", "100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s",
    "100 s",
];

/// A self-time histogram as inline SVG: log-x bins, bar heights linear in count.
fn histogram_svg(h: &Histogram, colour: usize, p50: u64, p90: u64) -> String {
    const W: f64 = 420.0;
    const H: f64 = 120.0;
    const L: f64 = 22.0;
    const B: f64 = 20.0;
    let first = h.counts.iter().position(|&c| c > 0);
    let last = h.counts.iter().rposition(|&c| c > 0);
    let (Some(first), Some(last)) = (first, last) else {
        return "<svg class=\"hist\" width=\"420\" height=\"120\"></svg>".into();
    };
    // Whole decades around the data, at least 3 decades wide.
    let per = HISTOGRAM_BINS_PER_DECADE as usize;
    let mut lo = first / per * per;
    let mut hi = (last / per + 1) * per;
    while hi - lo < 3 * per {
        if lo >= per {
            lo -= per;
        }
        if hi - lo < 3 * per {
            hi += per;
        }
    }
    let hi = hi.min(h.counts.len());
    let n = (hi - lo) as f64;
    let bw = (W - 2.0 * L) / n;
    let max = *h.counts[lo..hi].iter().max().unwrap_or(&1) as f64;
    let x_of = |ns: f64| L + (ns.max(1.0).log10() * per as f64 - lo as f64) * bw;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"hist\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\">"
    );
    let _ = write!(
        s,
        "<line x1=\"{L}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\" class=\"axis\"/>",
        y = H - B,
        x2 = W - L
    );
    for k in lo..hi {
        let c = h.counts[k];
        if c == 0 {
            continue;
        }
        let bh = ((c as f64 / max) * (H - B - 14.0)).max(1.5);
        let x = L + (k - lo) as f64 * bw;
        let _ = write!(
            s,
            "<rect class=\"bar c{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{} – {}: {} executions</title></rect>",
            colour % 12,
            x + 0.5,
            H - B - bh,
            (bw - 1.0).max(1.0),
            bh,
            human_ns(Histogram::lower_ns(k).round() as u64),
            human_ns(Histogram::lower_ns(k + 1).round() as u64),
            c
        );
    }
    for d in (lo / per)..=(hi / per) {
        let k = d * per;
        if k < lo || k > hi {
            continue;
        }
        let x = L + (k - lo) as f64 * bw;
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" class=\"tick\"/><text x=\"{x:.1}\" y=\"{}\" class=\"tl\">{}</text>",
            H - B,
            H - B + 4.0,
            H - 5.0,
            DECADES.get(d).unwrap_or(&"")
        );
    }
    let mut label_x = f64::MIN;
    for (label, v) in [("p50", p50), ("p90", p90)] {
        if v == 0 {
            continue;
        }
        let x = x_of(v as f64);
        if (L..=W - L).contains(&x) {
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"12\" x2=\"{x:.1}\" y2=\"{}\" class=\"pline\"/>",
                H - B
            );
            // Labels left to right, never on top of each other.
            let lx = (x + 2.0).max(label_x);
            let text = format!("{label} {}", human_ns(v));
            let _ = write!(
                s,
                "<text x=\"{lx:.1}\" y=\"10\" class=\"pl\">{}</text>",
                esc(&text)
            );
            label_x = lx + text.chars().count() as f64 * 5.6 + 8.0;
        }
    }
    s.push_str("</svg>");
    s
}

pub(crate) fn finding_html(f: &weft_analysis::Finding) -> String {
    let (cls, cost) = if f.kind.is_trace() {
        ("fnd warn", String::new())
    } else {
        (
            "fnd act",
            format!(" <span class=\"cost\">{}</span>", human_ns(f.cost_ns)),
        )
    };
    // The whole recorded stack through the site, on hover.
    let site = match (&f.site, f.stack.is_empty()) {
        (Some(s), false) => format!(
            "<div class=\"muted small fsite\" title=\"{}\">at <code>{}</code> · hover for the whole stack</div>",
            esc(&f.stack.join("\n")),
            esc(s)
        ),
        _ => String::new(),
    };
    format!(
        "<div class=\"{cls}\"><span class=\"badge\">{}</span>{cost} {}{site}</div>",
        f.kind.label(),
        esc(&f.message)
    )
}

/// Locks shown in the CSP section.
pub const MAX_LOCKS: usize = 5;

/// Time buckets of the fork-join parallelism chart.
pub const FJ_BUCKETS: u32 = 300;

/// Parallelism over time of one pool (`forkjoin::parallelism_over_time`): a step
/// per bucket over the whole recording, the pool's target parallelism dashed.
fn fj_parallelism_svg(a: &Analysis, pool: Option<u32>, target: u32, colour: usize) -> String {
    const W: f64 = 900.0;
    const H: f64 = 100.0;
    const L: f64 = 40.0;
    const B: f64 = 18.0;
    let dur_ns = a.model.duration_ns.max(1);
    let dur = dur_ns as f64;
    let (bw, vals) = a
        .forkjoin
        .parallelism_over_time(pool, 0, dur_ns, FJ_BUCKETS);
    let x_of = |t: f64| L + (t / dur).min(1.0) * (W - L - 8.0);
    let max = vals
        .iter()
        .copied()
        .fold(target as f64, f64::max)
        .max(1.0)
        .ceil();
    let y_of = |c: f64| H - B - (c / max) * (H - B - 12.0);
    let mut s = String::new();
    svg_chart_open(
        &mut s,
        "fjp",
        (W, H, L, B),
        y_of(max),
        &max.to_string(),
        "0",
    );
    if target > 0 {
        let y = y_of(target as f64);
        let _ = write!(
            s,
            "<line x1=\"{L}\" y1=\"{y:.1}\" x2=\"{x2}\" y2=\"{y:.1}\" class=\"target\"><title>pool parallelism {target}</title></line>",
            x2 = W - 8.0
        );
    }
    for (k, &v) in vals.iter().enumerate() {
        if v <= 0.0 {
            continue;
        }
        let t0 = k as u64 * bw;
        let x0 = x_of(t0 as f64);
        let x1 = x_of((t0 + bw) as f64).max(x0 + 0.5);
        let y = y_of(v);
        let _ = write!(
            s,
            "<rect class=\"bar c{}\" x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{:.1}\"><title>{} – {}: {:.2} threads running tasks</title></rect>",
            colour % 12,
            // Slightly wider than the bucket: no seams between neighbours.
            x1 - x0 + 0.4,
            (H - B - y).max(0.5),
            human_ns(t0),
            human_ns(t0 + bw),
            v
        );
    }
    svg_time_labels(&mut s, dur, H - 4.0, x_of);
    s.push_str("</svg>");
    s
}

/// Per-thread bars of one pool: busy time (self time of the tasks run) and
/// tasks executed, the stolen ones darker.
fn fj_threads_svg(threads: &[&weft_analysis::forkjoin::FjThread], colour: usize) -> String {
    const W: f64 = 900.0;
    const ROW: f64 = 18.0;
    const NAME: f64 = 190.0;
    const COL: f64 = 240.0;
    let h = ROW * (threads.len() as f64 + 1.0) + 4.0;
    let max_busy = threads.iter().map(|t| t.busy_ns).max().unwrap_or(0).max(1) as f64;
    let max_exec = threads.iter().map(|t| t.executed).max().unwrap_or(0).max(1) as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"fjt\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" role=\"img\">\
<text x=\"{NAME}\" y=\"12\" class=\"hd\">busy (self time of tasks run)</text>\
<text x=\"{x2}\" y=\"12\" class=\"hd\">tasks executed · stolen (dark)</text>",
        x2 = NAME + COL + 110.0
    );
    for (i, t) in threads.iter().enumerate() {
        let y = ROW * (i as f64 + 1.0) + 2.0;
        let name: String = if t.name.chars().count() > 28 {
            t.name.chars().take(27).chain(['…']).collect()
        } else {
            t.name.clone()
        };
        let _ = write!(
            s,
            "<text x=\"0\" y=\"{:.1}\" class=\"nm\">{}<title>{}</title></text>",
            y + 12.0,
            esc(&name),
            esc(&t.name)
        );
        let bw = (t.busy_ns as f64 / max_busy * COL).max(if t.busy_ns > 0 { 1.0 } else { 0.0 });
        let _ = write!(
            s,
            "<rect class=\"bar c{}\" x=\"{NAME}\" y=\"{y:.1}\" width=\"{bw:.1}\" height=\"{:.1}\"><title>{}: busy {}, blocked in joins {}</title></rect>\
<text x=\"{:.1}\" y=\"{:.1}\" class=\"v\">{}</text>",
            colour % 12,
            ROW - 5.0,
            esc(&t.name),
            human_ns(t.busy_ns),
            human_ns(t.join_blocked_ns),
            NAME + bw + 4.0,
            y + 11.0,
            human_ns(t.busy_ns)
        );
        let x2 = NAME + COL + 110.0;
        let ew = t.executed as f64 / max_exec * COL;
        let sw = t.stolen as f64 / max_exec * COL;
        let _ = write!(
            s,
            "<rect class=\"bar exec c{c}\" x=\"{x2}\" y=\"{y:.1}\" width=\"{ew:.1}\" height=\"{rh:.1}\"><title>{n}: {e} tasks executed, {st} stolen</title></rect>\
<rect class=\"bar stolen\" x=\"{x2}\" y=\"{y:.1}\" width=\"{sw:.1}\" height=\"{rh:.1}\"><title>{n}: {st} stolen</title></rect>\
<text x=\"{tx:.1}\" y=\"{ty:.1}\" class=\"v\">{e} · {st} stolen</text>",
            c = colour % 12,
            rh = ROW - 5.0,
            n = esc(&t.name),
            e = t.executed,
            st = t.stolen,
            tx = x2 + ew + 4.0,
            ty = y + 11.0
        );
    }
    s.push_str("</svg>");
    s
}

/// Fork-join: per pool, parallelism over time and per-thread busy/stolen bars.
/// Empty when the trace has no fork-join activity.
fn forkjoin_section(a: &Analysis) -> String {
    let fj = &a.forkjoin;
    if fj.is_empty() {
        return String::new();
    }
    let mut h = String::new();
    let _ = write!(
        h,
        "<section id=\"forkjoin\"><h2>Fork-join</h2><p class=\"muted small\">{} tasks run · {} forks · {} external submissions · {} steals · {} computations. \
Parallelism: threads running fork-join tasks (nested runs count once), mean per {}; dashed: the pool's parallelism.</p>",
        fj.tasks,
        fj.forks,
        fj.external_submissions,
        fj.steals,
        fj.computations.len(),
        human_ns(a.model.duration_ns.max(1).div_ceil(FJ_BUCKETS as u64))
    );
    // Pools, then threads that ran tasks outside any known pool.
    let mut groups: Vec<(u32, String, u32)> = fj
        .pools
        .iter()
        .map(|p| {
            (
                p.pool,
                format!(
                    "{} · parallelism {} · {} threads ran tasks · {} tasks · {} steals · {} computations{}",
                    p.class,
                    p.parallelism,
                    p.threads,
                    p.tasks,
                    p.steals,
                    p.computations,
                    fj.load_balance(p.pool)
                        .map_or(String::new(), |b| format!(" · load balance (max/mean busy) {b:.2}"))
                ),
                p.parallelism,
            )
        })
        .collect();
    let other = fj
        .threads
        .iter()
        .any(|t| t.executed > 0 && !fj.pools.iter().any(|p| p.pool == t.pool));
    if other {
        groups.push((u32::MAX, "threads outside a known pool".into(), 0));
    }
    for (i, (pool, label, par)) in groups.iter().enumerate() {
        let ths: Vec<_> = fj
            .threads
            .iter()
            .filter(|t| {
                t.executed > 0
                    && if *pool == u32::MAX {
                        !fj.pools.iter().any(|p| p.pool == t.pool)
                    } else {
                        t.pool == *pool
                    }
            })
            .collect();
        let _ = write!(
            h,
            "<div class=\"lrow\"><div class=\"cname\">{}</div>",
            esc(label)
        );
        if *pool != u32::MAX {
            h.push_str(&fj_parallelism_svg(a, Some(*pool), *par, i));
        }
        if ths.is_empty() {
            h.push_str("<p class=\"muted small\">No thread of this pool ran a task.</p>");
        } else {
            h.push_str(&fj_threads_svg(&ths, i));
        }
        h.push_str("</div>");
    }
    h.push_str("</section>\n");
    h
}

/// The lock groups the page charts: the top [`MAX_LOCKS`] with blocking, with
/// their rank (colour) in `Analysis::lock_groups`.
fn top_lock_groups(a: &Analysis) -> Vec<(usize, &weft_analysis::lock_groups::LockGroup)> {
    a.lock_groups
        .iter()
        .enumerate()
        .filter(|(_, l)| l.blocked_ns > 0 || l.csp > 0.0)
        .take(MAX_LOCKS)
        .collect()
}

/// Lock contention: CSP over time for the top locks, their peak phase, the
/// phases where one lock dominated, and waits. Empty when no lock was contended.
fn locks_section(a: &Analysis) -> String {
    let la = &a.locks;
    let top = top_lock_groups(a);
    let mut h = String::new();
    h.push_str("<section id=\"locks\"><h2>Lock contention</h2>");
    if top.is_empty() {
        h.push_str("<p class=\"muted\">No lock was contended (no thread blocked on a monitor or j.u.c. lock).</p>");
    } else {
        let _ = write!(
            h,
            "<p class=\"muted small\">Critical-section pressure (CSP): time threads spent blocked on the lock ÷ their running time, per {} interval. Locks of one class created at one site are one group. Whole run, all locks: {}. The shaded interval is each group's peak; the charts share the timeline's time axis and zoom. The top {} of {} groups, as in the text report.</p>",
            human_ns(la.interval_ns),
            pct(la.total_csp()),
            top.len(),
            a.lock_groups.len()
        );
        for (k, (i, l)) in top.into_iter().enumerate() {
            let _ = write!(
                h,
                "<div class=\"lrow\"><div class=\"cname\"><span class=\"sw c{}\"></span>{} <span class=\"muted small\">{}</span></div>\
<div class=\"muted small\">CSP {} over the run, peak {} at {} · {} contended acquisitions ({} slow-path){} · blocked {} (longest {}){}{}</div>{}</div>",
                i % 12,
                esc(&l.label(la)),
                esc(l.kind),
                pct(l.csp),
                pct(l.max_phase_csp),
                human_ns(l.max_phase_start_ns),
                l.contended,
                l.slow_acquisitions,
                if l.gave_up > 0 {
                    format!(" · {} timed attempts ran out", l.gave_up)
                } else {
                    String::new()
                },
                human_ns(l.blocked_ns),
                human_ns(l.max_blocked_ns),
                l.site.as_ref().map_or(String::new(), |s| format!(" · at {}", esc(s))),
                l.owners.first().map_or(String::new(), |(o, _)| format!(" · owner mostly {}", esc(o))),
                // Drawn by the script on the timeline's x axis (same gutter, width and zoom).
                format_args!("<div class=\"tl-wrap csp-wrap\"><canvas class=\"csp-canvas\" data-g=\"{k}\"></canvas></div>")
            );
        }
        if !la.phases.is_empty() {
            h.push_str("<h3>Phases where one lock dominated</h3><table class=\"grid\"><thead><tr><th>from</th><th>to</th><th>lock</th><th>CSP</th><th>site</th><th>owner</th></tr></thead><tbody>");
            for p in &la.phases {
                let name = la.locks.get(p.lock).map_or("?", |l| l.id.as_str());
                let _ = write!(
                    h,
                    "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"site\">{}</td><td>{}</td></tr>",
                    human_ns(p.start_ns),
                    human_ns(p.end_ns),
                    esc(name),
                    pct(p.csp),
                    esc(p.site.as_deref().unwrap_or("")),
                    esc(p.owner.as_deref().unwrap_or(""))
                );
            }
            h.push_str("</tbody></table>");
        }
    }
    if !la.wait_groups.is_empty() {
        let top = la.wait_groups.iter().take(MAX_LOCKS);
        let _ = write!(
            h,
            "<h3>Waits (not lock contention)</h3><p class=\"muted small\">By kind, the class of the object waited on (or the park's blocker) and site; the top {} of {} groups, as in the text report. Hover a site for its whole stack.</p>\
<table class=\"grid\"><thead><tr><th>kind</th><th>on</th><th>site</th><th>count</th><th>total</th><th>mean</th><th>longest</th><th>most on</th></tr></thead><tbody>",
            la.wait_groups.len().min(MAX_LOCKS),
            la.wait_groups.len()
        );
        for g in top {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"site\" title=\"{}\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                esc(g.kind),
                esc(g.class.as_deref().unwrap_or("(no blocker)")),
                esc(&g.stack.join("\n")),
                esc(g.site.as_deref().unwrap_or("(not sampled)")),
                g.count,
                human_ns(g.total_ns),
                human_ns(g.mean_ns()),
                human_ns(g.max_ns),
                esc(g.threads.first().map_or("", |t| t.0.as_str()))
            );
        }
        h.push_str("</tbody></table>");
    }
    // Lock waits are drawn on the timeline (script, `waits_data`).
    h.push_str("</section>\n");
    h
}

/// The whole report as one HTML document.
pub fn report_html(a: &Analysis, title: &str) -> String {
    report_html_with(a, title, None)
}

/// The HTML report with the what-if section (suggestions, critical path) when given.
pub fn report_html_with(a: &Analysis, title: &str, whatif: Option<&weft_whatif::WhatIf>) -> String {
    let m = &a.model;
    let mut h = String::with_capacity(1 << 20);
    let data = page_data(a).to_string().replace("</", "<\\/");
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>weft — {}</title>\n<style>\n{CSS}\n</style></head><body>\n",
        esc(title)
    );
    // ---- header ----
    let tasks_total: u64 = a.tasks.classes.iter().map(|c| c.executions).sum();
    let aggregated: u64 = a.tasks.classes.iter().map(|c| c.aggregated).sum();
    let mean = a.cpu.mean();
    let _ = write!(
        h,
        "<header><h1>weft <span class=\"sub\">concurrency report</span></h1><div class=\"file\">{}</div></header>\n<section class=\"summary\">",
        esc(title)
    );
    let mut stat = |k: &str, v: String| push_stat(&mut h, k, &v);
    match &a.window {
        Some(w) => stat("window", crate::text::window_line(w)),
        None => stat("recording", human_ns(m.duration_ns)),
    }
    stat(
        "JVM",
        format!(
            "{} · pid {}",
            m.java_version.clone().unwrap_or_else(|| "?".into()),
            m.pid.unwrap_or(0)
        ),
    );
    stat("threads", m.threads.len().to_string());
    stat(
        "task executions",
        if aggregated > 0 {
            format!("{tasks_total} (+{aggregated} aggregated)")
        } else {
            tasks_total.to_string()
        },
    );
    stat(
        if a.cpu.cpus_known {
            "mean CPU use"
        } else {
            "mean CPU use (1 CPU = 100%)"
        },
        mean.map_or("–".into(), |w| {
            format!("{} of {} CPUs", pct(w.utilisation), a.cpu.cpus)
        }),
    );
    stat(
        "GC pauses",
        format!("{} · {}", m.gc_pauses.len(), human_ns(m.gc_total_ns())),
    );
    h.push_str("</section>\n");

    // ---- findings ----
    h.push_str("<section id=\"findings\"><h2>Findings</h2>");
    if a.findings.is_empty() {
        h.push_str("<p class=\"muted\">No findings: no contended lock, dominating wait, or task class clearly too fine- or too coarse-grained, and the trace is complete.</p>");
    }
    for f in &a.findings {
        h.push_str(&finding_html(f));
    }
    h.push_str("</section>\n");
    if let Some(w) = whatif {
        h.push_str(&crate::whatif::whatif_html(w));
    }

    // ---- timeline + CPU (drawn by the script) ----
    h.push_str("<section id=\"timeline-section\"><h2>Timeline</h2>");
    h.push_str(TIMELINE_CANVASES);

    // ---- fork-join (only when the trace has fork-join activity) ----
    h.push_str(&forkjoin_section(a));
    h.push_str(&locks_section(a));
    h.push_str(&crate::speedups_html::speedups_section(&a.speedups));

    // ---- granularity ----
    h.push_str("<section id=\"granularity\"><h2>Task granularity</h2><p class=\"muted small\">Self time of each reported execution, per class (log scale: each bar is a quarter decade). Most time-consuming classes first.</p>");
    let hists = timeline::self_time_histograms(&a.tasks);
    let mut shown = 0;
    // Task classes first (by running time), then thread classes.
    let mut order: Vec<usize> = a.activity.order.clone();
    order.sort_by_key(|&i| a.tasks.classes[i].kind == TaskKind::Thread);
    for i in order {
        let c = &a.tasks.classes[i];
        if shown >= MAX_HISTOGRAMS || c.executions == 0 {
            continue;
        }
        shown += 1;
        let g = &c.granularity_ns;
        let _ = write!(
            h,
            "<div class=\"hrow\"><div class=\"hmeta\"><div class=\"cname\"><span class=\"sw c{}\"></span>{}</div><div class=\"muted small\">{} · {} executions{} · on {} thread{}</div>\
<table class=\"kv\"><tr><td>total self</td><td>{}</td></tr><tr><td>median</td><td>{}</td></tr><tr><td>p90</td><td>{}</td></tr><tr><td>queue wait p50</td><td>{}</td></tr></table></div><div class=\"hplot\">{}</div><div class=\"hfind\">",
            i % 12,
            esc(&c.class),
            c.kind.as_str(),
            c.executions,
            if c.aggregated > 0 { format!(" (+{} aggregated)", c.aggregated) } else { String::new() },
            c.threads,
            if c.threads == 1 { "" } else { "s" },
            human_ns(g.total),
            human_ns(g.p50),
            human_ns(g.p90),
            c.queue_wait_ns.map_or("–".into(), |q| human_ns(q.p50)),
            histogram_svg(&hists[i], i, g.p50, g.p90),
        );
        let mut any = false;
        for f in a
            .findings
            .iter()
            .filter(|f| f.class.as_deref() == Some(&c.class))
        {
            h.push_str(&finding_html(f));
            any = true;
        }
        if !any {
            if let Some((s, _)) = c.sites.first() {
                let site = match (&s.submitted, &s.created) {
                    (Some(x), _) => format!("submitted at {x}"),
                    (None, Some(x)) => format!("created at {x}"),
                    _ => String::new(),
                };
                let _ = write!(h, "<div class=\"muted small\">{}</div>", esc(&site));
            }
        }
        h.push_str("</div></div>\n");
    }
    if shown == 0 {
        h.push_str("<p class=\"muted\">No task executions were recorded.</p>");
    }
    h.push_str("</section>\n");

    // ---- class table ----
    h.push_str("<section id=\"classes\"><h2>Task classes</h2><p class=\"muted small\">By running time (on CPU); self = wall time minus reported nested tasks; ≤: CPU time not measured (thread alive at the end), an upper bound.</p><table class=\"grid\"><thead><tr><th>class</th><th>kind</th><th>executions</th><th>aggregated</th><th>total self</th><th>running</th><th>blocked + waiting</th><th>median</th><th>p90</th><th>queue wait p50</th><th>threads</th><th>what / site</th></tr></thead><tbody>");
    for &i in a.activity.order.iter().take(MAX_CLASS_ROWS) {
        let c = &a.tasks.classes[i];
        let g = &c.granularity_ns;
        let act = a.activity.classes.get(i);
        let site = class_site(c).map_or(String::new(), |(s, how)| format!("{how} at {s}"));
        let what = act
            .and_then(|x| x.idle_label(c.kind))
            .map_or(String::new(), |l| format!("{l}; "));
        let (running, waiting) = act.map_or(("–".into(), "–".into()), |x| {
            (
                format!(
                    "{}{}",
                    if x.cpu_measured { "" } else { "≤" },
                    human_ns(x.split.demand_ns())
                ),
                human_ns(x.split.waiting_ns + x.split.blocked_ns),
            )
        });
        let _ = write!(
            h,
            "<tr><td><span class=\"sw c{}\"></span>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"site\">{}{}</td></tr>",
            i % 12,
            esc(&c.class),
            c.kind.as_str(),
            c.executions,
            c.aggregated,
            human_ns(g.total),
            running,
            waiting,
            human_ns(g.p50),
            human_ns(g.p90),
            c.queue_wait_ns.map_or("–".into(), |q| human_ns(q.p50)),
            c.threads,
            esc(&what),
            esc(&site)
        );
    }
    h.push_str("</tbody></table>");
    if a.tasks.classes.len() > MAX_CLASS_ROWS {
        let _ = write!(
            h,
            "<p class=\"muted small\">{} more classes: see <code>weft report --json</code>.</p>",
            a.tasks.classes.len() - MAX_CLASS_ROWS
        );
    }
    h.push_str("</section>\n");

    h.push_str(&profile_section(a));

    // ---- threads: lifetime and CPU, as in the text report ----
    h.push_str("<section id=\"threads\"><h2>Threads</h2><table class=\"grid\"><thead><tr><th>thread</th><th>start</th><th>lifetime</th><th>CPU</th><th>on CPU</th></tr></thead><tbody>");
    for t in m.threads.values() {
        let (start, end) = t.lifetime(m.duration_ns);
        let life = end.saturating_sub(start);
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&t.display_name()),
            human_ns(start),
            human_ns(life),
            if t.end_ns.is_some() { "" } else { "+" },
            t.cpu_ns.map_or("–".into(), human_ns),
            t.cpu_ns
                .filter(|_| life > 0)
                .map_or("–".into(), |c| pct((c as f64 / life as f64).min(1.0)))
        );
    }
    h.push_str("</tbody></table></section>\n");
    h.push_str("<footer class=\"muted small\">Generated by weft. Self-contained: no network access needed.</footer>\n<div id=\"weft-status\" hidden></div>\n");
    let _ = write!(
        h,
        "<script type=\"application/json\" id=\"weft-data\">{data}</script>\n<script>\n{JS}\n</script>\n</body></html>\n"
    );
    h
}

/// Opens a line chart's SVG: the x axis and the y labels of its top (at `top_y`) and
/// of zero. `(w, h, l, b)`: size, left and bottom margins.
fn svg_chart_open(
    s: &mut String,
    class: &str,
    (w, h, l, b): (f64, f64, f64, f64),
    top_y: f64,
    top: &str,
    zero: &str,
) {
    let _ = write!(
        s,
        "<svg class=\"{class}\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\">\
<line x1=\"{l}\" y1=\"{y0}\" x2=\"{x2}\" y2=\"{y0}\" class=\"axis\"/>\
<text x=\"{tx}\" y=\"{ty}\" class=\"yl\">{top}</text><text x=\"{tx}\" y=\"{y0}\" class=\"yl\">{zero}</text>",
        y0 = h - b,
        x2 = w - 8.0,
        tx = l - 4.0,
        ty = top_y + 4.0,
    );
}

/// Time labels along an SVG chart's x axis: about six round steps (1, 2, 5 × 10ⁿ ns).
fn svg_time_labels(s: &mut String, dur: f64, y: f64, x_of: impl Fn(f64) -> f64) {
    let step = {
        let raw = dur / 6.0;
        let p = 10f64.powf(raw.log10().floor());
        let m = raw / p;
        (if m < 1.5 {
            1.0
        } else if m < 3.5 {
            2.0
        } else if m < 7.5 {
            5.0
        } else {
            10.0
        }) * p
    };
    let mut t = 0.0;
    while t <= dur {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" class=\"tl\">{}</text>",
            x_of(t),
            y,
            human_ns(t as u64)
        );
        t += step;
    }
}
