//! Findings in plain words, with the numbers behind them, from every analysis:
//! contended locks (grouped by class and site), task classes that wait most of
//! the time they hold a thread, too fine-grained and too coarse-grained task
//! classes (the evidence of tgp, digest §7.1, judged on *running* time), the
//! fork-join model's findings (wosp), and what the trace itself says about its
//! completeness (losses, truncation).
//!
//! One list, one vocabulary: each finding says what is wrong, what it costs
//! (`cost_ns`: thread or CPU time lost, see each kind), where to change it and
//! what to change it to. Completeness findings come first (they qualify every
//! number), then the others by cost, largest first.
//!
//! The papers give no numeric thresholds; ours are the named constants below.
//! This module decides and words findings; it does not lay out reports.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::activity::{Activity, ActivityAnalysis};
use crate::cpu::{CpuProfile, WindowStats};
use crate::edges::EdgeKind;
use crate::forkjoin::{ForkJoinAnalysis, FINE_NS};
use crate::lock_groups::LockGroup;
use crate::locks::LockAnalysis;
use crate::model::{loss_reason_str, FrameOwner, Model};
use crate::tasks::{TaskAnalysis, TaskClassStats, TaskExecution, TaskKind};
use weft_trace::ThreadIndex;

/// A thread that ended this close to the end of the recording ended with the JVM.
const EXIT_SLACK_NS: u64 = 10_000_000;
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

/// A lock group is a finding when its whole-run CSP is at least this…
pub const LOCK_MIN_CSP: f64 = 0.05;
/// …or when some interval's CSP reached this (a contended phase)…
pub const LOCK_MIN_PHASE_CSP: f64 = crate::locks::DOMINANT_CSP;
/// …and it cost at least this much blocked time in all.
pub const LOCK_MIN_BLOCKED_NS: u64 = 10_000_000;
/// Frames the agent records for a lock's acquisition site (crates/agent/src/locks.rs
/// `SITE_FRAMES`): a stack this long may go on deeper.
pub const LOCK_SITE_FRAMES: usize = 6;
/// A semaphore with at most this many slow-path acquisitions per blocked thread is
/// used as a signal (a phase barrier), not contended (no `lock_contention` finding).
pub const SEMAPHORE_SIGNAL_MAX: u64 = 2;
/// A task class (not a thread, not a pool worker) that waits this share of its
/// self time, for at least [`WAIT_MIN_NS`], holds threads while it waits.
pub const WAIT_MIN_SHARE: f64 = 0.25;
pub const WAIT_MIN_NS: u64 = 50_000_000;
/// Waits (of a task class, or on one object) are a finding only when they add up to
/// at least this share of the run's wall time: a 100 ms wait in a 15 s run (a
/// shutdown hook's join) is not what to look at first.
pub const WAIT_MIN_SHARE_OF_RUN: f64 = 0.02;
/// Waits on one object averaging less than this are hand-offs (a wake-up and a
/// context switch each: ping-pong, a rendezvous), not a resource held for long.
pub const HANDOFF_MAX_MEAN_NS: u64 = 100_000;
/// …when there are at least this many.
pub const HANDOFF_MIN_WAITS: u64 = 1_000;
/// A task class whose executions last this share of the recording on average...
pub const LOOP_MIN_SHARE_OF_RUN: f64 = 0.5;
/// ...and wait this share of their self time is a service loop that stayed idle.
pub const LOOP_MIN_WAITING_SHARE: f64 = 0.95;
/// ...or, however short, each of its (at most this many) executions, on daemon threads,
/// was still waiting when the recording ended.
pub const LOOP_MAX_EXECUTIONS_AT_END: u64 = 4;
/// Waits on one application object class at one site are a finding when at least
/// this many threads waited there for at least [`WAIT_MIN_NS`] in all.
pub const WAIT_GROUP_MIN_THREADS: usize = 2;
/// An estimated per-task overhead (too fine-grained, fork-join too fine) is a
/// finding only from this share of the run's wall time: 0.5 ms of overhead in a
/// 1.5 s run is not worth merging tasks for.
pub const FINE_MIN_SHARE_OF_RUN: f64 = 0.01;
/// Fixed cost of one executor task (submission, queue hand-off, waking a pool
/// thread): an order of magnitude, used only to estimate what merging saves.
pub const TASK_OVERHEAD_NS: u64 = 5_000;
/// Fixed cost of one fork-join task (fork, push, pop or steal, exec): an order of magnitude.
pub const FJ_TASK_OVERHEAD_NS: u64 = 1_000;
/// Fork-join: at least this many tasks of a class, half of them under [`FINE_NS`].
pub const FJ_FINE_MIN_TASKS: u64 = 1_000;
/// Fork-join: a pool's busy time must reach this for balance and blocking to mean anything.
pub const FJ_MIN_BUSY_NS: u64 = 10_000_000;
/// Fork-join: one thread doing this share of a pool's work is an imbalance.
pub const FJ_IMBALANCE_SHARE: f64 = 0.6;
/// Fork-join: computations with at least this much work and a parallelism below
/// [`FJ_LOW_PARALLELISM`] have too little parallelism.
pub const FJ_MIN_WORK_NS: u64 = 50_000_000;
pub const FJ_LOW_PARALLELISM: f64 = 2.0;
/// …and below this share of the threads that could run it.
pub const FJ_LOW_SHARE_OF_WIDTH: f64 = 0.75;
/// Share of a low-parallelism root class's tasks run by their forker at once
/// (`FjClass::run_at_once`) from which that is said to be the cause.
pub const FJ_RUN_AT_ONCE_SHARE: f64 = 0.5;
/// Fork-join: workers blocked in joins for at least this share of their busy time.
pub const FJ_JOIN_BLOCKED_SHARE: f64 = 0.25;

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
    /// A lock (group of instances at one site) that threads spent much time blocked on.
    LockContention,
    /// A task class that spends much of its self time in waits while holding a thread.
    Waiting,
    /// Threads waiting on an application object (a hand-made lock or condition, e.g.
    /// a database's row lock): a wait group by (kind, class, site).
    WaitContention,
    /// Threads waiting at a `CyclicBarrier` or `Phaser` for its slowest party.
    BarrierImbalance,
    /// Fork-join tasks below the fine-grained threshold: raise the sequential cutoff.
    ForkJoinFineGrained,
    /// One thread of a fork-join pool did most of the work.
    ForkJoinImbalance,
    /// A fork-join computation with little parallelism (work ÷ span).
    ForkJoinLowParallelism,
    /// Fork-join workers blocked in joins.
    ForkJoinJoinBlocking,
    /// Virtual threads blocked while pinned to their carrier.
    VirtualThreadPinned,
    /// Threads each blocked until the end on a lock another of them holds.
    Deadlock,
    /// Every thread of a pool blocked until the end inside its tasks, waiting, while
    /// submitted tasks never started (a thread-starvation deadlock).
    PoolStarvation,
    /// Consumer threads waiting for work on a queue most of their time while the one
    /// thread that feeds them is busy: the producer is the bottleneck.
    ProducerBottleneck,
    ConsumerBottleneck,
    SerialPhase,
    AwaitedAtOnce,
    /// Tasks a saturated pool gave back to the thread that submitted them (a rejection
    /// policy such as `CallerRunsPolicy`), while the pool's threads waited for work.
    CallerRuns,
    /// A pool whose tasks mostly block (I/O, sleep) and queue for its few threads while
    /// the CPUs idle.
    PoolTooSmall,
    /// Threads working in parallel that did not finish together (the possible
    /// speedups' imbalance line, confirmed by the simulator).
    LoadImbalance,
    /// Tasks off the CPU, outside any wait weft records (socket or file I/O, a sleep),
    /// most of the run while the CPUs idled, and nothing else found that explains it.
    IoBound,
    /// A thread spending much of its CPU spinning for something (its own
    /// `Thread.yield` / `Thread.onSpinWait` loop) instead of blocking.
    BusyWait,
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
            FindingKind::LockContention => "lock_contention",
            FindingKind::Waiting => "waiting",
            FindingKind::WaitContention => "wait_contention",
            FindingKind::BarrierImbalance => "barrier_imbalance",
            FindingKind::ForkJoinFineGrained => "fj_fine_grained",
            FindingKind::ForkJoinImbalance => "fj_imbalance",
            FindingKind::ForkJoinLowParallelism => "fj_low_parallelism",
            FindingKind::ForkJoinJoinBlocking => "fj_join_blocking",
            FindingKind::VirtualThreadPinned => "virtual_thread_pinned",
            FindingKind::Deadlock => "deadlock",
            FindingKind::PoolStarvation => "pool_starvation",
            FindingKind::ProducerBottleneck => "producer_bottleneck",
            FindingKind::ConsumerBottleneck => "consumer_bottleneck",
            FindingKind::SerialPhase => "serial_phase",
            FindingKind::AwaitedAtOnce => "awaited_at_once",
            FindingKind::CallerRuns => "caller_runs",
            FindingKind::PoolTooSmall => "pool_too_small",
            FindingKind::LoadImbalance => "load_imbalance",
            FindingKind::IoBound => "io_bound",
            FindingKind::BusyWait => "busy_wait",
        }
    }

    /// Short words for a label (reports' badges).
    pub fn label(self) -> &'static str {
        match self {
            FindingKind::Losses => "records lost",
            FindingKind::Truncated => "trace cut short",
            FindingKind::UnknownRecords => "unknown records",
            FindingKind::Unbalanced => "unbalanced",
            FindingKind::FineGrained => "too fine-grained",
            FindingKind::CoarseGrained => "too coarse-grained",
            FindingKind::LockContention => "lock contention",
            FindingKind::Waiting => "waiting",
            FindingKind::WaitContention => "waits on an object",
            FindingKind::BarrierImbalance => "barrier imbalance",
            FindingKind::ForkJoinFineGrained => "fork-join: too fine",
            FindingKind::ForkJoinImbalance => "fork-join: imbalance",
            FindingKind::ForkJoinLowParallelism => "fork-join: low parallelism",
            FindingKind::ForkJoinJoinBlocking => "fork-join: join blocking",
            FindingKind::VirtualThreadPinned => "virtual thread pinned",
            FindingKind::Deadlock => "deadlock",
            FindingKind::PoolStarvation => "pool deadlock",
            FindingKind::ProducerBottleneck => "producer bottleneck",
            FindingKind::ConsumerBottleneck => "consumer bottleneck",
            FindingKind::SerialPhase => "serial phase",
            FindingKind::AwaitedAtOnce => "each task awaited at once",
            FindingKind::CallerRuns => "tasks run by their submitter",
            FindingKind::PoolTooSmall => "pool too small",
            FindingKind::LoadImbalance => "load imbalance",
            FindingKind::IoBound => "waiting on I/O",
            FindingKind::BusyWait => "busy-waiting",
        }
    }

    /// About the trace's completeness, not the program: listed first.
    pub fn is_trace(self) -> bool {
        matches!(
            self,
            FindingKind::Losses
                | FindingKind::Truncated
                | FindingKind::UnknownRecords
                | FindingKind::Unbalanced
        )
    }
}

/// A number or word behind a finding.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    Int(u64),
    Float(f64),
    Text(String),
    Bool(bool),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    /// The task class (or lock class) it is about.
    pub class: Option<String>,
    /// Plain words, with the numbers.
    pub message: String,
    /// The numbers behind the message, by name (units in the name: `_ns`, ratios as fractions).
    pub fields: Vec<(&'static str, FieldValue)>,
    /// Time lost, in ns of thread (or CPU) time; what the findings are ranked by.
    /// 0 for trace-completeness findings.
    pub cost_ns: u64,
    /// Where to change it: the same site the tables show for the class or lock.
    pub site: Option<String>,
    /// The whole recorded stack through `site`, innermost first (creation,
    /// submission, acquisition or wait; on demand in JSON and the HTML hover).
    pub stack: Vec<String>,
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

/// What the findings are drawn from.
pub struct Inputs<'a> {
    pub model: &'a Model,
    pub tasks: &'a TaskAnalysis,
    pub cpu: &'a CpuProfile,
    pub locks: &'a LockAnalysis,
    pub lock_groups: &'a [LockGroup],
    pub forkjoin: &'a ForkJoinAnalysis,
    pub activity: &'a ActivityAnalysis,
    pub virtual_threads: &'a crate::vthreads::VirtualThreadAnalysis,
    pub speedups: &'a crate::speedups::Speedups,
}

/// All findings: trace completeness first, then every other finding by cost, largest first.
pub fn find(i: &Inputs) -> Vec<Finding> {
    let mut out = Vec::new();
    trace_findings(i.model, i.tasks, &mut out);
    let mut costed = Vec::new();
    let deadlocked = deadlock_findings(i, &mut costed);
    let starved = pool_starvation_findings(i, &mut costed);
    lock_findings(i, &deadlocked, &mut costed);
    let on_virtual = classes_on_virtual_threads(i);
    wait_findings(i, &starved, &on_virtual, &mut costed);
    wait_group_findings(i, &mut costed);
    producer_findings(i, &mut costed);
    consumer_findings(i, &mut costed);
    exchanger_findings(i, &mut costed);
    caller_runs_findings(i, &mut costed);
    pool_too_small_findings(i, &mut costed);
    forkjoin_pool_too_small_findings(i, &mut costed);
    carriers_too_few_findings(i, &mut costed);
    blocking_forkjoin_findings(i, &mut costed);
    awaited_at_once_findings(i, &mut costed);
    forkjoin_findings(i, &mut costed);
    serial_phase_findings(i, &mut costed);
    busy_wait_findings(i, &mut costed);
    granularity_findings(i, &on_virtual, &mut costed);
    drop_fine_adapters(&mut costed);
    drop_coarse_bottleneck_stages(i, &mut costed);
    costed.extend(virtual_thread_findings(i.virtual_threads));
    // Last: only where no other finding explains the run (pinned virtual threads
    // parked on a pool's I/O read "bound by that I/O" beside the pinning).
    io_bound_findings(i, &mut costed);
    // Stable: equal costs keep the order above.
    costed.sort_by_key(|f| std::cmp::Reverse(f.cost_ns));
    out.extend(costed);
    for f in &mut out {
        if let (Some(site), true) = (&f.site, f.stack.is_empty()) {
            f.stack = i.model.site_stack(site);
        }
    }
    out
}

/// A contended lock's holder is a stage whose coarse finding is the lock's when it
/// held the lock in at least this share of the sampled contentions.
pub const HOLDER_STAGE_SHARE: f64 = 0.8;

/// A task class found too coarse whose executions all ran on the thread (or pool)
/// a producer or consumer bottleneck names is that pipeline stage: the bottleneck
/// finding says it, with the stage's fix (a three-stage pipeline's middle thread
/// read "too coarse-grained: only 1 task for 2 CPUs ... split tasks" beside it).
fn drop_coarse_bottleneck_stages(i: &Inputs, out: &mut Vec<Finding>) {
    let mut stages: BTreeSet<String> = out
        .iter()
        .filter_map(|f| match f.kind {
            FindingKind::ProducerBottleneck => f.field("producer"),
            FindingKind::ConsumerBottleneck => f.field("consumer"),
            _ => None,
        })
        .filter_map(|v| match v {
            FieldValue::Text(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    // Likewise the thread that held a contended lock in most of its sampled
    // contentions: the others' idle CPU is the lock's (a reader iterating a
    // synchronized list under its lock for 26 s, the writers blocked: "too
    // coarse-grained: split tasks" on the reader beside the lock's finding).
    let contended: BTreeSet<&str> = out
        .iter()
        .filter(|f| f.kind == FindingKind::LockContention)
        .filter_map(|f| f.class.as_deref())
        .collect();
    for g in i
        .lock_groups
        .iter()
        .filter(|g| contended.contains(g.class.as_str()))
    {
        let all: u64 = g.owners.iter().map(|o| o.1).sum();
        if let Some((owner, n)) = g.owners.first() {
            if (*n as f64) >= HOLDER_STAGE_SHARE * all as f64 {
                stages.insert(owner.clone());
            }
        }
    }
    if stages.is_empty() {
        return;
    }
    let on_stage = |class: &str| {
        let mut any = false;
        for e in i
            .tasks
            .executions
            .iter()
            .filter(|e| e.reported() && i.tasks.class(e) == class)
        {
            let Some(t) = i.model.threads.get(&e.thread) else {
                return false;
            };
            let name = t.display_name();
            if !stages.contains(&name) && !stages.contains(&crate::model::pool_name(&name)) {
                return false;
            }
            any = true;
        }
        any
    };
    out.retain(|f| {
        f.kind != FindingKind::CoarseGrained || !f.class.as_deref().is_some_and(on_stage)
    });
}

/// A run whose tasks were off the CPU outside any recorded wait (socket or file
/// I/O, a sleep) for most of it while the CPUs idled, when no other finding
/// explains a tenth of the run: it is bound by that I/O. 8 HTTP clients against a
/// server on JDK 21 made 354 requests in 2 s (5,383 on 25: the same code, the
/// network's round trips) and read "no problem found" but for 40 ms of pinning.
fn io_bound_findings(i: &Inputs, out: &mut Vec<Finding>) {
    let run = i.model.duration_ns;
    if run == 0
        || out
            .iter()
            .any(|f| f.cost_ns as f64 >= IO_BOUND_OTHERS_MAX_SHARE * run as f64)
    {
        return;
    }
    let Some(all) = i.cpu.mean() else {
        return;
    };
    if all.utilisation >= IO_BOUND_MAX_UTILISATION {
        return;
    }
    let Some((share, frame)) = blocked_tasks_during(i, &[], (0, run), run) else {
        return;
    };
    let off = (share * run as f64) as u64;
    if off < WAIT_MIN_NS {
        return;
    }
    let cpus = cpus_of(i.model);
    out.push(Finding {
        kind: FindingKind::IoBound,
        class: None,
        message: format!(
            "For {} of the run ({}) some task was off the CPU outside any wait weft records \
             (socket or file I/O, a sleep), mostly in {frame}, while the {cpus} CPUs were {} \
             busy: the run is bound by that I/O, not by its CPUs or locks. Find what the I/O \
             waits for (the other side of the connection, the disk), make it shorter, or \
             overlap more of it (more requests in flight, asynchronous I/O).",
            pct(share),
            human_ns(off),
            pct(all.utilisation),
        ),
        fields: vec![
            ("tasks_blocked_share", FieldValue::Float(share)),
            (
                "tasks_blocked_frame",
                FieldValue::Text(frame.trim_matches('`').to_string()),
            ),
            ("utilisation", FieldValue::Float(all.utilisation)),
        ],
        cost_ns: off,
        site: None,
        stack: Vec::new(),
    });
}

/// [`io_bound_findings`]: not beside a finding that costs this share of the run…
pub const IO_BOUND_OTHERS_MAX_SHARE: f64 = 0.1;
/// …nor when the CPUs were this busy over the run.
pub const IO_BOUND_MAX_UTILISATION: f64 = 0.5;

/// A pool's JDK wrapper of submitted Runnables and Callables
/// (`ForkJoinTask$RunnableExecuteAction`, `$AdaptedCallable`, ...) found too
/// fine is the same tasks the task model reports by their own class, with the
/// submission site: that finding is kept, the wrapper's dropped.
fn drop_fine_adapters(out: &mut Vec<Finding>) {
    if !out.iter().any(|f| f.kind == FindingKind::FineGrained) {
        return;
    }
    out.retain(|f| {
        f.kind != FindingKind::ForkJoinFineGrained
            || !f.fields.iter().any(|(k, _)| *k == "external")
            || !f.class.as_deref().is_some_and(|c| {
                c.starts_with("java.util.concurrent.ForkJoinTask$")
                    || c.starts_with("java.util.concurrent.CompletableFuture$")
            })
    });
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
            cost_ns: 0,
            site: None,
            stack: Vec::new(),
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
            cost_ns: 0,
            site: None,
            stack: Vec::new(),
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
            cost_ns: 0,
            site: None,
            stack: Vec::new(),
        });
    }
    // A task still running when a complete recording ended (a deadlock, a daemon's
    // endless loop, a `System.exit` inside it: the JVM ends the exiting thread just
    // before the recording) ran until its thread ended with the JVM: its times are
    // exact, nothing was lost.
    let ran_to_the_end = |e: &TaskExecution| {
        model.end_ns.is_some()
            && model.threads.get(&e.thread).is_some_and(|t| {
                let end = t.end_ns.unwrap_or(model.duration_ns);
                e.end_ns >= end && end.saturating_add(EXIT_SLACK_NS) >= model.duration_ns
            })
    };
    let open_tasks = tasks
        .executions
        .iter()
        .filter(|e| e.incomplete() && e.kind != TaskKind::Thread && !ran_to_the_end(e))
        .count() as u64;
    if tasks.unmatched_ends > 0 || (open_tasks > 0 && !model.truncated) {
        out.push(Finding {
            kind: FindingKind::Unbalanced,
            class: None,
            message: format!(
                "{open_tasks} task executions had no end record (closed at their thread's last \
                 record or end) and {} end records had no begin; their times are approximate.",
                tasks.unmatched_ends
            ),
            fields: vec![
                ("incomplete_executions", FieldValue::Int(open_tasks)),
                ("unmatched_ends", FieldValue::Int(tasks.unmatched_ends)),
            ],
            cost_ns: 0,
            site: None,
            stack: Vec::new(),
        });
    }
}

/// The site shown for a task class, in its table row and its findings alike:
/// its most frequent (created, submitted) pair's submission site, else creation site.
pub fn class_site(c: &TaskClassStats) -> Option<(String, &'static str)> {
    let (s, _) = c.sites.first()?;
    match (&s.submitted, &s.created) {
        (Some(x), _) => Some((x.clone(), "submitted")),
        (None, Some(x)) => Some((x.clone(), "created")),
        (None, None) => None,
    }
}

/// [`class_site`] of the task class named `class`.
fn site_of_class(i: &Inputs, class: &str) -> Option<String> {
    i.tasks
        .classes
        .iter()
        .find(|s| s.class == class)
        .and_then(class_site)
        .map(|s| s.0)
}

/// `n thing` or `n things`.
fn count(n: u64, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// `x` (a fraction) as a percentage.
fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn secs(ns: u64) -> String {
    format!("{:.1} s", ns as f64 / 1e9)
}

/// The recording machine's CPUs (the header's `cpus`), else [`DEFAULT_CPUS`].
fn cpus_of(model: &Model) -> u64 {
    model.cpus.map_or(DEFAULT_CPUS, |c| u64::from(c.max(1)))
}

/// ` (N threads' worth of the run)`: what thread time lost means in threads, when
/// that is at least a tenth of a thread.
fn threads_busy(ns: u64, duration_ns: u64) -> String {
    let n = ns as f64 / duration_ns.max(1) as f64;
    if n < 0.1 {
        return String::new();
    }
    format!(" ({n:.1} threads' worth of the {} run)", secs(duration_ns))
}

/// The class name without its package.
fn simple(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

/// Collections that are often shared behind one lock: a concurrent one replaces lock and map.
const COLLECTIONS: &[&str] = &[
    "java.util.HashMap",
    "java.util.Hashtable",
    "java.util.TreeMap",
    "java.util.LinkedHashMap",
    "java.util.WeakHashMap",
    "java.util.IdentityHashMap",
    "java.util.HashSet",
    "java.util.TreeSet",
    "java.util.ArrayList",
    "java.util.LinkedList",
    "java.util.ArrayDeque",
    "java.util.PriorityQueue",
    "java.util.Vector",
    "java.util.Stack",
    "java.util.Collections$SynchronizedMap",
    "java.util.Collections$SynchronizedList",
    "java.util.Collections$SynchronizedSet",
    "java.util.Collections$SynchronizedCollection",
    "java.util.Collections$SynchronizedRandomAccessList",
    "java.util.Collections$SynchronizedSortedMap",
];

/// Locks inside servers whose cause and setting are known: (site prefix, advice).
const KNOWN_FRAMEWORK_LOCKS: &[(&str, &str)] = &[(
    "org.apache.tomcat.util.buf.StringCache.toString",
    "This is Tomcat's string cache training: it counts the first \
     `tomcat.util.buf.StringCache.trainThreshold` (20,000) byte-to-String conversions under \
     one lock, and Tomcat's default catalina.properties turns it on \
     (`tomcat.util.buf.StringCache.byte.enabled=true`). Set that to false, or lower the \
     threshold so training ends sooner.",
)];

/// Monitors the JDK takes inside calls whose cause and fix are known: (frame
/// prefix in the acquisition's stack, advice).
const KNOWN_JDK_LOCKS: &[(&str, &str)] = &[(
    "sun.security.provider.NativePRNG",
    "This is `NativePRNG`, the default `SecureRandom` on Linux: every instance reads and \
     mixes its bytes through one JVM-wide object under its locks, so a `SecureRandom` per \
     thread does not help. Give each thread its own `SecureRandom.getInstance(\"DRBG\")` \
     (its lock is the instance's own), or use `ThreadLocalRandom` where the numbers need \
     not be unpredictable.",
)];

/// Contention on a `ConcurrentHashMap` bin (lock classes `ConcurrentHashMap$Node`,
/// `$ReservationNode`, `$TreeBin`).
const CHM_BIN_ADVICE: &str = "These are `ConcurrentHashMap` bin locks: `computeIfAbsent`, \
     `compute` and `merge` run their function while holding the lock of the key's bin, so \
     threads that compute or update keys of the same bin wait for that function. Keep the \
     function short (compute the value first, then `putIfAbsent`), or spread the hot keys.";

/// Waits inside databases whose meaning is known: (site prefix, what they are and
/// what to change). The clients' transactions are what a user changes.
const KNOWN_WAITS: &[(&str, &str)] = &[
    (
        "org.apache.derby.impl.services.locks.ActiveLock.waitForGrant",
        "These are Derby's row and table lock waits: the clients' transactions wait for \
         each other's locks. Commit sooner (shorter transactions), take rows in one order, or \
         use a lower isolation level; a wait of `derby.locks.deadlockTimeout` (20 s by \
         default) ended in a deadlock check, one of `derby.locks.waitTimeout` in a timeout.",
    ),
    (
        "org.h2.mvstore.tx.Transaction.waitForThisToEnd",
        "These are H2 row-lock waits: a transaction that changes a row another open \
         transaction changed waits for that transaction to end. Commit sooner, or spread the \
         updates of a hot row (a counter, a balance every transaction updates) over more rows.",
    ),
];

/// Each blocked thread blocked once, and the waiters were let in together (a lazy
/// initialisation or a start-up step they waited for once), rather than one after
/// another (a queue of threads, such as virtual threads with one task each, taking
/// the lock in turn).
fn one_off(g: &LockGroup) -> bool {
    g.slow_acquisitions <= g.threads as u64 && g.release_spread_ns * 2 <= g.max_blocked_ns
}

/// The JDK's output classes whose methods lock the stream: threads printing or
/// writing to one of them queue for it (`System.out.println` from every thread).
const OUTPUT_STREAMS: &[&str] = &[
    "java.io.PrintStream",
    "java.io.PrintWriter",
    "java.io.BufferedWriter",
    "java.io.BufferedOutputStream",
    "java.io.OutputStreamWriter",
    "java.io.FileWriter",
];

/// The copy-on-write collection and its method the acquisition's innermost JDK
/// frames go through (`CopyOnWriteArrayList`, `add`), when they do.
fn cow_write(stack: &[String]) -> Option<(&str, &str)> {
    stack
        .iter()
        .take_while(|f| f.starts_with("java."))
        .filter_map(|f| {
            let (class, name) = crate::wait_groups::juc_method(f)?.rsplit_once('.')?;
            matches!(class, "CopyOnWriteArrayList" | "CopyOnWriteArraySet").then_some((class, name))
        })
        // The outermost: the call the application made (a set's `add` goes through
        // its list's `addIfAbsent`).
        .last()
}

/// The JDK method the application called inside which a monitor it contends is
/// entered: the outermost JDK frame before the first application frame, when the
/// innermost frame (the `synchronized` code) is the JDK's, as (class, method).
fn jdk_call_holding(stack: &[String]) -> Option<(&str, &str)> {
    // A frame starts with its class: the JDK's package prefixes read on it.
    if !crate::model::is_jdk_class(stack.first()?) {
        return None;
    }
    let app = stack.iter().position(|f| !crate::model::is_jdk_class(f))?;
    crate::model::frame_method(&stack[app - 1]).rsplit_once('.')
}

/// What to change for a contended lock group, in words.
fn lock_advice(g: &LockGroup, at: &str, stack: &[String]) -> String {
    let concurrent = if g.class.contains("Map") || g.class.contains("Hashtable") {
        "`ConcurrentHashMap`"
    } else if g.class.contains("Set") {
        "`ConcurrentHashMap.newKeySet()`"
    } else if g.class.contains("Deque") || g.class.contains("Queue") {
        "`ConcurrentLinkedDeque` or a `BlockingQueue`"
    } else {
        "`CopyOnWriteArrayList` (read-mostly) or a `ConcurrentLinkedQueue`"
    };
    // The JDK's synchronized legacy classes: every call takes the object's monitor.
    if g.class == "java.lang.StringBuffer" {
        return format!(
            "`StringBuffer` takes its lock on every call: give each thread its own \
             `StringBuilder`{at} and join the pieces once, or hand the text to one writer thread."
        );
    }
    if OUTPUT_STREAMS.contains(&g.class.as_str()) {
        return format!(
            "Threads take turns writing output: `{}` (`System.out` and `System.err` are \
             `PrintStream`s) holds its lock for each call, the write to the file or terminal \
             included. Print less from the threads{at}, build each thread's output in its own \
             `StringBuilder` and write it once, or hand the lines to one writer thread (a queue, \
             an asynchronous logger).",
            simple(&g.class)
        );
    }
    if g.class.starts_with("java.util.logging.") && g.class.ends_with("Handler") {
        return format!(
            "`{}` publishes each log record under its lock, formatting and writing included: \
             log less from these threads (the site is inside the logging code; check the \
             level before building a message), or hand the records to one writer thread (an \
             asynchronous handler or appender).",
            simple(&g.class)
        );
    }
    if COLLECTIONS.contains(&g.class.as_str()) {
        return format!(
            "Replace the shared `{}` with {concurrent} and drop the lock{at}, or keep only the \
             map or list operation itself inside the critical section.",
            simple(&g.class)
        );
    }
    // A monitor the JDK takes inside a call the application makes on an object
    // the threads share (4 tasks drawing from one `SecureRandom`: "shorten the
    // critical section at" the `nextBytes` call, which has none of the application's).
    // The lock may be the object's or one the JDK shares between all instances
    // (`NativePRNG`'s): the trace does not say which, so the advice says both.
    if g.kind == "monitor" && g.locks.len() == 1 {
        if let Some((class, method)) = jdk_call_holding(stack) {
            if let Some((_, known)) = KNOWN_JDK_LOCKS
                .iter()
                .find(|(p, _)| stack.iter().any(|f| f.starts_with(p)))
            {
                return known.to_string();
            }
            let object = simple(class);
            return format!(
                "The lock is taken inside the JDK's `{object}.{method}`, which the threads \
                 call{at}: those calls take turns on one lock. If the threads share one \
                 `{object}`, give each its own (a `ThreadLocal`, or one per task); if they \
                 already have their own, the lock is one the JDK shares between instances: \
                 call it less often (more work per call) or from fewer threads at once."
            );
        }
    }
    if g.locks.len() > 1 {
        return format!(
            "The contention is spread over {} instances created for the same purpose: hold each \
             for less time{at} (do the work that does not need it outside the critical section), \
             or make fewer threads need the same instance at once.",
            g.locks.len()
        );
    }
    if g.kind == "read_write_lock" && g.shared_blocked_ns * 2 < g.blocked_ns {
        return format!(
            "Writers are what block: shorten the write-locked section{at}, or read without the \
             lock (`StampedLock` optimistic reads, copy-on-write snapshots)."
        );
    }
    // Readers of a read-write lock do not exclude each other: readers that wait, wait
    // for a writer, holding the lock or queued (a queued writer stops new readers).
    if g.kind == "read_write_lock" {
        return format!(
            "Readers are what wait ({} of the blocked time), and readers only wait for \
             writers: a writer holding the lock, or queued for it, stops new readers. Write \
             less often or for less time{at}, or read without the lock (`StampedLock` \
             optimistic reads, a `ConcurrentHashMap`, copy-on-write snapshots).",
            pct(g.shared_blocked_ns as f64 / g.blocked_ns.max(1) as f64)
        );
    }
    if g.kind == "semaphore" {
        return format!(
            "Threads queue for permits{at}: raise the permit count if the resource allows, or \
             hold a permit for less time."
        );
    }
    format!(
        "Shorten the critical section{at} (move work that does not need the lock out of it), \
         split the lock (one per independent piece of state, or striped by key), or use a \
         concurrent data structure instead."
    )
}

/// Threads that each stayed blocked, until their last record, on a lock another of
/// them held: a cycle of the wait-for graph (holders as the agent read them when the
/// contention began). One finding per cycle; the locks in cycles are returned, so that
/// their contention is not also advised as a slow critical section.
fn deadlock_findings(i: &Inputs, out: &mut Vec<Finding>) -> std::collections::HashSet<usize> {
    let la = i.locks;
    let name = |t: weft_trace::ThreadIndex| {
        i.model
            .threads
            .get(&t)
            .map_or_else(|| format!("thread #{t}"), |x| x.display_name())
    };
    // Each thread's last unresolved block, by thread name (holders are named).
    let mut stuck: BTreeMap<String, &crate::locks::BlockedInterval> = BTreeMap::new();
    for b in la
        .blocked
        .iter()
        .filter(|b| b.unresolved && b.owner.is_some())
    {
        stuck.insert(name(b.thread), b);
    }
    let mut in_cycles = std::collections::HashSet::new();
    for start in stuck.keys() {
        // Follow holders from `start`; a cycle through `start` is reported from its
        // smallest name only.
        let mut chain = vec![start.clone()];
        let mut cur = start.clone();
        let closed = loop {
            let Some(owner) = stuck.get(&cur).and_then(|b| b.owner.clone()) else {
                break false;
            };
            if owner == *start {
                break true;
            }
            if chain.contains(&owner) || chain.len() > stuck.len() {
                break false;
            }
            chain.push(owner.clone());
            cur = owner;
        };
        if !closed || chain.iter().min() != Some(start) {
            continue;
        }
        let blocks: Vec<&crate::locks::BlockedInterval> =
            chain.iter().filter_map(|t| stuck.get(t).copied()).collect();
        in_cycles.extend(blocks.iter().map(|b| b.lock));
        let cost: u64 = blocks.iter().map(|b| b.end_ns - b.start_ns).sum();
        let since = blocks.iter().map(|b| b.start_ns).max().unwrap_or(0);
        let parts: Vec<String> = blocks
            .iter()
            .map(|b| {
                format!(
                    "`{}` waits{} for `{}` held by `{}`",
                    name(b.thread),
                    b.site
                        .as_deref()
                        .map_or(String::new(), |s| format!(" at {s}")),
                    la.locks[b.lock].id,
                    b.owner.as_deref().unwrap_or("?")
                )
            })
            .collect();
        let who = match chain.as_slice() {
            [a, b] => format!("`{a}` and `{b}` wait for each other"),
            many => format!("{} threads wait for each other in a cycle", many.len()),
        };
        out.push(Finding {
            kind: FindingKind::Deadlock,
            class: Some(la.locks[blocks[0].lock].class.clone()),
            message: format!(
                "A deadlock: {who} from {} to the end of the recording: {}. Take these locks \
                 in one order everywhere (or one at a time), or acquire with a timeout \
                 (`tryLock`) and back off.",
                human_ns(since),
                parts.join("; ")
            ),
            fields: vec![
                ("threads", FieldValue::Int(chain.len() as u64)),
                ("since_ns", FieldValue::Int(since)),
            ],
            cost_ns: cost,
            site: blocks[0].site.clone(),
            stack: Vec::new(),
        });
    }
    in_cycles
}

fn lock_findings(
    i: &Inputs,
    deadlocked: &std::collections::HashSet<usize>,
    out: &mut Vec<Finding>,
) {
    let la = i.locks;
    let virtual_names: BTreeSet<String> = i
        .model
        .threads
        .values()
        .filter(|t| t.virtual_thread)
        .map(|t| t.display_name())
        .collect();
    for g in i.lock_groups {
        // Its contention is the deadlock's, said once there: all of its locks, or all
        // but a little (a group by site also holds a start-up's brief class-loading
        // contention at the same line: a 2-thread deadlock was reported again as
        // "3.81 s blocked on 2 `Object` instances").
        let deadlocked_ns: u64 = g
            .locks
            .iter()
            .filter(|l| deadlocked.contains(l))
            .filter_map(|&l| la.locks.get(l).map(|s| s.blocked_ns))
            .sum();
        let all_deadlocked = !g.locks.is_empty() && g.locks.iter().all(|l| deadlocked.contains(l));
        let mostly_deadlocked =
            deadlocked_ns > 0 && g.blocked_ns.saturating_sub(deadlocked_ns) < LOCK_MIN_BLOCKED_NS;
        if all_deadlocked || mostly_deadlocked {
            continue;
        }
        // The sliding peak, not the aligned intervals' maximum: a burst split by an
        // interval boundary must not fall under the threshold (Clojure's `locking`).
        let phase_hit = g.peak_csp >= LOCK_MIN_PHASE_CSP;
        if g.blocked_ns < LOCK_MIN_BLOCKED_NS || !(g.csp >= LOCK_MIN_CSP || phase_hit) {
            continue;
        }
        // Virtual threads blocked on it (see `on_virtual` below).
        let vt_blocked: u64 = g
            .blocked_per_thread
            .iter()
            .filter(|(t, _)| virtual_names.contains(t))
            .map(|(_, ns)| ns)
            .sum();
        // A semaphore each blocked thread waited on at most twice is a signal (the
        // start or end of a phase, released by another thread: Parallel Java's team
        // barrier), not a resource the threads compete for: raising permits is no advice.
        // Not for virtual threads, one task each: each acquires once (5,000 of them
        // through a `Semaphore(10)` read "no problem found").
        if g.kind == "semaphore"
            && g.slow_acquisitions <= SEMAPHORE_SIGNAL_MAX * g.threads as u64
            && vt_blocked * 2 <= g.blocked_ns
        {
            continue;
        }
        // An AQS that no thread ever held when others blocked on it (the agent reads
        // the exclusive owner at every contention), or a latch by name, is a signal: a
        // future's completion (Scala's `CompletionLatch` under `Await.ready`), not a
        // lock to hold for less time.
        if g.kind == "other_aqs" && (g.owners.is_empty() || g.class.contains("Latch")) {
            continue;
        }
        // The strongest dominant phase of the group's locks, for when and by whom.
        let phase = la
            .phases
            .iter()
            .filter(|p| g.locks.contains(&p.lock))
            .max_by(|a, b| {
                a.csp
                    .partial_cmp(&b.csp)
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        let at = g
            .site
            .as_ref()
            .map_or(String::new(), |s| format!(" at {s}"));
        let what = match g.locks.len() {
            _ if g.class == weft_trace::CLASS_INIT_LOCK => format!(
                "{} (monitor)",
                count(g.locks.len() as u64, "class initialization lock")
            ),
            // A `Class` object's monitor is what `static synchronized` methods and
            // `synchronized (X.class)` take: "blocked on `java.lang.Class`" alone
            // left users to guess.
            1 if g.class == "java.lang.Class" => "`java.lang.Class` (monitor: a class's own \
                 lock, which its `static synchronized` methods and `synchronized (X.class)` \
                 take)"
                .to_string(),
            1 => format!("`{}` ({})", g.class, g.kind.replace('_', " ")),
            n => format!("{n} `{}` instances ({})", g.class, g.kind.replace('_', " ")),
        };
        let when = match phase {
            Some(p) if p.end_ns > p.start_ns && p.csp > g.csp * 1.2 => format!(
                "; {} from {} to {}",
                pct(p.csp),
                secs(p.start_ns),
                secs(p.end_ns)
            ),
            _ if g.peak_csp > g.csp * 1.2 => format!(
                "; {} in its worst {} (from {})",
                pct(g.peak_csp),
                human_ns(la.interval_ns),
                secs(g.peak_start_ns)
            ),
            _ => String::new(),
        };
        // A lock taken inside a server's or a library's code (the site, the innermost
        // frame outside the JDK, is not the application's) is not the application's to
        // split: say whose it is, where the application calls in (when a recorded frame
        // shows it), and what a user can change.
        let stack = g
            .site
            .as_deref()
            .map(|s| i.model.site_stack(s))
            .unwrap_or_default();
        let framework = match g.site.as_deref().map(|s| i.model.owner_of(s)) {
            Some(FrameOwner::Framework(name)) => Some(name),
            _ => None,
        };
        let caller = framework
            .as_ref()
            .and_then(|_| i.model.application_frame(&stack));
        let known = g.site.as_deref().and_then(|s| {
            KNOWN_FRAMEWORK_LOCKS
                .iter()
                .find(|(p, _)| s.starts_with(p))
                .map(|(_, a)| *a)
        });
        let crowded = crowded_pool_queue(i, g);
        let cow = cow_write(&stack);
        let advice = match (crowded.as_ref(), &framework, caller, known) {
            // A pool's task-queue lock, with far more pool threads than CPUs: holders
            // preempted while they hold it (64 threads on 2 CPUs read "shorten the
            // critical section at LinkedBlockingQueue.take").
            (Some(CrowdedQueue { pool, threads, .. }), ..) => {
                let cpus = cpus_of(i.model);
                format!(
                    "This is the task queue's lock of `{pool}`: its {threads} threads compete \
                     for {cpus} CPUs, so a thread holding the queue's lock is often preempted \
                     and the others wait for it to run again. For CPU-bound tasks a pool needs \
                     no more threads than CPUs: size `{pool}` to {cpus} \
                     (`Runtime.getRuntime().availableProcessors()`); tasks that block on I/O \
                     may need more, but not {threads} running at once. The CPUs were busy \
                     meanwhile: most of this waiting would otherwise be waiting for a CPU, so \
                     the gain is in fewer switches, not in more work done."
                )
            }
            // HotSpot's lock of a class's initialization: the wait is for a static
            // initializer another thread runs (two threads first using a class at once).
            _ if g.class == weft_trace::CLASS_INIT_LOCK => format!(
                "Threads waited{at} for another thread to finish a class's static \
                 initializer (the JVM lets one thread initialize a class, the others wait): \
                 make that initializer cheaper, or run it before the threads need the class \
                 (use the class once at start-up)."
            ),
            // A bin of a ConcurrentHashMap (its first node, or the reservation a
            // `computeIfAbsent` puts in an empty bin): the map's own lock.
            _ if g
                .class
                .starts_with("java.util.concurrent.ConcurrentHashMap$") =>
            {
                CHM_BIN_ADVICE.to_string()
            }
            (_, Some(_), None, Some(a)) => a.to_string(),
            // A `CopyOnWriteArrayList`'s (or set's) writes copy the whole array under
            // its one lock (4 pool tasks adding to one: "shorten the critical section
            // at" the `add`, which has no critical section of the application's).
            _ if let Some((collection, write)) = cow => format!(
                "The threads write to a shared `{collection}`: each `{write}` copies the whole \
                 array under its one lock, so writes take turns and get slower as it grows. It \
                 suits data read far more often than written: give each thread its own list{at} \
                 and merge them once, or use a `ConcurrentLinkedQueue` (or a \
                 `ConcurrentHashMap.newKeySet()` for a set)."
            ),
            (_, Some(name), Some(app), _) => format!(
                "The critical section is inside {name}, which the application calls at {app}: \
                 call it there from fewer threads at once or less often (keep what it returns), \
                 or configure {name} to hold the lock for less time (a pool's or cache's size)."
            ),
            (_, Some(name), None, None) => {
                let why = if stack.len() >= LOCK_SITE_FRAMES {
                    format!(
                        "none of the {LOCK_SITE_FRAMES} innermost frames recorded for its \
                         acquisition is the application's: {name} takes it on its own, or the \
                         application calls in from deeper than that"
                    )
                } else {
                    "no frame of its acquisition is the application's, so changing the \
                     application's code will not remove it"
                        .to_string()
                };
                format!(
                    "The lock is inside {name} ({why}). Look for a setting of {name} that \
                     avoids or shortens it (a cache or pool size, a feature to turn off), or a \
                     version of it without the lock."
                )
            }
            // Each blocked thread blocked once (Sunflow's lazy `tesselate`): the others
            // waited once for work done under the lock, not for a lock held often. Not
            // when the holders are as many as the waiters: threads (virtual threads, one
            // task each) queued on a lock each of them held in turn.
            (_, None, ..) if one_off(g) => format!(
                "A one-off wait, not a lock taken often: the blocked thread waited for work \
                 another thread did once under the lock (a lazy initialisation, a start-up or \
                 shutdown step). If {} matters, do that work before the threads need it, or \
                 outside the lock.",
                human_ns(g.max_blocked_ns)
            ),
            (_, None, ..) => lock_advice(g, &at, &stack),
        };
        // Virtual threads blocked on it unmount and hold no carrier: their blocked time
        // is latency, not threads' worth of the run (2,000 of them queued on one lock
        // read "566.3 threads' worth of the 0.4 s run"). Ranked by at most what the
        // CPUs could have done meanwhile.
        // On JDK 21-23 a virtual thread blocked entering a monitor stays mounted (pinned,
        // the pinning finding's); on 24+ it unmounts like at a j.u.c. lock.
        let pinned = g.kind == "monitor" && i.virtual_threads.synchronized_pins != Some(false);
        let on_virtual = vt_blocked * 2 > g.blocked_ns && !pinned;
        let noun = if on_virtual {
            "virtual thread"
        } else {
            "thread"
        };
        // Timed tries that ran out (`tryLock(timeout)`) blocked too, without acquiring.
        let attempts = g.slow_acquisitions + g.gave_up;
        let avg = g.blocked_ns / attempts.max(1);
        let holder = phase
            .and_then(|p| p.owner.as_deref())
            .map_or(String::new(), |o| format!(", mostly held by `{o}`"));
        let waited = match (g.slow_acquisitions, g.gave_up) {
            (n, 0) => count(n, "acquisition"),
            (0, t) => format!("{} that ran out", count(t, "timed attempt")),
            (n, t) => format!(
                "{} and {} that ran out",
                count(n, "acquisition"),
                count(t, "timed attempt")
            ),
        };
        let who = if g.threads == 1 && attempts == 1 {
            format!(
                "1 {noun} blocked there, once, for {}{holder}",
                human_ns(g.max_blocked_ns)
            )
        } else if one_off(g) {
            format!(
                "{} blocked there, once each (longest {}){holder}",
                count(g.threads as u64, noun),
                human_ns(g.max_blocked_ns)
            )
        } else {
            format!(
                "{} blocked there, {waited} waited {} on average (longest {}){holder}",
                count(g.threads as u64, noun),
                human_ns(avg),
                human_ns(g.max_blocked_ns)
            )
        };
        // The holder off the CPU while others waited: a sleep or blocking I/O inside
        // the critical section (4 threads sleeping 5 ms under one monitor read only
        // "shorten the critical section").
        let holder_off = holder_off_cpu(g);
        // The holder waiting for other threads inside the critical section (a
        // `Future.get` under a lock: 4 threads each waiting for a pool's result while
        // holding one `ReentrantLock` read only "shorten the critical section").
        let holder_wait = holder_waiting(i, g);
        let advice = match &holder_wait {
            Some((share, what)) => format!(
                "Its holder was itself waiting ({what}) for {} of the time it held the lock \
                 while others waited: the critical section waits for other threads while it \
                 holds the lock, so they wait in turn. Wait outside the lock (take what the \
                 critical section needs, release it, then wait), or hold the lock only to read \
                 and update the state. {advice}",
                pct(*share),
            ),
            None => advice,
        };
        let advice = match holder_off.filter(|_| holder_wait.is_none()) {
            Some((off, frame)) => format!(
                "Its holder was off the CPU (sleeping, or blocked in I/O) in {} of the wall \
                 samples taken while it held the lock and others waited{}: the critical \
                 section blocks while it holds the lock. Move the blocking call (the I/O, \
                 sleep or remote call) out of the lock, or hold the lock only to read and \
                 update the state. {advice}",
                pct(off),
                frame.map_or(String::new(), |f| format!(", mostly in {f}")),
            ),
            None => advice,
        };
        // A fair lock hands each release to its longest waiter, which must wake up
        // first: short critical sections become a convoy (4 threads incrementing under
        // `new ReentrantLock(true)`: 30 ms to 4.4 s from run to run, unfair 22 ms).
        let advice = if g.fair {
            format!(
                "The lock is fair (`new {}(true)`): each release hands it to the thread that \
                 waited longest, which must wake up first, while threads already running queue \
                 behind it: short critical sections turn into a convoy. Unless the order of \
                 entry matters, use the default (unfair) lock: a running thread then takes a \
                 free lock at once. {advice}",
                simple(&g.class)
            )
        } else {
            advice
        };
        let message = if on_virtual {
            format!(
                "Virtual threads spent {} blocked on {what}{at} (unmounted: they held no \
                 carrier, but waited in turn){when}. {who}. {advice}",
                human_ns(g.blocked_ns),
            )
        } else {
            format!(
                "Threads spent {}{} blocked on {what}{at}: {} of all running time{when}. {who}. \
                 {advice}",
                human_ns(g.blocked_ns),
                threads_busy(g.blocked_ns, i.model.duration_ns),
                pct(g.csp),
            )
        };
        // The CPUs' use while this group's threads were blocked (the sampler's
        // counters): all busy, a blocked thread would mostly have waited for a CPU
        // anyway (4 threads updating 4 `ConcurrentHashMap` keys on 2 CPUs, 95% busy:
        // "624 ms blocked" for a run that computing outside the lock made 2% faster).
        let busy_while_blocked = if crowded.is_none() && !on_virtual {
            cpus_busy_while_blocked(i, g)
        } else {
            None
        };
        let message = match busy_while_blocked {
            Some(share) => format!(
                "{message} The CPUs were {} busy while threads blocked here: a blocked thread \
                 would mostly have waited for a CPU anyway, so on {} CPUs removing this \
                 contention frees little time, unless that CPU time was spent spinning for \
                 the lock; it matters with more CPUs, or fewer threads.",
                pct(share),
                cpus_of(i.model)
            ),
            None => message,
        };
        // A crowded pool's threads blocked while the CPUs were busy: without the lock
        // they would mostly have waited for a CPU; what is lost is the CPUs' idle time.
        let cost_ns = match &crowded {
            _ if on_virtual => g
                .blocked_ns
                .min(i.model.duration_ns.saturating_mul(cpus_of(i.model))),
            Some(c) => g.blocked_ns.min(c.idle_cpu_ns),
            // Ranked by its blocked time still when the CPUs were busy: their time may
            // have been spent spinning for the lock (a Jetty servlet's `HashMap` monitor,
            // CPUs 100% busy, fell below an I/O finding about the acceptor's `accept`).
            None => g.blocked_ns,
        };
        let mut fields = vec![
            ("lock_class", FieldValue::Text(g.class.clone())),
            ("lock_kind", FieldValue::Text(g.kind.to_string())),
            ("instances", FieldValue::Int(g.locks.len() as u64)),
            ("csp", FieldValue::Float(g.csp)),
            ("max_phase_csp", FieldValue::Float(g.max_phase_csp)),
            ("max_phase_start_ns", FieldValue::Int(g.max_phase_start_ns)),
            ("peak_csp", FieldValue::Float(g.peak_csp)),
            ("peak_start_ns", FieldValue::Int(g.peak_start_ns)),
            ("blocked_ns", FieldValue::Int(g.blocked_ns)),
            ("contended", FieldValue::Int(g.contended)),
            ("slow_acquisitions", FieldValue::Int(g.slow_acquisitions)),
        ];
        if let Some(name) = framework {
            fields.push(("framework", FieldValue::Text(name)));
        }
        if let Some(share) = busy_while_blocked {
            fields.push(("cpus_busy_while_blocked", FieldValue::Float(share)));
        }
        if g.fair {
            fields.push(("fair", FieldValue::Bool(true)));
        }
        if let Some((share, what)) = holder_wait {
            fields.push(("holder_waiting_share", FieldValue::Float(share)));
            fields.push(("holder_waiting_on", FieldValue::Text(what)));
        }
        if let Some((off, frame)) = holder_off {
            fields.push(("holder_off_cpu_share", FieldValue::Float(off)));
            if let Some(f) = frame {
                fields.push(("holder_off_cpu_frame", FieldValue::Text(f.to_string())));
            }
        }
        if let Some(app) = caller {
            fields.push(("application_frame", FieldValue::Text(app.clone())));
        }
        if let Some(p) = phase {
            fields.push(("phase_start_ns", FieldValue::Int(p.start_ns)));
            fields.push(("phase_end_ns", FieldValue::Int(p.end_ns)));
            fields.push(("phase_csp", FieldValue::Float(p.csp)));
        }
        out.push(Finding {
            kind: FindingKind::LockContention,
            class: Some(g.class.clone()),
            message,
            fields,
            cost_ns,
            site: g.site.clone(),
            stack: Vec::new(),
        });
    }
}

/// A pool's threads are crowded on its task queue's lock with more than this many
/// threads per CPU...
pub const CROWDED_POOL_THREADS_PER_CPU: u64 = 4;
/// ...while the CPUs were at least this busy over the run.
pub const CROWDED_POOL_MIN_UTILISATION: f64 = 0.8;

/// A pool's task-queue lock its many threads crowd on (`crowded_pool_queue`).
struct CrowdedQueue {
    pool: String,
    threads: u64,
    /// The CPUs' idle time over the run.
    idle_cpu_ns: u64,
}

/// The CPUs were at least this busy while a lock group's threads were blocked: a
/// blocked thread would mostly have waited for a CPU anyway (said in the finding).
pub const LOCK_CPUS_BUSY_SHARE: f64 = 0.9;

/// When the CPUs were busy (at least [`LOCK_CPUS_BUSY_SHARE`]) while the group's
/// threads were blocked on it: their mean busy share then. None without the
/// sampler's counters.
fn cpus_busy_while_blocked(i: &Inputs, g: &LockGroup) -> Option<f64> {
    let mut locks = g.locks.clone();
    locks.sort_unstable();
    let blocked: Vec<(u64, u64)> = i
        .locks
        .blocked
        .iter()
        .filter(|b| locks.binary_search(&b.lock).is_ok())
        .map(|b| (b.start_ns, b.end_ns))
        .collect();
    let merged = crate::cpu::merge_intervals(&blocked);
    // The machine's busy share (other processes' work keeps a CPU from a thread too),
    // else the process's own.
    let (busy, covered) = match i.cpu.machine_busy_inside(&merged) {
        Some(x) => x,
        None => {
            let inside = i.cpu.inside_outside(&merged).0?;
            (inside.utilisation, inside.covered_ns)
        }
    };
    // A few sampler intervals are no evidence (the blocking fell inside 1–2 of them).
    (covered >= LOCK_BUSY_MIN_COVERED_NS && busy >= LOCK_CPUS_BUSY_SHARE).then_some(busy)
}

/// The blocked periods must lie over this much sampled time.
const LOCK_BUSY_MIN_COVERED_NS: u64 = 100_000_000;

/// The pool whose task-queue lock this group is, when the pool has many more threads
/// than CPUs and the CPUs were busy: a lock taken in a JDK blocking queue's
/// `take`/`poll`/`offer`/`put`, blocked on by that pool's threads.
fn crowded_pool_queue(i: &Inputs, g: &LockGroup) -> Option<CrowdedQueue> {
    let site = g.site.as_deref()?;
    let (class, name) = crate::model::frame_method(site).rsplit_once('.')?;
    let queue_call = class.starts_with("java.util.concurrent.")
        && class.contains("Queue")
        && matches!(name, "take" | "poll" | "offer" | "put");
    if !queue_call {
        return None;
    }
    // The pool most of the blocked threads belong to.
    let mut pools: BTreeMap<String, u64> = BTreeMap::new();
    for (t, ns) in &g.blocked_per_thread {
        *pools.entry(crate::model::pool_name(t)).or_default() += ns;
    }
    let (pool, _) = pools.into_iter().max_by_key(|(_, ns)| *ns)?;
    let threads = i
        .model
        .threads
        .values()
        .filter(|t| crate::model::pool_name(&t.display_name()) == pool)
        .count() as u64;
    let cpus = cpus_of(i.model);
    let run = i.cpu.window(0, i.model.duration_ns)?;
    (threads > CROWDED_POOL_THREADS_PER_CPU * cpus
        && run.utilisation >= CROWDED_POOL_MIN_UTILISATION)
        .then(|| CrowdedQueue {
            pool,
            threads,
            idle_cpu_ns: (run.idle_cpus(cpus) * i.model.duration_ns as f64) as u64,
        })
}

/// A lock's holders are judged off the CPU in their holds from this many wall
/// samples in them at least...
pub const HOLDER_MIN_SAMPLES: u64 = 3;
/// ...when they were off the CPU (sleeping, in I/O) in at least this share of them.
pub const HOLDER_OFF_CPU_MIN_SHARE: f64 = 0.5;

/// The share of its holders' wall samples in their holds (while others waited) in
/// which they were off the CPU, with the frame most of those were in, when there
/// are enough and the share is large: the lock is held across blocking.
fn holder_off_cpu(g: &LockGroup) -> Option<(f64, Option<&str>)> {
    let off = g.holder_off_cpu_samples as f64 / g.holder_wall_samples.max(1) as f64;
    (g.holder_wall_samples >= HOLDER_MIN_SAMPLES && off >= HOLDER_OFF_CPU_MIN_SHARE)
        .then(|| (off, g.holder_off_cpu_frames.first().map(|f| f.0.as_str())))
}

/// A lock's holders are said to wait inside the critical section when they spent at
/// least this share of the time they held it (while others waited) in their own
/// recorded waits...
pub const HOLDER_WAITING_MIN_SHARE: f64 = 0.5;

/// The share of the time its holders held the lock (while others waited) that they
/// spent in their own recorded waits, with what the largest of those waited on, when
/// the share is large.
fn holder_waiting(i: &Inputs, g: &LockGroup) -> Option<(f64, String)> {
    let h = &g.holder_waits;
    let share = h.share();
    if share < HOLDER_WAITING_MIN_SHARE {
        return None;
    }
    let w = i.locks.wait_groups.get(h.groups.first()?.0)?;
    let mut what = w.kind.to_string();
    if let Some(c) = &w.class {
        what.push_str(&format!(" on `{}`", simple(c)));
    }
    if let Some(site) = &w.site {
        what.push_str(&format!(" at {site}"));
    }
    Some((share, what))
}

/// Task classes most of whose executions ran on virtual threads.
fn classes_on_virtual_threads<'a>(i: &Inputs<'a>) -> BTreeSet<&'a str> {
    let mut count: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    if i.virtual_threads.count == 0 {
        return BTreeSet::new();
    }
    for e in i.tasks.executions.iter().filter(|e| e.reported()) {
        let v = count.entry(i.tasks.class(e)).or_default();
        v.1 += 1;
        if i.model
            .threads
            .get(&e.thread)
            .is_some_and(|t| t.virtual_thread)
        {
            v.0 += 1;
        }
    }
    count
        .into_iter()
        .filter(|(_, (v, n))| v * 2 > *n)
        .map(|(c, _)| c)
        .collect()
}

/// What a waiting task class mostly waits for, when that is a pool that was busy:
/// the class of the tasks its joins and gets returned from, and their pool.
struct AwaitedPool {
    class: String,
    /// Joins of that class, of all joins by the waiting class.
    joins: u64,
    all_joins: u64,
    pool: String,
    threads: u64,
    /// Its threads' busy share (on a CPU or ready to run) over their lives.
    busy_share: f64,
}

/// A pool awaited this busy is named as the waiting class's bottleneck.
pub const AWAITED_POOL_MIN_BUSY: f64 = 0.7;

/// The pool a waiting class's joins and gets mostly waited on (≥ half of them), when
/// its threads were busy ≥ [`AWAITED_POOL_MIN_BUSY`]: 800 tasks each waiting on a
/// task of a 1-thread pool read "make what it waits for ready sooner" without saying
/// that pool was the bottleneck.
fn awaited_pool(i: &Inputs, class: &str) -> Option<AwaitedPool> {
    let ex = &i.tasks.executions;
    let mut by_class: BTreeMap<&str, (u64, BTreeSet<ThreadIndex>)> = BTreeMap::new();
    let mut all = 0u64;
    for e in &i.tasks.edges.edges {
        // Gets of futures run by a pool (a thread's join is not a pool's work).
        if e.kind != EdgeKind::FutureGet {
            continue;
        }
        let Some(to) = e.to.and_then(|t| ex.get(t)) else {
            continue;
        };
        if i.tasks.class(to) != class {
            continue;
        }
        all += 1;
        if let Some(from) = e.from.and_then(|f| ex.get(f)) {
            let v = by_class.entry(i.tasks.class(from)).or_default();
            v.0 += 1;
            v.1.insert(from.thread);
        }
    }
    let (target, (joins, threads)) = by_class.into_iter().max_by_key(|(_, v)| v.0)?;
    if target == class || joins * 2 < all || threads.is_empty() {
        return None;
    }
    let (mut busy, mut life) = (0u64, 0u64);
    for t in &threads {
        let info = i.model.threads.get(t)?;
        let (from, to) = info.lifetime(i.model.duration_ns);
        let (run, q) = info.sched_between(from, to)?;
        busy += run + q;
        life += to.saturating_sub(from);
    }
    let busy_share = busy as f64 / life.max(1) as f64;
    if busy_share < AWAITED_POOL_MIN_BUSY {
        return None;
    }
    let first = threads.iter().next().and_then(|t| i.model.threads.get(t))?;
    Some(AwaitedPool {
        class: target.to_string(),
        joins,
        all_joins: all,
        pool: crate::model::pool_name(&first.display_name()),
        threads: threads.len() as u64,
        busy_share,
    })
}

/// `on_virtual`: [`classes_on_virtual_threads`]; a virtual thread that waits unmounts
/// and holds no carrier, unless it is pinned, which the pinning finding says with its site.
fn wait_findings(
    i: &Inputs,
    starved: &BTreeSet<String>,
    on_virtual: &BTreeSet<&str>,
    out: &mut Vec<Finding>,
) {
    for (ci, c) in i.tasks.classes.iter().enumerate() {
        // Its pool's deadlock is the finding.
        if starved.contains(&c.class) {
            continue;
        }
        if on_virtual.contains(c.class.as_str()) {
            continue;
        }
        let Some(a) = i.activity.classes.get(ci) else {
            continue;
        };
        // Threads and pool workers waiting for work are idle, not slow.
        if c.kind == TaskKind::Thread || a.hosts_tasks || c.executions == 0 {
            continue;
        }
        // Tasks of the JDK or a server, created or submitted with no application frame
        // on the stack (the JDK's shutdown-hook runner joining the hooks): not the
        // application's to change.
        if class_site(c).is_some_and(|(s, _)| i.model.is_framework_site(&s)) {
            continue;
        }
        let s = &a.split;
        let total = s.total();
        // Waits for work (a queue's take) are idle time, not a slowdown; unless the
        // tasks of this class refill that queue themselves (a pool of connections or
        // buffers they take and give back): they wait for a resource, not for work.
        let for_work = |g: usize| {
            i.locks
                .wait_groups
                .get(g)
                .is_some_and(|g| g.waits_for_work())
        };
        let idle_before: u64 = a
            .wait_groups
            .iter()
            .filter(|(g, _, _)| for_work(*g))
            .map(|(_, ns, _)| ns)
            .sum();
        let refilled = if idle_before >= WAIT_MIN_NS {
            peer_refilled_groups(i, c)
        } else {
            BTreeSet::new()
        };
        let idle_group = |g: usize| for_work(g) && !refilled.contains(&g);
        let idle: u64 = a
            .wait_groups
            .iter()
            .filter(|(g, _, _)| idle_group(*g))
            .map(|(_, ns, _)| ns)
            .sum();
        let waiting = s.waiting_ns.saturating_sub(idle);
        if waiting < WAIT_MIN_NS
            || (waiting as f64) < WAIT_MIN_SHARE * total as f64
            || (waiting as f64) < WAIT_MIN_SHARE_OF_RUN * i.model.duration_ns as f64
        {
            continue;
        }
        // A service loop (one long execution per thread, nearly all waiting: Spark's
        // message loops) was idle for the run: no task to make ready sooner.
        // So was one on a daemon thread still waiting when the recording ended, however
        // late it started: the JVM did not wait for it (Hadoop's
        // `StatisticsDataReferenceCleaner`, started halfway through a Spark executor's
        // run, waiting on its reference queue to the end: "spends 100% of its self time
        // waiting"). On a non-daemon thread such a wait may be a hang: still reported.
        let mean = total / c.executions.max(1);
        let nearly_all_waiting = (s.waiting_ns as f64) >= LOOP_MIN_WAITING_SHARE * total as f64;
        let waited_to_the_end = || {
            i.tasks.executions_of(c).all(|e| {
                e.end_ns.saturating_add(EXIT_SLACK_NS) >= i.model.duration_ns
                    && i.model.threads.get(&e.thread).is_some_and(|t| t.daemon)
            })
        };
        if nearly_all_waiting
            && ((mean as f64) >= LOOP_MIN_SHARE_OF_RUN * i.model.duration_ns as f64
                || (c.executions <= LOOP_MAX_EXECUTIONS_AT_END && waited_to_the_end()))
        {
            continue;
        }
        // What it waited on: its wait groups (kind, class waited on, site), the
        // largest first; a trace without wait details has only kinds.
        let groups: Vec<(&crate::wait_groups::WaitGroup, u64, u64)> = a
            .wait_groups
            .iter()
            .filter(|(g, _, _)| !idle_group(*g))
            .filter_map(|&(g, ns, n)| Some((i.locks.wait_groups.get(g)?, ns, n)))
            .collect();
        // The largest wait is for an item other tasks of this class give back.
        let resource = a
            .wait_groups
            .iter()
            .filter(|(g, _, _)| !idle_group(*g))
            .max_by_key(|(_, ns, _)| *ns)
            .filter(|(g, _, _)| refilled.contains(g))
            .and_then(|(g, _, _)| i.locks.wait_groups.get(*g));
        let on: Vec<String> = groups
            .iter()
            .take(3)
            .map(|(g, ns, n)| {
                let mut w = g.kind.to_string();
                if let Some(c) = &g.class {
                    w.push_str(&format!(" on `{}`", simple(c)));
                }
                if let Some(site) = &g.site {
                    w.push_str(&format!(" at {site}"));
                }
                format!("{w} for {} ({})", human_ns(*ns), count(*n, "wait"))
            })
            .collect();
        let on = if on.is_empty() {
            a.waits
                .iter()
                .take(3)
                .map(|(k, ns, n)| format!("{k} for {} ({})", human_ns(*ns), count(*n, "wait")))
                .collect()
        } else {
            on
        };
        let site = class_site(c);
        let at = site
            .as_ref()
            .map_or(String::new(), |(s, how)| format!(" ({how} at {s})"));
        // Where to change it: the site of its largest wait, when sampled.
        let top = groups.first().filter(|(g, _, _)| g.site.is_some());
        // A class not the application's (the JDK's, a library's) waiting in code that
        // is not the application's either (the JDK's shutdown-hook runner joining a
        // library's hook): nothing for the application to change.
        if i.model.owner_of(&format!("{}.run", c.class)) != FrameOwner::Application
            && top
                .and_then(|(g, _, _)| g.site.as_deref())
                .is_some_and(|s| i.model.is_framework_site(s))
        {
            continue;
        }
        let change = match top {
            Some((g, _, _)) => format!(
                " The wait to remove is at {}.",
                g.site.as_deref().unwrap_or_default()
            ),
            None => String::new(),
        };
        let awaited = awaited_pool(i, &c.class);
        let awaits = awaited.as_ref().map_or(String::new(), |a| {
            format!(
                " It waits for `{}` ({} of its {} gets and joins), run by {} of `{}`, busy {} \
                 of its time: that pool is the bottleneck; give it more threads (`pool:{}=N` in \
                 `weft whatif`), or do that work in the waiting task.",
                a.class,
                a.joins,
                a.all_joins,
                count(a.threads, "thread"),
                a.pool,
                pct(a.busy_share),
                a.pool
            )
        });
        let advice = if let Some(g) = resource {
            let threads = i
                .tasks
                .executions_of(c)
                .map(|e| e.thread)
                .collect::<BTreeSet<_>>()
                .len();
            let queue = g
                .queue_take()
                .map_or(String::new(), |m| format!(" (`{m}`)"));
            format!(
                " Its tasks wait on a queue{queue} that tasks of the same class refill (they \
                 woke each other): they take an item other tasks hold and give back, a pool \
                 of resources (connections, buffers) smaller than the {threads} threads that \
                 use it. Make that pool larger, hold each item for less time, or run no more \
                 threads than there are items."
            )
        } else {
            " Each wait holds a pool thread: make what it waits for (a future, a queue, a \
             condition) ready sooner, or submit the task only when its input is ready (a \
             continuation such as `thenApply` instead of a blocking `get`)."
                .to_string()
        };
        let message = format!(
            "{}{at} spends {} of its self time waiting ({}: {}) and runs only {}.{change}{awaits}\
             {advice}",
            c.class,
            pct(waiting as f64 / total.max(1) as f64),
            human_ns(waiting),
            on.join("; "),
            human_ns(s.running_ns)
        );
        let mut fields = vec![
            ("executions", FieldValue::Int(c.executions)),
            ("waiting_ns", FieldValue::Int(waiting)),
            ("waiting_for_work_ns", FieldValue::Int(idle)),
            ("running_ns", FieldValue::Int(s.running_ns)),
            ("self_total_ns", FieldValue::Int(total)),
        ];
        if let Some((g, ns, _)) = groups.first() {
            fields.push(("top_wait", FieldValue::Text(g.label())));
            fields.push(("top_wait_ns", FieldValue::Int(*ns)));
        }
        if resource.is_some() {
            fields.push(("resource_pool", FieldValue::Bool(true)));
        }
        if let Some(a) = awaited {
            fields.push(("awaited_class", FieldValue::Text(a.class)));
            fields.push(("awaited_pool", FieldValue::Text(a.pool)));
            fields.push(("awaited_pool_threads", FieldValue::Int(a.threads)));
            fields.push(("awaited_pool_busy_share", FieldValue::Float(a.busy_share)));
        }
        let (site, stack) = match top {
            Some((g, _, _)) => (g.site.clone(), g.stack.clone()),
            None => (site.map(|s| s.0), Vec::new()),
        };
        out.push(Finding {
            kind: FindingKind::Waiting,
            class: Some(c.class.clone()),
            message,
            fields,
            cost_ns: waiting,
            site,
            stack,
        });
    }
}

/// At most this many waits per execution for a queue wait to be a resource's.
pub const RESOURCE_MAX_WAITS_PER_RUN: u64 = 2;

/// The wait-for-work groups (a queue's take or poll) of a task class's waits that
/// were mostly (by time) ended by a thread running a task of the same class: the
/// tasks take an item their peers give back (a pool of connections), so those
/// waits are for a resource, not for work.
fn peer_refilled_groups(i: &Inputs, c: &TaskClassStats) -> BTreeSet<usize> {
    // The class's executions by thread, sorted by begin (executions of one thread
    // nest or follow each other).
    let mut runs: BTreeMap<ThreadIndex, Vec<(u64, u64)>> = BTreeMap::new();
    for e in i.tasks.executions_of(c) {
        runs.entry(e.thread)
            .or_default()
            .push((e.begin_ns, e.end_ns));
    }
    for r in runs.values_mut() {
        r.sort_unstable();
    }
    let inside = |t: ThreadIndex, ts: u64| {
        runs.get(&t).is_some_and(|r| {
            let k = r.partition_point(|&(b, _)| b <= ts);
            r[..k].iter().rev().take(4).any(|&(_, e)| ts <= e)
        })
    };
    // Wake-ups of those threads: (target, time, waker), by target and time.
    let by_java_id = i.model.threads_by_java_id();
    let mut wakes: BTreeMap<ThreadIndex, Vec<(u64, ThreadIndex)>> = BTreeMap::new();
    for evs in &i.model.events {
        for e in evs.iter() {
            if e.kind == crate::events::EventKind::Unpark {
                if let Some(&t) = by_java_id.get(&e.a).filter(|t| runs.contains_key(t)) {
                    wakes.entry(t).or_default().push((e.ts, evs.thread));
                }
            }
        }
    }
    for w in wakes.values_mut() {
        w.sort_unstable();
    }
    // Per group: (waits' time, of which woken by a peer, waits).
    let mut by_group: BTreeMap<usize, (u64, u64, u64)> = BTreeMap::new();
    for w in &i.locks.wait_intervals {
        let Some(g) = i.locks.wait_groups.get(w.group) else {
            continue;
        };
        if !g.waits_for_work() || !inside(w.thread, w.start_ns) {
            continue;
        }
        let d = w.end_ns.saturating_sub(w.start_ns);
        let e = by_group.entry(w.group).or_default();
        e.0 += d;
        e.2 += 1;
        // The last wake-up of the thread within the wait.
        let waker = wakes.get(&w.thread).and_then(|ws| {
            let k = ws.partition_point(|&(ts, _)| ts <= w.end_ns);
            ws[..k].last().filter(|&&(ts, _)| ts >= w.start_ns)
        });
        if let Some(&(ts, by)) = waker {
            if by != w.thread && inside(by, ts) {
                e.1 += d;
            }
        }
    }
    // A task that takes one item (or two) per run: a crawler's tasks, each looping
    // over a queue they also feed, wait for work their peers make.
    let executions = c.executions.max(1);
    by_group
        .into_iter()
        .filter(|(_, (all, peer, n))| {
            *all > 0 && *peer * 2 >= *all && *n <= RESOURCE_MAX_WAITS_PER_RUN * executions
        })
        .map(|(g, _)| g)
        .collect()
}

/// Every thread of a pool (threads named alike, `pool-1-thread-N`, that ran
/// submitted tasks) still alive at the end, each inside one of those tasks and in
/// a wait that never ended, while submitted tasks never started: the tasks wait
/// for tasks queued behind them on their own pool, which has no thread left to
/// run them (a thread-starvation deadlock: the program hangs). Returns the task
/// classes named (their `waiting` finding would say the same less clearly).
fn pool_starvation_findings(i: &Inputs, out: &mut Vec<Finding>) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let (tasks, model) = (i.tasks, i.model);
    if tasks.unmatched_submissions == 0 || model.end_ns.is_none() {
        return named;
    }
    // Each thread's wait still open at the end.
    let open_wait: BTreeMap<ThreadIndex, &crate::locks::WaitInterval> = i
        .locks
        .wait_intervals
        .iter()
        .filter(|w| w.open)
        .map(|w| (w.thread, w))
        .collect();
    // Per pool: its threads, and those stuck (by thread: its innermost open task,
    // the executions coming per thread in begin order, and its wait).
    type Stuck<'a> = BTreeMap<ThreadIndex, (&'a TaskExecution, &'a crate::locks::WaitInterval)>;
    let mut pools: BTreeMap<String, (BTreeSet<ThreadIndex>, Stuck)> = BTreeMap::new();
    for e in &tasks.executions {
        if e.kind == TaskKind::Thread || !e.submitted() || !e.reported() {
            continue;
        }
        let Some(t) = model.threads.get(&e.thread) else {
            continue;
        };
        if t.end_ns.is_some() || e.details.as_ref().and_then(|d| d.submit_thread) == Some(e.thread)
        {
            continue;
        }
        let pool = pools
            .entry(crate::model::pool_name(&t.display_name()))
            .or_default();
        pool.0.insert(e.thread);
        if let Some(w) = open_wait.get(&e.thread) {
            if e.incomplete() && e.end_ns >= model.duration_ns && w.start_ns >= e.begin_ns {
                pool.1.insert(e.thread, (e, w));
            }
        }
    }
    for (pool, (threads, stuck)) in pools {
        if stuck.is_empty() || !stuck.keys().eq(threads.iter()) {
            continue;
        }
        let blocked: u64 = stuck
            .values()
            .map(|(_, w)| model.duration_ns.saturating_sub(w.start_ns))
            .sum();
        let mut classes: Vec<String> = stuck
            .values()
            .map(|(e, _)| tasks.class(e).to_string())
            .collect();
        classes.sort();
        classes.dedup();
        let Some((_, w)) = stuck.values().next() else {
            continue;
        };
        let group = i.locks.wait_groups.get(w.group);
        let on = group.map_or_else(
            || w.kind.to_string(),
            |g| {
                let mut s = g.kind.to_string();
                if let Some(c) = &g.class {
                    s.push_str(&format!(" on `{}`", simple(c)));
                }
                if let Some(site) = &g.site {
                    s.push_str(&format!(" at {site}"));
                }
                s
            },
        );
        let message = format!(
            "{} of pool `{pool}` were blocked until the end of the recording, each in a \
             task of {} waiting ({on}), while {} submitted tasks never started: the tasks \
             wait for tasks queued behind them on their own pool, which has no thread left to \
             run them (a thread-starvation deadlock: the program hangs). Submit the tasks they \
             wait for to another pool, or do not block a pool thread on work of the same pool \
             (chain with `thenCompose`, or use a `ForkJoinPool`, whose joins run queued tasks).",
            match threads.len() {
                1 => "The one thread".to_string(),
                2 => "Both threads".to_string(),
                n => format!("All {n} threads"),
            },
            classes
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", "),
            tasks.unmatched_submissions,
        );
        out.push(Finding {
            kind: FindingKind::PoolStarvation,
            class: classes.first().cloned(),
            message,
            fields: vec![
                ("pool", FieldValue::Text(pool.clone())),
                ("threads", FieldValue::Int(threads.len() as u64)),
                (
                    "never_started",
                    FieldValue::Int(tasks.unmatched_submissions),
                ),
                ("blocked_ns", FieldValue::Int(blocked)),
            ],
            cost_ns: blocked,
            site: group.and_then(|g| g.site.clone()),
            stack: group.map(|g| g.stack.clone()).unwrap_or_default(),
        });
        named.extend(classes);
    }
    named
}

/// Consumers wait for work (a queue's take, or the program's own `Condition.await` or
/// `Object.wait`: a hand-made buffer) this share of their lifetime...
pub const STARVED_CONSUMER_SHARE: f64 = 0.5;
/// ...while the thread that woke them for most of it (this share of their wake-ups)...
pub const PRODUCER_WAKE_SHARE: f64 = 0.8;
/// ...was on a CPU or ready to run this share of its lifetime.
pub const PRODUCER_BUSY_SHARE: f64 = 0.8;

/// Consumer threads that wait for work on a queue most of their life, woken mostly
/// by one thread that is itself busy nearly all of its life: that producer is the
/// bottleneck (more consumers would wait more). The what-if's critical path says the
/// same in time ("compute main 100%"); without this the report read "no problem found".
fn producer_findings(i: &Inputs, out: &mut Vec<Finding>) {
    // A thread fed by the tasks it submitted waits for its own tasks' results.
    let feed = Feed::NotOwnTasks;
    if let Some(b) = busy_waker(i, |g| g.waits_for_work() || g.waits_in_app_handoff(), feed) {
        out.push(producer_finding(i, b));
    }
}

/// Producer threads that wait for room in a bounded queue most of their life (a full
/// `ArrayBlockingQueue.put`, a `SubmissionPublisher` whose subscriber's buffer is
/// full), woken mostly by one thread busy nearly all of its life: that consumer is
/// the bottleneck. `main` submitting 2,000 items to a `SubmissionPublisher` whose one
/// consumer task ran 773 ms of the 785 ms run, `main` parked 753 ms: "no problem
/// found".
fn consumer_findings(i: &Inputs, out: &mut Vec<Finding>) {
    let Some(b) = busy_waker(i, |g| g.waits_for_room(), Feed::Any) else {
        return;
    };
    let at = b.at();
    let (was, avg) = b.busy_words();
    let who = if b.waker_pool.is_some() {
        "the consumers are"
    } else {
        "the consumer is"
    };
    let more = if b.waker_pool.is_some() {
        "make consuming cheaper, or add consumer threads while the CPUs have room"
    } else {
        "make consuming cheaper, or consume with several threads (a pool behind the queue, \
         or several subscribers)"
    };
    // A hand-off has no buffer: each item waits for a consumer to take it.
    let (waited_for, made_room) = if b.group.is_some_and(|g| g.waits_at_handoff()) {
        (
            "for a consumer to take each item (a hand-off, no buffer)",
            "took them",
        )
    } else {
        ("for room in a full buffer", "made room")
    };
    let message = format!(
        "{} ({}) waited {waited_for} {} ({} of their time){at}, and {}, which \
         {made_room} (woke them {} of {} times), {was} busy {} of the {}{avg} meanwhile: \
         {who} the bottleneck, not the producers. A larger buffer would not help; {more}.",
        count(b.waiters.len() as u64, "producer thread"),
        b.names(i),
        human_ns(b.waited),
        pct(b.waited as f64 / b.lifetimes.max(1) as f64),
        b.waker_label(i),
        b.woke,
        b.all,
        pct(b.busy as f64 / b.window.max(1) as f64),
        human_ns(b.window),
    );
    out.push(b.finding(
        FindingKind::ConsumerBottleneck,
        message,
        ["consumer", "producers", "consumer_busy_ns"],
    ));
}

/// Threads waiting most of their life in an `Exchanger.exchange` for one busy
/// thread, the other side of the exchange: that side is the bottleneck (a producer
/// swapping buffers with a consumer 4 times slower waited 75% of its time and read
/// "too coarse-grained" on the consumer only).
fn exchanger_findings(i: &Inputs, out: &mut Vec<Finding>) {
    let Some(b) = busy_waker(i, |g| g.waits_at_exchanger(), Feed::Any) else {
        return;
    };
    let at = b.at();
    let (their, them) = if b.waiters.len() == 1 {
        ("its", "it")
    } else {
        ("their", "them")
    };
    let message = format!(
        "{} ({}) waited at an `Exchanger` {} ({} of {their} time){at} for {}, the other side \
         of the exchange (it woke {them} {} of {} times), which was busy {} of the {} \
         meanwhile: that side is the bottleneck. Make its work between exchanges cheaper, or \
         spread it over several threads (an `Exchanger` pairs two threads; a queue feeds \
         several).",
        count(b.waiters.len() as u64, "thread"),
        b.names(i),
        human_ns(b.waited),
        pct(b.waited as f64 / b.lifetimes.max(1) as f64),
        b.waker_label(i),
        b.woke,
        b.all,
        pct(b.busy as f64 / b.window.max(1) as f64),
        human_ns(b.window),
    );
    let mut f = b.finding(
        FindingKind::ConsumerBottleneck,
        message,
        ["consumer", "producers", "consumer_busy_ns"],
    );
    f.fields.push(("exchanger", FieldValue::Bool(true)));
    out.push(f);
}

/// The first `max` of `threads`' names, in backquotes.
fn thread_names<'a>(
    i: &Inputs,
    threads: impl Iterator<Item = &'a ThreadIndex>,
    max: usize,
) -> Vec<String> {
    threads
        .take(max)
        .filter_map(|t| i.model.threads.get(t).map(|t| thread_label(i, t)))
        .collect()
}

/// A thread's name as a finding says it; a virtual thread's (`virtual-23`, a name weft
/// gave it) with the task class it runs, which says which part of the program it is.
fn thread_label(i: &Inputs, t: &crate::model::ThreadInfo) -> String {
    let name = t.display_name();
    if !t.virtual_thread {
        return format!("`{name}`");
    }
    let class = i
        .tasks
        .executions
        .iter()
        .filter(|e| e.thread == t.index)
        .min_by_key(|e| e.begin_ns)
        .map(|e| i.tasks.class(e));
    match class {
        Some(c) => format!("`{name}` running `{c}`"),
        None => format!("`{name}`"),
    }
}

/// Which wake-ups of the waiting threads [`busy_waker`] counts as their feed.
#[derive(Clone, Copy, PartialEq)]
enum Feed {
    Any,
    /// Not when mostly made by tasks the waiting threads submitted themselves
    /// ([`OwnTasks`]); a publisher waiting for room in its subscriber's
    /// buffer, whose consumer task it started, is still held back by that consumer.
    NotOwnTasks,
}

/// Per thread, the task executions on it that a waiting thread submitted: a thread
/// woken from inside one waits for the results of its own tasks
/// (`ExecutorCompletionService.take`, `invokeAny`, a results queue the tasks fill),
/// and is not a consumer starved by a producer (100 `invokeAny` calls on a busy pool
/// of 2 read "the producing is the bottleneck").
struct OwnTasks(HashMap<ThreadIndex, Vec<(u64, u64, ThreadIndex)>>);

impl OwnTasks {
    fn of(i: &Inputs, waiting: &BTreeMap<ThreadIndex, u64>) -> OwnTasks {
        // (begin, end, submitter) by begin.
        let mut runs: HashMap<ThreadIndex, Vec<(u64, u64, ThreadIndex)>> = HashMap::new();
        for e in &i.tasks.executions {
            if let Some(s) = e.submit_thread().filter(|s| waiting.contains_key(s)) {
                runs.entry(e.thread)
                    .or_default()
                    .push((e.begin_ns, e.end_ns, s));
            }
        }
        for r in runs.values_mut() {
            r.sort_unstable();
        }
        OwnTasks(runs)
    }

    /// Whether a wake-up of `woken` by `thread` at `ts` came from inside a task
    /// `woken` submitted.
    fn woke_from(&self, thread: ThreadIndex, ts: u64, woken: ThreadIndex) -> bool {
        let Some(r) = self.0.get(&thread) else {
            return false;
        };
        // The executions that began by then, latest first (nested ones last).
        let n = r.partition_point(|x| x.0 <= ts);
        r[..n]
            .iter()
            .rev()
            .take(8)
            .any(|&(_, end, s)| end >= ts && s == woken)
    }
}

/// Threads that waited most of their life, and the one busy thread that woke them.
struct BusyWaker<'a> {
    /// The waiting threads and how long each waited.
    waiters: BTreeMap<ThreadIndex, u64>,
    waited: u64,
    /// Their lifetimes up to their last wait, summed.
    lifetimes: u64,
    waker: &'a crate::model::ThreadInfo,
    /// When the waker is a group of threads named alike: (its name, its size);
    /// `waker` is one of them and `busy` their mean.
    waker_pool: Option<(String, u64)>,
    /// Its wake-ups of them, of all their wake-ups.
    woke: u64,
    all: u64,
    /// Its time on a CPU or runnable, over the window while they waited.
    busy: u64,
    window: u64,
    /// Where they waited most.
    group: Option<&'a crate::wait_groups::WaitGroup>,
}

impl BusyWaker<'_> {
    /// The finding, its fields named `[waker, waiters, waker's busy ns]` (and
    /// `waiting_ns`); its cost is the waiting.
    fn finding(&self, kind: FindingKind, message: String, names: [&'static str; 3]) -> Finding {
        Finding {
            kind,
            class: None,
            message,
            fields: vec![
                (names[0], FieldValue::Text(self.waker_name())),
                (names[1], FieldValue::Int(self.waiters.len() as u64)),
                ("waiting_ns", FieldValue::Int(self.waited)),
                (names[2], FieldValue::Int(self.busy)),
            ],
            cost_ns: self.waited,
            site: self.group.and_then(|g| g.site.clone()),
            stack: self.group.map(|g| g.stack.clone()).unwrap_or_default(),
        }
    }

    /// " at SITE" of the waits, when known.
    fn at(&self) -> String {
        self.group
            .and_then(|g| g.site.as_deref())
            .map_or(String::new(), |s| format!(" at {s}"))
    }

    /// The waker's name, or its group's (`consumer`).
    fn waker_name(&self) -> String {
        match &self.waker_pool {
            Some((pool, _)) => pool.clone(),
            None => self.waker.display_name(),
        }
    }

    /// "was busy" or, for a group, "were busy ... on average": (verb, suffix).
    fn busy_words(&self) -> (&'static str, &'static str) {
        if self.waker_pool.is_some() {
            ("were", " on average")
        } else {
            ("was", "")
        }
    }

    /// The waker in words: `` `name` ``, or "the 3 `consumer` threads".
    fn waker_label(&self, i: &Inputs) -> String {
        match &self.waker_pool {
            Some((pool, n)) => format!("the {n} `{pool}` threads"),
            None => thread_label(i, self.waker),
        }
    }

    /// Up to three of the waiters' names, and how many more.
    fn names(&self, i: &Inputs) -> String {
        let names = thread_names(i, self.waiters.keys(), 3);
        let more = self.waiters.len().saturating_sub(names.len());
        if more > 0 {
            format!("{} and {more} more", names.join(", "))
        } else {
            names.join(", ")
        }
    }
}

/// Threads whose waits of the groups `select` keeps take at least
/// [`STARVED_CONSUMER_SHARE`] of their life, woken for [`PRODUCER_WAKE_SHARE`] of it by
/// one thread that was busy [`PRODUCER_BUSY_SHARE`] of the time meanwhile.
fn busy_waker<'a>(
    i: &Inputs<'a>,
    select: impl Fn(&crate::wait_groups::WaitGroup) -> bool,
    feed: Feed,
) -> Option<BusyWaker<'a>> {
    let model = i.model;
    let life = |t: &crate::model::ThreadInfo| {
        let (from, to) = t.lifetime(model.duration_ns);
        (from, to.saturating_sub(from))
    };
    // Each thread's waits for work. Its last one is left out, and its time is counted
    // up to where that wait began: a pool thread idle from its last task until the
    // pool shuts down (a cached pool's threads, woken by the shutdown) was not
    // starved by anyone.
    let mut waits: BTreeMap<ThreadIndex, Vec<(u64, u64, usize)>> = BTreeMap::new();
    for w in &i.locks.wait_intervals {
        let Some(g) = i.locks.wait_groups.get(w.group) else {
            continue;
        };
        if select(g) {
            waits
                .entry(w.thread)
                .or_default()
                .push((w.start_ns, w.end_ns, w.group));
        }
    }
    // Per thread: (time waited, by group), its counted span, where its last wait began.
    let mut idle: BTreeMap<ThreadIndex, (u64, BTreeMap<usize, u64>)> = BTreeMap::new();
    let mut spans: BTreeMap<ThreadIndex, (u64, u64)> = BTreeMap::new();
    for (t, mut ws) in waits {
        let Some(info) = model.threads.get(&t) else {
            continue;
        };
        ws.sort_unstable();
        let Some(&(last_start, _, _)) = ws.last() else {
            continue;
        };
        let (from, _) = life(info);
        let span = last_start.saturating_sub(from);
        let e = idle.entry(t).or_default();
        for &(s, end, g) in &ws[..ws.len() - 1] {
            let d = end.min(last_start).saturating_sub(s);
            e.0 += d;
            *e.1.entry(g).or_default() += d;
        }
        spans.insert(t, (span, last_start));
    }
    let consumers: BTreeMap<ThreadIndex, u64> = idle
        .iter()
        .filter(|(t, (ns, _))| {
            let span = spans.get(t).map_or(0, |s| s.0);
            span > 0 && *ns as f64 >= STARVED_CONSUMER_SHARE * span as f64
        })
        .map(|(t, (ns, _))| (*t, *ns))
        .collect();
    let waited: u64 = consumers.values().sum();
    if consumers.is_empty()
        || waited < WAIT_MIN_NS
        || (waited as f64) < WAIT_MIN_SHARE_OF_RUN * model.duration_ns as f64
    {
        return None;
    }
    // Who woke them.
    let by_java_id = model.threads_by_java_id();
    let own_tasks = (feed == Feed::NotOwnTasks).then(|| OwnTasks::of(i, &consumers));
    let mut wakers: BTreeMap<ThreadIndex, u64> = BTreeMap::new();
    let mut by_own_tasks = 0u64;
    for evs in &model.events {
        if consumers.contains_key(&evs.thread) {
            continue;
        }
        for e in evs.iter() {
            if e.kind != crate::events::EventKind::Unpark {
                continue;
            }
            // Wake-ups of a consumer's last wait (a shutdown's) are not its feed.
            let Some(&woken) = by_java_id
                .get(&e.a)
                .filter(|t| consumers.contains_key(t) && spans.get(t).is_some_and(|s| e.ts < s.1))
            else {
                continue;
            };
            *wakers.entry(evs.thread).or_default() += 1;
            if own_tasks
                .as_ref()
                .is_some_and(|o| o.woke_from(evs.thread, e.ts, woken))
            {
                by_own_tasks += 1;
            }
        }
    }
    let all: u64 = wakers.values().sum();
    if (by_own_tasks as f64) >= 0.5 * all as f64 {
        return None;
    }
    let (&producer, &woke) = wakers.iter().max_by_key(|(_, n)| **n)?;
    // No one thread woke them: threads of one pool (named alike, `consumer-N`) that
    // did together, each of them busy, are the bottleneck as a group (3 consumers
    // of a full queue, each waking the producer a third of the time).
    let (producer, woke, members) = if (woke as f64) < PRODUCER_WAKE_SHARE * all as f64 {
        let mut by_pool: BTreeMap<String, (u64, Vec<ThreadIndex>)> = BTreeMap::new();
        for (t, n) in &wakers {
            let Some(info) = model.threads.get(t) else {
                continue;
            };
            let e = by_pool
                .entry(crate::model::pool_name(&info.display_name()))
                .or_default();
            e.0 += n;
            e.1.push(*t);
        }
        let (_, (n, ts)) = by_pool.into_iter().max_by_key(|(_, (n, _))| *n)?;
        if ts.len() < 2 || (n as f64) < PRODUCER_WAKE_SHARE * all as f64 {
            return None;
        }
        (ts[0], n, ts)
    } else {
        (producer, woke, vec![producer])
    };
    let p = model.threads.get(&producer)?;
    // Its busy share while the consumers waited (from the first one's start to the
    // last one's last wait): busy before they existed (a program's start-up) fed
    // nobody.
    let (pfrom, plife) = life(p);
    let mut from = u64::MAX;
    let mut to = 0;
    for t in consumers.keys() {
        if let (Some(info), Some(&(_, last))) = (model.threads.get(t), spans.get(t)) {
            from = from.min(life(info).0);
            to = to.max(last);
        }
    }
    let from = from.max(pfrom);
    let to = to.min(pfrom + plife);
    let window = to.saturating_sub(from);
    // A group's busy time is its members' mean. A virtual thread has no schedstat
    // readings: its time mounted (on its carrier, running or ready) is its busy time.
    let mut busy = 0u64;
    for t in &members {
        busy += if weft_trace::is_virtual_thread(*t) {
            let mounts = i.virtual_threads.mounts.get(t)?;
            mounts
                .iter()
                .map(|&(a, b, _)| b.min(to).saturating_sub(a.max(from)))
                .sum()
        } else {
            let (running, runq) = model.threads.get(t)?.sched_between(from, to)?;
            running + runq
        };
    }
    let busy = busy / members.len() as u64;
    if window == 0 || (busy as f64) < PRODUCER_BUSY_SHARE * window as f64 {
        return None;
    }
    // Where the consumers wait: their largest wait-for-work group.
    let mut by_group: BTreeMap<usize, u64> = BTreeMap::new();
    for t in consumers.keys() {
        for (g, ns) in &idle[t].1 {
            *by_group.entry(*g).or_default() += ns;
        }
    }
    let group = by_group
        .iter()
        .max_by_key(|(_, ns)| **ns)
        .and_then(|(g, _)| i.locks.wait_groups.get(*g));
    let lifetimes: u64 = consumers
        .keys()
        .filter_map(|t| spans.get(t).map(|s| s.0))
        .sum();
    let waker_pool = (members.len() > 1).then(|| {
        (
            crate::model::pool_name(&p.display_name()),
            members.len() as u64,
        )
    });
    Some(BusyWaker {
        waiters: consumers,
        waited,
        lifetimes,
        waker: p,
        waker_pool,
        woke,
        all,
        busy,
        window,
        group,
    })
}

/// The producer-bottleneck finding of consumers starved by a busy producer.
fn producer_finding(i: &Inputs, b: BusyWaker) -> Finding {
    let at = b.at();
    let for_work = if b.group.is_some_and(|g| g.waits_for_work()) {
        " for work"
    } else {
        ""
    };
    let (was, avg) = b.busy_words();
    let message = format!(
        "{} ({}) waited{for_work} {} ({} of their time){at}, and {}, which woke them ({} of \
         {} wake-ups), {was} busy {} of the {}{avg} meanwhile: the producing is the bottleneck, \
         not the consumers. More consumer threads would wait more; make producing cheaper, or \
         split it over several producers.",
        count(b.waiters.len() as u64, "consumer thread"),
        b.names(i),
        human_ns(b.waited),
        pct(b.waited as f64 / b.lifetimes.max(1) as f64),
        b.waker_label(i),
        b.woke,
        b.all,
        pct(b.busy as f64 / b.window.max(1) as f64),
        human_ns(b.window),
    );
    b.finding(
        FindingKind::ProducerBottleneck,
        message,
        ["producer", "consumers", "producer_busy_ns"],
    )
}

/// A class is judged from this many submitted executions...
pub const CALLER_RUNS_MIN_TASKS: u64 = 20;
/// ...this share of which ran on their submitter, inside the submission...
pub const CALLER_RUNS_MIN_SHARE: f64 = 0.1;
/// ...while the CPUs were less busy than this.
pub const CALLER_RUNS_MAX_UTILISATION: f64 = 0.8;

/// Submitted tasks that ran on the thread that submitted them, while others of their
/// class ran on a pool: the pool was saturated and its rejection policy
/// (`CallerRunsPolicy`) handed them back. The submitter runs a task instead of
/// submitting, so the pool's threads run dry meanwhile: "no problem found" before,
/// with half of 3,000 tasks run by `main` and the workers idle half the run. A class
/// all of whose tasks run on their submitter is a same-thread executor by design.
fn caller_runs_findings(i: &Inputs, out: &mut Vec<Finding>) {
    #[derive(Default)]
    struct PerClass {
        total: u64,
        /// (thread, begin, end) of the runs on their submitter, top-level only.
        in_caller: Vec<(ThreadIndex, u64, u64)>,
        pool_threads: BTreeSet<ThreadIndex>,
        site: Option<String>,
    }
    let mut by_class: BTreeMap<&str, PerClass> = BTreeMap::new();
    for e in i.tasks.executions.iter().filter(|e| {
        e.reported() && e.submitted() && matches!(e.kind, TaskKind::Runnable | TaskKind::Callable)
    }) {
        let Some(submitter) = e.submit_thread() else {
            continue;
        };
        let c = by_class.entry(i.tasks.class(e)).or_default();
        c.total += 1;
        if submitter == e.thread {
            c.in_caller.push((e.thread, e.begin_ns, e.end_ns));
            if c.site.is_none() {
                c.site = e.submitted_site().map(str::to_string);
            }
        } else {
            c.pool_threads.insert(e.thread);
        }
    }
    for (class, c) in by_class {
        let n = c.in_caller.len() as u64;
        if c.total < CALLER_RUNS_MIN_TASKS
            || c.pool_threads.is_empty()
            || (n as f64) < CALLER_RUNS_MIN_SHARE * c.total as f64
        {
            continue;
        }
        // The pool threads' waits for work while a submitter ran a task.
        let mut runs = c.in_caller.clone();
        runs.sort_unstable_by_key(|r| r.1);
        let mut idle = 0u64;
        for w in &i.locks.wait_intervals {
            if !c.pool_threads.contains(&w.thread)
                || !i
                    .locks
                    .wait_groups
                    .get(w.group)
                    .is_some_and(|g| g.waits_for_work())
            {
                continue;
            }
            let from = runs.partition_point(|r| r.2 <= w.start_ns);
            for r in &runs[from..] {
                if r.1 >= w.end_ns {
                    break;
                }
                idle += w.end_ns.min(r.2).saturating_sub(w.start_ns.max(r.1));
            }
        }
        // Only where the CPUs had room: CPU-bound tasks on a pool as wide as the
        // machine lose nothing when the submitter runs some (its thread takes the CPU
        // an idle worker left); tasks that wait (I/O) lose the pool's concurrency.
        let spans: Vec<(u64, u64)> = runs.iter().map(|r| (r.1, r.2)).collect();
        let (during, _) = i.cpu.inside_outside(&spans);
        if !i.cpu.cpus_known || during.is_none_or(|d| d.utilisation >= CALLER_RUNS_MAX_UTILISATION)
        {
            continue;
        }
        if idle < WAIT_MIN_NS || (idle as f64) < WAIT_MIN_SHARE_OF_RUN * i.model.duration_ns as f64
        {
            continue;
        }
        let in_caller_ns: u64 = c.in_caller.iter().map(|r| r.2.saturating_sub(r.1)).sum();
        let callers: BTreeSet<ThreadIndex> = c.in_caller.iter().map(|r| r.0).collect();
        let caller_names = thread_names(i, callers.iter(), 3);
        // The site of a run in the caller: its submission's, when that one's stack was
        // sampled (the first 64 of a class, then 1 in 256); else the class's most
        // frequent submission site (a pool that ran dry only after 64 submissions).
        let site = c.site.clone().or_else(|| site_of_class(i, class));
        let at = site
            .as_deref()
            .map_or(String::new(), |s| format!(" at {s}"));
        let message = format!(
            "{n} of {} `{class}` tasks ({}) ran on the thread that submitted them ({}){at}, \
             {} in all, not on the pool: the pool was saturated and its rejection policy \
             (`CallerRunsPolicy`, or one like it) ran them in the caller. While a submitter runs \
             a task it submits nothing: the pool's {} waited for work {} meanwhile. Give the \
             pool a queue that absorbs the bursts, or make the submitter wait for room (a \
             bounded queue's `put`) instead of running tasks itself.",
            c.total,
            pct(n as f64 / c.total as f64),
            caller_names.join(", "),
            human_ns(in_caller_ns),
            count(c.pool_threads.len() as u64, "thread"),
            human_ns(idle),
        );
        out.push(Finding {
            kind: FindingKind::CallerRuns,
            class: Some(class.to_string()),
            message,
            fields: vec![
                ("in_caller", FieldValue::Int(n)),
                ("tasks", FieldValue::Int(c.total)),
                ("in_caller_ns", FieldValue::Int(in_caller_ns)),
                ("pool_idle_ns", FieldValue::Int(idle)),
            ],
            cost_ns: idle,
            site,
            stack: Vec::new(),
        });
    }
}

/// A pool is judged too small for blocking tasks from this many submitted tasks...
pub const SMALL_POOL_MIN_TASKS: u64 = 20;
/// ...that ran this busy at most (on a CPU or ready to run, of their self time)...
pub const SMALL_POOL_MAX_BUSY_SHARE: f64 = 0.5;
/// ...while the CPUs were less busy than this.
pub const SMALL_POOL_MAX_UTILISATION: f64 = 0.5;
/// The most threads the advice names.
pub const SMALL_POOL_MAX_SUGGESTED: u64 = 256;

/// A pool smaller than the machine for CPU-bound tasks: queued at least this much CPU
/// capacity idle while they ran (a `ThreadPoolExecutor(1, 8, …, new
/// LinkedBlockingQueue<>())` never grows past its core size: 400 tasks of 2.4 ms ran
/// on 1 thread of 2 CPUs, 1.0 s, "no problem found").
pub const SMALL_POOL_MIN_IDLE_CPUS: f64 = 0.5;

/// Tasks off the CPU without a recorded wait (I/O, `Thread.sleep`) most of their self
/// time: on a CPU or ready to run at most [`SMALL_POOL_MAX_BUSY_SHARE`] of it.
fn mostly_blocking(act: &crate::activity::ClassActivity) -> bool {
    let s = &act.split;
    act.activity == Activity::OffCpu
        && (s.running_ns + s.runnable_ns) as f64 <= SMALL_POOL_MAX_BUSY_SHARE * s.total() as f64
}

/// The pool (threads named alike: `pool-1`) of the first of `threads`, the threads
/// that ran a class's tasks.
fn pool_of(model: &Model, threads: &BTreeSet<ThreadIndex>) -> String {
    threads
        .iter()
        .next()
        .and_then(|t| model.threads.get(t))
        .map(|t| crate::model::pool_name(&t.display_name()))
        .unwrap_or_else(|| "its pool".to_string())
}

/// Tasks queued on a pool of fewer threads than the work can use, while the CPUs
/// idled: blocking tasks (socket I/O, `Thread.sleep`, without a recorded wait) on a
/// pool sized for the CPUs (200 tasks sleeping 10 ms on 2 threads read "no problem
/// found": 1.05 s; 4 threads: 525 ms; 20: 110 ms), or CPU-bound tasks on a pool
/// smaller than the machine. The thread count that keeps the cores busy is cores ×
/// (1 + blocked / busy) (Goetz's sizing rule).
fn pool_too_small_findings(i: &Inputs, out: &mut Vec<Finding>) {
    let cpus = cpus_of(i.model);
    for (ci, c) in i.tasks.classes.iter().enumerate() {
        // CPU-bound tasks need only outnumber the CPUs (3 long tasks queued on a
        // single-thread scheduler of a 2-CPU machine read "too coarse-grained: only 3
        // tasks for 2 CPUs"); blocking ones need a sample of waits.
        if !matches!(c.kind, TaskKind::Runnable | TaskKind::Callable)
            || c.submitted < SMALL_POOL_MIN_TASKS.min(cpus + 1)
        {
            continue;
        }
        let Some(act) = i.activity.classes.get(ci) else {
            continue;
        };
        let s = &act.split;
        let busy = s.running_ns + s.runnable_ns;
        if !act.cpu_measured || s.total() == 0 {
            continue;
        }
        let blocking = mostly_blocking(act) && c.submitted >= SMALL_POOL_MIN_TASKS;
        let cpu_bound = act.activity == Activity::Running;
        if !blocking && !cpu_bound {
            continue;
        }
        let Some(q) = &c.queue_wait_ns else {
            continue;
        };
        if q.p50 < c.granularity_ns.p50 {
            continue;
        }
        // Its executions: the threads that ran them (not their submitters) and when.
        let mut spans: Vec<(u64, u64)> = Vec::new();
        let mut threads: BTreeSet<ThreadIndex> = BTreeSet::new();
        let mut queued = 0u64;
        for e in i
            .tasks
            .executions_of(c)
            .filter(|e| e.submit_thread() != Some(e.thread))
        {
            spans.push((e.begin_ns, e.end_ns));
            threads.insert(e.thread);
            queued += e.queue_wait_ns().unwrap_or(0);
        }
        let k = threads.len() as u64;
        if k == 0 {
            continue;
        }
        let (during, _) = i.cpu.inside_outside(&spans);
        let Some(during) = during else {
            continue;
        };
        let idle_cpus = during.idle_cpus(cpus);
        let (n, cost) = if blocking {
            if during.utilisation >= SMALL_POOL_MAX_UTILISATION {
                continue;
            }
            let want =
                (cpus as f64 * (1.0 + s.off_cpu_ns as f64 / busy.max(1) as f64)).ceil() as u64;
            let cost = queued.min(i.model.duration_ns.saturating_mul(cpus));
            (want.min(c.submitted).min(SMALL_POOL_MAX_SUGGESTED), cost)
        } else {
            // CPU-bound: as many threads as CPUs, and what is lost is the CPU time
            // left idle while the tasks queued.
            if k >= cpus || idle_cpus < SMALL_POOL_MIN_IDLE_CPUS {
                continue;
            }
            let idle = (idle_cpus * during.covered_ns as f64) as u64;
            (cpus.min(c.submitted), queued.min(idle))
        };
        if n <= k {
            continue;
        }
        if cost < WAIT_MIN_NS || (cost as f64) < WAIT_MIN_SHARE_OF_RUN * i.model.duration_ns as f64
        {
            continue;
        }
        let pool = pool_of(i.model, &threads);
        let site = class_site(c);
        let message = if blocking {
            format!(
                "`{}` tasks spend {} of their time off-CPU (I/O, sleep, or blocking weft does not \
                 record) on the {} of `{pool}`, and waited {} (median) in its queue for one, while \
                 the CPUs were {} busy: the pool is too small for blocking work. About {n} threads \
                 keep the {cpus} CPUs busy at this ratio of blocking to computing (`weft whatif \
                 TRACE --edit pool:{pool}={n}` estimates it), or run these tasks on virtual threads \
                 (JDK 21+).",
                c.class,
                pct(s.off_cpu_ns as f64 / s.total() as f64),
                count(k, "thread"),
                human_ns(q.p50),
                pct(during.utilisation),
            )
        } else {
            format!(
                "{} `{}` tasks, busy on a CPU, ran on the {} of `{pool}` and waited {} (median) in \
                 its queue for one, while the {cpus} CPUs were {} busy: the pool is smaller than \
                 the machine. With {n} threads it would use the idle CPUs (`weft whatif TRACE \
                 --edit pool:{pool}={n}` estimates it), unless these tasks must run one at a time. \
                 A `ThreadPoolExecutor` starts threads beyond its core size only when its queue is \
                 full: with an unbounded queue it never grows past the core size, whatever its \
                 maximum; raise the core size.",
                c.submitted,
                c.class,
                count(k, "thread"),
                human_ns(q.p50),
                pct(during.utilisation),
            )
        };
        out.push(Finding {
            kind: FindingKind::PoolTooSmall,
            class: Some(c.class.clone()),
            message,
            fields: vec![
                ("pool", FieldValue::Text(pool)),
                (
                    "reason",
                    FieldValue::Text(if blocking { "blocking" } else { "cpus" }.to_string()),
                ),
                ("threads", FieldValue::Int(k)),
                ("suggested_threads", FieldValue::Int(n)),
                ("queue_wait_p50_ns", FieldValue::Int(q.p50)),
                (
                    "off_cpu_share",
                    FieldValue::Float(s.off_cpu_ns as f64 / s.total() as f64),
                ),
                ("utilisation_during", FieldValue::Float(during.utilisation)),
            ],
            cost_ns: cost,
            site: site.map(|s| s.0),
            stack: Vec::new(),
        });
    }
}

/// A fork-join pool made with fewer threads than CPUs (`new ForkJoinPool(1)`) whose
/// computations had more parallelism (work / critical path) than the pool's threads,
/// while CPUs idled: the pool, not the program, kept them serial. On 2 CPUs, 10 sums on
/// `new ForkJoinPool(1)` (parallelism ~50 each) took 1.35 s and read "a serial phase
/// ... split that work over threads". The common pool's CPUs − 1 plus its caller is
/// not this (the caller that helped counts).
fn forkjoin_pool_too_small_findings(i: &Inputs, out: &mut Vec<Finding>) {
    let f = i.forkjoin;
    let cpus = cpus_of(i.model);
    for p in &f.pools {
        let comps: Vec<&crate::forkjoin::Computation> =
            f.computations.iter().filter(|c| c.pool == p.pool).collect();
        let helpers = comps.iter().map(|c| c.helpers).max().unwrap_or(0) as u64;
        let width = p.parallelism as u64 + helpers;
        if width >= cpus || comps.is_empty() {
            continue;
        }
        let work: u64 = comps.iter().map(|c| c.work_ns).sum();
        let span: u64 = comps.iter().map(|c| c.span_ns).sum();
        let parallelism = work as f64 / span.max(1) as f64;
        if work < FJ_MIN_WORK_NS || parallelism < FJ_SMALL_POOL_MIN_EXCESS * width as f64 {
            continue;
        }
        let spans: Vec<(u64, u64)> = comps.iter().map(|c| (c.begin_ns, c.end_ns)).collect();
        let Some(during) = i.cpu.inside_outside(&spans).0 else {
            continue;
        };
        let idle_cpus = during.idle_cpus(cpus);
        if idle_cpus < SMALL_POOL_MIN_IDLE_CPUS {
            continue;
        }
        let cost = ((idle_cpus * during.covered_ns as f64) as u64).min(work);
        if cost < WAIT_MIN_NS || (cost as f64) < WAIT_MIN_SHARE_OF_RUN * i.model.duration_ns as f64
        {
            continue;
        }
        let pool = f
            .threads
            .iter()
            .find(|t| t.pool == p.pool)
            .map(|t| crate::model::pool_name(&t.name))
            .unwrap_or_else(|| format!("pool #{:08x}", p.pool));
        let roots: BTreeSet<&str> = comps.iter().map(|c| c.root_class.as_str()).collect();
        let root = roots.iter().next().copied().unwrap_or("?");
        let n = cpus.min(parallelism.floor() as u64).max(width + 1);
        out.push(Finding {
            kind: FindingKind::PoolTooSmall,
            class: Some(root.to_string()),
            message: format!(
                "`{pool}` (parallelism {}) ran its {} rooted at `{}` on {} of a machine of \
                 {cpus} CPUs: they could use {parallelism:.0} threads (work {}, critical path {}), \
                 while the CPUs were {} busy. Create the pool with the CPU count (`new \
                 ForkJoinPool()`) or use the common pool (`weft whatif TRACE --edit \
                 pool:{pool}={n}` estimates it).",
                p.parallelism,
                count(comps.len() as u64, "computation"),
                simple(root),
                count(width, "thread"),
                human_ns(work),
                human_ns(span),
                pct(during.utilisation),
            ),
            fields: vec![
                ("pool", FieldValue::Text(pool)),
                ("reason", FieldValue::Text("parallelism".to_string())),
                ("threads", FieldValue::Int(width)),
                ("suggested_threads", FieldValue::Int(n)),
                ("parallelism", FieldValue::Float(parallelism)),
                ("fj_pool", FieldValue::Int(p.pool as u64)),
                ("utilisation_during", FieldValue::Float(during.utilisation)),
            ],
            cost_ns: cost,
            site: None,
            stack: Vec::new(),
        });
    }
}

/// Virtual threads that waited to start while their few carriers were busy and
/// CPUs idled: the virtual-thread scheduler has fewer carriers than CPUs
/// (`-Djdk.virtualThreadScheduler.parallelism`, or a CPU limit the JVM read). 2,000
/// CPU-bound virtual threads on 1 carrier of a 2-CPU machine took 3.6 s (1.8 s on
/// 2): "no problem found".
fn carriers_too_few_findings(i: &Inputs, out: &mut Vec<Finding>) {
    let vt = i.virtual_threads;
    let cpus = cpus_of(i.model);
    let carriers: Vec<&crate::model::ThreadInfo> = vt
        .ended_on
        .keys()
        .filter_map(|t| i.model.threads.get(t))
        .collect();
    let n = carriers.len() as u64;
    if vt.count < 2 || n == 0 || n >= cpus {
        return;
    }
    // From the first virtual thread's start to the last one's end.
    let (mut from, mut to) = (u64::MAX, 0);
    for t in i.model.threads.values().filter(|t| t.virtual_thread) {
        let (s, e) = t.lifetime(i.model.duration_ns);
        from = from.min(s);
        to = to.max(e);
    }
    if to <= from {
        return;
    }
    let window = to - from;
    // The carriers were busy (on a CPU or ready to run) nearly all of it.
    let mut busy = 0u64;
    for c in &carriers {
        let Some((running, runq)) = c.sched_between(from, to) else {
            return;
        };
        busy += running + runq;
    }
    let busy_share = busy as f64 / (n * window) as f64;
    if busy_share < CARRIERS_MIN_BUSY_SHARE {
        return;
    }
    // The virtual threads' tasks waited to start longer than they ran.
    let (mut waited, mut ran, mut tasks) = (0u64, 0u64, 0u64);
    for e in i.tasks.executions.iter().filter(|e| {
        e.reported()
            && i.model
                .threads
                .get(&e.thread)
                .is_some_and(|t| t.virtual_thread)
    }) {
        if let Some(q) = e.queue_wait_ns() {
            waited += q;
            ran += e.duration_ns();
            tasks += 1;
        }
    }
    if tasks == 0 || waited < ran {
        return;
    }
    let Some(during) = i.cpu.window(from, to) else {
        return;
    };
    let idle_cpus = during.idle_cpus(cpus);
    if idle_cpus < SMALL_POOL_MIN_IDLE_CPUS {
        return;
    }
    let cost = (idle_cpus * during.covered_ns as f64) as u64;
    if cost < WAIT_MIN_NS || (cost as f64) < WAIT_MIN_SHARE_OF_RUN * i.model.duration_ns as f64 {
        return;
    }
    let pool = crate::model::pool_name(&carriers[0].display_name());
    let names: Vec<String> = carriers
        .iter()
        .take(3)
        .map(|c| format!("`{}`", c.display_name()))
        .collect();
    out.push(Finding {
        kind: FindingKind::PoolTooSmall,
        class: None,
        message: format!(
            "{} virtual threads ran on {} ({}) busy {} of the {} while the machine's {cpus} \
             CPUs were {} busy: their {} tasks waited {} to start, on average, for {} of \
             running. The virtual-thread scheduler has fewer carriers than CPUs: remove \
             `-Djdk.virtualThreadScheduler.parallelism` (or set it to the CPU count), or the \
             CPU limit the JVM read (`-XX:ActiveProcessorCount`, a container's quota).",
            vt.count,
            count(n, "carrier thread"),
            names.join(", "),
            pct(busy_share),
            human_ns(window),
            pct(during.utilisation),
            tasks,
            human_ns(waited / tasks),
            human_ns(ran / tasks),
        ),
        fields: vec![
            ("pool", FieldValue::Text(pool)),
            ("reason", FieldValue::Text("carriers".to_string())),
            ("threads", FieldValue::Int(n)),
            ("suggested_threads", FieldValue::Int(cpus)),
            ("utilisation_during", FieldValue::Float(during.utilisation)),
        ],
        cost_ns: cost,
        site: None,
        stack: Vec::new(),
    });
}

/// [`carriers_too_few_findings`]: the carriers on a CPU or ready to run at least
/// this share of the virtual threads' span.
pub const CARRIERS_MIN_BUSY_SHARE: f64 = 0.8;

/// A fork-join pool's computations must have this many times its threads in
/// parallelism (work / critical path) to be held back by its size.
pub const FJ_SMALL_POOL_MIN_EXCESS: f64 = 2.0;

/// Fork-join tasks (a parallel stream's, a `RecursiveTask`'s) that mostly block without
/// a recorded wait (I/O, `Thread.sleep`) while the CPUs idle: a fork-join pool is sized
/// for computing (the common pool: CPUs − 1 threads, plus the caller), and blocking in it
/// leaves the CPUs idle. 100 elements of a parallel stream sleeping 20 ms each took 1.0 s
/// on 2 CPUs, 3% busy: "no problem found".
fn blocking_forkjoin_findings(i: &Inputs, out: &mut Vec<Finding>) {
    for (ci, c) in i.tasks.classes.iter().enumerate() {
        if c.kind != TaskKind::ForkJoin {
            continue;
        }
        let Some(act) = i.activity.classes.get(ci) else {
            continue;
        };
        let s = &act.split;
        if !act.cpu_measured || s.total() == 0 || !mostly_blocking(act) {
            continue;
        }
        let cost = s.off_cpu_ns;
        if cost < WAIT_MIN_NS || (cost as f64) < WAIT_MIN_SHARE_OF_RUN * i.model.duration_ns as f64
        {
            continue;
        }
        let mut spans: Vec<(u64, u64)> = Vec::new();
        let mut threads: BTreeSet<ThreadIndex> = BTreeSet::new();
        for e in i.tasks.executions_of(c) {
            spans.push((e.begin_ns, e.end_ns));
            threads.insert(e.thread);
        }
        let (during, _) = i.cpu.inside_outside(&spans);
        let Some(during) = during.filter(|d| d.utilisation < SMALL_POOL_MAX_UTILISATION) else {
            continue;
        };
        // The pool: a worker's (the caller of a parallel stream runs pieces too).
        let pool = threads
            .iter()
            .filter_map(|t| i.model.threads.get(t))
            .map(|t| t.display_name())
            .find(|n| n.starts_with("ForkJoinPool"))
            .map(|n| crate::model::pool_name(&n))
            .unwrap_or_else(|| "its pool".to_string());
        let message = format!(
            "`{}` fork-join tasks spend {} of their time off-CPU (I/O, sleep, or blocking weft \
             does not record), run by {} of `{pool}`, while the CPUs were {} busy. A fork-join pool is sized for computing (the common pool: one \
             thread fewer than the CPUs, and the caller): blocking in it, as in a parallel \
             stream that calls a service or reads files, leaves the CPUs idle. Run the blocking \
             calls on an executor sized for them (or on virtual threads, JDK 21+), or wrap them \
             in `ForkJoinPool.managedBlock` so the pool adds threads meanwhile.",
            c.class,
            pct(s.off_cpu_ns as f64 / s.total() as f64),
            count(threads.len() as u64, "thread"),
            pct(during.utilisation),
        );
        out.push(Finding {
            kind: FindingKind::PoolTooSmall,
            class: Some(c.class.clone()),
            message,
            fields: vec![
                ("pool", FieldValue::Text(pool)),
                ("reason", FieldValue::Text("forkjoin".to_string())),
                ("threads", FieldValue::Int(threads.len() as u64)),
                (
                    "off_cpu_share",
                    FieldValue::Float(s.off_cpu_ns as f64 / s.total() as f64),
                ),
                ("utilisation_during", FieldValue::Float(during.utilisation)),
            ],
            cost_ns: cost,
            site: class_site(c).map(|s| s.0),
            stack: Vec::new(),
        });
    }
}

/// A class whose tasks were each awaited before the next was started is judged from
/// this many of them...
pub const AWAITED_MIN_TASKS: u64 = 5;
/// ...this share of its started (or submitted) executions.
pub const AWAITED_MIN_SHARE: f64 = 0.8;

/// The two latest ends among a prefix of executions (by begin), with the first's
/// execution, so that one execution can be left out.
#[derive(Clone, Copy, Default)]
struct TopEnds {
    first: (u64, usize),
    second: u64,
}

impl TopEnds {
    fn other_than(&self, x: usize) -> u64 {
        if self.first.1 == x {
            self.second
        } else {
            self.first.0
        }
    }
}

/// [`TopEnds`] of each prefix of `v` ((begin, end, execution), by begin).
fn top_ends(v: &[(u64, u64, usize)]) -> Vec<TopEnds> {
    let mut cur = TopEnds {
        first: (0, usize::MAX),
        second: 0,
    };
    v.iter()
        .map(|&(_, end, x)| {
            if end > cur.first.0 {
                cur.second = cur.first.0;
                cur.first = (end, x);
            } else if end > cur.second {
                cur.second = end;
            }
            cur
        })
        .collect()
}

/// Tasks (or threads) each waited for by the thread that submitted (or started) it
/// before it submitted the next: they run one at a time however large the pool
/// (`submit(task).get()` in a loop, `t.start(); t.join()`): 20 tasks of 30 ms on a
/// pool of 4 read a "serial phase" at best, 20 threads started and joined one by one
/// "no problem found".
fn awaited_at_once_findings(i: &Inputs, out: &mut Vec<Finding>) {
    let cpus = cpus_of(i.model);
    if cpus < 2 {
        return;
    }
    let execs = &i.tasks.executions;
    // (execution, waiter) -> when the wait returned; per starter and class, its starts
    // (submissions, thread starts) by time (a pool's first submissions also start its
    // worker threads: not the next of these).
    let mut awaited: HashMap<(usize, ThreadIndex), u64> = HashMap::new();
    let mut by_starter: HashMap<(ThreadIndex, u32), Vec<(u64, usize)>> = HashMap::new();
    let mut seen = vec![false; execs.len()];
    for e in &i.tasks.edges.edges {
        match e.kind {
            EdgeKind::Submit | EdgeKind::ThreadStart => {
                let Some((x, ex)) = e.to.and_then(|x| Some((x, execs.get(x)?))) else {
                    continue;
                };
                if !std::mem::replace(&mut seen[x], true) {
                    by_starter
                        .entry((e.from_thread, ex.class_id))
                        .or_default()
                        .push((e.from_ns, x));
                }
            }
            EdgeKind::FutureGet | EdgeKind::ThreadJoin => {
                if let Some(from) = e.from {
                    awaited.entry((from, e.to_thread)).or_insert(e.to_ns);
                }
            }
        }
    }
    // Per class: (starter, executions, awaited at once, their spans).
    #[derive(Default)]
    struct PerClass {
        starters: BTreeMap<ThreadIndex, u64>,
        total: u64,
        at_once: u64,
        spans: Vec<(u64, u64)>,
        thread_kind: bool,
    }
    // Per starter, the executions it started (any class), by begin, with the
    // two latest ends so far: whether another of its tasks ran while it waited.
    let mut started: HashMap<ThreadIndex, Vec<(u64, u64, usize)>> = HashMap::new();
    // Tasks only: a pool's worker threads, which its first submissions start, run
    // beside everything.
    for (&(starter, _), v) in &by_starter {
        let s = started.entry(starter).or_default();
        for &(_, x) in v {
            if let Some(e) = execs.get(x).filter(|e| {
                e.reported() && matches!(e.kind, TaskKind::Runnable | TaskKind::Callable)
            }) {
                s.push((e.begin_ns, e.end_ns, x));
            }
        }
    }
    // (begin, end, execution) by begin, and each prefix's latest ends.
    type Started = (Vec<(u64, u64, usize)>, Vec<TopEnds>);
    let started: HashMap<ThreadIndex, Started> = started
        .into_iter()
        .map(|(t, mut v)| {
            v.sort_unstable();
            let tops = top_ends(&v);
            (t, (v, tops))
        })
        .collect();
    // Another task of `starter` than `x` ran in [from, to] past its first tenth (the
    // task awaited before ends its run a few µs after its `get` returned, while the
    // next one starts).
    let others_ran = |starter: ThreadIndex, x: usize, from: u64, to: u64| {
        started.get(&starter).is_some_and(|(v, tops)| {
            let n = v.partition_point(|y| y.0 < to);
            n > 0 && tops[n - 1].other_than(x) > from + to.saturating_sub(from) / 10
        })
    };
    let mut classes: BTreeMap<&str, PerClass> = BTreeMap::new();
    for ((starter, _), mut v) in by_starter {
        // One start is no loop: a thread that starts one task and waits for it (each
        // of 2,000 virtual threads handing one job to a pool) ran nothing one after
        // another.
        if v.len() < 2 {
            continue;
        }
        v.sort_unstable();
        for (k, &(_, x)) in v.iter().enumerate() {
            let Some(e) = execs.get(x).filter(|e| e.reported()) else {
                continue;
            };
            if !matches!(
                e.kind,
                TaskKind::Runnable | TaskKind::Callable | TaskKind::Thread
            ) || e.thread == starter
            {
                continue;
            }
            let c = classes.entry(i.tasks.class(e)).or_default();
            c.total += 1;
            c.thread_kind |= e.kind == TaskKind::Thread;
            // Awaited by its starter before the starter started the next one, with
            // none other of its tasks running meanwhile (the long last task of each
            // `invokeAll` batch is awaited alone, but not run alone).
            let next = v.get(k + 1).map_or(u64::MAX, |n| n.0);
            if awaited
                .get(&(x, starter))
                .is_some_and(|&ret| ret <= next && !others_ran(starter, x, e.begin_ns, ret))
            {
                c.at_once += 1;
                *c.starters.entry(starter).or_default() += 1;
                c.spans.push((e.begin_ns, e.end_ns));
            }
        }
    }
    for (class, c) in classes {
        if c.at_once < AWAITED_MIN_TASKS || (c.at_once as f64) < AWAITED_MIN_SHARE * c.total as f64
        {
            continue;
        }
        let (during, _) = i.cpu.inside_outside(&c.spans);
        let Some(during) = during else {
            continue;
        };
        let idle = (during.idle_cpus(cpus) * during.covered_ns as f64) as u64;
        if idle < WAIT_MIN_NS || (idle as f64) < WAIT_MIN_SHARE_OF_RUN * i.model.duration_ns as f64
        {
            continue;
        }
        let ran: u64 = c.spans.iter().map(|(b, e)| e - b).sum();
        let names = thread_names(i, c.starters.keys(), 3);
        let (verb, fix) = if c.thread_kind {
            (
                "started",
                "Start them all first, then join them (or run them as tasks on a pool)",
            )
        } else {
            (
                "submitted",
                "Submit them all first, then wait for them (`invokeAll`, or keep the futures \
                 and `get` them after the loop)",
            )
        };
        // `inline:` applies to pool tasks, not threads.
        let inline = if c.thread_kind {
            "save the thread".to_string()
        } else {
            format!("save the hand-off (`weft whatif TRACE --edit inline:{class}` estimates it)")
        };
        let message = format!(
            "{} of {} `{class}` tasks were each waited for by the thread that {verb} them ({}) \
             before it {verb} the next: they ran one at a time, {} in all, while the CPUs were \
             {} busy. {fix}; or, if they must run in order, run them in that thread and \
             {inline}.",
            c.at_once,
            c.total,
            names.join(", "),
            human_ns(ran),
            pct(during.utilisation),
        );
        let site = site_of_class(i, class);
        out.push(Finding {
            kind: FindingKind::AwaitedAtOnce,
            class: Some(class.to_string()),
            message,
            fields: vec![
                ("tasks", FieldValue::Int(c.total)),
                ("awaited_at_once", FieldValue::Int(c.at_once)),
                ("ran_ns", FieldValue::Int(ran)),
                ("utilisation_during", FieldValue::Float(during.utilisation)),
            ],
            cost_ns: idle,
            site,
            stack: Vec::new(),
        });
    }
}

/// A serial phase is a finding when removing it could make the run this much faster
/// (the possible-speedups serial line, eq. 11)...
pub const SERIAL_MIN_GAIN: f64 = 1.15;
/// ...it lasted this long and this share of the run...
pub const SERIAL_MIN_NS: u64 = 100_000_000;
pub const SERIAL_MIN_SHARE: f64 = 0.2;
/// ...and at least this share of its CPU samples (of at least SERIAL_MIN_SAMPLES)
/// were in the application's code: not the JVM's start-up, class loading or a
/// library's initialisation, which the program cannot change.
pub const SERIAL_MIN_APP_SHARE: f64 = 0.5;
pub const SERIAL_MIN_SAMPLES: u64 = 5;
/// ...and the process kept at least this many CPUs busy on average outside the
/// parallel sections: "only one thread at a time worked" needs about one. A program
/// that mostly waited there (a `ScheduledThreadPoolExecutor` ticking every 50 ms, 5%
/// of 2 CPUs busy) read "a serial phase ... split that work over threads".
pub const SERIAL_MIN_BUSY_CPUS: f64 = 0.5;

/// A serial phase is left to a producer or consumer bottleneck whose waiting is at
/// least this share of it.
pub const SERIAL_BOTTLENECK_SHARE: f64 = 0.5;

/// Time in which only one thread worked, in the application's own code, while CPUs
/// idled (Amdahl's serial part): a 400 ms phase of `main` before 2 × 650 ms of parallel
/// work on 2 CPUs read "no problem found" (the speedups said "serial part ×1.31").
fn serial_phase_findings(i: &Inputs, out: &mut Vec<Finding>) {
    use crate::speedups::{Limitation, Status};
    // Tasks each awaited before the next was started are the serial phase's cause,
    // said there.
    if out.iter().any(|f| f.kind == FindingKind::AwaitedAtOnce) {
        return;
    }
    let sp = i.speedups;
    let cpus = cpus_of(i.model);
    if sp.status != Status::Ok || cpus < 2 || sp.sections_total > sp.sections.len() {
        return;
    }
    let Some(gain) = sp
        .lines
        .iter()
        .find(|l| l.remove == Limitation::Serial)
        .and_then(|l| l.closed_form_gain)
        .filter(|g| *g >= SERIAL_MIN_GAIN)
    else {
        return;
    };
    let (ws, we) = sp.window;
    let run = we.saturating_sub(ws);
    let clipped: Vec<(u64, u64)> = sp
        .sections
        .iter()
        .map(|s| (s.start_ns.max(ws), s.end_ns.min(we)))
        .collect();
    let sections = crate::cpu::merge_intervals(&clipped);
    let parallel: u64 = sections.iter().map(|(s, e)| e - s).sum();
    let serial = run.saturating_sub(parallel);
    if serial < SERIAL_MIN_NS || (serial as f64) < SERIAL_MIN_SHARE * run as f64 {
        return;
    }
    // Nobody working is no serial phase: the process's CPU use between the parallel
    // sections (the sampler's counters; without them, no check).
    let serial_stretches = complement(&sections, (ws, we));
    if let (Some(busy), _) = i.cpu.inside_outside(&serial_stretches) {
        if busy.utilisation * f64::from(i.cpu.cpus.max(1)) < SERIAL_MIN_BUSY_CPUS {
            return;
        }
    }
    // A producer or consumer bottleneck whose waiting is most of it is its cause:
    // one side works while the other waits for it (an `Exchanger` pair and a
    // `SubmissionPublisher` on JDK 25 read both, "split that work over threads").
    if out.iter().any(|f| {
        matches!(
            f.kind,
            FindingKind::ProducerBottleneck | FindingKind::ConsumerBottleneck
        ) && f.cost_ns as f64 >= SERIAL_BOTTLENECK_SHARE * serial as f64
    }) {
        return;
    }
    // Where the serial time went: CPU samples outside the parallel sections, by the
    // innermost frame of the application's code.
    let r = &i.model.sampled;
    let (mut total, mut app) = (0u64, 0u64);
    let mut methods: BTreeMap<String, u64> = BTreeMap::new();
    let mut threads: BTreeMap<ThreadIndex, u64> = BTreeMap::new();
    let mut serial_ts: Vec<u64> = Vec::new();
    for s in r.samples.iter().filter(|s| {
        s.mode == crate::profile::Mode::Cpu
            && s.ts_ns >= ws
            && s.ts_ns < we
            && !crate::cpu::covers(&sections, s.ts_ns)
    }) {
        total += 1;
        serial_ts.push(s.ts_ns);
        *threads.entry(s.thread).or_default() += 1;
        let frames: Vec<&crate::profile::Frame> = r
            .stacks
            .get(&s.stack)
            .map(|ids| ids.iter().filter_map(|id| r.frames.get(id)).collect())
            .unwrap_or_default();
        // Class initialisation and loading are start-up, whoever's classes they are
        // (Clojure's `clojure.core__init.load` runs in `<clinit>`).
        let startup = frames
            .iter()
            .any(|f| f.method == "<clinit>" || f.class.starts_with("java.lang.ClassLoader"));
        let frame = frames.iter().filter(|_| !startup).find_map(|f| {
            let name = f.name(false);
            (i.model.owner_of(&name) == FrameOwner::Application).then_some(name)
        });
        if let Some(f) = frame {
            app += 1;
            *methods.entry(f).or_default() += 1;
        }
    }
    if total < SERIAL_MIN_SAMPLES || (app as f64) < SERIAL_MIN_APP_SHARE * total as f64 {
        return;
    }
    // Serial time inside fork-join computations of little parallelism is theirs,
    // said there with its cause (a fork joined at once); "split that work over
    // threads" would be wrong advice for work that is already forked.
    if in_low_parallelism_forkjoin(i, out, &serial_ts) * 2 >= total {
        return;
    }
    let Some((method, n)) = methods
        .iter()
        .max_by_key(|(m, n)| (**n, std::cmp::Reverse(*m)))
    else {
        return;
    };
    // Other threads blocked on a contended lock for most of it: the lock lets one
    // thread at a time work, said by its own finding (2,000 virtual threads taking
    // a `ReentrantLock` in turn left their carriers working one at a time: "split
    // that work over threads").
    if serial_under_contended_lock(i, out, &sections, (ws, we)) * 2 >= serial {
        return;
    }
    let mut by_thread: Vec<(&ThreadIndex, &u64)> = threads.iter().collect();
    by_thread.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    // The serial work ran mostly on a pool said to be too small: that is its cause
    // (a pool of 1 fed by 2,000 virtual threads).
    let small_pools: BTreeSet<&str> = out
        .iter()
        .filter(|f| f.kind == FindingKind::PoolTooSmall)
        .filter_map(|f| match f.field("pool") {
            Some(FieldValue::Text(p)) => Some(p.as_str()),
            _ => None,
        })
        .collect();
    let on_small_pool: u64 = by_thread
        .iter()
        .filter(|(t, _)| {
            i.model.threads.get(t).is_some_and(|info| {
                small_pools.contains(crate::model::pool_name(&info.display_name()).as_str())
            })
        })
        .map(|(_, n)| **n)
        .sum();
    if on_small_pool * 2 >= total {
        return;
    }
    let names = thread_names(i, by_thread.iter().map(|(t, _)| *t), 3);
    let idle = serial.saturating_mul(cpus - 1);
    // Meanwhile, were other tasks off the CPU outside any recorded wait (a socket
    // read, a file, a sleep)? Then the run waits on that, and splitting the little
    // work there is would not help (an HTTP load test bound by the network's
    // latency read "split that work over threads").
    let blocked = blocked_tasks_during(i, &sections, (ws, we), serial);
    let advice = match &blocked {
        Some((share, frame)) => format!(
            " Meanwhile other tasks were off the CPU outside any recorded wait ({} of the \
             time; mostly in {frame}): the run is bound by that I/O or sleep, not by this \
             work. Make it shorter or overlap more of it (more requests in flight, \
             asynchronous I/O).",
            pct(*share)
        ),
        None => " Split that work over threads (a pool, a parallel stream), or overlap it \
                 with the parallel work."
            .to_string(),
    };
    let message = format!(
        "For {} ({} of the run) only one thread at a time worked ({}), mostly in {method} \
         ({} of the CPU samples then), while {} of the {cpus} CPUs idled: a serial phase. \
         Without it the run could be up to ×{gain:.2} faster.{advice}",
        human_ns(serial),
        pct(serial as f64 / run.max(1) as f64),
        names.join(", "),
        pct(*n as f64 / total as f64),
        cpus - 1,
    );
    out.push(Finding {
        kind: FindingKind::SerialPhase,
        class: None,
        message,
        fields: {
            let mut f = vec![
                ("serial_ns", FieldValue::Int(serial)),
                ("method", FieldValue::Text(method.clone())),
                ("possible_speedup", FieldValue::Float(gain)),
            ];
            if let Some((share, frame)) = blocked {
                f.push(("tasks_blocked_share", FieldValue::Float(share)));
                f.push(("tasks_blocked_frame", FieldValue::Text(frame)));
            }
            f
        },
        cost_ns: idle,
        site: Some(method.clone()),
        stack: Vec::new(),
    });
}

/// A thread is said to busy-wait when at least this share of its CPU samples, and at
/// least [`BUSY_WAIT_MIN_SAMPLES`] of them, spin in its own `Thread.yield` /
/// `Thread.onSpinWait` loop (the JDK's hand-offs that spin before parking are left to
/// the what-if's confidence).
pub const BUSY_WAIT_MIN_SHARE: f64 = 0.2;
pub const BUSY_WAIT_MIN_SAMPLES: u64 = 10;

/// Threads spinning for something instead of blocking (a consumer looping on
/// `Thread.yield()` until a volatile counter moves read "no problem found": its spin
/// is CPU time the threads it waits for could have used).
fn busy_wait_findings(i: &Inputs, out: &mut Vec<Finding>) {
    let r = &i.model.sampled;
    let own = &crate::profile::SPIN_METHODS[..crate::profile::PROGRAM_SPIN_METHODS];
    /// The key with the most counts (the first by order among equals).
    fn most<K: Ord + Clone>(m: &BTreeMap<K, u64>) -> Option<K> {
        m.iter()
            .max_by_key(|(k, n)| (**n, std::cmp::Reverse(*k)))
            .map(|(k, _)| k.clone())
    }
    let cpus = cpus_of(i.model);
    for (t, e) in r.spin_waits() {
        let Some(info) = i.model.threads.get(&t) else {
            continue;
        };
        let thread = info.display_name();
        let spinning = e.spinning(true);
        if spinning < BUSY_WAIT_MIN_SAMPLES
            || (spinning as f64) < BUSY_WAIT_MIN_SHARE * e.cpu_samples as f64
            || crate::locks::JVM_THREADS.contains(&thread.as_str())
        {
            continue;
        }
        let name = thread_label(i, info);
        let own_methods: BTreeMap<&'static str, u64> = e
            .by_method
            .iter()
            .filter(|(m, _)| own.contains(m))
            .map(|(m, n)| (*m, *n))
            .collect();
        let method = most(&own_methods).unwrap_or("java.lang.Thread.yield");
        // The loop that spins: the innermost application frame of its spinning samples.
        let mut sites: BTreeMap<String, u64> = BTreeMap::new();
        for s in r.samples.iter().filter(|s| {
            s.thread == t
                && s.mode == crate::profile::Mode::Cpu
                && r.spin_method(s.stack).is_some_and(|m| own.contains(&m))
        }) {
            let site = r.stacks.get(&s.stack).and_then(|ids| {
                ids.iter().filter_map(|id| r.frames.get(id)).find_map(|f| {
                    (i.model.owner_of(&f.name(false)) == FrameOwner::Application)
                        .then(|| f.name(true))
                })
            });
            if let Some(site) = site {
                *sites.entry(site).or_default() += 1;
            }
        }
        let site = most(&sites);
        let cost = spinning.saturating_mul(r.cpu_period_ns);
        let at = site
            .as_deref()
            .map_or(String::new(), |s| format!(" at {s}"));
        out.push(Finding {
            kind: FindingKind::BusyWait,
            class: None,
            message: format!(
                "{name} spent ~{} of CPU ({} of its CPU samples) spin-waiting in `{}`{at} \
                 instead of blocking: on {cpus} CPUs that time is taken from the threads it \
                 waits for. Wait by blocking (a `BlockingQueue`, `LockSupport.park` and \
                 `unpark`, a `CountDownLatch`, a `Condition`), or spin only briefly before \
                 blocking.",
                human_ns(cost),
                pct(spinning as f64 / e.cpu_samples as f64),
                simple_method(method),
            ),
            fields: vec![
                ("thread", FieldValue::Text(thread)),
                ("spin_method", FieldValue::Text(method.to_string())),
                (
                    "spin_share",
                    FieldValue::Float(spinning as f64 / e.cpu_samples as f64),
                ),
                ("spin_cpu_ns", FieldValue::Int(cost)),
            ],
            cost_ns: cost,
            site,
            stack: Vec::new(),
        });
    }
}

/// `Thread.yield` for `java.lang.Thread.yield`: the class's simple name and the method.
fn simple_method(m: &str) -> &str {
    match m.rsplit_once('.') {
        Some((class, _)) => match class.rfind('.') {
            Some(k) => &m[k + 1..],
            None => m,
        },
        None => m,
    }
}

/// The parts of `(from, to)` outside the merged, sorted `intervals`.
fn complement(intervals: &[(u64, u64)], (from, to): (u64, u64)) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = from;
    for &(s, e) in intervals {
        if s > at {
            out.push((at, s.min(to)));
        }
        at = at.max(e);
        if at >= to {
            break;
        }
    }
    if at < to {
        out.push((at, to));
    }
    out.retain(|(s, e)| e > s);
    out
}

/// The wall time outside the parallel `sections` (in the window) during which some
/// thread was blocked on a lock of a class that has a lock-contention finding.
fn serial_under_contended_lock(
    i: &Inputs,
    out: &[Finding],
    sections: &[(u64, u64)],
    (ws, we): (u64, u64),
) -> u64 {
    let contended: BTreeSet<&str> = out
        .iter()
        .filter(|f| f.kind == FindingKind::LockContention)
        .filter_map(|f| f.class.as_deref())
        .collect();
    if contended.is_empty() {
        return 0;
    }
    let blocked: Vec<(u64, u64)> = i
        .locks
        .blocked
        .iter()
        .filter(|b| {
            i.locks
                .locks
                .get(b.lock)
                .is_some_and(|l| contended.contains(l.class.as_str()))
        })
        .map(|b| (b.start_ns.max(ws), b.end_ns.min(we)))
        .filter(|(s, e)| e > s)
        .collect();
    let blocked = crate::cpu::merge_intervals(&blocked);
    // Blocked time minus its overlap with the parallel sections (both merged).
    let total: u64 = blocked.iter().map(|(s, e)| e - s).sum();
    let mut overlap = 0;
    let mut k = 0;
    for &(s, e) in &blocked {
        while k < sections.len() && sections[k].1 <= s {
            k += 1;
        }
        let mut j = k;
        while j < sections.len() && sections[j].0 < e {
            overlap += e.min(sections[j].1) - s.max(sections[j].0);
            j += 1;
        }
    }
    total - overlap
}

/// The share of a serial phase's wall-sample ticks at which some task was off the CPU
/// (sleeping or in I/O) outside its recorded waits and lock blocking, and the
/// innermost frame most of those samples were in; `None` under half the ticks (or
/// with no wall samples).
fn blocked_tasks_during(
    i: &Inputs,
    sections: &[(u64, u64)],
    (ws, we): (u64, u64),
    serial_ns: u64,
) -> Option<(f64, String)> {
    use weft_trace::thread_state;
    let r = &i.model.sampled;
    let period = r.wall_period_ns;
    if period == 0 || serial_ns < period {
        return None;
    }
    let waits = crate::cpu::merged_by_thread(
        i.locks
            .wait_intervals
            .iter()
            .map(|w| (w.thread, w.start_ns, w.end_ns)),
    );
    let mut ticks: BTreeSet<u64> = BTreeSet::new();
    let mut frames: BTreeMap<String, u64> = BTreeMap::new();
    // Submitted tasks' executions by thread (not threads' own loops: a server's
    // selector thread sleeps in `epoll_wait` by design).
    let tasks = crate::cpu::merged_by_thread(
        i.tasks
            .executions
            .iter()
            .filter(|e| {
                e.reported()
                    && matches!(
                        e.kind,
                        TaskKind::Runnable | TaskKind::Callable | TaskKind::VirtualThread
                    )
            })
            .map(|e| (e.thread, e.begin_ns, e.end_ns)),
    );
    for s in r.samples.iter().filter(|s| {
        s.mode == crate::profile::Mode::Wall
            && s.ts_ns >= ws
            && s.ts_ns < we
            && (s.state == thread_state::SLEEPING || s.state == thread_state::IO)
            && s.lock.is_none()
            && !crate::cpu::covers(sections, s.ts_ns)
    }) {
        let in_task = tasks
            .get(&s.thread)
            .is_some_and(|t| crate::cpu::covers(t, s.ts_ns));
        if !in_task
            || waits
                .get(&s.thread)
                .is_some_and(|w| crate::cpu::covers(w, s.ts_ns))
        {
            continue;
        }
        ticks.insert(s.ts_ns / period);
        let top = r
            .stacks
            .get(&s.stack)
            .and_then(|ids| ids.iter().find_map(|id| r.frames.get(id)))
            .map(|f| f.name(false));
        if let Some(f) = top {
            *frames.entry(f).or_default() += 1;
        }
    }
    let share = (ticks.len() as u64 * period) as f64 / serial_ns as f64;
    if share < SERIAL_BLOCKED_TASKS_SHARE {
        return None;
    }
    let frame = frames
        .into_iter()
        .max_by_key(|(f, n)| (*n, std::cmp::Reverse(f.clone())))
        .map_or_else(|| "unknown frames".to_string(), |(f, _)| format!("`{f}`"));
    Some((share.min(1.0), frame))
}

/// A serial phase during which tasks were blocked off the CPU for at least this share
/// of its time is said to wait on that blocking.
pub const SERIAL_BLOCKED_TASKS_SHARE: f64 = 0.5;

/// How many of `ts` fall inside a fork-join computation that a finding in `out`
/// explains: its root class has a low-parallelism finding, or its pool a
/// too-small one.
fn in_low_parallelism_forkjoin(i: &Inputs, out: &[Finding], ts: &[u64]) -> u64 {
    let roots: BTreeSet<&str> = out
        .iter()
        .filter(|f| f.kind == FindingKind::ForkJoinLowParallelism)
        .filter_map(|f| f.class.as_deref())
        .collect();
    let pools: BTreeSet<u64> = out
        .iter()
        .filter(|f| f.kind == FindingKind::PoolTooSmall)
        .filter_map(|f| match f.field("fj_pool") {
            Some(FieldValue::Int(p)) => Some(*p),
            _ => None,
        })
        .collect();
    if roots.is_empty() && pools.is_empty() {
        return 0;
    }
    let spans: Vec<(u64, u64)> = i
        .forkjoin
        .computations
        .iter()
        .filter(|c| roots.contains(c.root_class.as_str()) || pools.contains(&(c.pool as u64)))
        .map(|c| (c.begin_ns, c.end_ns))
        .collect();
    let spans = crate::cpu::merge_intervals(&spans);
    ts.iter()
        .filter(|&&t| crate::cpu::covers(&spans, t))
        .count() as u64
}

/// The closed form and the simulated imbalance line must both say this much...
pub const IMBALANCE_MIN_GAIN: f64 = 1.15;
/// ...and be within this factor of each other.
pub const IMBALANCE_MAX_DISAGREEMENT: f64 = 1.25;

/// Threads that worked in parallel but did not finish together: two threads each
/// given half of a triangular loop's rows (one did 3× the other's work), consumers
/// each fed every other item, the heavy ones all to one: "no problem found" while the
/// possible speedups said "imbalance ×1.49 (sim ×1.47)". Made once the possible
/// speedups' simulated gains are known (`Speedups::lines[].simulated_gain`, filled by
/// the what-if crate after the analysis): the closed form alone over-reads imbalance
/// where threads wait for each other by design (H2's ×1.30 simulated ×1.00). Not when
/// a finding already names the imbalance (a barrier's, a fork-join pool's), nor in a
/// run that hung (a deadlock).
pub fn add_load_imbalance(a: &mut crate::Analysis) {
    use crate::speedups::{Limitation, Status};
    let sp = &a.speedups;
    if sp.status != Status::Ok
        || a.findings.iter().any(|f| {
            matches!(
                f.kind,
                FindingKind::BarrierImbalance
                    | FindingKind::ForkJoinImbalance
                    | FindingKind::LoadImbalance
                    | FindingKind::Deadlock
                    | FindingKind::PoolStarvation
                    // A pipeline's stages of unequal cost: the busy stage is that
                    // finding's subject, and "smaller pieces taken as threads finish"
                    // is not its fix.
                    | FindingKind::ProducerBottleneck
                    | FindingKind::ConsumerBottleneck
            )
        })
    {
        return;
    }
    let Some(line) = sp.lines.iter().find(|l| l.remove == Limitation::Imbalance) else {
        return;
    };
    let (Some(closed), Some(sim)) = (line.closed_form_gain, line.simulated_gain) else {
        return;
    };
    // Both say it, and they agree: a hung run (a pool deadlocked, a watchdog thread
    // sleeping to the end) read ×1.34 closed and ×30.8 simulated.
    if closed < IMBALANCE_MIN_GAIN
        || sim < IMBALANCE_MIN_GAIN
        || sim.max(closed) > IMBALANCE_MAX_DISAGREEMENT * sim.min(closed)
    {
        return;
    }
    // The team's idle time in the parallel sections: each section's busiest thread
    // sets its length, the others idle for the rest of it.
    let idle: u64 = sp
        .sections
        .iter()
        .map(|s| (s.busiest_ns as f64 * s.threads as f64 * (1.0 - s.load_balance)).max(0.0) as u64)
        .sum();
    let run = sp.observed_ns;
    let cost = if sp.sections_total == sp.sections.len() && idle > 0 {
        idle
    } else {
        (run as f64 * (1.0 - 1.0 / sim) * sp.cpus.unwrap_or(1) as f64) as u64
    };
    if cost < WAIT_MIN_NS || (cost as f64) < WAIT_MIN_SHARE_OF_RUN * a.model.duration_ns as f64 {
        return;
    }
    let mut threads: Vec<&(String, f64, f64, f64)> = sp
        .per_thread
        .iter()
        .filter(|t| t.1 >= 0.01 * run as f64)
        .collect();
    threads.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    let shown: Vec<String> = threads
        .iter()
        .take(3)
        .chain(threads.iter().skip(3).last())
        .map(|t| format!("`{}` {}", t.0, human_ns(t.1 as u64)))
        .collect();
    let balance = sp.efficiencies.load_balance.unwrap_or(1.0);
    let tail = tail_task(a);
    let advice = match &tail {
        Some(t) => format!(
            "In {} of the {} parallel stretches with tasks the last to end was a `{}` ({} at the \
             median, the other tasks there {}), still running while the other threads had \
             nothing left: start the long tasks first, or split them into pieces of the \
             others' size.",
            t.sections,
            t.with_tasks,
            t.class,
            human_ns(t.tail_p50_ns),
            human_ns(t.others_p50_ns),
        ),
        None => "Give the threads the work in smaller pieces they take as they finish (many \
                 small tasks on a pool, a parallel stream, a shared queue or counter of chunks) \
                 rather than a fixed share each, or divide it by cost, not by count."
            .to_string(),
    };
    let message = format!(
        "The threads that worked in parallel did not finish together (load balance {:.2}: \
         the average thread was busy {} of the busiest one's time, on a CPU or ready to run: \
         {}). The others' idle time while the busiest worked was about {}; with the same \
         work spread evenly the run could be up to ×{sim:.2} faster (simulated; ×{closed:.2} \
         by the closed form). {advice}",
        balance,
        pct(balance),
        shown.join(", "),
        human_ns(cost),
    );
    let mut fields = vec![
        ("load_balance", FieldValue::Float(balance)),
        ("possible_speedup", FieldValue::Float(closed)),
        ("simulated_speedup", FieldValue::Float(sim)),
    ];
    if let Some(t) = &tail {
        fields.push(("tail_class", FieldValue::Text(t.class.clone())));
        fields.push(("tail_sections", FieldValue::Int(t.sections as u64)));
    }
    let f = Finding {
        kind: FindingKind::LoadImbalance,
        class: tail.map(|t| t.class),
        message,
        fields,
        cost_ns: cost,
        site: None,
        stack: Vec::new(),
    };
    // In cost order among the program's findings (the trace's own come first).
    let at = a
        .findings
        .iter()
        .position(|g| !g.kind.is_trace() && g.cost_ns < cost)
        .unwrap_or(a.findings.len());
    a.findings.insert(at, f);
}

/// A pool task class whose long executions end the parallel stretches ([`tail_task`]).
struct TailTask {
    class: String,
    /// Stretches it ended, with the others' tasks at most half as long...
    sections: usize,
    /// ...of those where two or more tasks began.
    with_tasks: usize,
    tail_p50_ns: u64,
    others_p50_ns: u64,
}

/// A stretch counts for [`tail_task`] when its last task ran at least this many
/// times the median of the stretch's other tasks...
const TAIL_MIN_RATIO: f64 = 2.0;
/// ...and one class ended at least this share of the stretches with tasks.
const TAIL_MIN_SHARE: f64 = 0.5;

/// The submitted task class whose long executions end the parallel stretches
/// while the other threads have nothing left (`invokeAll` batches of short jobs
/// with a long one last): the imbalance is in the tasks, and "smaller pieces taken
/// as threads finish" is what the pool already does.
fn tail_task(a: &crate::Analysis) -> Option<TailTask> {
    let sections = &a.speedups.sections;
    let mut execs: Vec<&crate::tasks::TaskExecution> = a
        .tasks
        .executions
        .iter()
        .filter(|e| {
            e.reported()
                && e.submitted()
                && !e.incomplete()
                && matches!(e.kind, TaskKind::Runnable | TaskKind::Callable)
        })
        .collect();
    execs.sort_by_key(|e| e.begin_ns);
    let mut with_tasks = 0usize;
    // Per class that ended stretches: its name, its tails' lengths (one per stretch
    // it ended), and the other tasks' lengths in those stretches.
    let mut by_class: BTreeMap<u32, (&str, Vec<u64>, Vec<u64>)> = BTreeMap::new();
    for s in sections {
        let from = execs.partition_point(|e| e.begin_ns < s.start_ns);
        // The tasks that began in the stretch (its end, where the second-last
        // thread stopped, may come just before the last task's).
        let inside: Vec<&&crate::tasks::TaskExecution> = execs[from..]
            .iter()
            .take_while(|e| e.begin_ns < s.end_ns)
            .collect();
        if inside.len() < 2 {
            continue;
        }
        with_tasks += 1;
        let Some(last) = inside.iter().max_by_key(|e| (e.end_ns, e.begin_ns)) else {
            continue;
        };
        let mut others: Vec<u64> = inside
            .iter()
            .filter(|e| !std::ptr::eq(**e, *last))
            .map(|e| e.end_ns - e.begin_ns)
            .collect();
        others.sort_unstable();
        let median = others[others.len() / 2];
        let long = last.end_ns - last.begin_ns;
        if (long as f64) < TAIL_MIN_RATIO * median as f64 {
            continue;
        }
        let c = by_class
            .entry(last.class_id)
            .or_insert_with(|| (a.tasks.class(last), Vec::new(), Vec::new()));
        c.1.push(long);
        c.2.extend(others);
    }
    let (_, (class, tails, others)) = by_class
        .into_iter()
        .max_by_key(|(id, c)| (c.1.len(), std::cmp::Reverse(*id)))?;
    if with_tasks < 2 || (tails.len() as f64) < TAIL_MIN_SHARE * with_tasks as f64 {
        return None;
    }
    let p50 = |mut v: Vec<u64>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    Some(TailTask {
        class: class.to_string(),
        sections: tails.len(),
        with_tasks,
        tail_p50_ns: p50(tails),
        others_p50_ns: p50(others),
    })
}

/// Waits on an application object: threads waiting for another thread to release
/// or signal it (Derby's row locks: `Object.wait` on `ActiveLock`).
fn wait_group_findings(i: &Inputs, out: &mut Vec<Finding>) {
    // A wait on a Thread subclass is a `Thread.join`; a park whose blocker is a
    // fork-join task is a join of that task (`ForkJoinTask.awaitDone` parks with the
    // task as blocker: workers of a pool compensating for `managedBlock` read "waits
    // on an object ... a hand-made lock").
    let joined_classes: BTreeSet<&str> = i
        .tasks
        .classes
        .iter()
        .filter(|c| matches!(c.kind, TaskKind::Thread | TaskKind::ForkJoin))
        .map(|c| c.class.as_str())
        .collect();
    for g in &i.locks.wait_groups {
        let Some(class) = g.class.as_deref() else {
            continue;
        };
        // A timed wait that mostly runs out is a sleep between rounds, not a wait for
        // another thread.
        if joined_classes.contains(class)
            || g.stack
                .iter()
                .any(|f| f.starts_with("java.util.concurrent.ForkJoinTask."))
            || g.mostly_timed_out()
            || g.total_ns < WAIT_MIN_NS
            || (g.total_ns as f64) < WAIT_MIN_SHARE_OF_RUN * i.model.duration_ns as f64
            || g.threads.len() < WAIT_GROUP_MIN_THREADS
        {
            continue;
        }
        if let Some(barrier) = barrier_of(&g.stack).filter(|_| app_site(i, g)) {
            out.push(barrier_finding(i, g, barrier));
            continue;
        }
        // The JDK's (queues, futures, conditions, threads): waiting for work or for
        // another task, which the `waiting` finding covers per task class. But a JDK
        // object the application waits on itself (`synchronized (list) { list.wait(); }`,
        // a `new Object()` lock) is the application's own hand-off or condition.
        let own_monitor = g.kind == "Object.wait" && g.waits_in_app_handoff() && app_site(i, g);
        if crate::model::is_jdk_class(class) && !own_monitor {
            continue;
        }
        let at = g
            .site
            .as_ref()
            .map_or(String::new(), |s| format!(" at {s}"));
        let call = match g.kind {
            "park" => "parks with blocker",
            "Condition.await" => "`Condition.await` calls on a condition of",
            "Object.wait" => "`Object.wait` calls on",
            k => k,
        };
        let threads = count(g.threads.len() as u64, "thread");
        let load = threads_busy(g.total_ns, i.model.duration_ns);
        let message = if g.mean_ns() < HANDOFF_MAX_MEAN_NS && g.count >= HANDOFF_MIN_WAITS {
            let via = match g.kind {
                "park" => "parks on",
                "Condition.await" => "`Condition.await` on a condition of",
                "Object.wait" => "`Object.wait` on",
                k => k,
            };
            format!(
                "{threads} handed work to each other {} times through {via} `{}`{at}: {} \
                 waiting in all{load}, {} per wait, most by `{}`. Waits this short are hand-offs, \
                 not a resource held for long: the threads take turns, so they run one at a \
                 time and pay a wake-up per turn. Hand over more per turn (a batch), or run the \
                 sequence on one thread.",
                g.count,
                simple(class),
                human_ns(g.total_ns),
                human_ns(g.mean_ns()),
                g.threads[0].0,
            )
        } else {
            let known = g.site.as_deref().and_then(|s| {
                KNOWN_WAITS
                    .iter()
                    .find(|(p, _)| s.starts_with(p))
                    .map(|(_, a)| *a)
            });
            let advice = known.unwrap_or(
                "Each waits for another thread to release or signal that object: if it guards \
                 a shared resource (a hand-made lock, such as a database's row lock), hold the \
                 resource for less time or split it; if it is a work queue, these threads were \
                 idle, not slowed.",
            );
            format!(
                "{threads} waited {}{load} in {} {call} `{}`{at}; mean {}, longest {}, most by \
                 `{}`. {advice}",
                human_ns(g.total_ns),
                g.count,
                simple(class),
                human_ns(g.mean_ns()),
                human_ns(g.max_ns),
                g.threads[0].0,
            )
        };
        out.push(Finding {
            kind: FindingKind::WaitContention,
            class: Some(class.to_string()),
            message,
            fields: vec![
                ("wait_kind", FieldValue::Text(g.kind.to_string())),
                ("waits", FieldValue::Int(g.count)),
                ("waiting_ns", FieldValue::Int(g.total_ns)),
                ("max_wait_ns", FieldValue::Int(g.max_ns)),
                ("threads", FieldValue::Int(g.threads.len() as u64)),
            ],
            cost_ns: g.total_ns,
            site: g.site.clone(),
            stack: g.stack.clone(),
        });
    }
}

/// Whether a wait group's site is the application's code (not the JDK's, a server's
/// or a library's).
fn app_site(i: &Inputs, g: &crate::wait_groups::WaitGroup) -> bool {
    g.site
        .as_deref()
        .is_some_and(|s| i.model.owner_of(s) == FrameOwner::Application)
}

/// The JDK barrier a wait's stack waits in (`CyclicBarrier.await`,
/// `Phaser.arriveAndAwaitAdvance`), if any.
fn barrier_of(stack: &[String]) -> Option<&'static str> {
    const BARRIERS: &[(&str, &str)] = &[
        ("java.util.concurrent.CyclicBarrier.", "CyclicBarrier.await"),
        ("java.util.concurrent.Phaser.", "Phaser.awaitAdvance"),
    ];
    stack.iter().find_map(|f| {
        BARRIERS
            .iter()
            .find(|(prefix, _)| f.starts_with(prefix))
            .map(|(_, name)| *name)
    })
}

/// Threads waiting at a barrier wait for its slowest party: the work between two
/// barriers is unbalanced, and the parties that waited least (or never: they are
/// in no wait group) did the most.
fn barrier_finding(i: &Inputs, g: &crate::wait_groups::WaitGroup, barrier: &str) -> Finding {
    let site = g.site.as_deref().unwrap_or_default();
    let who: Vec<String> = g
        .threads
        .iter()
        .take(4)
        .map(|(t, ns)| format!("`{t}` {}", human_ns(*ns)))
        .collect();
    let (_, most_ns) = g.threads[0];
    let (_, least_ns) = g.threads[g.threads.len() - 1];
    let message = format!(
        "{} waited {}{} at a barrier (`{barrier}`) at {site}, in {} ({}). At a barrier \
         every party waits for the slowest, so the work between two barriers is unbalanced: \
         the parties that wait least, or not at all, do the most. Give each party the same \
         amount of work, or cut it into smaller pieces the threads take from a shared queue.",
        count(g.threads.len() as u64, "thread"),
        human_ns(g.total_ns),
        threads_busy(g.total_ns, i.model.duration_ns),
        count(g.count, "wait"),
        who.join(", "),
    );
    Finding {
        kind: FindingKind::BarrierImbalance,
        class: g.class.clone(),
        message,
        fields: vec![
            ("barrier", FieldValue::Text(barrier.to_string())),
            ("waits", FieldValue::Int(g.count)),
            ("waiting_ns", FieldValue::Int(g.total_ns)),
            ("threads", FieldValue::Int(g.threads.len() as u64)),
            ("most_waiting_ns", FieldValue::Int(most_ns)),
            ("least_waiting_ns", FieldValue::Int(least_ns)),
        ],
        cost_ns: g.total_ns,
        site: g.site.clone(),
        stack: g.stack.clone(),
    }
}

/// `on_virtual`: [`classes_on_virtual_threads`], never judged fine-grained (below).
fn granularity_findings(i: &Inputs, on_virtual: &BTreeSet<&str>, out: &mut Vec<Finding>) {
    let (tasks, cpu) = (i.tasks, i.cpu);
    // Intervals of each class's reported executions, and classes that host
    // reported executions (worker threads: their self time is mostly waiting).
    let mut intervals: BTreeMap<(&str, TaskKind), Vec<(u64, u64)>> = BTreeMap::new();
    let mut hosts: BTreeSet<(&str, TaskKind)> = BTreeSet::new();
    for e in &tasks.executions {
        if e.reported() {
            intervals
                .entry((tasks.class(e), e.kind))
                .or_default()
                .push((e.begin_ns, e.end_ns));
            if let Some(p) = e.parent().and_then(|p| tasks.executions.get(p)) {
                hosts.insert((tasks.class(p), p.kind));
            }
        }
    }
    let cpus = cpus_of(i.model);
    // A task on a virtual thread costs ~1 µs to start, and its queue wait is the wait
    // for a free carrier (a backlog, not an overhead): not judged fine-grained.
    for (ci, c) in tasks.classes.iter().enumerate() {
        if c.executions == 0 {
            continue;
        }
        // A server's own unit of work (Tomcat's SocketProcessor: one task per socket
        // event, submitted by its poller with no application frame on the stack) has
        // the size of a request: the user can neither batch nor split it there.
        if class_site(c).is_some_and(|(s, _)| i.model.is_framework_site(&s)) {
            continue;
        }
        let key = (c.class.as_str(), c.kind);
        let ivs = intervals.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        let (inside, outside) = cpu.inside_outside(ivs);
        if let Some(f) = thread_churn(i.model.duration_ns, c) {
            out.push(f);
        } else if let Some(f) = fine_grained(i.model.duration_ns, c, inside, outside)
            .filter(|_| !on_virtual.contains(c.class.as_str()))
        {
            out.push(f);
        } else if !hosts.contains(&key) && !pool_too_small_for(out, &c.class) {
            if let Some(f) = coarse_grained(i, ci, cpus, inside, outside) {
                out.push(f);
            }
        }
    }
}

/// Whether `out` says the pool that ran `class` is too small: its tasks queued for
/// a thread, not too few of them (no "split tasks" beside it).
fn pool_too_small_for(out: &[Finding], class: &str) -> bool {
    out.iter()
        .any(|f| f.kind == FindingKind::PoolTooSmall && f.class.as_deref() == Some(class))
}

/// Platform threads of one class started for tiny jobs: at least this many...
pub const CHURN_MIN_THREADS: u64 = 100;
/// ...living less than this (median)...
pub const CHURN_MAX_MEDIAN_NS: u64 = 1_000_000;
/// ...each costing about this to start and end (creation, `start`, the kernel's clone and
/// exit, the JVM's thread setup; ~59 µs of the starting thread's CPU alone per thread on
/// this project's 2-CPU VM, session 16): an order of magnitude.
pub const THREAD_START_OVERHEAD_NS: u64 = 50_000;

/// A platform thread per tiny job: the threads' start and end cost as much as their work.
fn thread_churn(duration_ns: u64, c: &TaskClassStats) -> Option<Finding> {
    let g = c.granularity_ns;
    if c.kind != TaskKind::Thread
        || c.executions < CHURN_MIN_THREADS
        || g.p50 >= CHURN_MAX_MEDIAN_NS
    {
        return None;
    }
    let cost = c.executions.saturating_mul(THREAD_START_OVERHEAD_NS);
    if (cost as f64) < FINE_MIN_SHARE_OF_RUN * duration_ns as f64 {
        return None;
    }
    let site = class_site(c);
    let at = site
        .as_ref()
        .map_or(String::new(), |(s, how)| format!(" ({how} at {s})"));
    let submitted = site.as_ref().is_some_and(|(_, how)| *how == "submitted");
    Some(Finding {
        kind: FindingKind::FineGrained,
        class: Some(c.class.clone()),
        message: format!(
            "{}{at} started {} platform threads that each lived a median {}: at ~{} to start \
             and end a thread (an estimate) that is about {} of overhead{}. {}",
            c.class,
            c.executions,
            human_ns(g.p50),
            human_ns(THREAD_START_OVERHEAD_NS),
            human_ns(cost),
            if cost >= g.total {
                format!(", more than the {} they ran", human_ns(g.total))
            } else {
                String::new()
            },
            if submitted {
                "They were submitted to an executor that starts a thread per task \
                 (`CompletableFuture`'s async methods do so when the common pool has fewer than \
                 2 threads, on machines with fewer than 3 CPUs): give it a pool (an \
                 `ExecutorService` reused for the run)."
            } else {
                "Run these jobs on a pool (an `ExecutorService` reused for the run), or on \
                 virtual threads (JDK 21+: `Thread.ofVirtual()`, \
                 `newVirtualThreadPerTaskExecutor()`)."
            },
        ),
        fields: vec![
            ("executions", FieldValue::Int(c.executions)),
            ("self_p50_ns", FieldValue::Int(g.p50)),
            ("self_total_ns", FieldValue::Int(g.total)),
            ("threads", FieldValue::Int(c.executions)),
            ("cost_estimated", FieldValue::Int(1)),
        ],
        cost_ns: cost,
        site: site.map(|s| s.0),
        stack: Vec::new(),
    })
}

fn fine_grained(
    duration_ns: u64,
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
    let site = class_site(c);
    if let Some((s, _)) = &site {
        fields.push(("site", FieldValue::Text(s.clone())));
    }
    let where_ = match &site {
        Some((s, how)) => format!(" where they are {how} ({s})"),
        None => String::new(),
    };
    let cost = (c.executions.saturating_mul(TASK_OVERHEAD_NS)).min(g.total);
    if (cost as f64) < FINE_MIN_SHARE_OF_RUN * duration_ns as f64 {
        return None;
    }
    fields.push(("cost_estimated", FieldValue::Int(1)));
    Some(Finding {
        kind: FindingKind::FineGrained,
        class: Some(c.class.clone()),
        message: format!(
            "{} is too fine-grained: {} tasks with a median self time of {}, and {}. At ~{} of \
             fixed cost per task (an estimate) that is about {} of overhead. Merge tasks (batch \
             several items per task){}.",
            c.class,
            c.executions,
            human_ns(g.p50),
            evidence.join(", and "),
            human_ns(TASK_OVERHEAD_NS),
            human_ns(cost),
            where_
        ),
        fields,
        cost_ns: cost,
        site: site.map(|s| s.0),
        stack: Vec::new(),
    })
}

/// A task class blocked on locks this share of its self time is not judged coarse.
pub const COARSE_MAX_BLOCKED_SHARE: f64 = 0.25;

fn coarse_grained(
    i: &Inputs,
    ci: usize,
    cpus: u64,
    inside: Option<WindowStats>,
    outside: Option<WindowStats>,
) -> Option<Finding> {
    let (tasks, model, cpu) = (i.tasks, i.model, i.cpu);
    let c = &tasks.classes[ci];
    let act = i.activity.classes.get(ci)?;
    // Judged on running time: a blocking loop or an idle worker has a long self
    // time and nothing to split. Unknown CPU time: not judged.
    if act.activity != Activity::Running || !act.cpu_measured {
        return None;
    }
    // A consumer taking its work from a queue (a SynchronousQueue hand-off) is as
    // long as its producer keeps it busy: there is nothing to split in it.
    if act.wait_groups.iter().any(|(g, _, _)| {
        i.locks
            .wait_groups
            .get(*g)
            .is_some_and(|g| g.waits_for_work())
    }) {
        return None;
    }
    let run = act.busy_ns;
    if c.executions > COARSE_MAX_EXECUTIONS_PER_CPU * cpus || run.p50 == 0 {
        return None;
    }
    if c.kind == TaskKind::Thread && act.busy_share() < COARSE_THREAD_MIN_BUSY {
        return None;
    }
    let share = if model.duration_ns > 0 {
        run.p50 as f64 / model.duration_ns as f64
    } else {
        0.0
    };
    let mut others: Vec<u64> = tasks
        .classes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.executions > 0 && !(o.class == c.class && o.kind == c.kind))
        .filter_map(|(k, _)| i.activity.classes.get(k).map(|a| a.busy_ns.p50))
        .collect();
    others.sort_unstable();
    let others_p50 = (!others.is_empty()).then(|| crate::tasks::percentile_sorted(&others, 50));
    let ratio = others_p50.map(|o| run.p50 as f64 / o.max(1) as f64);
    let long =
        share >= COARSE_MIN_SHARE_OF_RUN || ratio.is_some_and(|r| r >= COARSE_MIN_RATIO_TO_OTHERS);
    let ins = inside.filter(|i| i.covered_ns >= COARSE_MIN_COVERED_NS)?;
    if !long || !cpu.cpus_known || ins.utilisation >= COARSE_MAX_UTILISATION {
        return None;
    }
    // Tasks that waited for a CPU (run queue) longer than they ran found no idle CPU:
    // the program's low utilisation is other processes holding the CPUs (a loaded
    // machine), and smaller tasks would queue the same way.
    let s = &act.split;
    if s.runnable_ns > s.running_ns {
        return None;
    }
    // Tasks blocked on a lock for a good part of their time leave the CPUs idle
    // because of the lock, which its own finding names, not because of their size:
    // smaller ones would block the same way (a parallel stream's pieces all taking
    // one synchronized list's monitor read "too coarse-grained: split tasks").
    if s.blocked_ns as f64 >= COARSE_MAX_BLOCKED_SHARE * s.total() as f64 {
        return None;
    }
    let idle_cpu_ns = (ins.idle_cpus(cpus) * ins.covered_ns as f64) as u64;
    // More tasks than CPUs, run by fewer threads than CPUs: they ran one after another
    // for want of threads, not of tasks (3 tasks on a single-thread scheduler of a
    // 2-CPU machine read "only 3 tasks for 2 CPUs ... split tasks").
    let threads: BTreeSet<ThreadIndex> = tasks.executions_of(c).map(|e| e.thread).collect();
    let k = threads.len() as u64;
    if matches!(c.kind, TaskKind::Runnable | TaskKind::Callable)
        && c.executions > k
        && k < cpus.min(c.executions)
    {
        let pool = pool_of(model, &threads);
        return Some(Finding {
            kind: FindingKind::PoolTooSmall,
            class: Some(c.class.clone()),
            message: format!(
                "{} `{}` tasks, busy on a CPU (about {} each), ran on only the {} of `{pool}` \
                 while the {cpus} CPUs were {} busy: the pool is smaller than the machine ({} \
                 of CPU time left idle). With {} threads they would run side by side, unless \
                 they must run one at a time (a single-thread executor used to keep them in \
                 order).",
                c.executions,
                c.class,
                human_ns(run.p50),
                count(k, "thread"),
                pct(ins.utilisation),
                human_ns(idle_cpu_ns),
                cpus.min(c.executions),
            ),
            fields: vec![
                ("pool", FieldValue::Text(pool)),
                ("reason", FieldValue::Text("cpus".to_string())),
                ("threads", FieldValue::Int(k)),
                ("suggested_threads", FieldValue::Int(cpus.min(c.executions))),
                ("utilisation_during", FieldValue::Float(ins.utilisation)),
            ],
            cost_ns: idle_cpu_ns,
            site: class_site(c).map(|s| s.0),
            stack: Vec::new(),
        });
    }
    let mut fields = vec![
        ("executions", FieldValue::Int(c.executions)),
        ("self_p50_ns", FieldValue::Int(c.granularity_ns.p50)),
        ("busy_p50_ns", FieldValue::Int(run.p50)),
        ("share_of_run", FieldValue::Float(share)),
        ("utilisation_during", FieldValue::Float(ins.utilisation)),
        ("cpus", FieldValue::Int(cpus)),
        ("cs_per_100ms_during", FieldValue::Float(ins.cs_per_100ms)),
        ("idle_cpu_ns", FieldValue::Int(idle_cpu_ns)),
    ];
    if let Some(o) = others_p50 {
        fields.push(("others_p50_ns", FieldValue::Int(o)));
    }
    let contended = outside.is_some_and(|o| {
        o.covered_ns >= MIN_COMPARE_NS
            && ins.cs_per_100ms >= FINE_MIN_CS_PER_100MS
            && ins.cs_per_100ms >= FINE_CS_RATIO * o.cs_per_100ms
    });
    let site = class_site(c);
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
            "{} is too coarse-grained: only {} for {} CPUs, {} about {} of work \
             (on a CPU or ready to run; {} of the run), and the CPUs are {} busy while they run: {} of CPU time left idle. \
             Split tasks (more, smaller pieces of work){}.{}",
            c.class,
            count(c.executions, "task"),
            cpus,
            if c.executions == 1 { "with" } else { "each with" },
            human_ns(run.p50),
            pct(share),
            pct(ins.utilisation),
            human_ns(idle_cpu_ns),
            where_,
            caveat
        ),
        fields,
        cost_ns: idle_cpu_ns,
        site: site.map(|s| s.0),
        stack: Vec::new(),
    })
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

/// The fork-join model's findings (wosp): fine tasks, imbalance, low parallelism, join blocking.
fn forkjoin_findings(i: &Inputs, out: &mut Vec<Finding>) {
    let f = i.forkjoin;
    for c in &f.classes {
        // The fork, push and join costs are inside the tasks' self time: no more than it
        // (2.6 million 70 ns tasks read "2.60 s of overhead" in a 1.4 s run).
        let estimate = c.fine.saturating_mul(FJ_TASK_OVERHEAD_NS);
        let cost = estimate.min(c.granularity_ns.total);
        let bound = if cost < estimate {
            " (bounded by their self time)"
        } else {
            ""
        };
        if c.tasks >= FJ_FINE_MIN_TASKS
            && c.fine * 2 >= c.tasks
            && cost as f64 >= FINE_MIN_SHARE_OF_RUN * i.model.duration_ns as f64
        {
            let share = c.fine as f64 / c.tasks as f64;
            let at = c
                .site
                .as_deref()
                .map_or(String::new(), |s| format!(" at {s} ({})", source_of(s)));
            // Tasks handed to the pool one by one from outside it (`execute`,
            // `submit`) have no cutoff to raise: what to change is the submitting.
            let submitted = c.external * 2 >= c.tasks;
            let (cost_of, advice) = if submitted {
                (
                    "submission and queueing",
                    format!(
                        "They are submitted to the pool one at a time from outside it, not \
                         forked: submit fewer, larger tasks (several items each){at}, or one \
                         task that forks the work."
                    ),
                )
            } else {
                (
                    "fork and steal",
                    format!("Raise the sequential cutoff{at} so each task does more work before it forks."),
                )
            };
            let mut fields = vec![
                ("tasks", FieldValue::Int(c.tasks)),
                ("fine", FieldValue::Int(c.fine)),
                ("self_p50_ns", FieldValue::Int(c.granularity_ns.p50)),
                ("cost_estimated", FieldValue::Int(1)),
            ];
            if submitted {
                fields.push(("external", FieldValue::Int(c.external)));
            }
            out.push(Finding {
                kind: FindingKind::ForkJoinFineGrained,
                class: Some(c.class.clone()),
                message: format!(
                    "{} of {} `{}` fork-join tasks run less than {} (median {}): at ~{} of {cost_of} \
                     cost per task (an estimate), about {}{bound} of overhead. {advice}",
                    pct(share),
                    c.tasks,
                    simple(&c.class),
                    human_ns(FINE_NS),
                    human_ns(c.granularity_ns.p50),
                    human_ns(FJ_TASK_OVERHEAD_NS),
                    human_ns(cost)
                ),
                fields,
                cost_ns: cost,
                site: c.site.clone(),
                stack: Vec::new(),
            });
        }
    }
    for p in &f.pools {
        let busy: Vec<_> = f
            .threads
            .iter()
            .filter(|t| t.pool == p.pool && t.executed > 0)
            .collect();
        let total: u64 = busy.iter().map(|t| t.busy_ns).sum();
        if p.parallelism < 2 || total < FJ_MIN_BUSY_NS {
            continue;
        }
        let Some(t) = busy.iter().max_by_key(|t| t.busy_ns) else {
            continue;
        };
        let share = t.busy_ns as f64 / total as f64;
        let fair = 1.0 / p.parallelism as f64;
        if share >= FJ_IMBALANCE_SHARE && share > 1.5 * fair {
            // The other workers could have run while the busiest one did.
            let cost = (t.busy_ns * p.parallelism as u64).saturating_sub(total);
            out.push(Finding {
                kind: FindingKind::ForkJoinImbalance,
                class: None,
                message: format!(
                    "One thread ({}) did {} of the work of pool #{:08x} (parallelism {}): its \
                     other workers found little to steal and sat idle for about {}. Split the work \
                     earlier or finer (fork before computing, not after) so it can be stolen.",
                    t.name,
                    pct(share),
                    p.pool,
                    p.parallelism,
                    human_ns(cost)
                ),
                fields: vec![
                    ("pool", FieldValue::Int(p.pool as u64)),
                    ("busiest_share", FieldValue::Float(share)),
                    ("parallelism", FieldValue::Int(p.parallelism as u64)),
                ],
                cost_ns: cost,
                site: None,
                stack: Vec::new(),
            });
        }
    }
    let cpus = cpus_of(i.model);
    // Per root class (a program that runs the same computation several times gets
    // one finding): (work, span, idle cost) of each low-parallelism computation, and
    // the threads that could have run it.
    type Runs = Vec<(u64, u64, u64, u64, u64)>;
    let mut low: BTreeMap<&str, (Runs, u64)> = BTreeMap::new();
    for c in &f.computations {
        if c.work_ns >= FJ_MIN_WORK_NS && c.tasks > 1 && c.parallelism < FJ_LOW_PARALLELISM {
            let pool_par = f
                .pools
                .iter()
                .find(|p| p.pool == c.pool)
                .map_or(cpus, |p| p.parallelism as u64);
            // The threads that could run it: the pool's, and the thread that invoked
            // it when it helped (the common pool leaves a CPU to that thread).
            let width = (pool_par + c.helpers as u64).min(cpus).max(1);
            let cost = (c.span_ns.saturating_mul(width)).saturating_sub(c.work_ns);
            // Nearly as parallel as the threads that could run it (a parallel stream
            // on the 1-worker common pool of a 2-CPU machine): little idle to win back.
            if cost == 0 || c.parallelism >= FJ_LOW_SHARE_OF_WIDTH * width as f64 {
                continue;
            }
            let e = low.entry(c.root_class.as_str()).or_default();
            e.0.push((c.work_ns, c.span_ns, cost, c.begin_ns, c.end_ns));
            e.1 = e.1.max(width);
        }
    }
    for (root, (runs, width)) in low {
        let work: u64 = runs.iter().map(|r| r.0).sum();
        let span: u64 = runs.iter().map(|r| r.1).sum();
        let cost: u64 = runs.iter().map(|r| r.2).sum();
        let parallelism = work as f64 / span.max(1) as f64;
        let which = if runs.len() == 1 {
            format!("The computation rooted at `{}` has", simple(root))
        } else {
            format!(
                "{} computations rooted at `{}` have",
                runs.len(),
                simple(root)
            )
        };
        // The cause when most of its tasks were run by their forker right after the
        // fork: `fork(); join();` before the forking task did its own share.
        let at_once = f.classes.iter().find(|k| k.class == root).filter(|k| {
            k.tasks > 1 && k.run_at_once as f64 >= FJ_RUN_AT_ONCE_SHARE * k.tasks as f64
        });
        // Or a lock its tasks blocked on meanwhile: the pieces then take unequal
        // time whatever the split (a parallel stream's `groupingByConcurrent` into a
        // collector the JDK guards with `synchronized` read "fork earlier").
        // (Not looked for when a fork joined at once is the cause.)
        let spans: Vec<(u64, u64)> = runs.iter().map(|r| (r.3, r.4)).collect();
        let lock = at_once
            .is_none()
            .then(|| lock_blocking_during(i, &spans))
            .flatten()
            .filter(|l| l.blocked_ns as f64 >= FJ_LOCK_SHARE_OF_IDLE * cost as f64);
        let jdk = crate::model::is_jdk_class(root);
        let (advice, site) = match (at_once, lock.as_ref()) {
            (Some(k), _) => (
                format!(
                    "{} of its {} tasks were run by the thread that forked them right after \
                     the fork, before that thread did anything else: each `fork()` is joined \
                     at once, so the forking task waits before it does its own share and the \
                     halves run one after the other. Fork one half, `compute()` the other, then \
                     `join()` the first (or `invokeAll(left, right)`){}.",
                    pct(k.run_at_once as f64 / k.tasks as f64),
                    k.tasks,
                    k.site
                        .as_deref()
                        .map_or(String::new(), |s| format!(" at {s} ({})", source_of(s))),
                ),
                k.site.clone(),
            ),
            (None, Some(l)) => (
                format!(
                    "Its tasks were blocked {} on `{}`{} meanwhile: that lock, not the split, \
                     makes the pieces take unequal time. Reduce the work under it, or give \
                     each piece its own (merge the results after){}.",
                    human_ns(l.blocked_ns),
                    simple(&l.class),
                    l.site
                        .as_deref()
                        .map_or(String::new(), |s| format!(" at {s}")),
                    if jdk {
                        " (a concurrent collector, or `collect` with a merge function, instead \
                         of a shared synchronized one)"
                    } else {
                        ""
                    },
                ),
                l.site.clone(),
            ),
            // `forEachOrdered` runs its action on one element at a time, in order.
            (None, None) if root.ends_with("ForEachOps$ForEachOrderedTask") => (
                "It is a parallel stream's `forEachOrdered`: its action runs on one element at \
                 a time, in the stream's order, whatever the threads. Do the heavy work in a \
                 `map` before it (that part runs in parallel), or use `forEach` (or `collect`) \
                 if the order does not matter."
                    .to_string(),
                None,
            ),
            (None, None) if jdk => (
                "It is the JDK's (a parallel stream's or `Arrays.parallel*`'s): its split is \
                 not yours to change, its pieces took unequal time. Make the work per element \
                 even, or give the stream a source that splits evenly (an array, an \
                 `ArrayList`, `IntStream.range`; not an iterator or a `LinkedList`)."
                    .to_string(),
                None,
            ),
            (None, None) => (
                "Fork earlier and join later, so independent subtasks overlap.".to_string(),
                None,
            ),
        };
        let waits = if at_once.is_none() && (lock.is_some() || jdk) {
            ""
        } else {
            "the tasks wait on each other, leaving "
        };
        let mut fields = vec![
            ("computations", FieldValue::Int(runs.len() as u64)),
            ("work_ns", FieldValue::Int(work)),
            ("span_ns", FieldValue::Int(span)),
            ("parallelism", FieldValue::Float(parallelism)),
            ("threads", FieldValue::Int(width)),
        ];
        if let Some(l) = &lock {
            fields.push(("lock", FieldValue::Text(l.id.clone())));
            fields.push(("lock_blocked_ns", FieldValue::Int(l.blocked_ns)));
        }
        if let Some(k) = at_once {
            fields.push((
                "run_at_once_share",
                FieldValue::Float(k.run_at_once as f64 / k.tasks as f64),
            ));
        }
        out.push(Finding {
            kind: FindingKind::ForkJoinLowParallelism,
            class: Some(root.to_string()),
            message: format!(
                "{which} little parallelism ({parallelism:.1}: work {}, critical path {}): \
                 {waits}about {} of thread time idle on {width} threads. {advice}",
                human_ns(work),
                human_ns(span),
                human_ns(cost),
            ),
            fields,
            cost_ns: cost,
            site,
            stack: Vec::new(),
        });
    }
    let (blocked, busy) = f.workers_blocked_and_busy_ns();
    if busy >= FJ_MIN_BUSY_NS && blocked as f64 >= FJ_JOIN_BLOCKED_SHARE * busy as f64 {
        out.push(Finding {
            kind: FindingKind::ForkJoinJoinBlocking,
            class: None,
            message: format!(
                "Fork-join worker threads spent {} blocked in join/get against {} running tasks: \
                 joins wait on tasks still running elsewhere. Join the task forked last first \
                 (`invokeAll`, or `compute()` one half and `join()` the other), and do not block \
                 on futures inside fork-join tasks.",
                human_ns(blocked),
                human_ns(busy)
            ),
            fields: vec![
                ("blocked_ns", FieldValue::Int(blocked)),
                ("busy_ns", FieldValue::Int(busy)),
            ],
            cost_ns: blocked,
            site: None,
            stack: Vec::new(),
        });
    }
}

/// A lock blocked on during a fork-join computation with little parallelism is
/// said to be its cause when the blocking is at least this share of the idle
/// thread time.
const FJ_LOCK_SHARE_OF_IDLE: f64 = 0.25;

/// The lock threads were blocked on most inside the given spans, with its time.
struct BlockingLock {
    id: String,
    class: String,
    site: Option<String>,
    blocked_ns: u64,
}

fn lock_blocking_during(i: &Inputs, spans: &[(u64, u64)]) -> Option<BlockingLock> {
    // Merged: one root class's computations can overlap (a stream's pieces stolen
    // into computations of their own), and blocking there counts once.
    let spans = crate::cpu::merge_intervals(spans);
    let mut by_lock: BTreeMap<usize, (u64, BTreeMap<&str, u64>)> = BTreeMap::new();
    for b in &i.locks.blocked {
        let inside: u64 = spans
            .iter()
            .map(|&(s, e)| b.end_ns.min(e).saturating_sub(b.start_ns.max(s)))
            .sum();
        if inside == 0 {
            continue;
        }
        let e = by_lock.entry(b.lock).or_default();
        e.0 += inside;
        if let Some(site) = b.site.as_deref() {
            *e.1.entry(site).or_default() += inside;
        }
    }
    let (lock, (blocked_ns, sites)) = by_lock.into_iter().max_by_key(|(_, v)| v.0)?;
    let l = i.locks.locks.get(lock)?;
    Some(BlockingLock {
        id: l.id.clone(),
        class: l.class.clone(),
        site: sites
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .map(|(s, _)| s.to_string()),
        blocked_ns,
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
                ("monitor", _) => "waiting for a contended synchronized lock".to_string(),
                ("wait", _) => format!(
                    "in `Object.wait`: the scheduler adds a carrier while one waits ({} carriers ran virtual threads), up to 256, beyond which waiting virtual threads hold every carrier",
                    vt.carriers
                ),
                (_, Some(false)) => "parked under a native frame (this JDK no longer pins on synchronized)".to_string(),
                _ => "parked inside synchronized (or under a native frame)".to_string(),
            };
            let fix = match (p.how, vt.synchronized_pins) {
                ("wait", _) => "replace wait/notify there with a ReentrantLock and its Condition (or a BlockingQueue), whose waits unmount; JDK 24 and later no longer pin in Object.wait".to_string(),
                (_, Some(false)) => "move the blocking call out of the native or class-initializer frame".to_string(),
                // The JDK's own synchronized (a thread-per-task executor's
                // `ConcurrentHashMap` of its threads): not the application's to rewrite.
                _ if crate::model::is_jdk_class(p.synchronized_at.as_deref().unwrap_or(&p.site)) => "the synchronized block is the JDK's own code, not the application's: JDK 24 and later no longer pin there".to_string(),
                _ => match &p.synchronized_at {
                    Some(at) => format!("replace synchronized with a ReentrantLock at {at}, or move the blocking call out of that synchronized block"),
                    None => "replace synchronized with a ReentrantLock there, or move the blocking call out of the synchronized block".to_string(),
                },
            };
            let inside = match (&p.synchronized_at, vt.synchronized_pins) {
                (Some(at), Some(true) | None) => format!(" (inside synchronized at {at})"),
                _ => String::new(),
            };
            // A waiting virtual thread's carrier is made up for: every carrier busy
            // is no sign that others could not run.
            let saturated = if p.carriers_saturated_ns > 0 && p.how != "wait" {
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
                    "virtual threads pinned at {}{inside} blocked their carriers {} ({}, longest {}) {what}{saturated}: {fix}.",
                    p.site,
                    human_ns(p.blocked_ns),
                    count(p.count, "time"),
                    human_ns(p.max_ns),
                ),
                fields: [
                    ("site", FieldValue::Text(p.site.clone())),
                    ("count", FieldValue::Int(p.count)),
                    ("blocked_ns", FieldValue::Int(p.blocked_ns)),
                    ("max_ns", FieldValue::Int(p.max_ns)),
                    ("carriers_saturated_ns", FieldValue::Int(p.carriers_saturated_ns)),
                ]
                .into_iter()
                .chain(
                    p.synchronized_at
                        .as_ref()
                        .map(|at| ("synchronized_site", FieldValue::Text(at.clone()))),
                )
                .collect(),
                // Carrier time held while blocked: other virtual threads could not run on
                // it. Not in `Object.wait`, made up for by another carrier: its cost is
                // threads, not time (the wait itself is the waits' finding).
                cost_ns: if p.how == "wait" { 0 } else { p.blocked_ns },
                site: Some(p.site.clone()),
                stack: Vec::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use weft_trace::{LossReason, Record};

    #[test]
    fn complement_is_the_window_outside_the_sections() {
        let w = (0, 100);
        assert_eq!(complement(&[], w), vec![(0, 100)]);
        assert_eq!(
            complement(&[(10, 20), (30, 40)], w),
            vec![(0, 10), (20, 30), (40, 100)]
        );
        assert_eq!(complement(&[(0, 50), (50, 120)], w), vec![]);
        assert_eq!(complement(&[(20, 100)], w), vec![(0, 20)]);
    }

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
                machine_idle_ns: None,
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
        // The same tasks in a 2 s run: ~10 ms of overhead is 0.5% of it, no finding.
        let mut tb = TB::new();
        small_tasks(&mut tb, 0, 2000, 30_000, 10_000);
        tb.thread_end(1, 2_000_000_000)
            .global(Record::End { ts: 2_000_000_001 });
        assert!(findings(&tb).is_empty());
    }

    /// Pool thread 1 runs `n` demo.Work tasks of `len` ms, each parked `wait` ms on a
    /// demo.Gate at the wait site `frames` (sampled: WaitDetail); the run ends 100 ms
    /// after the last task.
    fn waiting_tasks(n: u32, len: u64, wait: u64, frames: &[&str]) -> Vec<Finding> {
        waiting_tasks_from(
            &["demo.Main.loop:42", "demo.Main.main:1"],
            n,
            len,
            wait,
            frames,
        )
    }

    /// [`waiting_tasks`] with the run going on `tail` ms after the last task.
    fn waiting_tasks_then(n: u32, len: u64, wait: u64, tail: u64) -> Vec<Finding> {
        waiting_tasks_in(
            &["demo.Main.loop:42", "demo.Main.main:1"],
            (n, len, wait, tail),
            GATE_WAIT,
        )
    }

    /// [`waiting_tasks`] submitted at a site with these frames.
    fn waiting_tasks_from(
        submit: &[&str],
        n: u32,
        len: u64,
        wait: u64,
        frames: &[&str],
    ) -> Vec<Finding> {
        waiting_tasks_in(submit, (n, len, wait, 100), frames)
    }

    /// [`waiting_tasks_from`] with (n, len, wait, tail ms after the last task).
    fn waiting_tasks_in(
        submit: &[&str],
        (n, len, wait, tail): (u32, u64, u64, u64),
        frames: &[&str],
    ) -> Vec<Finding> {
        waiting_class_in("demo.Work", submit, (n, len, wait, tail), frames)
    }

    /// [`waiting_tasks_in`] with the task class named `class`.
    fn waiting_class_in(
        class: &str,
        submit: &[&str],
        (n, len, wait, tail): (u32, u64, u64, u64),
        frames: &[&str],
    ) -> Vec<Finding> {
        const MS: u64 = 1_000_000;
        let mut tb = TB::new();
        tb.global(Record::ClassDef {
            id: C_WORK,
            name: class.into(),
        });
        tb.site_frames(5, submit);
        tb.recs.push((
            weft_trace::GLOBAL_THREAD,
            Record::ClassDef {
                id: 77,
                name: "demo.Gate".into(),
            },
        ));
        tb.site_frames(11, frames);
        tb.start(1, 0, C_THREAD, (C_WORKER, 1));
        let mut t0 = 10 * MS;
        for k in 0..n {
            tb.submit(MAIN, t0, (C_WORK, k + 1), 5);
            tb.begin(1, t0, P_WORK_RUN, C_WORK, k + 1);
            let w0 = t0 + (len - wait) / 2 * MS;
            tb.wait(1, weft_trace::wait_kind::PARK, 77, 11, w0, w0 + wait * MS);
            tb.end(1, t0 + len * MS, P_WORK_RUN, k + 1);
            t0 += len * MS;
        }
        tb.thread_end(1, t0 + tail * MS).global(Record::End {
            ts: t0 + (tail + 1) * MS,
        });
        findings(&tb)
    }

    const GATE_WAIT: &[&str] = &[
        "java.util.concurrent.locks.LockSupport.park:211",
        "demo.Work.await:30",
        "demo.Work.run:12",
    ];

    #[test]
    fn a_waiting_task_class_names_what_it_waited_on() {
        const MS: u64 = 1_000_000;
        let f = waiting_tasks(3, 100, 80, GATE_WAIT);
        let w = f
            .iter()
            .find(|f| f.kind == FindingKind::Waiting)
            .expect("a waiting finding");
        assert_eq!(w.class.as_deref(), Some("demo.Work"));
        assert_eq!(w.cost_ns, 240 * MS);
        assert!(
            w.message
                .contains("park on `Gate` at demo.Work.await:30 for 240 ms (3 waits)"),
            "{}",
            w.message
        );
        assert_eq!(w.site.as_deref(), Some("demo.Work.await:30"));
        assert_eq!(w.stack.len(), 3);
        assert_eq!(
            w.field("top_wait"),
            Some(&FieldValue::Text(
                "park on demo.Gate at demo.Work.await:30".into()
            ))
        );
    }

    /// A task started at 60% of the run on a daemon thread and waiting from then to the
    /// end (a library's reference-queue cleaner) is a service loop, not a slow task; on
    /// a non-daemon thread (which the JVM waits for: perhaps a hang) it is reported.
    #[test]
    fn a_daemon_task_waiting_to_the_end_is_a_service_loop() {
        const MS: u64 = 1_000_000;
        let run = |daemon: bool| {
            let mut tb = TB::new();
            tb.global(Record::ClassDef {
                id: 77,
                name: "java.lang.ref.ReferenceQueue$Lock".into(),
            });
            tb.site(5, "demo.Main.init:7");
            tb.site_frames(11, &["demo.Work.run:9"]);
            tb.start(1, 0, C_THREAD, (C_WORKER, 1));
            if let Some((_, Record::ThreadStart { daemon: d, .. })) = tb.recs.last_mut() {
                *d = daemon;
            }
            tb.submit(MAIN, 600 * MS, (C_WORK, 1), 5);
            tb.begin(1, 600 * MS, P_WORK_RUN, C_WORK, 1);
            tb.wait(
                1,
                weft_trace::wait_kind::OBJECT_WAIT,
                77,
                11,
                601 * MS,
                1_000 * MS,
            );
            tb.end(1, 1_000 * MS, P_WORK_RUN, 1);
            tb.thread_end(1, 1_000 * MS);
            tb.global(Record::End { ts: 1_000 * MS });
            findings(&tb)
        };
        assert!(!kinds(&run(true)).contains(&FindingKind::Waiting));
        assert!(kinds(&run(false)).contains(&FindingKind::Waiting));
    }

    /// Two threads alternating through `Object.wait` on one object, 4,000 waits of
    /// 20 µs: hand-offs, said so (batch, or one thread), not "a resource to split".
    #[test]
    fn many_short_waits_on_one_object_are_hand_offs() {
        let f = turns_on("demo.Baton", &["demo.Game.play:48", "demo.Game.run:20"]);
        let w = f
            .iter()
            .find(|f| f.kind == FindingKind::WaitContention)
            .expect("a wait finding");
        assert!(
            w.message.contains("handed work to each other 4000 times"),
            "{}",
            w.message
        );
        assert!(
            w.message.contains("Hand over more per turn"),
            "{}",
            w.message
        );
    }

    /// Two threads taking turns through `Object.wait` on `class` (waited on at
    /// `frames`' first frame), 4,000 waits of 20 µs in a 120 ms run.
    fn turns_on(class: &str, frames: &[&str]) -> Vec<Finding> {
        findings(&turns_on_trace(
            class,
            frames,
            false,
            weft_trace::wait_kind::OBJECT_WAIT,
        ))
    }

    /// [`turns_on`]'s trace; `timed_out`: every wait ran out its timeout; `kind`: the
    /// waits' kind.
    fn turns_on_trace(class: &str, frames: &[&str], timed_out: bool, kind: u8) -> TB {
        let mut tb = TB::new();
        tb.global(Record::ClassDef {
            id: 77,
            name: class.into(),
        });
        tb.site_frames(11, frames);
        for t in [1u32, 2] {
            tb.start(t, 0, C_THREAD, (0, 0));
        }
        for k in 0..4_000u64 {
            let t = 1 + (k % 2) as u32;
            let s = 1_000_000 + k * 25_000;
            tb.wait(t, kind, 77, 11, s, s + 20_000);
            if let Some((_, Record::WaitEnd { timed_out: t, .. })) = tb.recs.last_mut() {
                *t = timed_out;
            }
        }
        tb.thread_end(1, 120_000_000).thread_end(2, 120_000_000);
        tb.global(Record::End { ts: 120_000_001 });
        tb
    }

    /// `Object.wait(timeout)` calls that all ran out (a background thread pausing
    /// between rounds, H2's MVStore writer: "5 threads waited 11.2 s ... on `Object`"
    /// was its top finding) are no wait for another thread; the waits table says so.
    #[test]
    fn timed_waits_that_run_out_are_no_finding() {
        let game = ["demo.Writer.run:48", "demo.Writer.loop:20"];
        let wait = weft_trace::wait_kind::OBJECT_WAIT;
        let timed = turns_on_trace("java.lang.Object", &game, true, wait);
        assert!(!findings(&timed)
            .iter()
            .any(|f| f.kind == FindingKind::WaitContention));
        let g = &crate::analyze(&timed.trace()).locks.wait_groups[0];
        assert_eq!(g.timed_out, 4_000);
        assert!(g.mostly_timed_out());
        // The same waits notified: a finding.
        assert!(
            findings(&turns_on_trace("java.lang.Object", &game, false, wait))
                .iter()
                .any(|f| f.kind == FindingKind::WaitContention)
        );
    }

    /// Parks inside `ForkJoinTask.awaitDone` (a join; the task is the blocker) are no
    /// wait on an object, however many: the same parks elsewhere are.
    #[test]
    fn fork_join_joins_are_no_wait_on_an_object() {
        let park = weft_trace::wait_kind::PARK;
        let join = [
            "java.util.concurrent.ForkJoinTask.awaitDone:468",
            "java.util.concurrent.ForkJoinTask.invokeAll:772",
            "demo.Sum.compute:9",
        ];
        assert!(!findings(&turns_on_trace("demo.Sum", &join, false, park))
            .iter()
            .any(|f| f.kind == FindingKind::WaitContention));
        assert!(findings(&turns_on_trace(
            "demo.Sum",
            &["demo.Sum.compute:9"],
            false,
            park
        ))
        .iter()
        .any(|f| f.kind == FindingKind::WaitContention));
    }

    /// A JDK object the application waits on itself (`synchronized (list) {
    /// list.wait(); }`, a `new Object()` lock) is its own hand-off; a `Thread` (a
    /// join) or a wait inside the JDK is not.
    #[test]
    fn an_application_wait_on_a_jdk_object_is_a_finding() {
        let handoff = |class: &str, frames: &[&str]| {
            turns_on(class, frames)
                .iter()
                .any(|f| f.kind == FindingKind::WaitContention)
        };
        let game = ["demo.Game.play:48", "demo.Game.run:20"];
        assert!(handoff("java.util.LinkedList", &game));
        assert!(handoff("java.lang.Object", &game));
        assert!(!handoff("java.lang.Thread", &game));
        assert!(!handoff(
            "java.lang.ProcessImpl",
            &["java.lang.ProcessImpl.waitFor:434", "demo.Game.play:48"]
        ));
    }

    /// Two pool threads, each in a task blocked to the end in a park, with a third
    /// submitted task never started: a pool deadlock; when one of the two finished
    /// its task, none.
    #[test]
    fn a_pool_whose_threads_all_wait_in_tasks_while_tasks_are_queued_is_deadlocked() {
        const MS: u64 = 1_000_000;
        let run = |both_stuck: bool| {
            let mut tb = TB::new();
            tb.global(Record::ClassDef {
                id: 77,
                name: "java.util.concurrent.FutureTask".into(),
            });
            tb.site(5, "demo.Main.loop:42");
            tb.site(6, "demo.Work.call:12");
            for t in [1u32, 2] {
                tb.start(t, 0, C_THREAD, (C_WORKER, t));
            }
            for k in 1..=3u32 {
                tb.submit(MAIN, k as u64 * MS, (C_WORK, k), 5);
            }
            for t in [1u32, 2] {
                tb.begin(t, 5 * MS, P_WORK_RUN, C_WORK, t);
                if t == 2 && !both_stuck {
                    tb.end(t, 6 * MS, P_WORK_RUN, t);
                    continue;
                }
                tb.recs.push((
                    t,
                    Record::WaitDetail {
                        class_id: 77,
                        site: 6,
                    },
                ));
                tb.recs.push((
                    t,
                    Record::WaitBegin {
                        ts: 10 * MS,
                        kind: weft_trace::wait_kind::PARK,
                        lock: 0,
                    },
                ));
            }
            tb.global(Record::End { ts: 1_000 * MS });
            findings(&tb)
        };
        let f = run(true);
        let d = f
            .iter()
            .find(|f| f.kind == FindingKind::PoolStarvation)
            .unwrap_or_else(|| panic!("no pool deadlock: {f:#?}"));
        assert_eq!(d.field("threads"), Some(&FieldValue::Int(2)));
        assert_eq!(d.field("never_started"), Some(&FieldValue::Int(1)));
        assert_eq!(d.cost_ns, 2 * 990 * MS);
        assert!(
            d.message
                .contains("park on `FutureTask` at demo.Work.call:12"),
            "{}",
            d.message
        );
        // The tasks' executions run to the end, their waits inside them.
        assert!(!f.iter().any(|f| f.kind == FindingKind::Waiting), "{f:#?}");
        assert!(!run(false)
            .iter()
            .any(|f| f.kind == FindingKind::PoolStarvation));
    }

    /// Class 77 (a `ReentrantLock`'s AQS) and site 11: a `Condition.await` called from
    /// `callers` (innermost first), as the agent records a park on a condition.
    fn condition_wait_site(tb: &mut TB, callers: &[&str]) {
        tb.global(Record::ClassDef {
            id: 77,
            name: "java.util.concurrent.locks.ReentrantLock$NonfairSync".into(),
        });
        let mut frames = vec![
            "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await:1630",
        ];
        frames.extend_from_slice(callers);
        tb.site_frames(11, &frames);
    }

    /// Ends a producer/consumer trace at 1 s: thread 1 (the producer) on a CPU
    /// `producer_on_cpu` of it, threads 1–3 ending then.
    fn end_producer_run(tb: &mut TB, producer_on_cpu: u64) {
        const MS: u64 = 1_000_000;
        for (ts, on) in [(0, 0), (1_000 * MS, producer_on_cpu)] {
            tb.global(Record::ThreadSched {
                ts,
                thread: 1,
                on_cpu_ns: on,
                runq_ns: 0,
                timeslices: 0,
            });
        }
        for t in [1u32, 2, 3] {
            tb.thread_end(t, 1_000 * MS);
        }
        tb.global(Record::End { ts: 1_000 * MS });
    }

    /// Thread `by` unparks consumer thread `c` (Java id `c + 10`) at `ts`.
    fn unpark(tb: &mut TB, by: u32, ts: u64, c: u32) {
        tb.recs.push((
            by,
            Record::Unpark {
                ts,
                target: c as u64 + 10,
                ns: 0,
            },
        ));
    }

    /// Two consumers waiting on a queue's take 95% of their life, woken by a producer
    /// busy all of its life: a producer bottleneck; with the producer idle half of
    /// its life (the work simply comes slowly), none.
    #[test]
    fn consumers_starved_by_a_busy_producer_are_its_bottleneck() {
        const MS: u64 = 1_000_000;
        const QUEUE: &[&str] = &[
            "java.util.concurrent.LinkedBlockingQueue.take:435",
            "demo.Consumer.run:20",
        ];
        let run = |producer_on_cpu: u64, callers: &[&str]| {
            let mut tb = TB::new();
            condition_wait_site(&mut tb, callers);
            for t in [1u32, 2, 3] {
                tb.start(t, 0, C_THREAD, (0, 0));
            }
            // An item of 1 ms each 20 ms to each consumer: it waits 19 of every 20 ms,
            // woken by thread 1.
            for k in 0..50u64 {
                for c in [2u32, 3] {
                    let s = k * 20 * MS;
                    tb.wait(c, weft_trace::wait_kind::PARK, 77, 11, s, s + 19 * MS);
                    unpark(&mut tb, 1, s + 19 * MS, c);
                }
            }
            end_producer_run(&mut tb, producer_on_cpu);
            findings(&tb)
        };
        let f = run(990 * MS, QUEUE);
        let p = f
            .iter()
            .find(|f| f.kind == FindingKind::ProducerBottleneck)
            .unwrap_or_else(|| panic!("no producer finding: {f:#?}"));
        assert_eq!(
            p.field("producer"),
            Some(&FieldValue::Text("worker-1".into()))
        );
        assert_eq!(p.field("consumers"), Some(&FieldValue::Int(2)));
        // Each consumer's last wait is left out (19 ms each).
        assert_eq!(p.cost_ns, 1_862 * MS);
        assert_eq!(p.site.as_deref(), Some("demo.Consumer.run:20"));
        assert!(p.message.contains("waited for work"), "{}", p.message);
        assert!(!run(500 * MS, QUEUE)
            .iter()
            .any(|f| f.kind == FindingKind::ProducerBottleneck));

        // The program's own buffer (`Condition.await` in its `take`): the same.
        let f = run(990 * MS, &["demo.Buffer.take:6", "demo.Consumer.run:20"]);
        let p = f
            .iter()
            .find(|f| f.kind == FindingKind::ProducerBottleneck)
            .unwrap_or_else(|| panic!("no producer finding for a hand-made buffer: {f:#?}"));
        assert_eq!(p.site.as_deref(), Some("demo.Buffer.take:6"));
        assert!(p.message.contains("waited 1.86 s"), "{}", p.message);
        // A `Condition.await` inside a JDK class that is not a queue (a barrier: its own
        // finding) is no consumer's wait.
        assert!(!run(
            990 * MS,
            &[
                "java.util.concurrent.CyclicBarrier.dowait:364",
                "demo.Phase.run:30"
            ]
        )
        .iter()
        .any(|f| f.kind == FindingKind::ProducerBottleneck));
    }

    /// `main` submits 40 tasks of 10 ms; every other one runs on `main` itself (a
    /// rejection policy) while the two pool threads wait for work on their queue: a
    /// finding when the CPUs had room (I/O-like tasks), none when they were busy
    /// (CPU-bound tasks: `main` took the CPU an idle worker left).
    #[test]
    fn tasks_run_by_their_submitter_while_the_pool_idles() {
        const MS: u64 = 1_000_000;
        let run = |util: f64| {
            let mut tb = TB::new();
            condition_wait_site(
                &mut tb,
                &[
                    "java.util.concurrent.LinkedBlockingQueue.take:435",
                    "java.util.concurrent.ThreadPoolExecutor.getTask:1062",
                ],
            );
            tb.header.set("cpus", "2");
            tb.site(3, "demo.Main.feed:30");
            for t in [1u32, 2] {
                tb.start(t, 0, C_THREAD, (C_WORKER, t));
            }
            let mut ts = MS;
            for k in 0..40u32 {
                tb.submit(MAIN, ts, (C_WORK, k + 1), 3);
                if k % 2 == 0 {
                    // Run by `main`, inside its submission; the workers wait meanwhile.
                    tb.run(MAIN, ts + 1_000, ts + 10 * MS, P_WORK_RUN, C_WORK, k + 1);
                    for t in [1u32, 2] {
                        tb.wait(
                            t,
                            weft_trace::wait_kind::PARK,
                            77,
                            11,
                            ts + 2_000,
                            ts + 10 * MS,
                        );
                    }
                    ts += 10 * MS + 2_000;
                } else {
                    let t = 1 + (k / 2) % 2;
                    tb.run(
                        t,
                        ts + 1_000,
                        ts + 1_000 + 10 * MS,
                        P_WORK_RUN,
                        C_WORK,
                        k + 1,
                    );
                    ts += 2_000;
                }
            }
            for t in [1u32, 2] {
                tb.thread_end(t, 400 * MS);
            }
            samples(&mut tb, 400 * MS, 2, |_| util, |_| 10);
            tb.global(Record::End { ts: 400 * MS });
            findings(&tb)
        };
        let f = run(0.3);
        let c = f
            .iter()
            .find(|f| f.kind == FindingKind::CallerRuns)
            .unwrap_or_else(|| panic!("no caller_runs finding: {f:#?}"));
        assert_eq!(c.field("in_caller"), Some(&FieldValue::Int(20)));
        assert_eq!(c.field("tasks"), Some(&FieldValue::Int(40)));
        assert_eq!(c.site.as_deref(), Some("demo.Main.feed:30"));
        assert!(c.cost_ns > 300 * MS, "{c:#?}");
        assert!(!kinds(&run(0.95)).contains(&FindingKind::CallerRuns));
    }

    /// Twenty tasks each queued once on a `Semaphore` for 50 ms: platform threads each
    /// waiting once are a signal (a phase's start: no finding); virtual threads, one
    /// task each, are a queue for permits, said as their waiting.
    #[test]
    fn virtual_threads_queued_on_a_semaphore_are_contention() {
        const MS: u64 = 1_000_000;
        let run = |base: u32| {
            let mut tb = TB::new();
            tb.global(Record::LockDef {
                id: 9,
                kind: weft_trace::lock_kind::SEMAPHORE,
                class: "java.util.concurrent.Semaphore".into(),
                ident: 9,
                fair: false,
            });
            tb.site(3, "demo.Client.call:12");
            for k in 0..20u32 {
                let (t, s) = (base + k, 1 + k as u64 * 10 * MS);
                if base < weft_trace::VIRTUAL_THREAD_BASE {
                    tb.start(t, 0, C_THREAD, (0, 0));
                } else {
                    tb.recs.push((
                        t,
                        Record::VtStart {
                            ts: s,
                            vt: 100 + k as u64,
                            carrier: 1 + k % 2,
                            class_id: C_WORK,
                            ident: k,
                        },
                    ));
                }
                tb.blocked(t, 9, 3, s, s + 50 * MS);
                if base < weft_trace::VIRTUAL_THREAD_BASE {
                    tb.thread_end(t, s + 60 * MS);
                } else {
                    tb.recs.push((
                        t,
                        Record::VtEnd {
                            ts: s + 60 * MS,
                            vt: 100 + k as u64,
                            carrier: 1 + k % 2,
                        },
                    ));
                }
            }
            tb.global(Record::End { ts: 300 * MS });
            findings(&tb)
        };
        let f = run(1);
        assert!(!kinds(&f).contains(&FindingKind::LockContention), "{f:#?}");
        let f = run(weft_trace::VIRTUAL_THREAD_BASE);
        let l = f
            .iter()
            .find(|f| f.kind == FindingKind::LockContention)
            .unwrap_or_else(|| panic!("no lock finding: {f:#?}"));
        assert!(
            l.message.starts_with("Virtual threads spent 1.00 s"),
            "{}",
            l.message
        );
        assert!(l.message.contains("20 virtual threads"), "{}", l.message);
    }

    /// Pool threads that worked, then sat idle until the pool shut down (woken by the
    /// busy thread's shutdown): idle, not starved by a producer (Clojure's send-off
    /// pool read "21 consumer threads waited for work ... `main` is the bottleneck").
    #[test]
    fn pool_threads_idle_until_shutdown_are_not_starved_consumers() {
        const MS: u64 = 1_000_000;
        let mut tb = TB::new();
        condition_wait_site(
            &mut tb,
            &[
                "java.util.concurrent.SynchronousQueue$TransferStack.transfer:401",
                "demo.Pool.getTask:20",
            ],
        );
        for t in [1u32, 2, 3] {
            tb.start(t, 0, C_THREAD, (0, 0));
        }
        // Each consumer: 5 short waits for an item among 200 ms of work, then idle
        // from 200 ms to 1 s, until the shutdown's unpark by thread 1.
        for c in [2u32, 3] {
            for k in 0..5u64 {
                let s = k * 40 * MS;
                tb.wait(c, weft_trace::wait_kind::PARK, 77, 11, s, s + 2 * MS);
                unpark(&mut tb, 1, s + 2 * MS, c);
            }
            tb.wait(c, weft_trace::wait_kind::PARK, 77, 11, 200 * MS, 1_000 * MS);
            unpark(&mut tb, 1, 1_000 * MS, c);
        }
        end_producer_run(&mut tb, 990 * MS);
        let f = findings(&tb);
        assert!(
            !f.iter().any(|f| f.kind == FindingKind::ProducerBottleneck),
            "{f:#?}"
        );
    }

    /// 200 platform threads of 40 µs each in a 0.5 s run: a thread per tiny job; 50 such
    /// threads, or threads of 5 ms, are none.
    #[test]
    fn a_platform_thread_per_tiny_job_is_thread_churn() {
        const US: u64 = 1_000;
        let churn = |n: u32, life: u64| {
            let mut tb = TB::new();
            tb.site(5, "demo.Main.spawn:9");
            tb.global(Record::ClassDef {
                id: C_MYTHREAD,
                name: "demo.Job".into(),
            });
            for t in 1..=n {
                let s = t as u64 * 2_000 * US;
                tb.created(MAIN, s, (C_MYTHREAD, 1000 + t), 5);
                tb.start(t, s, C_MYTHREAD, (0, 0));
                tb.begin(t, s, P_THREAD_RUN, C_MYTHREAD, 1000 + t);
                tb.end(t, s + life, P_THREAD_RUN, 1000 + t);
                tb.thread_end(t, s + life);
            }
            tb.global(Record::End { ts: 500_000 * US });
            findings(&tb).into_iter().find(|f| {
                f.kind == FindingKind::FineGrained && f.message.contains("platform threads")
            })
        };
        let f = churn(200, 40 * US).expect("a thread churn finding");
        assert_eq!(f.cost_ns, 200 * THREAD_START_OVERHEAD_NS);
        assert!(f.message.contains("200 platform threads"), "{}", f.message);
        assert!(churn(50, 40 * US).is_none());
        assert!(churn(200, 5_000 * US).is_none());
    }

    /// A task still running when the JVM ended (its thread alive, or ended with the
    /// JVM by a `System.exit` in it) ran to the end: not unbalanced. One whose thread
    /// ended long before, without its end record, is.
    #[test]
    fn a_task_running_when_the_jvm_ended_is_not_unbalanced() {
        const MS: u64 = 1_000_000;
        let unbalanced = |thread_end: Option<u64>| {
            let mut tb = TB::new();
            tb.start(1, 0, C_THREAD, (0, 0));
            tb.begin(1, 10 * MS, P_WORK_RUN, C_WORK, 1);
            if let Some(t) = thread_end {
                tb.thread_end(1, t);
            }
            tb.global(Record::End { ts: 1_000 * MS });
            findings(&tb)
                .iter()
                .any(|f| f.kind == FindingKind::Unbalanced)
        };
        assert!(!unbalanced(None), "alive at the end");
        assert!(!unbalanced(Some(999 * MS)), "ended with the JVM");
        assert!(
            unbalanced(Some(500 * MS)),
            "ended long before, its end lost"
        );
    }

    /// A pinned monitor wait in the application's code gets "replace synchronized";
    /// one in the JDK's own code (a thread-per-task executor's map) says it is the JDK's.
    #[test]
    fn pinning_inside_the_jdk_is_not_the_applications_to_rewrite() {
        let pinned = |site: &str| crate::vthreads::PinnedSite {
            site: site.into(),
            count: 3,
            blocked_ns: 20_000_000,
            max_ns: 10_000_000,
            carriers_saturated_ns: 0,
            how: "monitor",
            synchronized_at: None,
        };
        // A park in a helper under a synchronized method of the application: the fix
        // is where the monitor was entered; under the JDK's synchronized: the JDK's.
        let under = |at: &str| crate::vthreads::PinnedSite {
            site: "demo.Cache.load:80".into(),
            how: "park",
            synchronized_at: Some(at.into()),
            ..pinned("")
        };
        let vt = crate::vthreads::VirtualThreadAnalysis {
            synchronized_pins: Some(true),
            pinned: vec![
                pinned("demo.Cache.get:42"),
                pinned("java.util.concurrent.ConcurrentHashMap.replaceNode (no line)"),
                under("demo.Cache.get:41"),
                under("java.io.PrintStream.println (no line)"),
            ],
            ..Default::default()
        };
        let f = virtual_thread_findings(&vt);
        assert!(
            f[0].message.contains("replace synchronized"),
            "{}",
            f[0].message
        );
        assert!(
            f[1].message.contains("the JDK's own code"),
            "{}",
            f[1].message
        );
        assert!(
            f[2].message.contains(
                "pinned at demo.Cache.load:80 (inside synchronized at demo.Cache.get:41)"
            ) && f[2]
                .message
                .contains("replace synchronized with a ReentrantLock at demo.Cache.get:41"),
            "{}",
            f[2].message
        );
        assert!(
            f[3].message.contains("the JDK's own code"),
            "{}",
            f[3].message
        );
    }

    /// Three parties at a `CyclicBarrier`, party 3 the slowest: a barrier finding
    /// naming the most and the least waiting thread.
    #[test]
    fn waits_at_a_barrier_are_its_imbalance() {
        const MS: u64 = 1_000_000;
        let mut tb = TB::new();
        condition_wait_site(
            &mut tb,
            &[
                "java.util.concurrent.CyclicBarrier.dowait:236",
                "java.util.concurrent.CyclicBarrier.await:364",
                "demo.Solver.step:17",
            ],
        );
        for t in [1u32, 2, 3] {
            tb.start(t, 0, C_THREAD, (0, 0));
        }
        // 100 rounds of 3 ms: parties 1 and 2 work 1 and 2 ms then wait, party 3 works 3.
        for r in 0..100u64 {
            let s = r * 3 * MS;
            for (t, work) in [(1u32, MS), (2, 2 * MS)] {
                tb.wait(t, weft_trace::wait_kind::PARK, 77, 11, s + work, s + 3 * MS);
            }
        }
        for t in [1u32, 2, 3] {
            tb.thread_end(t, 300 * MS);
        }
        tb.global(Record::End { ts: 300 * MS + 1 });
        let f = findings(&tb);
        let b = f
            .iter()
            .find(|f| f.kind == FindingKind::BarrierImbalance)
            .expect("a barrier finding");
        assert_eq!(b.cost_ns, 300 * MS);
        assert_eq!(b.site.as_deref(), Some("demo.Solver.step:17"));
        assert!(
            b.message.contains("`CyclicBarrier.await`")
                && b.message.contains("(`worker-1` 200 ms, `worker-2` 100 ms)"),
            "{}",
            b.message
        );
        assert!(!f.iter().any(|f| f.kind == FindingKind::WaitContention));
    }

    /// 2,000 fork-join tasks of 100 ns: too fine, and the overhead estimated at
    /// 1 µs a task (2 ms) is bounded by their 0.2 ms of self time.
    #[test]
    fn fork_join_overhead_is_bounded_by_the_tasks_self_time() {
        let mut tb = TB::new();
        for k in 0..2_000u64 {
            let ts = 1_000 + k * 1_000;
            tb.recs.push((1, TB::fj_push(k + 1, ts, true, 7)));
            tb.recs.push((1, TB::fj_begin(k + 1, ts + 10)));
            tb.recs.push((1, Record::FjRunEnd { ts: ts + 110 }));
        }
        tb.global(Record::End { ts: 3_000_000 });
        let f = findings(&tb);
        let fine = f
            .iter()
            .find(|f| f.kind == FindingKind::ForkJoinFineGrained)
            .unwrap_or_else(|| panic!("no fork-join finding: {f:#?}"));
        assert_eq!(fine.cost_ns, 200_000);
        assert!(
            fine.message.contains("(bounded by their self time)"),
            "{}",
            fine.message
        );
    }

    /// The same low-parallelism computation with its root blocked 30 ms on a lock
    /// meanwhile (over a quarter of the 80 ms left idle): the lock is the cause said.
    #[test]
    fn low_parallelism_from_a_lock_names_the_lock() {
        const MS: u64 = 1_000_000;
        let mut tb = TB::new();
        let worker = Record::FjWorker {
            pool: 7,
            class_id: C_WORK,
            parallelism: 2,
        };
        tb.recs.push((2, worker.clone()));
        tb.recs.push((3, worker));
        tb.site_frames(9, &["demo.Work.add:12"]);
        tb.global(Record::LockDef {
            id: 1,
            kind: weft_trace::lock_kind::MONITOR,
            class: "demo.Totals".into(),
            ident: 0x1234,
            fair: false,
        });
        let recs = [
            (1, TB::fj_push(1, 0, true, 7)),
            (2, TB::fj_begin(1, 0)),
            (2, TB::fj_push(2, MS, false, 7)),
            (3, TB::fj_begin(2, 2 * MS)),
            (3, Record::FjRunEnd { ts: 22 * MS }),
            (
                2,
                Record::LockBlock {
                    ts: 30 * MS,
                    lock: 1,
                    flags: 0,
                    owner: 0,
                    site: 9,
                },
            ),
            (
                2,
                Record::LockAcquired {
                    ts: 60 * MS,
                    lock: 1,
                    parked: true,
                },
            ),
            (
                2,
                Record::FjJoinBegin {
                    ts: 99 * MS,
                    usage: 2,
                },
            ),
            (2, Record::FjJoinEnd { ts: 99 * MS }),
            (2, Record::FjRunEnd { ts: 100 * MS }),
        ];
        for t in 1..=3 {
            tb.start(t, 0, C_THREAD, (0, 0));
        }
        tb.recs.extend(recs);
        for t in 1..=3 {
            tb.thread_end(t, 100 * MS);
        }
        tb.global(Record::End { ts: 100 * MS + 1 });
        let f = findings(&tb);
        let low = f
            .iter()
            .find(|f| f.kind == FindingKind::ForkJoinLowParallelism)
            .unwrap_or_else(|| panic!("no low-parallelism finding: {f:#?}"));
        assert!(
            low.message
                .contains("blocked 30.0 ms on `Totals` at demo.Work.add:12"),
            "{}",
            low.message
        );
        assert!(!low.message.contains("Fork earlier"), "{}", low.message);
        assert_eq!(
            low.field("lock_blocked_ns"),
            Some(&FieldValue::Int(30 * MS))
        );
    }

    /// A fork-join computation of parallelism 1.2 (a 100 ms root, a 20 ms child stolen
    /// beside it) is a low-parallelism finding on a pool of 2 workers, and none on a
    /// pool of 1 (where 1.2 is more than the pool can use).
    #[test]
    fn low_parallelism_is_measured_against_the_pool() {
        const MS: u64 = 1_000_000;
        // `runs` computations one after another, 100 ms apart; the low-parallelism
        // findings.
        // The root run by the thread that submitted it (thread 1, outside the pool:
        // `invoke` from `main`, which helps): it counts beside the pool's one worker.
        let low_on = |parallelism: u32, runs: u64, root_thread: u32| {
            let mut tb = TB::new();
            let worker = Record::FjWorker {
                pool: 7,
                class_id: C_WORK,
                parallelism,
            };
            let push = |usage, ts, external| TB::fj_push(usage, ts, external, 7);
            let begin = TB::fj_begin;
            tb.recs.push((2, worker.clone()));
            tb.recs.push((3, worker));
            for k in 0..runs {
                let (t, u) = (k * 100 * MS, 2 * k);
                let r = root_thread;
                let recs = [
                    (1, push(u + 1, t, true)),
                    (r, begin(u + 1, t)),
                    (r, push(u + 2, t + MS, false)),
                    (3, begin(u + 2, t + 2 * MS)),
                    (3, Record::FjRunEnd { ts: t + 22 * MS }),
                    (
                        r,
                        Record::FjJoinBegin {
                            ts: t + 99 * MS,
                            usage: u + 2,
                        },
                    ),
                    (r, Record::FjJoinEnd { ts: t + 99 * MS }),
                    (r, Record::FjRunEnd { ts: t + 100 * MS }),
                ];
                tb.recs.extend(recs);
            }
            tb.global(Record::End {
                ts: runs * 100 * MS + 1,
            });
            findings(&tb)
                .into_iter()
                .filter(|f| f.kind == FindingKind::ForkJoinLowParallelism)
                .collect::<Vec<_>>()
        };
        let low = |parallelism: u32, runs: u64| low_on(parallelism, runs, 2);
        assert_eq!(low(2, 1).len(), 1);
        assert!(low(1, 1).is_empty());
        assert_eq!(low_on(1, 1, 1).len(), 1);
        // The same computation three times: one finding for the three.
        let three = low(2, 3);
        assert_eq!(three.len(), 1, "{three:#?}");
        assert_eq!(three[0].field("computations"), Some(&FieldValue::Int(3)));
        assert!(
            three[0]
                .message
                .starts_with("3 computations rooted at `Work`"),
            "{}",
            three[0].message
        );
    }

    #[test]
    fn a_small_wait_in_a_long_run_is_no_finding() {
        // 4 × 60 ms of waiting: a finding in a 1.5 s run, not in a 20 s one (< 2%).
        let waiting = |tail| {
            waiting_tasks_then(4, 80, 60, tail)
                .iter()
                .any(|f| f.kind == FindingKind::Waiting)
        };
        assert!(waiting(1_000));
        assert!(!waiting(20_000));
    }

    /// A JDK task class waiting in the JDK's code (the shutdown-hook runner joining
    /// a library's hook, created by that library): not the application's to change.
    #[test]
    fn a_jdk_task_waiting_in_the_jdk_is_no_finding() {
        let submit = [
            "org.h2.engine.OnExitDatabaseCloser.register:41",
            "demo.Main.main:1",
        ];
        let jdk_wait = [
            "java.lang.Thread.join:1313",
            "java.lang.ApplicationShutdownHooks.runHooks:107",
        ];
        let waiting = |class: &str| {
            waiting_class_in(class, &submit, (4, 400, 380, 100), &jdk_wait)
                .iter()
                .any(|f| f.kind == FindingKind::Waiting)
        };
        assert!(!waiting("java.lang.ApplicationShutdownHooks$1"));
        // The application's own task waiting in a JDK call is still a finding.
        assert!(waiting("demo.Work"));
    }

    #[test]
    fn waiting_for_work_is_not_a_waiting_task() {
        // The same waits inside a queue's take: a consumer waiting for items.
        let f = waiting_tasks(
            3,
            100,
            80,
            &[
                "java.util.concurrent.LinkedBlockingQueue.take:435",
                "demo.Work.run:12",
            ],
        );
        assert!(f.iter().all(|f| f.kind != FindingKind::Waiting), "{f:?}");
        // One task that waits through most of the run: a service loop left idle.
        let f = waiting_tasks(1, 2000, 1980, GATE_WAIT);
        assert!(f.iter().all(|f| f.kind != FindingKind::Waiting), "{f:?}");
        // The same waits in tasks much shorter than the run are a finding.
        let f = waiting_tasks(4, 400, 380, GATE_WAIT);
        assert!(f.iter().any(|f| f.kind == FindingKind::Waiting), "{f:?}");
        // ...unless the JDK created them (its shutdown-hook runner joining the hooks).
        let f = waiting_tasks_from(
            &["java.lang.ApplicationShutdownHooks.<clinit>:42"],
            4,
            400,
            380,
            GATE_WAIT,
        );
        assert!(f.iter().all(|f| f.kind != FindingKind::Waiting), "{f:?}");
    }

    /// Two threads; thread 2 blocks on lock 1 at `site` for 300 ms of 1 s.
    fn lock_finding(frames: &[&str]) -> Finding {
        lock_findings_of(
            frames,
            weft_trace::lock_kind::MONITOR,
            "java.util.HashMap",
            11,
        )
        .into_iter()
        .next()
        .expect("a lock finding")
    }

    /// The lock findings of [`lock_finding`]'s program with this lock kind, class
    /// and owner (java id; 0: none).
    /// HotSpot's class-initialization lock (the agent's `(class initialization)`
    /// LockDef, an `int[0]`): said as a static initializer others waited for, not as
    /// "`int[]` ... shorten the critical section".
    #[test]
    fn a_class_initialization_lock_is_said_so() {
        let f = lock_findings_of(
            &["demo.Render.run:12"],
            weft_trace::lock_kind::MONITOR,
            weft_trace::CLASS_INIT_LOCK,
            12,
        );
        let l = f
            .iter()
            .find(|f| f.kind == FindingKind::LockContention)
            .unwrap_or_else(|| panic!("no lock finding: {f:#?}"));
        assert!(
            l.message
                .contains("blocked on 1 class initialization lock (monitor) at demo.Render.run:12"),
            "{}",
            l.message
        );
        assert!(l.message.contains("static initializer"), "{}", l.message);
        assert!(!l.message.contains("critical section"), "{}", l.message);
    }

    fn lock_findings_of(frames: &[&str], kind: u8, class: &str, owner: u64) -> Vec<Finding> {
        lock_findings_in(None, frames, kind, class, owner)
    }

    /// [`lock_findings_of`] in a JVM started with this command line.
    fn lock_findings_in(
        command_line: Option<&str>,
        frames: &[&str],
        kind: u8,
        class: &str,
        owner: u64,
    ) -> Vec<Finding> {
        const MS: u64 = 1_000_000;
        let mut tb = TB::new();
        if let Some(c) = command_line {
            tb.header.set(weft_trace::header_keys::COMMAND_LINE, c);
        }
        tb.site_frames(9, frames);
        tb.recs.push((
            weft_trace::GLOBAL_THREAD,
            Record::LockDef {
                id: 1,
                kind,
                class: class.into(),
                ident: 0x1234,
                fair: false,
            },
        ));
        tb.start(1, 0, C_THREAD, (0, 0));
        tb.start(2, 0, C_THREAD, (0, 0));
        for k in 0..3u64 {
            tb.recs.push((
                2,
                Record::LockBlock {
                    ts: (100 + 200 * k) * MS,
                    lock: 1,
                    flags: 0,
                    owner,
                    site: 9,
                },
            ));
            tb.recs.push((
                2,
                Record::LockAcquired {
                    ts: (200 + 200 * k) * MS,
                    lock: 1,
                    parked: true,
                },
            ));
        }
        tb.thread_end(1, 1000 * MS).thread_end(2, 1000 * MS);
        tb.global(Record::End { ts: 1001 * MS });
        findings(&tb)
            .into_iter()
            .filter(|f| f.kind == FindingKind::LockContention)
            .collect()
    }

    #[test]
    fn a_latch_or_an_aqs_nobody_held_is_no_lock_contention() {
        let at = ["org.apache.spark.util.ThreadUtils$.awaitReady:417"];
        let aqs = weft_trace::lock_kind::OTHER_AQS;
        // Scala's future latch under Await.ready: no owner when threads blocked.
        assert!(lock_findings_of(&at, aqs, "scala.concurrent.impl.CompletionLatch", 0).is_empty());
        assert!(lock_findings_of(&at, aqs, "demo.MyLatch", 11).is_empty());
        assert!(lock_findings_of(&at, aqs, "demo.Signal", 0).is_empty());
        // A hand-made AQS lock held by a thread is contention.
        assert_eq!(lock_findings_of(&at, aqs, "demo.MyLock$Sync", 11).len(), 1);
    }

    #[test]
    fn a_concurrent_hash_map_bin_gets_the_maps_advice() {
        let monitor = weft_trace::lock_kind::MONITOR;
        let f = lock_findings_of(
            &["demo.Cache.get:12", "demo.Main.main:3"],
            monitor,
            "java.util.concurrent.ConcurrentHashMap$ReservationNode",
            11,
        );
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message
                .contains("`ConcurrentHashMap` bin locks: `computeIfAbsent`"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn a_shared_string_buffer_gets_a_builder_per_thread() {
        let f = lock_findings_of(
            &["demo.Log.add:7", "demo.Main.main:3"],
            weft_trace::lock_kind::MONITOR,
            "java.lang.StringBuffer",
            11,
        );
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("its own `StringBuilder`"),
            "{}",
            f[0].message
        );
    }

    /// Threads printing to one `PrintStream` (`System.out.println` in every thread)
    /// or logging through one `java.util.logging` handler: advice about output, not
    /// "shorten the critical section".
    #[test]
    fn shared_output_gets_output_advice() {
        let f = lock_findings_of(
            &["demo.Worker.run:12", "demo.Main.main:3"],
            weft_trace::lock_kind::MONITOR,
            "java.io.PrintStream",
            11,
        );
        assert_eq!(f.len(), 1);
        let m = &f[0].message;
        assert!(m.contains("Threads take turns writing output"), "{m}");
        assert!(
            m.contains("Print less from the threads at demo.Worker.run:12"),
            "{m}"
        );
        assert!(!m.contains("Shorten the critical section"), "{m}");
        let f = lock_findings_of(
            &[
                "java.util.logging.StreamHandler.publish:194",
                "java.util.logging.ConsoleHandler.publish:95",
            ],
            weft_trace::lock_kind::MONITOR,
            "java.util.logging.ConsoleHandler",
            11,
        );
        assert_eq!(f.len(), 1);
        let m = &f[0].message;
        assert!(
            m.contains("publishes each log record under its lock"),
            "{m}"
        );
        assert!(!m.contains("Shorten the critical section"), "{m}");
    }

    /// A class's monitor (`static synchronized`) is said to be one.
    #[test]
    fn a_class_monitor_is_named_as_such() {
        let f = lock_findings_of(
            &["demo.Counter.inc:4", "demo.Main.main:3"],
            weft_trace::lock_kind::MONITOR,
            "java.lang.Class",
            11,
        );
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("its `static synchronized` methods"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn a_servers_own_lock_is_not_the_applications_to_split() {
        let app = lock_finding(&["demo.Cache.get:12", "demo.Main.main:3"]);
        assert!(app.message.contains("ConcurrentHashMap"), "{}", app.message);
        assert_eq!(app.field("framework"), None);
        let tomcat = lock_finding(&[
            "org.apache.catalina.core.StandardContext.findFilterConfig:4125",
            "org.apache.catalina.core.ApplicationFilterFactory.createFilterChain:113",
        ]);
        assert!(
            !tomcat.message.contains("ConcurrentHashMap"),
            "{}",
            tomcat.message
        );
        assert!(
            tomcat
                .message
                .contains("The lock is inside Tomcat (no frame of its acquisition"),
            "{}",
            tomcat.message
        );
        assert_eq!(
            tomcat.field("framework"),
            Some(&FieldValue::Text("Tomcat".into()))
        );
        assert_eq!(tomcat.cost_ns, app.cost_ns);
        let cache = lock_finding(&["org.apache.tomcat.util.buf.StringCache.toString:292"]);
        assert!(
            cache
                .message
                .contains("tomcat.util.buf.StringCache.byte.enabled"),
            "{}",
            cache.message
        );
    }

    /// Any library outside the application's package root (from its main class) is
    /// treated like a known server: its lock is its own, and the finding says where
    /// the application calls in, or that no recorded frame shows it.
    #[test]
    fn a_librarys_lock_says_whose_it_is_and_where_the_application_calls_in() {
        let cmd = "java -Xmx1g -cp app.jar:lib.jar com.acme.shop.Main --port 80";
        let hikari = "com.zaxxer.hikari.pool.HikariPool.getConnection:160";
        let monitor = weft_trace::lock_kind::MONITOR;
        let lock = |cmd: Option<&str>, frames: &[&str]| {
            lock_findings_in(cmd, frames, monitor, "java.util.HashMap", 11)
                .into_iter()
                .next()
                .expect("a lock finding")
        };
        let called = lock(
            Some(cmd),
            &[
                hikari,
                "com.zaxxer.hikari.HikariDataSource.getConnection:128",
                "com.acme.shop.Orders.save:44",
                "com.acme.shop.Main.main:3",
            ],
        );
        let m = &called.message;
        assert!(
            m.contains("inside the library `com.zaxxer.hikari`, which the application calls at com.acme.shop.Orders.save:44"),
            "{m}"
        );
        assert!(!m.contains("ConcurrentHashMap"), "{m}");
        assert_eq!(
            called.field("application_frame"),
            Some(&FieldValue::Text("com.acme.shop.Orders.save:44".into()))
        );
        assert_eq!(called.site.as_deref(), Some(hikari));
        // Six library frames: the application may call in from deeper; said so.
        let deep: Vec<String> = (0..6)
            .map(|k| format!("com.zaxxer.hikari.pool.P.f{k}:1"))
            .collect();
        let deep: Vec<&str> = deep.iter().map(String::as_str).collect();
        let m = lock(Some(cmd), &deep).message;
        assert!(m.contains("none of the 6 innermost frames recorded"), "{m}");
        // A complete stack of the library's own: its own lock.
        let m = lock(Some(cmd), &[hikari, "java.lang.Thread.run:840"]).message;
        assert!(
            m.contains("no frame of its acquisition is the application's"),
            "{m}"
        );
        // Main unknown (or a server's): every non-JDK frame is the application's.
        let m = lock(None, &[hikari, "java.lang.Thread.run:840"]).message;
        assert!(m.contains("ConcurrentHashMap"), "{m}");
        let tomcat = "java -cp b.jar org.apache.catalina.startup.Bootstrap start";
        let m = lock(
            Some(tomcat),
            &["demo.Cache.get:12", "java.lang.Thread.run:840"],
        )
        .message;
        assert!(m.contains("ConcurrentHashMap"), "{m}");
    }

    /// Two threads each blocked to the end on a lock the other holds: one deadlock
    /// finding naming both, and no lock-contention advice for those locks, even when
    /// another instance of one class (grouped with it) was briefly contended before.
    #[test]
    fn two_threads_blocked_on_each_others_locks_are_a_deadlock() {
        const MS: u64 = 1_000_000;
        let mut tb = TB::new();
        for (id, class) in [(1, "demo.A"), (2, "demo.B"), (3, "demo.A")] {
            tb.recs.push((
                weft_trace::GLOBAL_THREAD,
                Record::LockDef {
                    id,
                    kind: weft_trace::lock_kind::MONITOR,
                    class: class.into(),
                    ident: 0x100 + id,
                    fair: false,
                },
            ));
        }
        for t in [1, 2] {
            tb.start(t, 0, C_THREAD, (0, 0));
        }
        // At start-up worker-1 waits 1 ms for another demo.A.
        tb.recs.push((
            1,
            Record::LockBlock {
                ts: 10 * MS,
                lock: 3,
                flags: 0,
                owner: 12,
                site: 0,
            },
        ));
        tb.recs.push((
            1,
            Record::LockAcquired {
                ts: 11 * MS,
                lock: 3,
                parked: true,
            },
        ));
        // worker-1 (java id 11) waits for demo.A, held by worker-2 (java id 12); and back.
        for (t, lock, owner) in [(1, 1, 12), (2, 2, 11)] {
            tb.recs.push((
                t,
                Record::LockBlock {
                    ts: 100 * MS,
                    lock,
                    flags: 0,
                    owner,
                    site: 0,
                },
            ));
        }
        tb.thread_end(1, 1000 * MS).thread_end(2, 1000 * MS);
        tb.global(Record::End { ts: 1001 * MS });
        let f = findings(&tb);
        let d: Vec<_> = f
            .iter()
            .filter(|f| f.kind == FindingKind::Deadlock)
            .collect();
        assert_eq!(d.len(), 1, "{f:?}");
        let m = &d[0].message;
        assert!(
            m.contains("`worker-1` and `worker-2` wait for each other"),
            "{m}"
        );
        assert!(m.contains("demo.A@101") && m.contains("demo.B@102"), "{m}");
        assert_eq!(d[0].cost_ns, 2 * 900 * MS);
        assert!(
            !f.iter().any(|f| f.kind == FindingKind::LockContention),
            "{f:?}"
        );
    }

    /// Each blocked thread blocked once (a lazy initialisation): said as a one-off,
    /// with the work to move, not "split the lock".
    #[test]
    fn a_lock_each_thread_blocked_on_once_is_a_one_off() {
        const MS: u64 = 1_000_000;
        let mut tb = TB::new();
        tb.site_frames(9, &["demo.Scene.build:12", "demo.Render.run:3"]);
        tb.recs.push((
            weft_trace::GLOBAL_THREAD,
            Record::LockDef {
                id: 1,
                kind: weft_trace::lock_kind::MONITOR,
                class: "demo.Scene".into(),
                ident: 0x1234,
                fair: false,
            },
        ));
        for t in [1, 2] {
            tb.start(t, 0, C_THREAD, (0, 0));
        }
        tb.recs.push((
            2,
            Record::LockBlock {
                ts: 10 * MS,
                lock: 1,
                flags: 0,
                owner: 11,
                site: 9,
            },
        ));
        tb.recs.push((
            2,
            Record::LockAcquired {
                ts: 310 * MS,
                lock: 1,
                parked: true,
            },
        ));
        tb.thread_end(1, 1000 * MS).thread_end(2, 1000 * MS);
        tb.global(Record::End { ts: 1001 * MS });
        let f = findings(&tb);
        let f = f
            .iter()
            .find(|f| f.kind == FindingKind::LockContention)
            .expect("a lock finding");
        assert!(
            f.message
                .contains("1 thread blocked there, once, for 300 ms"),
            "{}",
            f.message
        );
        assert!(f.message.contains("A one-off wait"), "{}", f.message);
        assert!(!f.message.contains("split the lock"), "{}", f.message);
    }

    #[test]
    fn no_granularity_advice_on_a_servers_own_tasks() {
        // Tomcat's SocketProcessor: one task per socket event, submitted by the
        // poller thread with no application frame on the stack (issue 16).
        let mut tb = TB::new();
        let end = small_tasks(&mut tb, 0, 2000, 30_000, 10_000);
        tb.site_frames(
            5,
            &[
                "org.apache.tomcat.util.net.AbstractEndpoint.processSocket:1862",
                "org.apache.tomcat.util.net.NioEndpoint$Poller.run:1107",
                "java.lang.Thread.run:840",
            ],
        );
        tb.thread_end(1, end + 1)
            .global(Record::End { ts: end + 2 });
        assert!(findings(&tb).is_empty());
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
            // 10,000 tasks of 10 µs spread over [1 s, 2 s): 100 µs apart.
            tb.start(1, 0, C_THREAD, (C_WORKER, 1));
            for i in 0..10_000u32 {
                let b = 1_000_000_000 + i as u64 * 100_000;
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
        coarse_sched(util, n, None)
    }

    /// `sched`: each worker thread's (on-CPU, run-queue) ns over the run, from schedstat.
    fn coarse_sched(util: f64, n: u32, sched: Option<(u64, u64)>) -> Vec<Finding> {
        coarse_tasks(util, n, sched, Inside::Nothing)
    }

    /// [`coarse_sched`]; `consumer`: each task also parks 1 ms in a queue's `take`.
    /// What each of [`coarse_tasks`]' tasks does besides running.
    #[derive(Clone, Copy, PartialEq)]
    enum Inside {
        Nothing,
        /// Takes its input from a queue (1 ms).
        QueueWait,
        /// Blocks on a monitor for 40% of its time.
        LockBlock,
    }

    fn coarse_tasks(util: f64, n: u32, sched: Option<(u64, u64)>, inside: Inside) -> Vec<Finding> {
        let mut tb = TB::new();
        tb.global(Record::LockDef {
            id: 9,
            kind: weft_trace::lock_kind::MONITOR,
            class: "java.util.ArrayList".into(),
            ident: 9,
            fair: false,
        });
        tb.site_frames(
            4,
            &[
                "java.util.concurrent.LinkedBlockingQueue.take:435",
                "demo.Outer.run:5",
            ],
        );
        if let Some((on_cpu_ns, runq_ns)) = sched {
            for t in 1..=4 {
                for (ts, on, rq) in [(0, 0, 0), (4_000_000_000, on_cpu_ns, runq_ns)] {
                    tb.global(Record::ThreadSched {
                        ts,
                        thread: t,
                        on_cpu_ns: on,
                        runq_ns: rq,
                        timeslices: 1,
                    });
                }
            }
        }
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
            let e = b + 1_000_000_000 / (n as u64 / 4).max(1) - 20;
            tb.begin(t, b, P_RUN, C_OUTER, i + 1);
            if inside == Inside::LockBlock {
                let (bs, be) = (b + 1_000, b + 1_000 + (e - b) * 2 / 5);
                tb.blocked(t, 9, 3, bs, be);
            }
            if inside == Inside::QueueWait {
                tb.wait(
                    t,
                    weft_trace::wait_kind::PARK,
                    0,
                    4,
                    b + 1_000,
                    b + 1_001_000,
                );
            }
            tb.end(t, e, P_RUN, i + 1);
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

    /// The same few long tasks blocked on one monitor 40% of their time: the idle
    /// CPUs are the lock's (its own finding), not the tasks' size.
    #[test]
    fn not_coarse_when_the_tasks_block_on_a_lock() {
        let f = coarse_tasks(0.25, 2, None, Inside::LockBlock);
        assert!(!kinds(&f).contains(&FindingKind::CoarseGrained), "{f:#?}");
        assert!(kinds(&coarse_tasks(0.25, 2, None, Inside::Nothing))
            .contains(&FindingKind::CoarseGrained));
    }

    /// Few long tasks on a machine whose CPUs other processes hold: they waited in
    /// the run queue longer than they ran, so no CPU was idle for smaller tasks.
    #[test]
    fn not_coarse_when_the_tasks_waited_for_a_cpu() {
        let f = coarse_sched(0.25, 2, Some((1_000_000_000, 2_800_000_000)));
        assert!(!kinds(&f).contains(&FindingKind::CoarseGrained), "{f:#?}");
        let f = coarse_sched(0.25, 2, Some((3_600_000_000, 200_000_000)));
        assert_eq!(kinds(&f), vec![FindingKind::CoarseGrained], "{f:#?}");
    }

    /// The same long tasks taking their input from a queue: consumers, as long as
    /// their producer keeps them busy; splitting them changes nothing.
    #[test]
    fn not_coarse_when_the_tasks_consume_a_queue() {
        let f = coarse_tasks(0.25, 2, None, Inside::QueueWait);
        assert!(!kinds(&f).contains(&FindingKind::CoarseGrained), "{f:#?}");
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
        // 40 tasks of 100 ms on 8 CPUs: more than 2 per CPU (queued on 4 threads while 6
        // CPUs idle: a pool smaller than the machine, not coarse tasks)
        let f = coarse(0.25, 40);
        assert!(
            !f.is_empty() && f.iter().all(|f| f.kind == FindingKind::PoolTooSmall),
            "{f:#?}"
        );
        assert!(
            f[0].fields
                .contains(&("suggested_threads", FieldValue::Int(8))),
            "{f:#?}"
        );
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

#[cfg(test)]
mod blocked_tasks_tests {
    use super::*;
    use crate::testutil::*;
    use weft_trace::{frame_kind, sample_mode, thread_state, Record, GLOBAL_THREAD};

    /// A pool thread (1) runs a submitted demo.Work from 0 to 1 s; wall samples every
    /// 50 ms of it in state `state` in Thread.sleep, those in [600, 800) ms inside a
    /// recorded wait. Returns the share of a serial phase over [0, 1 s) it reports.
    fn blocked_share(state: u8, sections: &[(u64, u64)]) -> Option<(f64, String)> {
        const MS: u64 = 1_000_000;
        let mut tb = TB::new();
        tb.header
            .set("sampling.wall_period_ns", (50 * MS).to_string());
        tb.submit(MAIN, 0, (C_WORK, 7), 0);
        tb.start(1, 0, C_THREAD, (C_WORKER, 2001));
        tb.begin(1, MS, P_WORK_RUN, C_WORK, 7);
        tb.wait(
            1,
            weft_trace::wait_kind::OBJECT_WAIT,
            C_WORK,
            0,
            600 * MS,
            800 * MS,
        );
        tb.end(1, 999 * MS, P_WORK_RUN, 7);
        tb.thread_end(1, 1000 * MS);
        tb.recs.push((
            GLOBAL_THREAD,
            Record::FrameDef {
                id: 1,
                kind: frame_kind::JAVA,
                line: 0,
                class: "java.lang.Thread".into(),
                method: "sleep".into(),
            },
        ));
        tb.recs.push((
            GLOBAL_THREAD,
            Record::StackDef {
                id: 1,
                frames: vec![1],
            },
        ));
        for k in 1..20u64 {
            tb.recs.push((
                GLOBAL_THREAD,
                Record::StackSample {
                    ts: k * 50 * MS,
                    thread: 1,
                    stack: 1,
                    mode_state: sample_mode::WALL | (state << 4),
                },
            ));
        }
        tb.global(Record::End { ts: 1000 * MS });
        let a = crate::analyze(&tb.trace());
        let i = Inputs {
            model: &a.model,
            tasks: &a.tasks,
            cpu: &a.cpu,
            locks: &a.locks,
            lock_groups: &a.lock_groups,
            forkjoin: &a.forkjoin,
            activity: &a.activity,
            virtual_threads: &a.virtual_threads,
            speedups: &a.speedups,
        };
        blocked_tasks_during(&i, sections, (0, 1000 * MS), 1000 * MS)
    }

    #[test]
    fn tasks_off_the_cpu_outside_recorded_waits_are_counted_by_tick() {
        // 19 ticks, 4 of them (600-750 ms) in the recorded wait: 15 × 50 ms of 1 s.
        let (share, frame) = blocked_share(thread_state::SLEEPING, &[]).unwrap();
        assert!((share - 0.75).abs() < 1e-9, "{share}");
        assert_eq!(frame, "`java.lang.Thread.sleep`");
        // Running, or inside parallel sections: none.
        assert_eq!(blocked_share(thread_state::RUNNING, &[]), None);
        assert_eq!(blocked_share(thread_state::IO, &[(0, 700_000_000)]), None);
    }

    /// The JDK call inside which a contended monitor is entered: the outermost JDK
    /// frame before the application's, only when the innermost is the JDK's.
    #[test]
    fn the_jdk_call_holding_a_monitor_is_the_last_jdk_frame_before_the_application() {
        let frames = |v: &[&str]| v.iter().map(|f| f.to_string()).collect::<Vec<_>>();
        let stack = frames(&[
            "sun.security.provider.NativePRNG$RandomIO.getMixRandom:406",
            "sun.security.provider.NativePRNG.engineNextBytes:223",
            "java.security.SecureRandom.nextBytes:758",
            "App.lambda$main$0:15",
        ]);
        assert_eq!(
            jdk_call_holding(&stack),
            Some(("java.security.SecureRandom", "nextBytes"))
        );
        let no_line = frames(&["java.util.Vector.add (no line)", "App.fill:3"]);
        assert_eq!(
            jdk_call_holding(&no_line),
            Some(("java.util.Vector", "add"))
        );
        // The application's own `synchronized` block, or no application frame.
        assert_eq!(jdk_call_holding(&frames(&["App.get:4", "App.run:9"])), None);
        assert_eq!(
            jdk_call_holding(&frames(&["java.lang.ClassLoader.loadClass:569"])),
            None
        );
    }
}
