//! The "Possible speedups" section of the text report, and the full
//! `weft speedups` view (docs/speedups.md).

use std::fmt::Write as _;

use weft_analysis::human_ns;
use weft_analysis::speedups::{Limitation, Speedups, Status, RESIDUAL_WARN};

fn eff(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.2}"))
}

fn secs(ns: f64) -> String {
    human_ns(ns.max(0.0) as u64)
}

/// The lines, best first: `locks ×1.43  imbalance ×1.28 …`.
fn ranked_lines(s: &Speedups) -> String {
    let mut v: Vec<(Limitation, f64)> = s
        .lines
        .iter()
        .filter_map(|l| Some((l.remove, l.closed_form_gain?)))
        .collect();
    v.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    v.iter()
        .map(|(l, g)| {
            let sim = s
                .line(*l)
                .and_then(|x| x.simulated_gain)
                .map_or(String::new(), |g| format!(" (sim ×{g:.2})"));
            format!("{} ×{g:.2}{sim}", l.label())
        })
        .collect::<Vec<_>>()
        .join("  ")
}

/// The section of `weft report`.
pub fn speedups_text(out: &mut String, s: &Speedups) {
    let base = match s.baseline {
        "none" => "one trace, no baseline run".to_string(),
        k => format!("baseline run: {}", k.replace('_', " ")),
    };
    let cpus = s
        .cpus
        .map_or("CPUs unknown".to_string(), |c| format!("{c} CPUs"));
    let team = if s.status == Status::Ok {
        format!(", team of {:.1} threads", s.threads_effective)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "\nPossible speedups ({} {}, {cpus}{team}; {base})",
        s.window_source,
        human_ns(s.observed_ns),
    );
    if s.status != Status::Ok {
        for n in &s.notes {
            let _ = writeln!(out, "  {n}.");
        }
        return;
    }
    let e = &s.efficiencies;
    let residual = s
        .residual
        .map_or("-".into(), |r| format!("{:+.0}%", r * 100.0));
    let _ = writeln!(
        out,
        "  calculated {} vs observed {} (residual {residual})",
        s.calculated_ns.map_or("-".into(), secs),
        human_ns(s.observed_ns)
    );
    let _ = writeln!(
        out,
        "  efficiencies: parallel fraction {}  balance {}  locks {}  cores {}  serial overhead {}  parallel overhead {}",
        eff(e.parallel_fraction),
        eff(e.load_balance),
        eff(e.lock_contention),
        eff(e.cores),
        eff(e.serial_overhead),
        eff(e.parallel_overhead)
    );
    let _ = writeln!(out, "  if removed (upper bounds): {}", ranked_lines(s));
    if s.baseline == "none" {
        let _ = writeln!(
            out,
            "  not visible without a baseline run: overhead (add --baseline base.weft, a one-worker run)"
        );
    }
    if s.residual.is_some_and(|r| r.abs() > RESIDUAL_WARN) {
        let _ = writeln!(
            out,
            "  the residual is above {:.0}%: the run is not shaped like the model (I/O, pipelines, unrecorded waits); read the lines with care",
            RESIDUAL_WARN * 100.0
        );
    }
    for n in &s.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    let _ = writeln!(
        out,
        "  A possible speedup is an upper bound: removing one limitation can raise another."
    );
}

/// `weft speedups`: the section, then the quantities, the longest sections and
/// the speedups across core counts.
pub fn speedups_full_text(s: &Speedups) -> String {
    let mut out = String::new();
    speedups_text(&mut out, s);
    if s.status != Status::Ok {
        return out;
    }
    let _ = writeln!(
        out,
        "\nIf removed: gain over the calculated time, eq. 11 and simulated (the execution graph with it removed)"
    );
    let _ = writeln!(
        out,
        "  {:<18} {:>9} {:>9} {:>9}",
        "limitation", "eq. 11", "simulated", "speedup"
    );
    let gain = |x: Option<f64>| x.map_or("-".into(), |v| format!("×{v:.2}"));
    for l in &s.lines {
        let _ = writeln!(
            out,
            "  {:<18} {:>9} {:>9} {:>9}",
            l.remove.label(),
            gain(l.closed_form_gain),
            gain(l.simulated_gain),
            gain(l.possible_speedup)
        );
    }
    let q = &s.quantities;
    let _ = writeln!(out, "\nQuantities (ns of the window; docs/speedups.md)");
    for (k, v) in [
        ("C_s   serial work (on CPU)", q.cpu_serial),
        ("A_s   serial path (running + runnable)", q.active_serial),
        ("C_p   parallel work (on CPU)", q.cpu_parallel),
        (
            "B_p   blocked on locks in parallel sections",
            q.lock_blocked_parallel,
        ),
        (
            "H_p   handing locks over (waking a waiter)",
            q.lock_handoff_parallel,
        ),
        ("M_cpu busiest threads' work, per section", q.busiest_cpu),
        (
            "M_act busiest threads' running + runnable",
            q.busiest_active,
        ),
        ("G     GC pauses", q.gc),
        ("T_1   reference work", s.reference_ns),
    ] {
        let _ = writeln!(out, "  {k:<46} {:>10}", secs(v));
    }
    let _ = writeln!(
        out,
        "  #T    team threads {} (effective {:.2}); CPU shares {}",
        s.threads,
        s.threads_effective,
        s.cpu_source.as_str()
    );
    let mut longest: Vec<_> = s.sections.iter().collect();
    longest.sort_by_key(|b| std::cmp::Reverse(b.busiest_ns));
    let _ = writeln!(
        out,
        "\nParallel sections: {} (between the points where threads meet); the longest:",
        s.sections_total
    );
    let _ = writeln!(
        out,
        "  {:>10} {:>10} {:>4} {:>8} {:>6}",
        "from", "to", "thr", "balance", "locks"
    );
    for sec in longest.iter().take(5) {
        let _ = writeln!(
            out,
            "  {:>10} {:>10} {:>4} {:>8.2} {:>6.2}",
            human_ns(sec.start_ns),
            human_ns(sec.end_ns),
            sec.threads,
            sec.load_balance,
            sec.lock_contention
        );
    }
    let _ = writeln!(
        out,
        "\nSpeedup over the reference work at other core counts (eq. 11, efficiencies held; an extrapolation)"
    );
    let names: Vec<&str> = s
        .across_cores
        .first()
        .map(|p| p.removed.iter().map(|(l, _)| l.as_str()).collect())
        .unwrap_or_default();
    let _ = write!(out, "  {:>5} {:>8}", "cores", "current");
    for n in &names {
        let _ = write!(
            out,
            " {:>9}",
            format!("no {n}").chars().take(9).collect::<String>()
        );
    }
    let _ = writeln!(out, " {:>6}", "ideal");
    for p in &s.across_cores {
        let _ = write!(out, "  {:>5} {:>8.2}", p.cores, p.current);
        for (_, v) in &p.removed {
            let _ = write!(out, " {:>9}", v.map_or("-".into(), |v| format!("{v:.2}")));
        }
        let _ = writeln!(out, " {:>6.0}", p.ideal);
    }
    out
}
