//! The terminal summary: what went wrong with the trace, what to change
//! (findings), then the task classes by total self time, threads, GC and CPU.
//! Plain text, fixed-width columns, human units; no colours.

use std::fmt::Write as _;

use weft_analysis::findings::class_site;
use weft_analysis::{human_ns, Analysis, TaskClassStats};

/// Widest class name column before names are shortened from the left.
const MAX_CLASS_WIDTH: usize = 48;
/// Threads listed by name in the text report (the rest are summed on one line).
const THREAD_ROWS: usize = 50;

/// Width of a class-name column: its longest name, between 5 and MAX_CLASS_WIDTH.
fn class_column_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, MAX_CLASS_WIDTH)
}

fn shorten(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        s.to_string()
    } else {
        let tail: String = s.chars().skip(n - (width - 1)).collect();
        format!("…{tail}")
    }
}

fn pad(s: &str, width: usize) -> String {
    let n = s.chars().count();
    format!("{s}{}", " ".repeat(width.saturating_sub(n)))
}

fn lpad(s: &str, width: usize) -> String {
    let n = s.chars().count();
    format!("{}{s}", " ".repeat(width.saturating_sub(n)))
}

/// Lock groups listed in the text report; the rest are counted.
pub const MAX_LOCK_ROWS: usize = 15;

fn top_site(c: &TaskClassStats) -> String {
    match class_site(c) {
        Some((s, how)) => format!("{how} at {s}"),
        None => "-".into(),
    }
}

fn wrap(out: &mut String, indent: &str, first: &str, text: &str) {
    const WIDTH: usize = 100;
    let mut line = first.to_string();
    for word in text.split_whitespace() {
        if line.chars().count() + 1 + word.chars().count() > WIDTH
            && line.trim().len() > first.trim().len()
        {
            let _ = writeln!(out, "{line}");
            line = indent.to_string();
        } else if !line.ends_with(' ') && !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = writeln!(out, "{line}");
}

/// One sentence saying which part of the recording a report covers.
pub fn window_line(w: &weft_analysis::window::Window) -> String {
    let what = match (&w.method, w.each_call) {
        (Some(m), true) => format!("the {} calls of {m}, each its own window", w.calls),
        (Some(m), false) if w.calls > 0 => format!(
            "{m}, from its first entry to its last exit ({} call{})",
            w.calls,
            if w.calls == 1 { "" } else { "s" }
        ),
        (Some(m), false) => format!("window method {m}"),
        (None, _) => "a time range".to_string(),
    };
    let ranges = match w.ranges.as_slice() {
        [(s, e)] => format!("{} to {}", human_ns(*s), human_ns(*e)),
        r => format!(
            "{} ranges between {} and {}",
            r.len(),
            human_ns(r.first().map_or(0, |x| x.0)),
            human_ns(r.last().map_or(0, |x| x.1))
        ),
    };
    let cut = match (w.from_ns, w.to_ns) {
        (None, None) => String::new(),
        (f, t) => format!(
            ", cut to --from {} --to {}",
            human_ns(f.unwrap_or(0)),
            t.map_or("the end".to_string(), human_ns)
        ),
    };
    format!(
        "Window: {what}{cut}: {} of the {} recording ({ranges}); times count from the window's start",
        human_ns(w.covered_ns()),
        human_ns(w.recording_ns)
    )
}

/// A readable summary for a terminal.
pub fn report_text(a: &Analysis) -> String {
    let m = &a.model;
    let mut out = String::new();
    let pid = m.pid.map_or("?".to_string(), |p| p.to_string());
    let jvm = m.java_version.as_deref().unwrap_or("unknown JVM");
    let _ = writeln!(
        out,
        "weft: pid {pid}, Java {jvm}, {} recorded, {} task classes, {} threads{}",
        human_ns(m.duration_ns),
        a.tasks.classes.len(),
        m.threads.len() - a.virtual_threads.count as usize,
        if a.virtual_threads.count > 0 {
            format!(" and {} virtual threads", a.virtual_threads.count)
        } else {
            String::new()
        }
    );
    if let Some(w) = &a.window {
        let _ = writeln!(out, "{}.", window_line(w));
        for n in &w.notes {
            let _ = writeln!(out, "NOTE: {n}.");
        }
    }
    if m.truncated {
        let _ = writeln!(
            out,
            "WARNING: the trace is truncated (recording did not end normally); the end of the run is missing."
        );
    }
    if !m.losses.is_empty() {
        let _ = writeln!(
            out,
            "WARNING: {} records were lost; counts below are lower bounds.",
            m.lost_records()
        );
    }
    for blind in &m.blind_spots {
        let _ = writeln!(out, "NOTE: {blind}.");
    }

    // What to change first.
    let _ = writeln!(
        out,
        "\nFindings (largest cost first; cost = thread or CPU time lost)"
    );
    if a.findings.is_empty() {
        let _ = writeln!(
            out,
            "  No problem found: no contended lock, dominating wait, or task class clearly too \
             fine- or too coarse-grained."
        );
    }
    for (i, f) in a.findings.iter().enumerate() {
        // A finding that costs no time (threads, not time: a virtual thread's
        // `Object.wait` made up for by another carrier) shows no cost.
        let first = if f.kind.is_trace() || f.cost_ns == 0 {
            format!("  {}. [{}]", i + 1, f.kind.label())
        } else {
            format!("  {}. [{}, {}]", i + 1, f.kind.label(), human_ns(f.cost_ns))
        };
        wrap(&mut out, "     ", &first, &f.message);
    }

    // Task classes, by running time.
    let _ = writeln!(
        out,
        "\nTask classes (by running time; self = wall time minus reported nested tasks; running = \
         on a CPU or ready to run, from {}; ≤: not measured, an upper bound; waiting = blocked on \
         locks + recorded waits)",
        if a.activity.cpu_source == "thread_end" {
            "each thread's CPU time at its end"
        } else {
            "per-thread schedstat"
        }
    );
    if a.tasks.classes.is_empty() {
        let _ = writeln!(out, "  No task executions.");
    } else {
        let w = class_column_width(a.tasks.classes.iter().map(|c| c.class.as_str()));
        let _ = writeln!(
            out,
            "  {} {} {} {} {} {} {} {} {} {} {} what / top site",
            pad("class", w),
            pad("kind", 8),
            lpad("execs", 8),
            lpad("aggr", 7),
            lpad("self", 9),
            lpad("running", 9),
            lpad("waiting", 9),
            lpad("p50", 9),
            lpad("p90", 9),
            lpad("wait p50", 9),
            lpad("thr", 4),
        );
        for &ci in &a.activity.order {
            let c = &a.tasks.classes[ci];
            let act = a.activity.classes.get(ci);
            let g = &c.granularity_ns;
            let (total, p50, p90) = if c.executions > 0 {
                (human_ns(g.total), human_ns(g.p50), human_ns(g.p90))
            } else {
                ("-".into(), "-".into(), "-".into())
            };
            let (running, waiting) = match act {
                Some(x) if c.executions > 0 => (
                    format!(
                        "{}{}",
                        if x.cpu_measured { "" } else { "≤" },
                        human_ns(x.split.demand_ns())
                    ),
                    human_ns(x.split.waiting_ns + x.split.blocked_ns),
                ),
                _ => ("-".into(), "-".into()),
            };
            let what = act
                .and_then(|x| x.idle_label(c.kind))
                .map_or(String::new(), |l| format!("{l}; "));
            let wait = c.queue_wait_ns.map_or("-".into(), |q| human_ns(q.p50));
            let _ = writeln!(
                out,
                "  {} {} {} {} {} {} {} {} {} {} {} {what}{}",
                pad(&shorten(&c.class, w), w),
                pad(c.kind.as_str(), 8),
                lpad(&c.executions.to_string(), 8),
                lpad(&c.aggregated.to_string(), 7),
                lpad(&total, 9),
                lpad(&running, 9),
                lpad(&waiting, 9),
                lpad(&p50, 9),
                lpad(&p90, 9),
                lpad(&wait, 9),
                lpad(&c.threads.to_string(), 4),
                top_site(c)
            );
        }
    }

    // Threads.
    let _ = writeln!(out, "\nThreads");
    // Virtual threads are summarised in their own section, not listed here.
    let w = m
        .threads
        .values()
        .filter(|t| !t.virtual_thread)
        .map(|t| t.display_name().chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 40);
    let _ = writeln!(
        out,
        "  {} {} {} {}",
        pad("name", w),
        lpad("start", 9),
        lpad("lifetime", 9),
        lpad("cpu", 9)
    );
    // A program that starts thousands of threads (a thread per task) would bury the
    // report: past THREAD_ROWS, the threads with the most CPU are listed (in start
    // order) and the rest summed on one line; the JSON lists every thread.
    let platform: Vec<_> = m.threads.values().filter(|t| !t.virtual_thread).collect();
    let shown: std::collections::HashSet<u32> = if platform.len() > THREAD_ROWS + 10 {
        let mut by_cpu = platform.clone();
        by_cpu.sort_by_key(|t| std::cmp::Reverse(t.cpu_ns.unwrap_or(0)));
        by_cpu.iter().take(THREAD_ROWS).map(|t| t.index).collect()
    } else {
        platform.iter().map(|t| t.index).collect()
    };
    for t in platform.iter().filter(|t| shown.contains(&t.index)) {
        let (start, end) = t.lifetime(m.duration_ns);
        let life = human_ns(end.saturating_sub(start));
        let life = if t.end_ns.is_some() {
            life
        } else {
            format!("{life}+")
        };
        let _ = writeln!(
            out,
            "  {} {} {} {}",
            pad(&shorten(&t.display_name(), w), w),
            lpad(&human_ns(start), 9),
            lpad(&life, 9),
            lpad(&t.cpu_ns.map_or("-".into(), human_ns), 9)
        );
    }

    if shown.len() < platform.len() {
        let rest: Vec<_> = platform
            .iter()
            .filter(|t| !shown.contains(&t.index))
            .collect();
        let cpu: u64 = rest.iter().filter_map(|t| t.cpu_ns).sum();
        let _ = writeln!(
            out,
            "  … {} more threads ({} of CPU in all; `weft report --json` lists every thread)",
            rest.len(),
            human_ns(cpu)
        );
    }

    virtual_threads_text(&mut out, &a.virtual_threads);

    let _ = writeln!(
        out,
        "\nGC: {} pause(s), {} total",
        m.gc_pauses.len(),
        human_ns(m.gc_total_ns())
    );
    match a.cpu.mean() {
        Some(mean) => {
            let of = if a.cpu.cpus_known {
                format!("of {} CPUs", a.cpu.cpus)
            } else {
                "of one CPU (CPU count unknown)".into()
            };
            let _ = writeln!(
                out,
                "CPU: mean {:.0}% {of}, peak {:.0}%; {:.0} context switches per 100 ms",
                mean.utilisation * 100.0,
                a.cpu.peak_utilisation().unwrap_or(0.0) * 100.0,
                mean.cs_per_100ms
            );
        }
        None => {
            let _ = writeln!(out, "CPU: no samples");
        }
    }
    crate::forkjoin_text::forkjoin_text(&mut out, a);
    crate::sampled::profile_text(&mut out, &a.profile);
    locks_text(&mut out, a);
    crate::speedups_text::speedups_text(&mut out, &a.speedups);
    out
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn secs(ns: u64) -> String {
    format!("{:.1} s", ns as f64 / 1e9)
}

/// The lock section: lock groups (class, kind, site) by whole-run CSP, the top
/// [`MAX_LOCK_ROWS`]; dominant phases in words; waits apart.
fn locks_text(out: &mut String, a: &Analysis) {
    let l = &a.locks;
    let _ = writeln!(
        out,
        "\nLocks (critical-section pressure, interval {}; grouped by class, kind and site)",
        human_ns(l.interval_ns)
    );
    if a.lock_groups.is_empty() {
        let _ = writeln!(out, "  No contended lock.");
    } else {
        let labels: Vec<String> = a.lock_groups.iter().map(|g| g.label(l)).collect();
        let w = class_column_width(labels.iter().take(MAX_LOCK_ROWS).map(String::as_str));
        let _ = writeln!(
            out,
            "  {} {} {} {} {} {} {} {} site / owners / blocked threads",
            pad("lock", w),
            pad("kind", 15),
            lpad("CSP", 5),
            lpad("peak", 5),
            lpad("contended", 9),
            lpad("slow acq", 9),
            lpad("blocked", 9),
            lpad("max", 9),
        );
        for (g, label) in a.lock_groups.iter().zip(&labels).take(MAX_LOCK_ROWS) {
            let site = g.site.as_deref().unwrap_or("(site not sampled)");
            let owners: Vec<&str> = g.owners.iter().take(3).map(|o| o.0.as_str()).collect();
            let threads: Vec<String> = g
                .blocked_per_thread
                .iter()
                .take(4)
                .map(|(t, d)| format!("{t} {}", human_ns(*d)))
                .collect();
            let more = g.blocked_per_thread.len().saturating_sub(4);
            let _ = writeln!(
                out,
                "  {} {} {} {} {} {} {} {} at {site}; held by {}; blocked: {}{}{}",
                pad(&shorten(label, w), w),
                pad(g.kind, 15),
                lpad(&pct(g.csp), 5),
                lpad(&pct(g.max_phase_csp), 5),
                lpad(&g.contended.to_string(), 9),
                lpad(&g.slow_acquisitions.to_string(), 9),
                lpad(&human_ns(g.blocked_ns), 9),
                lpad(&human_ns(g.max_blocked_ns), 9),
                if owners.is_empty() {
                    "? (not sampled)".to_string()
                } else {
                    owners.join(", ")
                },
                threads.join(", "),
                if more > 0 {
                    format!(" and {more} more threads")
                } else {
                    String::new()
                },
                if g.gave_up > 0 {
                    format!(
                        "; {} gave up (a timed try ran out, or interrupted)",
                        g.gave_up
                    )
                } else {
                    String::new()
                }
            );
        }
        if a.lock_groups.len() > MAX_LOCK_ROWS {
            let rest = &a.lock_groups[MAX_LOCK_ROWS..];
            let instances: usize = rest.iter().map(|g| g.locks.len()).sum();
            let blocked: u64 = rest.iter().map(|g| g.blocked_ns).sum();
            let _ = writeln!(
                out,
                "  ... and {} more groups ({instances} lock instances, {} blocked in all; see --json)",
                rest.len(),
                human_ns(blocked)
            );
        }
        let _ = writeln!(
            out,
            "  (contended: acquisitions that blocked (parked); slow acq: all that took the slow path, \
             including those a retry resolved)"
        );
    }
    for p in &l.phases {
        let k = &l.locks[p.lock];
        let mut msg = format!(
            "from {} to {}, {} of all running time was spent waiting for `{}`",
            secs(p.start_ns),
            secs(p.end_ns),
            pct(p.csp),
            k.id
        );
        if let Some(s) = &p.site {
            msg.push_str(&format!(" at {s}"));
        }
        if let Some(o) = &p.owner {
            msg.push_str(&format!(", held mostly by `{o}`"));
        }
        wrap(out, "    ", "  -", &msg);
    }
    if !l.waits.is_empty() {
        let _ = writeln!(
            out,
            "  Waits (not contention; subtracted from running time):"
        );
        for w in &l.waits {
            let th: Vec<String> = w
                .threads
                .iter()
                .take(4)
                .map(|(t, d)| format!("{t} {}", human_ns(*d)))
                .collect();
            let _ = writeln!(
                out,
                "    {} {} × {} total, max {} ({})",
                pad(w.kind, 22),
                w.count,
                human_ns(w.total_ns),
                human_ns(w.max_ns),
                th.join(", ")
            );
        }
        // What they waited on: (kind, class, site), ranked as JSON `locks.wait_groups`.
        let groups = &l.wait_groups;
        if groups.iter().any(|g| g.class.is_some() || g.site.is_some()) {
            let _ = writeln!(
                out,
                "  Waits by what they wait on (kind, object class, site):"
            );
            for g in groups.iter().take(MAX_LOCK_ROWS) {
                let th: Vec<String> = g
                    .threads
                    .iter()
                    .take(3)
                    .map(|(t, d)| format!("{t} {}", human_ns(*d)))
                    .collect();
                let more = match g.threads.len() {
                    n if n > 3 => format!(", {} threads", n),
                    _ => String::new(),
                };
                let what = match (&g.class, &g.site) {
                    (None, None) => format!("{} (no blocker, site not sampled)", g.kind),
                    (None, Some(_)) => format!("{} (no blocker)", g.label()),
                    (Some(_), None) => format!("{} (site not sampled)", g.label()),
                    _ => g.label(),
                };
                let timed = match g.timed_out {
                    0 => String::new(),
                    n if n == g.count => ", all timed out".to_string(),
                    n => format!(", {n} timed out"),
                };
                let _ = writeln!(
                    out,
                    "    {} × {} total, mean {}, max {}{timed}  {what} ({}{more})",
                    g.count,
                    human_ns(g.total_ns),
                    human_ns(g.mean_ns()),
                    human_ns(g.max_ns),
                    th.join(", ")
                );
            }
            if groups.len() > MAX_LOCK_ROWS {
                let rest = &groups[MAX_LOCK_ROWS..];
                let _ = writeln!(
                    out,
                    "    ... and {} more groups ({} waits, {} in all)",
                    rest.len(),
                    rest.iter().map(|g| g.count).sum::<u64>(),
                    human_ns(rest.iter().map(|g| g.total_ns).sum())
                );
            }
        }
        // Where the waits fell: the task classes whose self time they are in.
        let mut by_class: Vec<(u64, &str, &str, u64, &str)> = Vec::new();
        for (ci, c) in a.tasks.classes.iter().enumerate() {
            let Some(x) = a.activity.classes.get(ci) else {
                continue;
            };
            let label = x.idle_label(c.kind).unwrap_or("running");
            for (k, ns, n) in &x.waits {
                by_class.push((*ns, k, &c.class, *n, label));
            }
        }
        by_class.sort_by(|x, y| y.0.cmp(&x.0).then(x.2.cmp(y.2)));
        if !by_class.is_empty() {
            let _ = writeln!(out, "  Waits by task class (in whose self time they fell):");
            for (ns, k, class, n, label) in by_class.iter().take(8) {
                let _ = writeln!(
                    out,
                    "    {} {} × {} in {class} ({label})",
                    pad(k, 22),
                    n,
                    human_ns(*ns)
                );
            }
            if by_class.len() > 8 {
                let _ = writeln!(out, "    ... and {} more", by_class.len() - 8);
            }
        }
    }
}

/// The virtual-thread section: how many, on how many carriers, and where they
/// were pinned (nothing when the run had none).
fn virtual_threads_text(out: &mut String, vt: &weft_analysis::vthreads::VirtualThreadAnalysis) {
    if vt.count == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "\nVirtual threads: {} on {} carrier(s); mounted {}, unmounted {}; {} re-mounts, {} on another carrier",
        vt.count,
        vt.carriers,
        human_ns(vt.mounted_ns),
        human_ns(vt.unmounted_ns),
        vt.remounts,
        vt.carrier_changes
    );
    match vt.synchronized_pins {
        Some(true) => {
            let _ = writeln!(out, "  (on this JDK, blocking inside synchronized pins a virtual thread to its carrier)");
        }
        Some(false) => {
            let _ = writeln!(
                out,
                "  (on this JDK, synchronized no longer pins; native frames still do)"
            );
        }
        None => {}
    }
    if vt.weft_pinned_ns > 0 {
        let _ = writeln!(
            out,
            "  weft's own class registration pinned virtual threads for {} (not counted below)",
            human_ns(vt.weft_pinned_ns)
        );
    }
    if vt.pinned.is_empty() {
        let _ = writeln!(out, "  no pinned blocking seen");
        return;
    }
    let _ = writeln!(
        out,
        "  {} {} {} {} {} pinned at",
        lpad("blocks", 7),
        lpad("blocked", 9),
        lpad("max", 9),
        lpad("saturated", 9),
        pad("how", 7)
    );
    for p in &vt.pinned {
        let _ = writeln!(
            out,
            "  {} {} {} {} {} {}",
            lpad(&p.count.to_string(), 7),
            lpad(&human_ns(p.blocked_ns), 9),
            lpad(&human_ns(p.max_ns), 9),
            lpad(&human_ns(p.carriers_saturated_ns), 9),
            pad(p.how, 7),
            match &p.synchronized_at {
                Some(at) => format!("{} (inside synchronized at {at})", p.site),
                None => p.site.clone(),
            }
        );
    }
}
