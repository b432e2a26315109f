//! The fork-join section of the terminal report (docs/forkjoin.md): per pool and
//! per computation the wosp metrics, granularity per task class, per-thread
//! executed/stolen/busy and the load balance, then findings in plain words.

use std::fmt::Write as _;

use weft_analysis::forkjoin::{ForkJoinAnalysis, FINE_NS};
use weft_analysis::human_ns;

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

/// `pkg.Class.method:line` → `Class.java:line` (the source file as users name it).
fn source_of(frame: &str) -> String {
    let Some((qual, line)) = frame.rsplit_once(':') else {
        return frame.to_string();
    };
    let class = qual.rsplit_once('.').map_or(qual, |(c, _)| c);
    let outer = simple(class).split('$').next().unwrap_or(class);
    format!("{outer}.java:{line}")
}

/// Appends the fork-join section (nothing if the trace has no fork-join activity).
pub fn forkjoin_text(out: &mut String, f: &ForkJoinAnalysis) {
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
    let findings = findings(f);
    if !findings.is_empty() {
        let _ = writeln!(out, "  findings");
        for x in findings {
            let _ = writeln!(out, "    - {x}");
        }
    }
}

/// Findings in plain words.
pub fn findings(f: &ForkJoinAnalysis) -> Vec<String> {
    let mut v = Vec::new();
    for c in &f.classes {
        if c.tasks >= 1000 && c.fine * 2 >= c.tasks {
            let share = c.fine as f64 / c.tasks as f64 * 100.0;
            let at = c
                .site
                .as_deref()
                .map_or(String::new(), |s| format!(" at {}", source_of(s)));
            v.push(format!(
                "{share:.0}% of {} tasks run < {} (median {}): raise the sequential cutoff{at}",
                simple(&c.class),
                human_ns(FINE_NS),
                human_ns(c.granularity_ns.p50)
            ));
        }
    }
    for p in &f.pools {
        let busy: Vec<_> = f
            .threads
            .iter()
            .filter(|t| t.pool == p.pool && t.executed > 0)
            .collect();
        let total: u64 = busy.iter().map(|t| t.busy_ns).sum();
        if p.parallelism >= 2 && total >= 10_000_000 {
            if let Some(t) = busy.iter().max_by_key(|t| t.busy_ns) {
                let share = t.busy_ns as f64 / total as f64;
                let fair = 1.0 / p.parallelism as f64;
                if share >= 0.6 && share > 1.5 * fair {
                    v.push(format!(
                        "one thread ({}) did {:.0}% of the work of pool #{:08x} (parallelism {}): \
                         the others found little to steal; split the work earlier or finer",
                        t.name,
                        share * 100.0,
                        p.pool,
                        p.parallelism
                    ));
                }
            }
        }
    }
    for c in &f.computations {
        if c.work_ns >= 50_000_000 && c.tasks > 1 && c.parallelism < 2.0 {
            v.push(format!(
                "the computation rooted at {} has little parallelism ({:.1}: work {}, critical path {}): \
                 its tasks wait on each other; fork earlier or join later",
                simple(&c.root_class),
                c.parallelism,
                human_ns(c.work_ns),
                human_ns(c.span_ns)
            ));
        }
    }
    let (blocked, busy) = f.workers_blocked_and_busy_ns();
    if busy >= 10_000_000 && blocked * 4 >= busy {
        v.push(format!(
            "worker threads spent {} blocked in join/get against {} running tasks: joins wait on \
             tasks that are still running elsewhere",
            human_ns(blocked),
            human_ns(busy)
        ));
    }
    v
}
