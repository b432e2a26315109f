//! The fork-join section of the terminal report (docs/forkjoin.md): per pool and
//! per computation the wosp metrics, granularity per task class, per-thread
//! executed/stolen/busy and the load balance, then the fork-join findings of the
//! analysis (`weft_analysis::findings`).

use std::fmt::Write as _;

use weft_analysis::{human_ns, Analysis, FindingKind};

/// Computations listed (largest work first).
const MAX_COMPUTATIONS: usize = 8;

fn short(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        format!("{s}{}", " ".repeat(width - n))
    } else {
        let tail: String = s.chars().skip(n - (width - 1)).collect();
        format!("…{tail}")
    }
}

fn simple(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

/// Appends the fork-join section (nothing if the trace has no fork-join activity).
pub fn forkjoin_text(out: &mut String, a: &Analysis) {
    let f = &a.forkjoin;
    if f.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nFork-join (wosp model): {} tasks, {} forks, {} external submissions, {} steals, \
         {} cancelled, {} reused, {} never run, max depth {}",
        f.tasks,
        f.forks,
        f.external_submissions,
        f.steals,
        f.cancelled,
        f.reused,
        f.never_run,
        f.max_depth
    );
    for p in &f.pools {
        let lb = f
            .load_balance(p.pool)
            .map_or("-".to_string(), |x| format!("{x:.2}"));
        let _ = writeln!(
            out,
            "  pool {} #{:08x} (parallelism {}): {} tasks, {} steals, {} computations, \
             load balance {lb} (max busy / mean busy)",
            simple(&p.class),
            p.pool,
            p.parallelism,
            p.tasks,
            p.steals,
            p.computations
        );
        let threads: Vec<_> = f.threads.iter().filter(|t| t.pool == p.pool).collect();
        if !threads.is_empty() {
            let _ = writeln!(
                out,
                "    {} {:>9} {:>7} {:>10} {:>12}",
                short("thread", 28),
                "executed",
                "stolen",
                "busy",
                "join-blocked"
            );
            for t in threads {
                let _ = writeln!(
                    out,
                    "    {} {:>9} {:>7} {:>10} {:>12}",
                    short(&t.name, 28),
                    t.executed,
                    t.stolen,
                    human_ns(t.busy_ns),
                    human_ns(t.join_blocked_ns)
                );
            }
        }
    }
    let others: Vec<_> = f
        .threads
        .iter()
        .filter(|t| t.pool == 0 && t.executed > 0)
        .collect();
    for t in others {
        let _ = writeln!(
            out,
            "  outside a pool: {} executed {} tasks, busy {}",
            t.name,
            t.executed,
            human_ns(t.busy_ns)
        );
    }
    if !f.computations.is_empty() {
        let mut cs: Vec<_> = f.computations.iter().collect();
        cs.sort_by_key(|c| std::cmp::Reverse(c.work_ns));
        let _ = writeln!(
            out,
            "  computations ({}; largest work first; span = critical path, parallelism = work / span)",
            cs.len()
        );
        let _ = writeln!(
            out,
            "    {} {:>9} {:>10} {:>10} {:>11} {:>5}",
            short("root class", 40),
            "tasks",
            "work",
            "span",
            "parallelism",
            "depth"
        );
        for c in cs.iter().take(MAX_COMPUTATIONS) {
            let _ = writeln!(
                out,
                "    {} {:>9} {:>10} {:>10} {:>11.1} {:>5}",
                short(&c.root_class, 40),
                c.tasks,
                human_ns(c.work_ns),
                human_ns(c.span_ns),
                c.parallelism,
                c.max_depth
            );
        }
        if cs.len() > MAX_COMPUTATIONS {
            let _ = writeln!(out, "    … {} more", cs.len() - MAX_COMPUTATIONS);
        }
    }
    if !f.classes.is_empty() {
        let _ = writeln!(out, "  task granularity (self time) per class");
        let _ = writeln!(
            out,
            "    {} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9}  fork site",
            short("class", 40),
            "tasks",
            "total",
            "min",
            "p50",
            "p90",
            "max"
        );
        for c in &f.classes {
            let g = &c.granularity_ns;
            let _ = writeln!(
                out,
                "    {} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9}  {}",
                short(&c.class, 40),
                c.tasks,
                human_ns(g.total),
                human_ns(g.min),
                human_ns(g.p50),
                human_ns(g.p90),
                human_ns(g.max),
                c.site.as_deref().unwrap_or("-")
            );
        }
    }
    let findings: Vec<_> = a.findings.iter().filter(|x| is_forkjoin(x.kind)).collect();
    if !findings.is_empty() {
        let _ = writeln!(out, "  findings (also in the list at the top)");
        for x in findings {
            let _ = writeln!(out, "    - {}", x.message);
        }
    }
}

/// The findings of the fork-join model.
pub fn is_forkjoin(k: FindingKind) -> bool {
    matches!(
        k,
        FindingKind::ForkJoinFineGrained
            | FindingKind::ForkJoinImbalance
            | FindingKind::ForkJoinLowParallelism
            | FindingKind::ForkJoinJoinBlocking
    )
}
