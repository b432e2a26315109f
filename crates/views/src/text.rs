//! The terminal summary: what went wrong with the trace, what to change
//! (findings), then the task classes by total self time, threads, GC and CPU.
//! Plain text, fixed-width columns, human units; no colours.

use std::fmt::Write as _;

use weft_analysis::{human_ns, Analysis, TaskClassStats};

/// Widest class name column before names are shortened from the left.
const MAX_CLASS_WIDTH: usize = 48;

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

fn top_site(c: &TaskClassStats) -> String {
    match c.sites.first() {
        Some((s, _)) => match (&s.submitted, &s.created) {
            (Some(sub), _) => format!("submitted at {sub}"),
            (None, Some(cr)) => format!("created at {cr}"),
            (None, None) => "-".into(),
        },
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
pub(crate) fn window_line(w: &weft_analysis::window::Window) -> String {
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
    let _ = writeln!(out, "\nFindings");
    if a.findings.is_empty() {
        let _ = writeln!(out, "  No granularity problem found.");
    }
    for (i, f) in a.findings.iter().enumerate() {
        let first = format!("  {}. [{}]", i + 1, f.kind.as_str());
        wrap(&mut out, "     ", &first, &f.message);
    }

    // Task classes.
    let _ = writeln!(out, "\nTask classes (by total self time)");
    if a.tasks.classes.is_empty() {
        let _ = writeln!(out, "  No task executions.");
    } else {
        let w = class_column_width(a.tasks.classes.iter().map(|c| c.class.as_str()));
        let _ = writeln!(
            out,
            "  {} {} {} {} {} {} {} {} {} top site",
            pad("class", w),
            pad("kind", 8),
            lpad("execs", 8),
            lpad("aggr", 7),
            lpad("total", 9),
            lpad("p50", 9),
            lpad("p90", 9),
            lpad("wait p50", 9),
            lpad("thr", 4),
        );
        for c in &a.tasks.classes {
            let g = &c.granularity_ns;
            let (total, p50, p90) = if c.executions > 0 {
                (human_ns(g.total), human_ns(g.p50), human_ns(g.p90))
            } else {
                ("-".into(), "-".into(), "-".into())
            };
            let wait = c.queue_wait_ns.map_or("-".into(), |q| human_ns(q.p50));
            let _ = writeln!(
                out,
                "  {} {} {} {} {} {} {} {} {} {}",
                pad(&shorten(&c.class, w), w),
                pad(c.kind.as_str(), 8),
                lpad(&c.executions.to_string(), 8),
                lpad(&c.aggregated.to_string(), 7),
                lpad(&total, 9),
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
    for t in m.threads.values().filter(|t| !t.virtual_thread) {
        let start = t.start_ns.unwrap_or(t.first_ns);
        let end = t.end_ns.unwrap_or(m.duration_ns.max(t.last_ns));
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
    crate::forkjoin_text::forkjoin_text(&mut out, &a.forkjoin);
    crate::sampled::profile_text(&mut out, &a.profile);
    locks_text(&mut out, &a.locks);
    crate::speedups_text::speedups_text(&mut out, &a.speedups);
    out
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn secs(ns: u64) -> String {
    format!("{:.1} s", ns as f64 / 1e9)
}

/// The lock section: locks by whole-run CSP, dominant phases in words, waits apart.
fn locks_text(out: &mut String, l: &weft_analysis::locks::LockAnalysis) {
    let _ = writeln!(
        out,
        "\nLocks (critical-section pressure, interval {})",
        human_ns(l.interval_ns)
    );
    if l.locks.is_empty() {
        let _ = writeln!(out, "  No contended lock.");
    } else {
        let w = class_column_width(l.locks.iter().map(|k| k.class.as_str()));
        let _ = writeln!(
            out,
            "  {} {} {} {} {} {} {} site / owners / blocked threads",
            pad("lock", w),
            pad("kind", 15),
            lpad("CSP", 5),
            lpad("peak", 5),
            lpad("contended", 9),
            lpad("blocked", 9),
            lpad("max", 9),
        );
        for k in &l.locks {
            let site = k.sites.first().map_or("-".to_string(), |s| s.0.clone());
            let owners: Vec<&str> = k.owners.iter().take(3).map(|o| o.0.as_str()).collect();
            let threads: Vec<String> = k
                .blocked_per_thread
                .iter()
                .take(4)
                .map(|(t, d)| format!("{t} {}", human_ns(*d)))
                .collect();
            let _ = writeln!(
                out,
                "  {} {} {} {} {} {} {} at {site}; held by {}; blocked: {}",
                pad(&shorten(&k.class, w), w),
                pad(k.kind, 15),
                lpad(&pct(k.csp), 5),
                lpad(&pct(k.max_phase_csp), 5),
                lpad(&k.contended.to_string(), 9),
                lpad(&human_ns(k.blocked_ns), 9),
                lpad(&human_ns(k.max_blocked_ns), 9),
                if owners.is_empty() {
                    "?".to_string()
                } else {
                    owners.join(", ")
                },
                threads.join(", ")
            );
        }
    }
    for p in &l.phases {
        let k = &l.locks[p.lock];
        let mut msg = format!(
            "from {} to {}, {} of all running time was spent waiting for `{}`",
            secs(p.start_ns),
            secs(p.end_ns),
            pct(p.csp),
            k.class
        );
        if let Some(s) = &p.site {
            msg.push_str(&format!(" at {s}"));
        }
        if let Some(o) = &p.owner {
            msg.push_str(&format!(", held by `{o}`"));
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
            p.site
        );
    }
}
