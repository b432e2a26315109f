//! Findings in plain words, with the numbers behind them: too fine-grained and
//! too coarse-grained task classes (the evidence of tgp, digest §7.1), and what
//! the trace itself says about its completeness (losses, truncation).
//!
//! The thesis gives no numeric thresholds; ours are the named constants below.
//! This module decides and words findings; it does not lay out reports.

use std::collections::{BTreeMap, BTreeSet};

use crate::cpu::{CpuProfile, WindowStats};
use crate::model::{loss_reason_str, Model};
use crate::tasks::{TaskAnalysis, TaskClassStats, TaskKind};

/// A class needs at least this many reported executions to be "many small tasks":
/// below it the per-task overhead cannot add up to much (tgp's FG classes had 10²–10⁶).
pub const FINE_MIN_EXECUTIONS: u64 = 1_000;
/// Median self time below which a task is tiny: ~50 µs is the order of a few
/// context switches or queue hand-offs, so fixed costs per task are comparable to the work.
pub const FINE_MAX_MEDIAN_SELF_NS: u64 = 50_000;
/// Context switches while the class runs must be at least this many times the rate
/// when it does not, to count as contention caused by it (tgp compares the two).
pub const FINE_CS_RATIO: f64 = 1.5;
/// …and at least this absolute rate, so that 2 vs 1 switches per 100 ms is not "contention".
pub const FINE_MIN_CS_PER_100MS: f64 = 50.0;
/// Queue wait (median) at least this fraction of the median self time counts as
/// "overhead comparable to the task itself".
pub const FINE_OVERHEAD_RATIO: f64 = 0.5;
/// The outside-the-class window must cover this much sampled time for the
/// inside/outside comparison to mean anything (two 100 ms samples).
pub const MIN_COMPARE_NS: u64 = 200_000_000;

/// At most this many executions per CPU for "a few big tasks" (tgp: about the number of cores).
pub const COARSE_MAX_EXECUTIONS_PER_CPU: u64 = 2;
/// CPU count assumed when the trace does not say (the thesis machine had 8 cores).
pub const DEFAULT_CPUS: u64 = 8;
/// A task whose median self time is this share of the run is long…
pub const COARSE_MIN_SHARE_OF_RUN: f64 = 0.10;
/// …or this many times the median of the other classes' medians ("several orders of magnitude").
pub const COARSE_MIN_RATIO_TO_OTHERS: f64 = 1_000.0;
/// Mean utilisation below this while the class runs means CPUs sit idle that smaller tasks could use.
pub const COARSE_MAX_UTILISATION: f64 = 0.60;
/// Coarse tasks need this much sampled time while they run to judge utilisation.
pub const COARSE_MIN_COVERED_NS: u64 = 100_000_000;
/// A thread counts as one big task only if it was on CPU at least this share of
/// its life (its own CPU time from ThreadEnd): a mostly blocked thread (timer,
/// idle pool worker) is waiting, not working, and splitting it would not help.
pub const COARSE_THREAD_MIN_BUSY: f64 = 0.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingKind {
    /// Records were lost: counts are lower bounds.
    Losses,
    /// The trace ended without an End record.
    Truncated,
    /// Records of unknown kinds were skipped.
    UnknownRecords,
    /// Begins without ends / ends without begins.
    Unbalanced,
    /// Many tiny tasks with evidence of overhead: merge.
    FineGrained,
    /// A few huge tasks with idle CPUs: split.
    CoarseGrained,
    /// Virtual threads blocked while pinned to their carrier.
    VirtualThreadPinned,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Losses => "losses",
            FindingKind::Truncated => "truncated",
            FindingKind::UnknownRecords => "unknown_records",
            FindingKind::Unbalanced => "unbalanced",
            FindingKind::FineGrained => "fine_grained",
            FindingKind::CoarseGrained => "coarse_grained",
            FindingKind::VirtualThreadPinned => "virtual_thread_pinned",
        }
    }
}

/// A number or word behind a finding.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    Int(u64),
    Float(f64),
    Text(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    pub class: Option<String>,
    /// Plain words, with the numbers.
    pub message: String,
    /// The numbers behind the message, by name (units in the name: `_ns`, ratios as fractions).
    pub fields: Vec<(&'static str, FieldValue)>,
}

impl Finding {
    pub fn field(&self, name: &str) -> Option<&FieldValue> {
        self.fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// Human form of a duration in ns: `850 ns`, `12.3 µs`, `4.56 ms`, `7.89 s`.
pub fn human_ns(ns: u64) -> String {
    let f = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{} µs", sig3(f / 1e3))
    } else if ns < 1_000_000_000 {
        format!("{} ms", sig3(f / 1e6))
    } else {
        format!("{} s", sig3(f / 1e9))
    }
}

fn sig3(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// All findings, most urgent first: trace completeness, then task granularity.
pub fn find(model: &Model, tasks: &TaskAnalysis, cpu: &CpuProfile) -> Vec<Finding> {
    let mut out = Vec::new();
    trace_findings(model, tasks, &mut out);
    granularity_findings(model, tasks, cpu, &mut out);
    out
}

fn trace_findings(model: &Model, tasks: &TaskAnalysis, out: &mut Vec<Finding>) {
    if model.truncated {
        let incomplete = tasks.incomplete;
        out.push(Finding {
            kind: FindingKind::Truncated,
            class: None,
            message: format!(
                "The trace is truncated: recording did not end normally (the JVM crashed or was killed, \
                 or the file was cut). Executions still open were closed at their thread's last record \
                 ({incomplete} incomplete), and the last records may be missing."
            ),
            fields: vec![("incomplete_executions", FieldValue::Int(incomplete))],
        });
    }
    if !model.losses.is_empty() {
        let records = model.lost_records();
        let threads: BTreeSet<u32> = model.losses.iter().map(|l| l.thread).collect();
        let reasons: BTreeSet<String> = model
            .losses
            .iter()
            .map(|l| loss_reason_str(l.reason))
            .collect();
        let from = model.losses.iter().map(|l| l.from_ns).min().unwrap_or(0);
        let to = model.losses.iter().map(|l| l.to_ns).max().unwrap_or(0);
        let reasons: Vec<String> = reasons.into_iter().collect();
        out.push(Finding {
            kind: FindingKind::Losses,
            class: None,
            message: format!(
                "{records} records were lost ({}) on {} thread(s) between {} and {}: counts are lower \
                 bounds and executions there may be missing or incomplete.",
                reasons.join(", "),
                threads.len(),
                human_ns(from),
                human_ns(to)
            ),
            fields: vec![
                ("records", FieldValue::Int(records)),
                ("losses", FieldValue::Int(model.losses.len() as u64)),
                ("threads", FieldValue::Int(threads.len() as u64)),
                ("from_ns", FieldValue::Int(from)),
                ("to_ns", FieldValue::Int(to)),
                ("reasons", FieldValue::Text(reasons.join(","))),
            ],
        });
    }
    if model.unknown_records > 0 {
        out.push(Finding {
            kind: FindingKind::UnknownRecords,
            class: None,
            message: format!(
                "{} records of kinds this weft does not know were skipped (the agent is newer).",
                model.unknown_records
            ),
            fields: vec![("records", FieldValue::Int(model.unknown_records))],
        });
    }
    let open_tasks = tasks
        .executions
        .iter()
        .filter(|e| e.incomplete && e.kind != TaskKind::Thread)
        .count() as u64;
    if tasks.unmatched_ends > 0 || (open_tasks > 0 && !model.truncated) {
        out.push(Finding {
            kind: FindingKind::Unbalanced,
            class: None,
            message: format!(
                "{open_tasks} task executions had no end record (closed at their thread's last record or \
                 end) and {} end records had no begin; their times are approximate.",
                tasks.unmatched_ends
            ),
            fields: vec![
                ("incomplete_executions", FieldValue::Int(open_tasks)),
                ("unmatched_ends", FieldValue::Int(tasks.unmatched_ends)),
            ],
        });
    }
}

/// Where to act for a class: the most frequent submission site, else creation site.
fn act_site(c: &TaskClassStats, prefer_submit: bool) -> Option<(String, &'static str)> {
    let sub = c.sites.iter().find_map(|(s, _)| s.submitted.clone());
    let cre = c.sites.iter().find_map(|(s, _)| s.created.clone());
    let (a, b) = if prefer_submit {
        (sub.map(|s| (s, "submitted")), cre.map(|s| (s, "created")))
    } else {
        (cre.map(|s| (s, "created")), sub.map(|s| (s, "submitted")))
    };
    a.or(b)
}

fn granularity_findings(
    model: &Model,
    tasks: &TaskAnalysis,
    cpu: &CpuProfile,
    out: &mut Vec<Finding>,
) {
    // Intervals of each class's reported executions, and classes that host
    // reported executions (worker threads: their self time is mostly waiting).
    let mut intervals: BTreeMap<(&str, TaskKind), Vec<(u64, u64)>> = BTreeMap::new();
    let mut hosts: BTreeSet<(&str, TaskKind)> = BTreeSet::new();
    for e in &tasks.executions {
        if e.reported {
            intervals
                .entry((&*e.class, e.kind))
                .or_default()
                .push((e.begin_ns, e.end_ns));
            if let Some(p) = e.parent.and_then(|p| tasks.executions.get(p)) {
                hosts.insert((&*p.class, p.kind));
            }
        }
    }
    let cpus = if cpu.cpus_known {
        cpu.cpus as u64
    } else {
        DEFAULT_CPUS
    };
    for c in &tasks.classes {
        if c.executions == 0 {
            continue;
        }
        let key = (c.class.as_str(), c.kind);
        let ivs = intervals.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        let (inside, outside) = cpu.inside_outside(ivs);
        if let Some(f) = fine_grained(c, inside, outside) {
            out.push(f);
        } else if !hosts.contains(&key) {
            if let Some(f) = coarse_grained(c, tasks, model, cpu, cpus, inside, outside) {
                out.push(f);
            }
        }
    }
}

fn fine_grained(
    c: &TaskClassStats,
    inside: Option<WindowStats>,
    outside: Option<WindowStats>,
) -> Option<Finding> {
    let g = c.granularity_ns;
    if c.kind == TaskKind::Thread
        || c.executions < FINE_MIN_EXECUTIONS
        || g.p50 >= FINE_MAX_MEDIAN_SELF_NS
    {
        return None;
    }
    let mut evidence = Vec::new();
    let mut fields = vec![
        ("executions", FieldValue::Int(c.executions)),
        ("self_p50_ns", FieldValue::Int(g.p50)),
        ("self_total_ns", FieldValue::Int(g.total)),
    ];
    if let (Some(i), Some(o)) = (inside, outside) {
        fields.push(("cs_per_100ms_during", FieldValue::Float(i.cs_per_100ms)));
        fields.push(("cs_per_100ms_outside", FieldValue::Float(o.cs_per_100ms)));
        if o.covered_ns >= MIN_COMPARE_NS
            && i.cs_per_100ms >= FINE_MIN_CS_PER_100MS
            && i.cs_per_100ms >= FINE_CS_RATIO * o.cs_per_100ms
        {
            let ratio = if o.cs_per_100ms > 0.0 {
                format!("{:.1}× ", i.cs_per_100ms / o.cs_per_100ms)
            } else {
                String::new()
            };
            evidence.push(format!(
                "context switches are {ratio}higher while they run ({:.0} vs {:.0} per 100 ms)",
                i.cs_per_100ms, o.cs_per_100ms
            ));
        }
    }
    if let Some(w) = c.queue_wait_ns {
        fields.push(("queue_wait_p50_ns", FieldValue::Int(w.p50)));
        if w.p50 as f64 >= FINE_OVERHEAD_RATIO * g.p50 as f64 {
            evidence.push(format!(
                "they wait {} in the queue (median) for {} of work",
                human_ns(w.p50),
                human_ns(g.p50)
            ));
        }
    }
    if evidence.is_empty() {
        return None;
    }
    let site = act_site(c, true);
    if let Some((s, _)) = &site {
        fields.push(("site", FieldValue::Text(s.clone())));
    }
    let where_ = match &site {
        Some((s, how)) => format!(" where they are {how} ({s})"),
        None => String::new(),
    };
    Some(Finding {
        kind: FindingKind::FineGrained,
        class: Some(c.class.clone()),
        message: format!(
            "{} is too fine-grained: {} tasks with a median self time of {}, and {}. \
             Merge tasks (batch several items per task){}.",
            c.class,
            c.executions,
            human_ns(g.p50),
            evidence.join(", and "),
            where_
        ),
        fields,
    })
}

fn coarse_grained(
    c: &TaskClassStats,
    tasks: &TaskAnalysis,
    model: &Model,
    cpu: &CpuProfile,
    cpus: u64,
    inside: Option<WindowStats>,
    outside: Option<WindowStats>,
) -> Option<Finding> {
    let g = c.granularity_ns;
    if c.executions > COARSE_MAX_EXECUTIONS_PER_CPU * cpus || g.p50 == 0 {
        return None;
    }
    if c.kind == TaskKind::Thread {
        // Busy share of the class's threads; unknown CPU time → not judged.
        let (mut cpu_ns, mut life_ns) = (0u64, 0u64);
        for e in tasks
            .executions
            .iter()
            .filter(|e| e.reported && e.kind == TaskKind::Thread && *e.class == *c.class)
        {
            let t = model.threads.get(&e.thread).and_then(|t| t.cpu_ns)?;
            cpu_ns = cpu_ns.saturating_add(t);
            life_ns = life_ns.saturating_add(e.duration_ns());
        }
        if life_ns == 0 || (cpu_ns as f64) < COARSE_THREAD_MIN_BUSY * life_ns as f64 {
            return None;
        }
    }
    let share = if model.duration_ns > 0 {
        g.p50 as f64 / model.duration_ns as f64
    } else {
        0.0
    };
    let mut others: Vec<u64> = tasks
        .classes
        .iter()
        .filter(|o| o.executions > 0 && !(o.class == c.class && o.kind == c.kind))
        .map(|o| o.granularity_ns.p50)
        .collect();
    others.sort_unstable();
    let others_p50 = (!others.is_empty()).then(|| crate::tasks::percentile_sorted(&others, 50));
    let ratio = others_p50.map(|o| g.p50 as f64 / o.max(1) as f64);
    let long =
        share >= COARSE_MIN_SHARE_OF_RUN || ratio.is_some_and(|r| r >= COARSE_MIN_RATIO_TO_OTHERS);
    let ins = inside.filter(|i| i.covered_ns >= COARSE_MIN_COVERED_NS)?;
    if !long || !cpu.cpus_known || ins.utilisation >= COARSE_MAX_UTILISATION {
        return None;
    }
    let mut fields = vec![
        ("executions", FieldValue::Int(c.executions)),
        ("self_p50_ns", FieldValue::Int(g.p50)),
        ("share_of_run", FieldValue::Float(share)),
        ("utilisation_during", FieldValue::Float(ins.utilisation)),
        ("cpus", FieldValue::Int(cpus)),
        ("cs_per_100ms_during", FieldValue::Float(ins.cs_per_100ms)),
    ];
    if let Some(o) = others_p50 {
        fields.push(("others_p50_ns", FieldValue::Int(o)));
    }
    let contended = outside.is_some_and(|o| {
        o.covered_ns >= MIN_COMPARE_NS
            && ins.cs_per_100ms >= FINE_MIN_CS_PER_100MS
            && ins.cs_per_100ms >= FINE_CS_RATIO * o.cs_per_100ms
    });
    let site = act_site(c, false);
    if let Some((s, _)) = &site {
        fields.push(("site", FieldValue::Text(s.clone())));
    }
    let where_ = match &site {
        Some((s, how)) => format!(" where they are {how} ({s})"),
        None => String::new(),
    };
    let caveat = if contended {
        format!(
            " Context switches are high while they run ({:.0} per 100 ms): if they contend on a \
             lock, splitting may not help.",
            ins.cs_per_100ms
        )
    } else {
        String::new()
    };
    Some(Finding {
        kind: FindingKind::CoarseGrained,
        class: Some(c.class.clone()),
        message: format!(
            "{} is too coarse-grained: only {} tasks for {} CPUs, each about {} ({} of the run), \
             and the CPUs are {} busy while they run. Split tasks (more, smaller pieces of work){}.{}",
            c.class,
            c.executions,
            cpus,
            human_ns(g.p50),
            pct(share),
            pct(ins.utilisation),
            where_,
            caveat
        ),
        fields,
    })
}

/// A pinning site is worth a finding from this much blocked time (a carrier
/// held for a millisecond is thousands of virtual-thread tasks not run)…
pub const PINNED_MIN_BLOCKED_NS: u64 = 1_000_000;

/// Virtual threads that blocked while pinned to their carrier, one finding per
/// site, most blocked time first.
pub fn virtual_thread_findings(vt: &crate::vthreads::VirtualThreadAnalysis) -> Vec<Finding> {
    vt.pinned
        .iter()
        .filter(|p| p.blocked_ns >= PINNED_MIN_BLOCKED_NS)
        .map(|p| {
            let what = match (p.how, vt.synchronized_pins) {
                ("monitor", _) => "waiting for a contended synchronized lock",
                (_, Some(false)) => "parked under a native frame (this JDK no longer pins on synchronized)",
                _ => "parked inside synchronized (or under a native frame)",
            };
            let fix = match (p.how, vt.synchronized_pins) {
                (_, Some(false)) => "move the blocking call out of the native or class-initializer frame",
                _ => "replace synchronized with a ReentrantLock there, or move the blocking call out of the synchronized block",
            };
            let saturated = if p.carriers_saturated_ns > 0 {
                format!(
                    "; all {} carriers were busy for {} of it, so other virtual threads could not run",
                    vt.carriers,
                    human_ns(p.carriers_saturated_ns)
                )
            } else {
                String::new()
            };
            Finding {
                kind: FindingKind::VirtualThreadPinned,
                class: None,
                message: format!(
                    "virtual threads pinned at {} blocked their carriers {} ({} times, longest {}) {what}{saturated}: {fix}.",
                    p.site,
                    human_ns(p.blocked_ns),
                    p.count,
                    human_ns(p.max_ns),
                ),
                fields: vec![
                    ("site", FieldValue::Text(p.site.clone())),
                    ("count", FieldValue::Int(p.count)),
                    ("blocked_ns", FieldValue::Int(p.blocked_ns)),
                    ("max_ns", FieldValue::Int(p.max_ns)),
                    ("carriers_saturated_ns", FieldValue::Int(p.carriers_saturated_ns)),
                ],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use weft_trace::{LossReason, Record};

    fn findings(tb: &TB) -> Vec<Finding> {
        crate::analyze(&tb.trace()).findings
    }

    fn kinds(f: &[Finding]) -> Vec<FindingKind> {
        f.iter().map(|f| f.kind).collect()
    }

    /// Samples every 100 ms over `[0, until)`: CPU busy fraction and cs per 100 ms
    /// given by the closures of the interval start.
    fn samples(
        tb: &mut TB,
        until: u64,
        cpus: u64,
        util: impl Fn(u64) -> f64,
        cs: impl Fn(u64) -> u64,
    ) {
        let (mut cpu, mut c) = (0u64, 0u64);
        let mut ts = 0;
        while ts <= until {
            tb.global(Record::Sample {
                ts,
                process_cpu_ns: cpu,
                voluntary_cs: c,
                involuntary_cs: 0,
                live_threads: 4,
            });
            cpu += (util(ts) * 100e6 * cpus as f64) as u64;
            c += cs(ts);
            ts += 100_000_000;
        }
    }

    /// `n` submitted tasks of demo.Work on pool thread 1, from `from`, each
    /// waiting `wait` then running `work`.
    fn small_tasks(tb: &mut TB, from: u64, n: u32, wait: u64, work: u64) -> u64 {
        tb.site(5, "demo.Main.loop:42");
        tb.start(1, 0, C_THREAD, (C_WORKER, 1));
        let mut t = from;
        for i in 0..n {
            tb.submit(MAIN, t, (C_WORK, i + 1), 5);
            tb.run(1, t + wait, t + wait + work, P_WORK_RUN, C_WORK, i + 1);
            t += wait + work;
        }
        t
    }

    #[test]
    fn fine_grained_by_queue_wait() {
        let mut tb = TB::new();
        let end = small_tasks(&mut tb, 0, 2000, 30_000, 10_000);
        tb.thread_end(1, end + 1)
            .global(Record::End { ts: end + 2 });
        let f = findings(&tb);
        assert_eq!(kinds(&f), vec![FindingKind::FineGrained]);
        let f = &f[0];
        assert_eq!(f.class.as_deref(), Some("demo.Work"));
        assert!(f.message.contains("Merge tasks"), "{}", f.message);
        assert!(f.message.contains("demo.Main.loop:42"), "{}", f.message);
        assert_eq!(f.field("executions"), Some(&FieldValue::Int(2000)));
        assert_eq!(f.field("self_p50_ns"), Some(&FieldValue::Int(10_000)));
        assert_eq!(f.field("queue_wait_p50_ns"), Some(&FieldValue::Int(30_000)));
    }

    #[test]
    fn not_fine_grained_when_big_few_or_no_evidence() {
        // tasks of 200 µs
        let mut tb = TB::new();
        let end = small_tasks(&mut tb, 0, 2000, 300_000, 200_000);
        tb.thread_end(1, end + 1)
            .global(Record::End { ts: end + 2 });
        assert!(findings(&tb).is_empty());
        // only 500 tasks
        let mut tb = TB::new();
        let end = small_tasks(&mut tb, 0, 500, 30_000, 10_000);
        tb.thread_end(1, end + 1)
            .global(Record::End { ts: end + 2 });
        assert!(findings(&tb).is_empty());
        // tiny and many, but no queue wait and no context switches measured
        let mut tb = TB::new();
        let end = small_tasks(&mut tb, 0, 2000, 100, 10_000);
        tb.thread_end(1, end + 1)
            .global(Record::End { ts: end + 2 });
        assert!(findings(&tb).is_empty());
    }

    #[test]
    fn fine_grained_by_context_switches_only_when_they_rise() {
        let build = |cs_inside: u64| {
            let mut tb = TB::new();
            tb.header.set("cpus", "4");
            // 2000 tasks of 10 µs spread over [1 s, 2 s): 500 µs apart.
            tb.start(1, 0, C_THREAD, (C_WORKER, 1));
            for i in 0..2000u32 {
                let b = 1_000_000_000 + i as u64 * 500_000;
                tb.submit(MAIN, b - 100, (C_WORK, i + 1), 0);
                tb.run(1, b, b + 10_000, P_WORK_RUN, C_WORK, i + 1);
            }
            tb.thread_end(1, 3_000_000_000);
            samples(
                &mut tb,
                3_000_000_000,
                4,
                |_| 0.5,
                |ts| {
                    if (1_000_000_000..2_000_000_000).contains(&ts) {
                        cs_inside
                    } else {
                        100
                    }
                },
            );
            tb.global(Record::End { ts: 3_000_000_000 });
            tb
        };
        let f = findings(&build(1000));
        assert_eq!(kinds(&f), vec![FindingKind::FineGrained]);
        assert!(
            f[0].message.contains("context switches"),
            "{}",
            f[0].message
        );
        match f[0].field("cs_per_100ms_during") {
            Some(FieldValue::Float(x)) => assert!((x - 1000.0).abs() < 1.0, "{x}"),
            other => panic!("{other:?}"),
        }
        assert!(findings(&build(110)).is_empty());
    }

    fn coarse(util: f64, n: u32) -> Vec<Finding> {
        let mut tb = TB::new();
        tb.header.set("cpus", "8");
        tb.site(3, "demo.Main.split:9");
        for t in 1..=4 {
            tb.start(t, 0, C_THREAD, (C_WORKER, t));
        }
        for i in 0..n {
            let t = 1 + i % 4;
            tb.created(MAIN, 1, (C_OUTER, i + 1), 3);
            tb.submit(MAIN, 2, (C_OUTER, i + 1), 0);
            let b = 10 + (i / 4) as u64 * 1_000_000_000 / (n as u64 / 4).max(1);
            tb.run(
                t,
                b,
                b + 1_000_000_000 / (n as u64 / 4).max(1) - 20,
                P_RUN,
                C_OUTER,
                i + 1,
            );
        }
        for t in 1..=4 {
            tb.thread_end(t, 4_000_000_000);
        }
        // a few small tasks elsewhere
        for i in 0..10 {
            tb.run(
                5,
                2_000_000_000 + i * 1000,
                2_000_000_000 + i * 1000 + 500,
                P_WORK_RUN,
                C_WORK,
                i as u32,
            );
        }
        samples(&mut tb, 4_000_000_000, 8, |_| util, |_| 10);
        tb.global(Record::End { ts: 4_000_000_000 });
        findings(&tb)
    }

    #[test]
    fn coarse_grained_when_few_long_and_cpus_idle() {
        let f = coarse(0.25, 2);
        assert_eq!(kinds(&f), vec![FindingKind::CoarseGrained], "{f:#?}");
        assert_eq!(f[0].class.as_deref(), Some("demo.Outer"));
        assert!(f[0].message.contains("Split tasks"), "{}", f[0].message);
        assert!(
            f[0].message.contains("demo.Main.split:9"),
            "{}",
            f[0].message
        );
        assert!(f[0].message.contains("25%"), "{}", f[0].message);
    }

    #[test]
    fn not_coarse_when_cpus_busy_or_many() {
        assert!(coarse(0.9, 2).is_empty());
        // 40 tasks of 100 ms on 8 CPUs: more than 2 per CPU
        assert!(coarse(0.25, 40).is_empty());
    }

    #[test]
    fn losses_truncation_and_unknown_records() {
        let mut tb = TB::new();
        tb.run(MAIN, 0, 5, P_WORK_RUN, C_WORK, 1);
        tb.global(Record::Loss {
            thread: 3,
            from_ts: 1_000,
            to_ts: 2_000_000,
            records: 1234,
            reason: LossReason::BufferOverflow,
        });
        let mut trace = tb.trace();
        trace.unknown_records = 7;
        let a = crate::analyze(&trace);
        let k = kinds(&a.findings);
        assert_eq!(
            k,
            vec![
                FindingKind::Truncated,
                FindingKind::Losses,
                FindingKind::UnknownRecords
            ]
        );
        assert!(a.findings[1]
            .message
            .contains("1234 records were lost (buffer_overflow)"));
        assert_eq!(a.findings[1].field("records"), Some(&FieldValue::Int(1234)));
    }

    #[test]
    fn human_units() {
        assert_eq!(human_ns(850), "850 ns");
        assert_eq!(human_ns(12_345), "12.3 µs");
        assert_eq!(human_ns(4_560_000), "4.56 ms");
        assert_eq!(human_ns(123_000_000_000), "123 s");
    }
}
