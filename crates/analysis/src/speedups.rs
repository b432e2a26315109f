//! Possible speedups (issue 18, docs/speedups.md): Gomes' efficiencies and his
//! eq. 11 in time units, from one trace (and a baseline trace for the overhead
//! terms), with a busiest thread per parallel section.
//!
//! Two steps, so that changes in how the analyses are computed stay local:
//! - [`gather`] reads the analysis outputs (thread lifetimes, waits and blocked
//!   periods of the lock analysis, GC pauses and schedstat points of the model)
//!   into a [`SpeedupInput`]: one timeline per application thread;
//! - [`compute`] sweeps those timelines, cuts parallel sections where threads
//!   meet, and evaluates the efficiencies, eq. 11 and the lines.
//!
//! Every possible speedup is an upper bound: removing one limitation can raise
//! another (Gomes §3.6.1). The views say so.

use std::collections::BTreeMap;

use weft_trace::ThreadIndex;

use crate::cpu::merge_intervals;
use crate::locks::LockAnalysis;
use crate::model::Model;
pub use crate::model::SchedPoint;
use crate::window::Window;

/// A thread counts in a section's team (`#T_j`) when its work there (on-CPU, or
/// blocked on a lock) is at least this share of the section's busiest thread's:
/// a main thread that spends microseconds submitting tasks is not a member of a
/// two-worker team (it would make a balanced section read 0.67).
pub const TEAM_MIN_SHARE: f64 = 0.05;

/// `|residual|` above this: the run is not shaped like eq. 11 (pipelines, I/O,
/// unrecorded synchronisation); the views flag the closed-form lines.
pub const RESIDUAL_WARN: f64 = 0.10;

/// The process used less than this share of its CPUs on average while it had
/// work: other processes (or a CPU quota) limited it, not its own threads. A
/// core per thread would not give it more CPU then (the kernel shares CPUs
/// between sessions, not threads), so the oversubscription line keeps the
/// capacity bound; the idle-machine figure goes into a note.
pub const EXTERNAL_LIMIT: f64 = 0.9;

/// The process's CPU capacity is measured where its threads wanted all its CPUs
/// when they did at least this share of the time they had work ([`capacity`]).
pub const FULL_CAPACITY_MIN_SHARE: f64 = 0.1;

/// A lock hand-off counts at most this many times the median one (a longer
/// unpark call was preempted: [`gather_handoffs`]).
pub const HANDOFF_CAP: f64 = 2.0;

/// Most sections listed one by one (the totals cover all of them).
pub const MAX_SECTIONS_LISTED: usize = 10_000;

/// One application thread, as the possible-speedups analysis sees it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ThreadTimeline {
    pub thread: ThreadIndex,
    pub name: String,
    /// The thread that entered the window (main): a baseline run's serial part is
    /// its time while no other thread works.
    pub root: bool,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Waits that are not lock acquisitions (park, Object.wait, latch, join): the
    /// thread does not want a CPU. Sorted, disjoint.
    pub waits: Vec<(u64, u64)>,
    /// Lock acquisitions that blocked. Sorted, disjoint.
    pub blocked: Vec<(u64, u64)>,
    /// Lock hand-offs: the unpark calls with which this thread woke a thread
    /// blocked on a lock, `[start, end)`. Sorted, disjoint.
    pub handoffs: Vec<(u64, u64)>,
    /// Cumulative schedstat points, by time (empty when the trace has none).
    pub sched: Vec<SchedPoint>,
}

/// What [`compute`] needs, gathered from an analysis by [`gather`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SpeedupInput {
    /// `[start, end)` of the window; `None`: from the first to the last moment an
    /// application thread was doing something.
    pub window: Option<(u64, u64)>,
    /// Where the window comes from (`run`, or a `--window` method).
    pub window_source: String,
    /// CPUs the JVM could use (header `cpus`), for the oversubscription estimate
    /// when the trace has no schedstat points.
    pub cpus: Option<u32>,
    /// The sampler's cumulative process CPU time, `(ts, ns)` by time: how much CPU
    /// the process actually got (other processes and cgroup limits included).
    pub process_cpu: Vec<(u64, u64)>,
    /// The machine's cumulative idle time (all CPUs) at the same ticks, when every
    /// tick has it (`Sample::machine_idle_ns`, since session 18); else empty.
    pub machine_idle: Vec<u64>,
    pub threads: Vec<ThreadTimeline>,
    /// Stop-the-world GC pauses.
    pub gc: Vec<(u64, u64)>,
}

/// The only place that reads analysis outputs: thread lifetimes, waits and
/// blocked periods as the lock analysis defines them (docs/locks.md), GC pauses
/// and the CPU count from the model. With a `window` (the model is then the
/// window's part of the trace, its times counted from the window's start), the
/// analysis covers the whole window, `[0, covered)`.
pub fn gather(model: &Model, locks: &LockAnalysis, window: Option<&Window>) -> SpeedupInput {
    // Virtual threads run on carrier threads, which are counted: their time is
    // the carriers' (and there can be 100,000 of them).
    let mut threads: BTreeMap<ThreadIndex, ThreadTimeline> = locks
        .lifetimes
        .iter()
        .filter(|(th, _)| !model.threads.get(th).is_some_and(|t| t.virtual_thread))
        .map(|(&th, &(s, e))| {
            let info = model.threads.get(&th);
            (
                th,
                ThreadTimeline {
                    thread: th,
                    name: info
                        .map(|t| t.display_name())
                        .unwrap_or_else(|| format!("thread #{th}")),
                    root: info.is_some_and(|t| t.is_main(model)),
                    start_ns: s,
                    end_ns: e,
                    sched: info.map(|t| sched_from_start(t, model)).unwrap_or_default(),
                    ..ThreadTimeline::default()
                },
            )
        })
        .collect();
    for w in &locks.wait_intervals {
        if let Some(t) = threads.get_mut(&w.thread) {
            t.waits.push((w.start_ns, w.end_ns));
        }
    }
    for b in &locks.blocked {
        if let Some(t) = threads.get_mut(&b.thread) {
            t.blocked.push((b.start_ns, b.end_ns));
        }
    }
    for t in threads.values_mut() {
        // A nested or overlapping record pair counts once.
        t.waits = merge_intervals(&t.waits);
        t.blocked = merge_intervals(&t.blocked);
    }
    gather_handoffs(model, locks, &mut threads);
    let (window, window_source) = match window {
        Some(w) if w.covered_ns() > 0 => (Some((0, w.covered_ns())), window_source(w)),
        _ => (None, "run".to_string()),
    };
    SpeedupInput {
        window,
        window_source,
        cpus: model.cpus,
        process_cpu: model
            .samples
            .iter()
            .map(|x| (x.ts_ns, x.process_cpu_ns))
            .collect(),
        machine_idle: model
            .samples
            .iter()
            .map(|x| x.machine_idle_ns)
            .collect::<Option<Vec<u64>>>()
            .unwrap_or_default(),
        threads: threads.into_values().collect(),
        gc: model
            .gc_pauses
            .iter()
            .map(|g| (g.start_ns, g.end_ns))
            .collect(),
    }
}

/// The lock hand-offs of each thread: its unparks (with a measured duration) of a
/// thread that was blocked on a lock at that moment (a release waking the next
/// waiter). Unparks of a thread in a wait (a condition signal, a queue hand-off, a
/// latch) are not a lock's cost: they stay when the lock goes. A hand-off counts
/// at most [`HANDOFF_CAP`] × the median one: a call that took far longer was
/// preempted (on a loaded machine the woken thread or another process took the
/// waker's CPU), run-queue time rather than the lock's work.
fn gather_handoffs(
    model: &Model,
    locks: &LockAnalysis,
    threads: &mut BTreeMap<ThreadIndex, ThreadTimeline>,
) {
    let by_java_id = model.threads_by_java_id();
    let mut found: Vec<(ThreadIndex, u64, u64)> = Vec::new();
    for &(waker, ts, target, ns) in &locks.timed_unparks {
        let Some(target) = by_java_id.get(&target).and_then(|t| threads.get(t)) else {
            continue;
        };
        let i = target.blocked.partition_point(|b| b.1 <= ts);
        if target.thread != waker && target.blocked.get(i).is_some_and(|b| b.0 <= ts) {
            found.push((waker, ts, u64::from(ns)));
        }
    }
    if found.is_empty() {
        return;
    }
    let mut ns: Vec<u64> = found.iter().map(|f| f.2).collect();
    let mid = ns.len() / 2;
    let cap = (*ns.select_nth_unstable(mid).1 as f64 * HANDOFF_CAP) as u64;
    for (th, ts, d) in found {
        if let Some(t) = threads.get_mut(&th) {
            t.handoffs.push((ts, ts + d.min(cap)));
        }
    }
    for t in threads.values_mut() {
        t.handoffs.sort_unstable();
        t.handoffs = merge_intervals(&t.handoffs);
    }
}

/// How the views name a window: `window pkg.Class.method` (`, each call`), and
/// the `--from`/`--to` range when given.
fn window_source(w: &Window) -> String {
    let mut parts = Vec::new();
    if let (Some(m), true) = (&w.method, w.calls > 0) {
        parts.push(format!(
            "window {m}{}",
            if w.each_call && w.calls > 1 {
                format!(" ({} calls)", w.calls)
            } else {
                String::new()
            }
        ));
    }
    if w.from_ns.is_some() || w.to_ns.is_some() {
        parts.push(format!(
            "{} to {} of the recording",
            crate::human_ns(w.from_ns.unwrap_or(0)),
            crate::human_ns(w.to_ns.unwrap_or(w.recording_ns))
        ));
    }
    if parts.is_empty() {
        "run".to_string()
    } else {
        parts.join(", ")
    }
}

/// A thread's schedstat readings; for a thread whose start was observed (not
/// main, which began before the JVM was up), a first reading of zero at its start:
/// schedstat counts from the OS thread's creation, just before `ThreadStart`.
fn sched_from_start(t: &crate::model::ThreadInfo, model: &Model) -> Vec<SchedPoint> {
    let mut v = t.sched.clone();
    if let (Some(start), Some(first), false) = (t.start_ns, v.first(), t.is_main(model)) {
        if first.ts_ns > start {
            v.insert(
                0,
                SchedPoint {
                    ts_ns: start,
                    on_cpu_ns: 0,
                    runq_ns: 0,
                    timeslices: 0,
                },
            );
        }
    }
    v
}

/// Why there are no possible speedups, or `Ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// No application thread did anything in the window.
    NoActivity,
    /// Only one application thread ran.
    OneThread,
    /// Several threads, but never two working at once.
    NoParallelSection,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::NoActivity => "no_activity",
            Status::OneThread => "one_thread",
            Status::NoParallelSection => "no_parallel_section",
        }
    }
}

/// The limitations a line removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limitation {
    Serial,
    Imbalance,
    Locks,
    Overhead,
    Oversubscription,
    Gc,
}

impl Limitation {
    pub const ALL: [Limitation; 6] = [
        Limitation::Serial,
        Limitation::Imbalance,
        Limitation::Locks,
        Limitation::Overhead,
        Limitation::Oversubscription,
        Limitation::Gc,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Limitation::Serial => "serial",
            Limitation::Imbalance => "imbalance",
            Limitation::Locks => "locks",
            Limitation::Overhead => "overhead",
            Limitation::Oversubscription => "oversubscription",
            Limitation::Gc => "gc",
        }
    }
    /// Words for a report.
    pub fn label(self) -> &'static str {
        match self {
            Limitation::Serial => "serial part",
            Limitation::Imbalance => "imbalance",
            Limitation::Locks => "locks",
            Limitation::Overhead => "overhead",
            Limitation::Oversubscription => "oversubscription",
            Limitation::Gc => "GC",
        }
    }
}

/// The efficiencies (each in [0, 1] for a run that behaves as the model says;
/// `None` where undefined: no parallel section, or no baseline).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Efficiencies {
    /// E_PF: parallel work ÷ all work (of the baseline run when there is one).
    pub parallel_fraction: Option<f64>,
    /// E_LB: per section, mean time per team thread ÷ the busiest thread's, weighted by the busiest time.
    pub load_balance: Option<f64>,
    /// E_LC = 1 − blocked ÷ (running + runnable + blocked), in parallel sections.
    pub lock_contention: Option<f64>,
    /// E_SO = baseline serial work ÷ this run's serial work.
    pub serial_overhead: Option<f64>,
    /// E_PO = baseline parallel work ÷ this run's parallel work.
    pub parallel_overhead: Option<f64>,
    /// E_CPU: busiest threads' on-CPU time ÷ their running + runnable time.
    pub cores: Option<f64>,
}

/// One possible-speedup line: eq. 11 with one limitation removed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub remove: Limitation,
    /// The time eq. 11 gives with that limitation removed.
    pub time_ns: Option<f64>,
    /// `calculated / time_ns`: how much faster, relative to the calculated time.
    pub closed_form_gain: Option<f64>,
    /// `reference work / time_ns` (Gomes' possible speedup).
    pub possible_speedup: Option<f64>,
    /// From removing the limitation in the execution graph (crates/whatif), when
    /// the simulator is available; `None` until then.
    pub simulated_gain: Option<f64>,
}

/// One parallel section: between two points where threads meet.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Team threads (`#T_j`).
    pub threads: u32,
    pub load_balance: f64,
    pub lock_contention: f64,
    /// The busiest thread's running + runnable time (the section's weight).
    pub busiest_ns: u64,
}

/// The time quantities of eq. 11 (ns; CPU shares may be estimated, hence f64).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Quantities {
    /// C_s: on-CPU work in serial time.
    pub cpu_serial: f64,
    /// A_s: running + runnable time of the serial path.
    pub active_serial: f64,
    /// C_p: on-CPU work of all threads in parallel sections.
    pub cpu_parallel: f64,
    /// A_p: running + runnable time of all threads in parallel sections.
    pub active_parallel: f64,
    /// B_p: lock-blocked time in parallel sections.
    pub lock_blocked_parallel: f64,
    /// H_p: active time in parallel sections spent handing a lock over (the
    /// releaser's unpark of a thread blocked on it).
    pub lock_handoff_parallel: f64,
    /// M_cpu = Σ_j max_θ on-CPU time.
    pub busiest_cpu: f64,
    /// M_act = Σ_j max_θ running + runnable time.
    pub busiest_active: f64,
    /// The same threads' time on a CPU or runnable (their active time without
    /// blocking no probe records): E_CPU's denominator.
    pub busiest_runnable: f64,
    /// Σ_j min(C_j / #T_j, M_cpu_j): the busiest time if each section were balanced.
    pub balanced_cpu: f64,
    /// G: GC pauses in the window.
    pub gc: f64,
    /// Work of the root thread while no other thread works, and all work (for a
    /// baseline run's split).
    pub root_alone_cpu: f64,
    pub total_cpu: f64,
}

impl Quantities {
    /// `H_p / A_p`: the share of the parallel active time spent handing locks over,
    /// work that goes with the locks (docs/speedups.md §The lines).
    pub fn handoff_share(&self) -> f64 {
        ratio(self.lock_handoff_parallel, self.active_parallel)
            .unwrap_or(0.0)
            .clamp(0.0, 1.0)
    }
}

/// Where the CPU shares come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuSource {
    /// schedstat points (on-CPU and run-queue time per thread).
    Measured,
    /// Processor sharing over the header's CPU count: with n threads wanting a CPU
    /// and P CPUs, each gets min(1, P/n). Other processes are not seen.
    Estimated,
    /// Neither: every running thread is taken as on a CPU.
    Unknown,
}

impl CpuSource {
    pub fn as_str(self) -> &'static str {
        match self {
            CpuSource::Measured => "schedstat",
            CpuSource::Estimated => "estimated",
            CpuSource::Unknown => "unknown",
        }
    }
}

/// The possible-speedups analysis of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Speedups {
    pub status: Status,
    /// A sentence for the user when status is not `Ok` (or a caveat).
    pub notes: Vec<String>,
    pub window: (u64, u64),
    pub window_source: String,
    pub cpus: Option<u32>,
    pub cpu_source: CpuSource,
    /// `none`, or `one_worker` / `sequential` (what the baseline run looked like).
    pub baseline: &'static str,
    /// Distinct threads in at least one parallel section's team.
    pub threads: u32,
    /// The effective team size of eq. 11 (`C_p / Σ_j C_j/#T_j`).
    pub threads_effective: f64,
    pub quantities: Quantities,
    pub efficiencies: Efficiencies,
    /// Reference work T_1: this run's work, or the baseline's.
    pub reference_ns: f64,
    pub observed_ns: u64,
    /// The baseline run's window, when given.
    pub baseline_observed_ns: Option<u64>,
    /// Eq. 11 with all actual efficiencies.
    pub calculated_ns: Option<f64>,
    /// (observed − calculated) ÷ observed.
    pub residual: Option<f64>,
    pub lines: Vec<Line>,
    /// Sections by time (at most [`MAX_SECTIONS_LISTED`]).
    pub sections: Vec<Section>,
    pub sections_total: usize,
    /// Eq. 11 at other core counts with the efficiencies held (an extrapolation).
    pub across_cores: Vec<CoresPoint>,
    /// Per application thread over the window: (name, running + runnable ns,
    /// on-CPU ns, lock-blocked ns).
    pub per_thread: Vec<(String, f64, f64, f64)>,
}

/// Possible speedups at `cores` cores, efficiencies held at their measured values.
#[derive(Debug, Clone, PartialEq)]
pub struct CoresPoint {
    pub cores: u32,
    /// Eq. 11 with every efficiency as measured.
    pub current: f64,
    /// (limitation, speedup with it removed).
    pub removed: Vec<(Limitation, Option<f64>)>,
    /// `cores`.
    pub ideal: f64,
}

impl Speedups {
    pub fn line(&self, l: Limitation) -> Option<&Line> {
        self.lines.iter().find(|x| x.remove == l)
    }
}

/// Per-section accumulators of one thread.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    act: f64,
    /// The part of `act` on a CPU or runnable (schedstat): without the blocking no
    /// probe records (sleep, socket I/O), which a core per thread does not shorten.
    run: f64,
    cpu: f64,
    blk: f64,
    /// Active time spent handing a lock over (waking its next waiter).
    hand: f64,
}

/// The accumulators of the threads that took part in a section, by thread index
/// (ascending). Sparse: a run of thousands of short-lived threads has thousands
/// of sections, each with a few threads.
type PerThread = Vec<(usize, Acc)>;

#[derive(Debug, Clone)]
struct RawSection {
    start: u64,
    end: u64,
    per: PerThread,
    /// Threads that started or whose wait ended at `start`.
    resumed: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
enum EvKind {
    AliveStart,
    AliveEnd,
    WaitStart,
    WaitEnd,
    BlockStart,
    BlockEnd,
    HandoffStart,
    HandoffEnd,
    GcStart,
    GcEnd,
    /// The thread enters schedstat interval k (`LAST`: past its last reading).
    Tick(i64),
}

/// Sweep state of one thread.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    alive: bool,
    waiting: bool,
    blocked: bool,
    handing_off: bool,
    /// Schedstat interval: [`BEFORE_FIRST`], k, or [`AFTER_LAST`].
    tick: i64,
}

const BEFORE_FIRST: i64 = -1;
const AFTER_LAST: i64 = -2;

impl State {
    fn participating(&self) -> bool {
        self.alive && !self.waiting
    }
    fn active(&self) -> bool {
        self.participating() && !self.blocked
    }
}

/// Sweep totals that are not per section.
#[derive(Debug, Clone, Copy, Default)]
struct Totals {
    gc: f64,
    /// Σ CPUs available × time, and the time, over the instants some thread was
    /// active (only where the CPU count is known).
    capacity_time: f64,
    active_time: f64,
    /// The instants at least as many threads were active as the header's CPUs,
    /// and the on-CPU time the threads got there: only there does what they got
    /// say whether the process could use all its CPUs (a lone thread that got
    /// 99% of a CPU says nothing about the second CPU).
    full_cpu: f64,
    full_time: f64,
    root_alone_cpu: f64,
    total_cpu: f64,
    first_participation: Option<u64>,
    last_participation: u64,
}

fn clip(s: u64, e: u64, w: (u64, u64)) -> Option<(u64, u64)> {
    let (s, e) = (s.max(w.0), e.min(w.1));
    (e > s).then_some((s, e))
}

/// How a sweep shares CPUs among the threads that want one.
#[derive(Default)]
struct Shares<'a> {
    /// From each `(ts, B)` on, the process can use `B` CPUs (sorted by ts; before
    /// the first, the header's CPU count). Each of n threads wanting a CPU gets
    /// the weight min(1, B/n).
    caps: &'a [(u64, f64)],
    /// Per thread and schedstat interval: the factor that makes the weights add
    /// up to the measured on-CPU time (1 where unknown).
    factors: Option<&'a [Vec<f64>]>,
    /// Per thread and schedstat interval: the share of its active time that was
    /// on a CPU or runnable (1 where unknown); the rest was blocking no probe
    /// records (a `Thread.sleep`, socket I/O), time it did not want a CPU.
    runnable: Option<&'a [Vec<f64>]>,
    /// Collects how each thread used each of its schedstat intervals.
    weights: Option<&'a mut Vec<Vec<IntervalUse>>>,
    /// Collects the number of threads wanting a CPU over time, `(start, end, n)`.
    profile: Option<&'a mut Vec<(u64, u64, u32)>>,
}

/// Sweeps the timelines over `window`: raw sections (cut where a thread starts or
/// resumes from a wait, and where nobody participates) and totals.
fn sweep(
    input: &SpeedupInput,
    window: (u64, u64),
    mut shares: Shares,
) -> (Vec<RawSection>, Totals, bool) {
    let caps = shares.caps;
    let n = input.threads.len();
    let mut ev: Vec<(u64, usize, EvKind)> = Vec::new();
    let mut measured = false;
    for (i, t) in input.threads.iter().enumerate() {
        let Some((s, e)) = clip(t.start_ns, t.end_ns, window) else {
            continue;
        };
        ev.push((s, i, EvKind::AliveStart));
        ev.push((e, i, EvKind::AliveEnd));
        for &(ws, we) in &t.waits {
            if let Some((ws, we)) = clip(ws, we, window) {
                ev.push((ws, i, EvKind::WaitStart));
                ev.push((we, i, EvKind::WaitEnd));
            }
        }
        for &(bs, be) in &t.blocked {
            if let Some((bs, be)) = clip(bs, be, window) {
                ev.push((bs, i, EvKind::BlockStart));
                ev.push((be, i, EvKind::BlockEnd));
            }
        }
        for &(hs, he) in &t.handoffs {
            if let Some((hs, he)) = clip(hs, he, window) {
                ev.push((hs, i, EvKind::HandoffStart));
                ev.push((he, i, EvKind::HandoffEnd));
            }
        }
        // Schedstat interval k is [sched[k], sched[k+1]).
        for (k, w) in t.sched.windows(2).enumerate() {
            if w[1].on_cpu_ns > w[0].on_cpu_ns && w[1].ts_ns > w[0].ts_ns {
                measured = true;
            }
            ev.push((w[0].ts_ns.max(window.0), i, EvKind::Tick(k as i64)));
        }
        if let Some(last) = t.sched.last() {
            ev.push((last.ts_ns.max(window.0), i, EvKind::Tick(AFTER_LAST)));
        }
    }
    for &(s, e) in &input.gc {
        if let Some((s, e)) = clip(s, e, window) {
            ev.push((s, n, EvKind::GcStart));
            ev.push((e, n, EvKind::GcEnd));
        }
    }
    ev.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let root: Vec<bool> = input.threads.iter().map(|t| t.root).collect();
    let cpus = input.cpus.map(|c| c.max(1) as f64);

    let mut st = vec![
        State {
            tick: BEFORE_FIRST,
            ..State::default()
        };
        n
    ];
    // Participating threads in index order (the order the dense sweep summed in).
    let mut participating = std::collections::BTreeSet::new();
    let mut counts = Counts::default();
    let mut slot = vec![NO_SLOT; n];
    let mut gc_depth = 0u32;
    let mut sections: Vec<RawSection> = Vec::new();
    let mut open: Option<RawSection> = None;
    let mut tot = Totals::default();
    let mut prev = window.0;
    let mut k = 0;
    let mut cap_at = 0usize;
    while k < ev.len() {
        let t = ev[k].0;
        // Accumulate [prev, t).
        if t > prev {
            let dt = (t - prev) as f64;
            while cap_at < caps.len() && caps[cap_at].0 <= prev {
                cap_at += 1;
            }
            let cpus = match cap_at {
                0 => cpus,
                i => Some(caps[i - 1].1),
            };
            if gc_depth > 0 {
                tot.gc += dt;
            } else {
                let n_active = counts.active;
                if let Some(p) = shares.profile.as_deref_mut() {
                    p.push((prev, t, n_active as u32));
                }
                let weight = match cpus {
                    Some(p) => (p / n_active.max(1) as f64).min(1.0),
                    None => 1.0,
                };
                if let (Some(p), true) = (cpus, n_active > 0) {
                    tot.capacity_time += p * dt;
                    tot.active_time += dt;
                    if input.cpus.is_some_and(|c| n_active >= c.max(1) as usize) {
                        tot.full_time += dt;
                    }
                }
                let others = counts.others > 0;
                if let Some(sec) = open.as_mut() {
                    for &i in &participating {
                        let s = &st[i];
                        let a = match slot[i] {
                            NO_SLOT => {
                                slot[i] = sec.per.len() as u32;
                                sec.per.push((i, Acc::default()));
                                &mut sec.per.last_mut().expect("just pushed").1
                            }
                            j => &mut sec.per[j as usize].1,
                        };
                        if s.blocked {
                            a.blk += dt;
                            continue;
                        }
                        // Outside the readings, the nearest interval's factor.
                        let factor = shares.factors.and_then(|f| match s.tick {
                            BEFORE_FIRST => f[i].first(),
                            AFTER_LAST => f[i].last(),
                            k => f[i].get(k as usize),
                        });
                        let factor = factor.copied().unwrap_or(1.0);
                        let runnable = shares
                            .runnable
                            .and_then(|r| match s.tick {
                                BEFORE_FIRST => r[i].first(),
                                AFTER_LAST => r[i].last(),
                                k => r[i].get(k as usize),
                            })
                            .copied()
                            .unwrap_or(1.0);
                        if let (Some(w), true) = (shares.weights.as_deref_mut(), s.tick >= 0) {
                            if let Some(x) = w[i].get_mut(s.tick as usize) {
                                x.weighted += weight * dt;
                                x.active += dt;
                                x.max_weight = x.max_weight.max(weight);
                                // Active from the interval's first reading on.
                                let first = input.threads[i].sched[s.tick as usize].ts_ns;
                                x.active_at_start |= prev <= first.max(window.0);
                            }
                        }
                        let share = (weight * factor).min(1.0);
                        a.act += dt;
                        a.run += dt * runnable;
                        if s.handing_off {
                            a.hand += dt;
                        }
                        a.cpu += dt * share;
                        tot.total_cpu += dt * share;
                        if input.cpus.is_some_and(|c| n_active >= c.max(1) as usize) {
                            tot.full_cpu += dt * share;
                        }
                        if root[i] && !others {
                            tot.root_alone_cpu += dt * share;
                        }
                    }
                }
            }
            prev = t;
        }
        // Apply every event at t.
        let mut resumed: Vec<usize> = Vec::new();
        while k < ev.len() && ev[k].0 == t {
            let (_, i, kind) = ev[k];
            let before = st.get(i).copied();
            match kind {
                EvKind::GcStart => gc_depth += 1,
                EvKind::GcEnd => gc_depth = gc_depth.saturating_sub(1),
                EvKind::AliveStart => {
                    st[i].alive = true;
                    resumed.push(i);
                }
                EvKind::AliveEnd => {
                    st[i] = State {
                        tick: st[i].tick,
                        ..State::default()
                    }
                }
                EvKind::WaitStart => st[i].waiting = true,
                EvKind::WaitEnd => {
                    st[i].waiting = false;
                    if st[i].alive {
                        resumed.push(i);
                    }
                }
                EvKind::BlockStart => st[i].blocked = true,
                EvKind::BlockEnd => st[i].blocked = false,
                EvKind::HandoffStart => st[i].handing_off = true,
                EvKind::HandoffEnd => st[i].handing_off = false,
                EvKind::Tick(k) => st[i].tick = k,
            }
            if let Some(before) = before {
                counts.update(i, &before, &st[i], root[i], &mut participating);
            }
            k += 1;
        }
        let any = !participating.is_empty();
        if any {
            tot.first_participation.get_or_insert(t);
        }
        // A thread starting (fork) or resuming from a wait (barrier release, join
        // return, latch open, a pool worker given a task) is a point where threads
        // meet: the section before ends there.
        let cut = !resumed.is_empty();
        if let Some(sec) = open.as_mut() {
            if cut || !any {
                sec.end = t;
                tot.last_participation = t;
                let sec = open.take().expect("open section");
                sections.push(closed(sec, &mut slot));
            }
        }
        if any && open.is_none() {
            open = Some(RawSection {
                start: t,
                end: t,
                per: Vec::new(),
                resumed,
            });
        }
    }
    if let Some(mut sec) = open.take() {
        sec.end = prev;
        tot.last_participation = prev;
        sections.push(closed(sec, &mut slot));
    }
    (sections, tot, measured)
}

/// `slot[i]` when thread i has no entry in the open section.
const NO_SLOT: u32 = u32::MAX;

/// A section at its end: its entries by thread index, their slots freed.
fn closed(mut sec: RawSection, slot: &mut [u32]) -> RawSection {
    for &(i, _) in &sec.per {
        slot[i] = NO_SLOT;
    }
    sec.per.sort_unstable_by_key(|e| e.0);
    sec
}

/// What the sweep needs of all threads' states at each instant, kept as the
/// states change (counting them at each instant made a run of 100,000 threads
/// quadratic).
#[derive(Default)]
struct Counts {
    /// Threads active (participating, not blocked).
    active: usize,
    /// Participating threads other than the root.
    others: usize,
}

impl Counts {
    fn update(
        &mut self,
        i: usize,
        before: &State,
        after: &State,
        root: bool,
        participating: &mut std::collections::BTreeSet<usize>,
    ) {
        self.active = self.active + after.active() as usize - before.active() as usize;
        if !root {
            self.others =
                self.others + after.participating() as usize - before.participating() as usize;
        }
        match (before.participating(), after.participating()) {
            (false, true) => {
                participating.insert(i);
            }
            (true, false) => {
                participating.remove(&i);
            }
            _ => {}
        }
    }
}

/// Team members of a section (`len` ns long): threads with at least
/// [`TEAM_MIN_SHARE`] of the busiest one's work. Work is on-CPU time (a thread
/// that sat in the run queue waiting to park did no work), plus blocked time at
/// the section's CPU rate. Blocked time alone makes a member only when the
/// thread was blocked most of the section (it would have worked): pool workers
/// blocked a few ms on the pool's lock while starting or exiting, beside a main
/// thread working alone, are not a team.
fn team(per: &[(usize, Acc)], len: u64) -> Vec<usize> {
    members(per, &works(per), len)
}

/// [`team`] with each entry's work ([`works`]) already computed; thread indices.
fn members(per: &[(usize, Acc)], work: &[f64], len: u64) -> Vec<usize> {
    let max = work.iter().copied().fold(0.0, f64::max);
    if max <= 0.0 {
        return Vec::new();
    }
    per.iter()
        .zip(work)
        .filter(|&(&(_, a), &w)| {
            w > 0.0
                && w >= TEAM_MIN_SHARE * max
                && (a.cpu >= TEAM_MIN_SHARE * max || a.blk >= 0.5 * len as f64)
        })
        .map(|(&(i, _), _)| i)
        .collect()
}

/// Parallel sections after merging, and the serial sections' totals.
struct Classified {
    parallel: Vec<(RawSection, Vec<usize>)>,
    serial_cpu: f64,
    serial_active: f64,
    serial_runnable: f64,
}

/// Work of each entry's thread in a section for team membership: on-CPU time,
/// plus blocked time at the section's CPU rate (see [`team`]).
fn works(per: &[(usize, Acc)]) -> Vec<f64> {
    let (cpu, act): (f64, f64) = per
        .iter()
        .fold((0.0, 0.0), |s, (_, a)| (s.0 + a.cpu, s.1 + a.act));
    let rate = if act > 0.0 { cpu / act } else { 1.0 };
    per.iter().map(|(_, a)| a.cpu + a.blk * rate).collect()
}

/// The sum of one accumulator over a section's threads.
fn total(per: &[(usize, Acc)], f: impl Fn(&Acc) -> f64) -> f64 {
    per.iter().map(|(_, a)| f(a)).sum()
}

/// The largest value of one accumulator over a section's threads (0 if none).
fn largest(per: &[(usize, Acc)], f: impl Fn(&Acc) -> f64) -> f64 {
    per.iter().map(|(_, a)| f(a)).fold(0.0, f64::max)
}

/// Per raw section, per thread it resumed: the thread's work from that resume
/// to its next one (or a gap), over however many raw sections that spans. A
/// resumed thread's work inside its first raw section alone says little: the
/// section can be cut short by another thread's resume.
fn bursts(raw: &[RawSection], threads: usize) -> Vec<Vec<f64>> {
    // Per thread its work so far, valid in the stretch without gaps numbered
    // `epoch` (a gap starts a new one instead of clearing every thread's sum).
    let mut acc = vec![(0.0, 0u32); threads];
    let mut epoch = 0u32;
    let mut out = vec![Vec::new(); raw.len()];
    for j in (0..raw.len()).rev() {
        if raw.get(j + 1).is_some_and(|next| next.start != raw[j].end) {
            epoch += 1;
        }
        for (&(i, _), w) in raw[j].per.iter().zip(works(&raw[j].per)) {
            let a = &mut acc[i];
            if a.1 != epoch {
                *a = (0.0, epoch);
            }
            a.0 += w;
        }
        let sum = |a: &(f64, u32)| if a.1 == epoch { a.0 } else { 0.0 };
        out[j] = raw[j].resumed.iter().map(|&r| sum(&acc[r])).collect();
        for &r in &raw[j].resumed {
            acc[r] = (0.0, epoch);
        }
    }
    out
}

/// Whether raw section `sec` (whose resumed threads do `burst` until their next
/// resume) continues section `c` instead of starting one: its cut is no meeting
/// point when the resumed threads are not in `sec`'s team, or, when `c` is
/// parallel, when each resumed thread's burst is under [`TEAM_MIN_SHARE`] of the
/// busiest thread's work in `c` (a short raw section cut again by another resume
/// would otherwise make a 0.1 ms burst look like a team member).
fn continues(c: &RawSection, sec: &RawSection, burst: &[f64]) -> bool {
    if c.end != sec.start {
        return false;
    }
    let joined = team(&sec.per, sec.end - sec.start);
    if !sec.resumed.iter().any(|r| joined.contains(r)) {
        return true;
    }
    let work = works(&c.per);
    let busiest = work.iter().copied().fold(0.0, f64::max);
    members(&c.per, &work, c.end - c.start).len() >= 2
        && burst.iter().all(|&b| b < TEAM_MIN_SHARE * busiest)
}

/// A cut where only threads that then do (next to) nothing resumed is not a
/// meeting point: a main thread returning from one `get` to call the next, a
/// pool thread starting and parking at once. Such a section is merged into the
/// one before ([`continues`]), so the tail of an imbalanced section, where one
/// thread works on alone, stays in it. Then a section whose team is one thread
/// is serial.
fn classify(raw: Vec<RawSection>, threads: usize) -> Classified {
    let mut out = Classified {
        parallel: Vec::new(),
        serial_cpu: 0.0,
        serial_active: 0.0,
        serial_runnable: 0.0,
    };
    let mut finish = |sec: RawSection| {
        let members = team(&sec.per, sec.end - sec.start);
        if members.len() >= 2 {
            out.parallel.push((sec, members));
        } else {
            out.serial_cpu += total(&sec.per, |a| a.cpu);
            out.serial_active += largest(&sec.per, |a| a.act);
            out.serial_runnable += largest(&sec.per, |a| a.run);
        }
    };
    let burst = bursts(&raw, threads);
    let mut cur: Option<RawSection> = None;
    for (sec, burst) in raw.into_iter().zip(burst) {
        match cur.as_mut() {
            Some(c) if continues(c, &sec, &burst) => {
                c.per = merged(std::mem::take(&mut c.per), &sec.per);
                c.end = sec.end;
            }
            _ => {
                if let Some(c) = cur.replace(sec) {
                    finish(c);
                }
            }
        }
    }
    if let Some(c) = cur {
        finish(c);
    }
    out
}

/// `c`'s entries with `next`'s work added (its time, CPU and blocking; a merged
/// section's runnable and hand-off time stay `c`'s).
fn merged(c: PerThread, next: &[(usize, Acc)]) -> PerThread {
    let mut out = Vec::with_capacity(c.len() + next.len());
    let mut b = next.iter().peekable();
    for (i, mut a) in c {
        while let Some(&&(j, x)) = b.peek().filter(|e| e.0 < i) {
            out.push((j, added(Acc::default(), &x)));
            b.next();
        }
        if let Some(&&(_, x)) = b.peek().filter(|e| e.0 == i) {
            a = added(a, &x);
            b.next();
        }
        out.push((i, a));
    }
    out.extend(b.map(|&(j, x)| (j, added(Acc::default(), &x))));
    out
}

fn added(mut a: Acc, b: &Acc) -> Acc {
    a.act += b.act;
    a.cpu += b.cpu;
    a.blk += b.blk;
    a
}

/// The baseline run's work split: the root thread alone (serial), the rest (parallel).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaselineWork {
    pub serial: f64,
    pub parallel: f64,
    pub observed_ns: u64,
}

/// The work split of a baseline run (a one-worker run of the same program, or a
/// sequential one), from its input.
pub fn baseline_work(input: &SpeedupInput) -> BaselineWork {
    let (window, _) = window_of(input);
    let (_, tot, _) = sweep_measured(input, window);
    let (first, last) = (
        tot.first_participation.unwrap_or(window.0),
        tot.last_participation,
    );
    BaselineWork {
        serial: tot.root_alone_cpu,
        parallel: (tot.total_cpu - tot.root_alone_cpu).max(0.0),
        observed_ns: last.saturating_sub(first),
    }
}

/// The CPUs the process could use in each sampler interval: the `B` for which
/// processor sharing (each of n threads wanting a CPU gets min(1, B/n)) gives
/// the CPU time the process was measured to get; the header's CPU count when the
/// process got at least what its threads wanted. On a machine shared with other
/// work, B is below the CPU count, and a thread that runs alone runs faster than
/// two side by side.
fn cpu_caps(input: &SpeedupInput, window: (u64, u64)) -> Vec<(u64, f64)> {
    let Some(cpus) = input.cpus.map(|c| c.max(1) as f64) else {
        return Vec::new();
    };
    if input.process_cpu.len() < 2 {
        return Vec::new();
    }
    let mut profile = Vec::new();
    sweep(
        input,
        window,
        Shares {
            profile: Some(&mut profile),
            ..Shares::default()
        },
    );
    let measured = input
        .threads
        .iter()
        .all(|t| t.sched.len() >= 2 || t.start_ns >= t.end_ns);
    // The application threads' cumulative on-CPU and run-queue time at `ts`.
    let app_sched = measured.then_some(|ts: u64| -> (f64, f64) {
        input.threads.iter().fold((0.0, 0.0), |(cpu, runq), t| {
            (
                cpu + cumulative(&t.sched, ts, |p| p.on_cpu_ns),
                runq + cumulative(&t.sched, ts, |p| p.runq_ns),
            )
        })
    });
    let mut caps = Vec::new();
    let mut seg = 0usize;
    let idle = (input.machine_idle.len() == input.process_cpu.len()).then_some(&input.machine_idle);
    for (j, w) in input.process_cpu.windows(2).enumerate() {
        let ((a, c0), (b, c1)) = (w[0], w[1]);
        if b <= a {
            continue;
        }
        // The machine's idle time says it directly: the process could have had its
        // own CPU and the idle CPUs. (Inferred from its threads instead, a thread
        // that sleeps without a recorded wait reads as one denied a CPU.)
        if let Some(idle) = idle {
            let free = idle[j + 1].saturating_sub(idle[j]) as f64;
            let could = (c1.saturating_sub(c0) as f64 + free) / (b - a) as f64;
            caps.push((a, could.clamp(0.01 * cpus, cpus)));
            caps.push((b, cpus));
            continue;
        }
        while seg < profile.len() && profile[seg].1 <= a {
            seg += 1;
        }
        let overlaps: Vec<(f64, f64)> = profile[seg..]
            .iter()
            .take_while(|p| p.0 < b)
            .filter_map(|p| {
                let d = p.1.min(b).saturating_sub(p.0.max(a));
                (d > 0 && p.2 > 0).then_some((p.2 as f64, d as f64))
            })
            .collect();
        let used = |cap: f64| overlaps.iter().map(|(n, d)| n.min(cap) * d).sum::<f64>();
        // What the application's threads got, when each has schedstat readings:
        // the process's CPU also holds the JIT compilers' and GC's, which do not
        // run the program's work and keep competing after any change to it.
        let got = match app_sched.as_ref() {
            Some(f) => {
                let ((cpu0, runq0), (cpu1, runq1)) = (f(a), f(b));
                // Only the time the threads waited in the run queue is CPU the
                // process was denied; the rest of a shortfall (page faults,
                // safepoints, readings interpolated across an interval) is not a
                // cap: a lone thread that ran 97% of an interval beside an idle
                // CPU does not make a process capped at 0.97 CPUs.
                (cpu1 - cpu0).max(used(cpus) - (runq1 - runq0))
            }
            None => c1.saturating_sub(c0) as f64,
        };
        let cap = if overlaps.is_empty() || used(cpus) <= got {
            cpus
        } else {
            // used() increases with the cap: bisect.
            let (mut lo, mut hi) = (0.0, cpus);
            for _ in 0..40 {
                let mid = (lo + hi) / 2.0;
                if used(mid) < got {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            hi.max(0.01 * cpus)
        };
        caps.push((a, cap));
        // After the last sample, the header's count again.
        caps.push((b, cpus));
    }
    caps.sort_by_key(|x| x.0);
    // A tick's start replaces the previous tick's end marker at the same time.
    let mut out: Vec<(u64, f64)> = Vec::with_capacity(caps.len());
    for c in caps {
        match out.last_mut() {
            Some(l) if l.0 == c.0 => *l = if c.1 < l.1 { c } else { *l },
            _ => out.push(c),
        }
    }
    out
}

/// A thread's cumulative schedstat counter `field` (on-CPU or run-queue ns) at
/// `ts`, interpolated between its readings (its first reading before them, its
/// last after).
fn cumulative(sched: &[SchedPoint], ts: u64, field: impl Fn(&SchedPoint) -> u64) -> f64 {
    let n = sched.partition_point(|p| p.ts_ns <= ts);
    match (n.checked_sub(1).map(|i| &sched[i]), sched.get(n)) {
        (None, Some(first)) => field(first) as f64,
        (Some(last), None) => field(last) as f64,
        (Some(p), Some(q)) => {
            let f = (ts - p.ts_ns) as f64 / (q.ts_ns - p.ts_ns).max(1) as f64;
            field(p) as f64 + f * field(q).saturating_sub(field(p)) as f64
        }
        (None, None) => 0.0,
    }
}

/// How a thread used one of its schedstat intervals in the sweep.
#[derive(Debug, Clone, Copy, Default)]
struct IntervalUse {
    /// Σ weight × time over the stretches the thread was active.
    weighted: f64,
    /// The largest weight it had there: at a factor above 1 / this, a share
    /// would pass a whole CPU and be cut to it.
    max_weight: f64,
    /// It was active (running or runnable) when the interval's first reading
    /// was taken.
    active_at_start: bool,
    /// The time it was active (not in a recorded wait, not blocked) in the sweep.
    active: f64,
}

/// Moves on-CPU time read in one schedstat interval back into the one before,
/// where the thread could not have used it in its interval. The kernel adds a
/// running thread's CPU time at scheduler ticks and switches, so a reading taken
/// while the thread runs lags by up to a tick: a busy thread reads 1.19 then 0.79
/// of a CPU in alternate 10 ms intervals. Shares are capped at a whole CPU per
/// interval, so the 0.19 read late was dropped and a thread that ran without a
/// break read 0.9 of a CPU (`cores` 0.90 against a truth of 1.00). The excess
/// goes back only across a reading taken while the thread was active (a
/// waiting thread's reading is exact); what is left (CPU spent while the
/// model says it waited) stays capped.
fn lag_corrected(on: &mut [f64], uses: &[IntervalUse]) {
    for k in (1..on.len()).rev() {
        let u = uses[k];
        let room = if u.max_weight > 0.0 {
            u.weighted / u.max_weight
        } else {
            0.0
        };
        if on[k] > room && u.active_at_start {
            on[k - 1] += on[k] - room;
            on[k] = room;
        }
    }
}

/// The sweep with CPU shares: processor sharing under the per-interval caps,
/// scaled per thread and schedstat interval to the measured on-CPU time.
fn sweep_measured(input: &SpeedupInput, window: (u64, u64)) -> (Vec<RawSection>, Totals, bool) {
    let caps = cpu_caps(input, window);
    if input.threads.iter().all(|t| t.sched.len() < 2) {
        return sweep(
            input,
            window,
            Shares {
                caps: &caps,
                ..Shares::default()
            },
        );
    }
    let mut weights: Vec<Vec<IntervalUse>> = input
        .threads
        .iter()
        .map(|t| vec![IntervalUse::default(); t.sched.len().saturating_sub(1)])
        .collect();
    sweep(
        input,
        window,
        Shares {
            caps: &caps,
            weights: Some(&mut weights),
            ..Shares::default()
        },
    );
    // The runnable share of each interval's active time: on-CPU plus run-queue time
    // over it. Near 1 (readings lag a running thread by up to a tick) it is 1: only
    // clear blocking counts (4 threads sleeping 5 ms under a lock read "a core per
    // thread: ×29").
    let runnable: Vec<Vec<f64>> = input
        .threads
        .iter()
        .zip(&weights)
        .map(|(t, uses)| {
            t.sched
                .windows(2)
                .zip(uses)
                .map(|(p, u)| {
                    let (a, b) = (p[0].ts_ns, p[1].ts_ns);
                    let inside = clip(a, b, (t.start_ns.max(window.0), t.end_ns.min(window.1)))
                        .map_or(0, |(s, e)| e - s);
                    let ran = (p[1].on_cpu_ns.saturating_sub(p[0].on_cpu_ns)
                        + p[1].runq_ns.saturating_sub(p[0].runq_ns))
                        as f64
                        * inside as f64
                        / (b - a).max(1) as f64;
                    match ran / u.active {
                        r if u.active > 0.0 && r < RUNNABLE_FULL => r,
                        _ => 1.0,
                    }
                })
                .collect()
        })
        .collect();
    let factors: Vec<Vec<f64>> = input
        .threads
        .iter()
        .zip(&weights)
        .map(|(t, uses)| {
            let mut on: Vec<f64> = t
                .sched
                .windows(2)
                .map(|p| {
                    // The part of the interval inside the thread's lifetime and the
                    // window (main's first interval began before AppStart).
                    let (a, b) = (p[0].ts_ns, p[1].ts_ns);
                    let inside = clip(a, b, (t.start_ns.max(window.0), t.end_ns.min(window.1)))
                        .map_or(0, |(s, e)| e - s);
                    p[1].on_cpu_ns.saturating_sub(p[0].on_cpu_ns) as f64 * inside as f64
                        / (b - a).max(1) as f64
                })
                .collect();
            lag_corrected(&mut on, uses);
            on.iter()
                .zip(uses)
                .map(|(&on, u)| {
                    if u.weighted > 0.0 {
                        on / u.weighted
                    } else {
                        1.0
                    }
                })
                .collect()
        })
        .collect();
    sweep(
        input,
        window,
        Shares {
            caps: &caps,
            factors: Some(&factors),
            runnable: Some(&runnable),
            ..Shares::default()
        },
    )
}

/// A thread on a CPU or runnable for at least this share of its active time in an
/// interval counts as runnable all of it.
const RUNNABLE_FULL: f64 = 0.9;

fn window_of(input: &SpeedupInput) -> ((u64, u64), bool) {
    match input.window {
        Some(w) => (w, true),
        None => {
            let s = input.threads.iter().map(|t| t.start_ns).min().unwrap_or(0);
            let e = input.threads.iter().map(|t| t.end_ns).max().unwrap_or(0);
            ((s, e.max(s)), false)
        }
    }
}

/// The CPUs the process could use while it had work. Where its threads wanted
/// all its CPUs (when they did for at least [`FULL_CAPACITY_MIN_SHARE`] of the
/// time) it got `B_full` of them: at [`EXTERNAL_LIMIT`] of its CPUs or more, it
/// was not held back and that is its capacity (a lone thread at 99% of a CPU,
/// the JIT beside it, is not a process capped at 0.99 CPUs: averaging such
/// stretches in read 1.84 of 2 CPUs on an idle machine and held the serial line
/// to ×1.13 against a measured ×1.21). Below, other processes held it back, and
/// what it got on average while it had work is the capacity: a session's share
/// of a loaded machine holds over the run whatever the number of threads (run
/// I: the static block partition's threads got 0.38 CPUs while two ran, 0.19
/// while one did, and the balanced knob run 0.25 throughout: ×1.01). "Held
/// back" is the per-interval caps' verdict (process samples, run-queue time);
/// otherwise, and without such instants, the caps' average.
fn capacity(tot: &Totals, cpus: Option<u32>) -> Option<f64> {
    let full = if tot.full_time >= FULL_CAPACITY_MIN_SHARE * tot.active_time {
        ratio(tot.full_cpu, tot.full_time)
    } else {
        None
    };
    let caps = ratio(tot.capacity_time, tot.active_time);
    let limit = |b: f64| cpus.is_some_and(|c| b < EXTERNAL_LIMIT * c.max(1) as f64);
    match (full, caps) {
        (Some(b), _) if !limit(b) => Some(b.min(cpus.map_or(b, f64::from))),
        (Some(_), Some(c)) if limit(c) => ratio(tot.total_cpu, tot.active_time),
        _ => caps,
    }
}

/// Eq. 11 in time units (docs/speedups.md §eq. 11): the time of a run of
/// reference work `t1` with these efficiencies.
#[derive(Debug, Clone, Copy)]
struct Eq11 {
    t1: f64,
    pf: f64,
    so: f64,
    po: f64,
    lb: f64,
    lc: f64,
    cpu: f64,
    /// The serial part's on-CPU share (runnable time of the serial path).
    cpu_serial: f64,
    threads: f64,
    gc: f64,
    /// E_LH's complement `H_p / A_p`: the share of the parallel active time the
    /// threads spent handing locks over.
    handoff: f64,
    /// The share of the parallel work kept: 1, or `1 − H_p/A_p` once the locks'
    /// own hand-off work is removed with them.
    parallel_kept: f64,
    /// The CPUs the process could use, on average while it had work (measured
    /// per sampler interval); `None` when unknown.
    capacity: Option<f64>,
    /// The CPUs the process was allowed (header `cpus`).
    cpus: Option<f64>,
}

impl Eq11 {
    /// A line's time: eq. 11, but never below all the work done at the CPUs the
    /// process could get. Removing imbalance or a lock does not give a process
    /// that already used all the CPU it could get any more of it; only the
    /// oversubscription line (a core per thread) lifts that bound, and only when
    /// the process's own threads were what it lacked (it got its CPUs:
    /// [`EXTERNAL_LIMIT`]).
    fn line_time(&self, l: Limitation) -> f64 {
        let e = self.without(l);
        let t = e.time();
        match (l, self.capacity) {
            (_, None) => t,
            (Limitation::Oversubscription, _) if !self.externally_limited() => t,
            (_, Some(b)) => t.max(e.at_capacity(b)),
        }
    }

    /// All the work done at `b` CPUs: no run is shorter.
    fn at_capacity(&self, b: f64) -> f64 {
        let work =
            (1.0 - self.pf) * self.t1 / self.so + self.parallel_kept * self.pf * self.t1 / self.po;
        self.gc + work / b
    }

    /// The run's time under the model: eq. 11, never below all the work at the
    /// CPUs the process could get (a team of 300 threads on 2 CPUs: eq. 11 alone
    /// divides by 300, and every line, bounded so, read as a slowdown).
    fn bounded_time(&self) -> f64 {
        let t = self.time();
        match self.capacity {
            Some(b) => t.max(self.at_capacity(b)),
            None => t,
        }
    }

    /// Other processes (or a quota) kept the process below its CPUs.
    fn externally_limited(&self) -> bool {
        matches!((self.capacity, self.cpus), (Some(b), Some(c)) if b < EXTERNAL_LIMIT * c)
    }

    fn time(&self) -> f64 {
        let serial = (1.0 - self.pf) * self.t1 / (self.so * self.cpu_serial);
        let parallel = if self.pf > 0.0 {
            self.parallel_kept * self.pf * self.t1
                / (self.po * self.lb * self.lc * self.cpu * self.threads)
        } else {
            0.0
        };
        self.gc + serial + parallel
    }

    fn without(&self, l: Limitation) -> Eq11 {
        let mut e = *self;
        match l {
            Limitation::Serial => e.pf = 1.0,
            Limitation::Imbalance => e.lb = 1.0,
            Limitation::Locks => {
                e.lc = 1.0;
                e.parallel_kept = 1.0 - self.handoff
            }
            Limitation::Overhead => {
                e.so = 1.0;
                e.po = 1.0
            }
            Limitation::Oversubscription => {
                e.cpu = 1.0;
                e.cpu_serial = 1.0
            }
            Limitation::Gc => e.gc = 0.0,
        }
        e
    }
}

/// A ratio, `None` when the denominator is zero (never NaN or infinite).
fn ratio(a: f64, b: f64) -> Option<f64> {
    let r = a / b;
    (b > 0.0 && r.is_finite()).then_some(r)
}

/// The possible speedups of a run; with `baseline` (the work split of a
/// one-worker or sequential run of the same program), the overhead terms too.
pub fn compute(input: &SpeedupInput, baseline: Option<BaselineWork>) -> Speedups {
    let (given, explicit) = window_of(input);
    let (raw, tot, measured) = sweep_measured(input, given);
    // Without a --window the run is from the first to the last moment an
    // application thread did something (idle daemon threads do not stretch it).
    let window = if explicit {
        given
    } else {
        (
            tot.first_participation.unwrap_or(given.0),
            tot.last_participation
                .max(tot.first_participation.unwrap_or(given.0)),
        )
    };
    let cpu_source = if measured {
        CpuSource::Measured
    } else if input.cpus.is_some() {
        CpuSource::Estimated
    } else {
        CpuSource::Unknown
    };
    let busy_threads = raw
        .iter()
        .flat_map(|s| s.per.iter().filter(|(_, a)| a.act + a.blk > 0.0))
        .map(|&(i, _)| i)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let mut per_thread: Vec<(String, f64, f64, f64)> = input
        .threads
        .iter()
        .map(|t| (t.name.clone(), 0.0, 0.0, 0.0))
        .collect();
    for sec in &raw {
        for &(i, a) in &sec.per {
            let p = &mut per_thread[i];
            p.1 += a.act;
            p.2 += a.cpu;
            p.3 += a.blk;
        }
    }
    per_thread.retain(|p| p.1 + p.3 > 0.0);
    let c = classify(raw, input.threads.len());
    let c_serial_runnable = c.serial_runnable;

    let mut q = Quantities {
        cpu_serial: c.serial_cpu,
        active_serial: c.serial_active,
        gc: tot.gc,
        root_alone_cpu: tot.root_alone_cpu,
        total_cpu: tot.total_cpu,
        ..Quantities::default()
    };
    let mut team_threads = std::collections::BTreeSet::new();
    let mut sections = Vec::new();
    for (sec, members) in &c.parallel {
        let cj = total(&sec.per, |a| a.cpu);
        let aj = total(&sec.per, |a| a.act);
        let bj = total(&sec.per, |a| a.blk);
        q.lock_handoff_parallel += total(&sec.per, |a| a.hand);
        let mcpu = largest(&sec.per, |a| a.cpu);
        let mact = largest(&sec.per, |a| a.act);
        let mrun = largest(&sec.per, |a| a.run);
        let nj = members.len() as f64;
        let balanced = (cj / nj).min(mcpu);
        q.cpu_parallel += cj;
        q.active_parallel += aj;
        q.lock_blocked_parallel += bj;
        q.busiest_cpu += mcpu;
        q.busiest_active += mact;
        q.busiest_runnable += mrun;
        q.balanced_cpu += balanced;
        team_threads.extend(members.iter().copied());
        sections.push(Section {
            start_ns: sec.start,
            end_ns: sec.end,
            threads: members.len() as u32,
            load_balance: ratio(balanced, mcpu).unwrap_or(1.0),
            lock_contention: ratio(aj, aj + bj).unwrap_or(1.0),
            busiest_ns: mact as u64,
        });
    }
    let sections_total = sections.len();
    sections.truncate(MAX_SECTIONS_LISTED);

    let mut notes = Vec::new();
    let status = if tot.total_cpu <= 0.0 && q.lock_blocked_parallel <= 0.0 {
        notes.push(
            "no application thread did anything in the window: there is nothing to speed up"
                .to_string(),
        );
        Status::NoActivity
    } else if busy_threads <= 1 {
        notes.push(
            "only one application thread ran: the program is serial, so no possible speedup \
             can be estimated from it (a possible speedup needs parallel work to measure)"
                .to_string(),
        );
        Status::OneThread
    } else if c.parallel.is_empty() {
        notes.push(
            "no parallel section: application threads never worked at the same time, so the \
             whole run is serial (parallel fraction 0) and no possible speedup can be estimated"
                .to_string(),
        );
        Status::NoParallelSection
    } else {
        Status::Ok
    };
    match cpu_source {
        CpuSource::Estimated => notes.push(format!(
            "cores: estimated by processor sharing over {} CPUs (no per-thread schedstat in \
             the trace; other processes are not seen)",
            input.cpus.unwrap_or(1)
        )),
        CpuSource::Unknown => notes.push(
            "cores: CPU count unknown and no per-thread schedstat: oversubscription is not \
             visible"
                .to_string(),
        ),
        CpuSource::Measured => {}
    }

    let work = q.cpu_serial + q.cpu_parallel;
    let (reference, pf, so, po, baseline_kind) = match baseline {
        Some(b) if b.parallel > 0.0 => (
            b.serial + b.parallel,
            ratio(b.parallel, b.serial + b.parallel),
            ratio(b.serial, q.cpu_serial),
            ratio(b.parallel, q.cpu_parallel),
            "one_worker",
        ),
        Some(b) => {
            // A sequential baseline (everything on main): the two overheads cannot
            // be told apart; one ratio for both.
            notes.push(
                "the baseline has no work outside its main thread: one overhead ratio is \
                 applied to both the serial and the parallel part"
                    .to_string(),
            );
            let o = ratio(b.serial, work);
            (b.serial, ratio(q.cpu_parallel, work), o, o, "sequential")
        }
        None => (work, ratio(q.cpu_parallel, work), None, None, "none"),
    };
    let lb = ratio(q.balanced_cpu, q.busiest_cpu);
    let lc = ratio(
        q.active_parallel,
        q.active_parallel + q.lock_blocked_parallel,
    );
    // Without blocking no probe records (sleep, socket I/O) once the trace says
    // whether other processes held CPUs (the machine's idle time): before, that
    // blocking is what read as CPU the process was denied.
    let runnable_known = !input.machine_idle.is_empty();
    let cores = if runnable_known {
        ratio(q.busiest_cpu, q.busiest_runnable).map(|c| c.min(1.0))
    } else {
        ratio(q.busiest_cpu, q.busiest_active)
    };
    let cores_serial = if runnable_known {
        ratio(q.cpu_serial, c_serial_runnable).map(|c| c.min(1.0))
    } else {
        ratio(q.cpu_serial, q.active_serial)
    }
    .unwrap_or(1.0);
    let threads_effective = ratio(q.cpu_parallel, q.balanced_cpu).unwrap_or(0.0);
    let efficiencies = Efficiencies {
        parallel_fraction: pf.or(Some(0.0)).filter(|_| status != Status::NoActivity),
        load_balance: lb.filter(|_| status == Status::Ok),
        lock_contention: lc.filter(|_| status == Status::Ok),
        serial_overhead: so,
        parallel_overhead: po,
        cores: cores.filter(|_| status == Status::Ok),
    };

    let observed_ns = window.1.saturating_sub(window.0);
    let model = (status == Status::Ok).then(|| Eq11 {
        t1: reference,
        pf: pf.unwrap_or(0.0),
        so: so.unwrap_or(1.0),
        po: po.unwrap_or(1.0),
        lb: lb.unwrap_or(1.0),
        lc: lc.unwrap_or(1.0),
        cpu: cores.unwrap_or(1.0),
        cpu_serial: cores_serial,
        threads: threads_effective,
        gc: q.gc,
        handoff: q.handoff_share(),
        parallel_kept: 1.0,
        capacity: capacity(&tot, input.cpus),
        cpus: input.cpus.map(f64::from),
    });
    let calculated = model
        .map(|m| m.bounded_time())
        .filter(|t| t.is_finite() && *t > 0.0);
    let residual = calculated.and_then(|c| ratio(observed_ns as f64 - c, observed_ns as f64));
    let lines = Limitation::ALL
        .iter()
        .map(|&l| {
            let available = match l {
                Limitation::Overhead => baseline.is_some(),
                _ => true,
            };
            // Removing a limitation never makes the run slower: at worst it stays
            // (eq. 11 moving a serial part into inefficient parallel sections read
            // "serial part ×0.81" on H2).
            let t = model
                .filter(|_| available)
                .map(|m| m.line_time(l))
                .filter(|t| t.is_finite() && *t > 0.0)
                .map(|t| calculated.map_or(t, |c| t.min(c)));
            Line {
                remove: l,
                time_ns: t,
                closed_form_gain: t.and_then(|t| calculated.and_then(|c| ratio(c, t))),
                possible_speedup: t.and_then(|t| ratio(reference, t)),
                simulated_gain: None,
            }
        })
        .collect();
    if let (Some(m), Some(b), Some(c), Some(calc)) = (
        model,
        model.and_then(|m| m.capacity),
        input.cpus,
        calculated,
    ) {
        if m.externally_limited() {
            let idle = m.without(Limitation::Oversubscription).time();
            notes.push(format!(
                "other processes: the process got {b:.2} of its {c} CPUs on average while it had work; \
                 no change to the program gives it more, so the oversubscription line (a core per thread) \
                 is bounded by that; with the machine to itself and a core per thread: ×{:.2}",
                ratio(calc, idle).unwrap_or(1.0)
            ));
        }
    }
    let across_cores = model
        .map(|m| across_cores(&m, input.cpus, threads_effective, baseline.is_some()))
        .unwrap_or_default();

    Speedups {
        status,
        notes,
        window,
        window_source: input.window_source.clone(),
        cpus: input.cpus,
        cpu_source,
        baseline: baseline_kind,
        threads: team_threads.len() as u32,
        threads_effective,
        quantities: q,
        efficiencies,
        reference_ns: reference,
        observed_ns,
        baseline_observed_ns: baseline.map(|b| b.observed_ns),
        calculated_ns: calculated,
        residual,
        lines,
        sections,
        sections_total,
        across_cores,
        per_thread,
    }
}

/// Eq. 11 at 1..=max(8, 2·cpus, team) cores: `#T = cores`, each thread on its own
/// core (E_CPU = 1), the other efficiencies held at their measured values.
fn across_cores(m: &Eq11, cpus: Option<u32>, team: f64, baseline: bool) -> Vec<CoresPoint> {
    let top = 8u32
        .max(2 * cpus.unwrap_or(1))
        .max(team.ceil() as u32)
        .min(256);
    (1..=top)
        .map(|p| {
            let mut at = *m;
            at.threads = p as f64;
            at.cpu = 1.0;
            at.cpu_serial = 1.0;
            at.capacity = Some(p as f64);
            CoresPoint {
                cores: p,
                current: ratio(at.t1, at.time()).unwrap_or(0.0),
                removed: Limitation::ALL
                    .iter()
                    .filter(|&&l| l != Limitation::Oversubscription)
                    .map(|&l| {
                        let v = if l == Limitation::Overhead && !baseline {
                            None
                        } else {
                            ratio(at.t1, at.line_time(l))
                        };
                        (l, v)
                    })
                    .collect(),
                ideal: p as f64,
            }
        })
        .collect()
}

/// The possible speedups of an analysed run (no baseline), over `window` when
/// the model is a window's part of the trace.
pub fn analyze(model: &Model, locks: &LockAnalysis, window: Option<&Window>) -> Speedups {
    compute(&gather(model, locks, window), None)
}

#[cfg(test)]
#[path = "speedups_tests.rs"]
mod tests;
