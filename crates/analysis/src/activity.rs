//! What each task execution's self time was spent on: **running** (on a CPU),
//! **blocked** on a lock, **waiting** (recorded waits: `Object.wait`, parks,
//! latch awaits), and **off-CPU** time that no recorded wait explains (I/O,
//! sleeps, unrecorded blocking, being scheduled out). A task's self time is wall
//! time; a blocking loop (an acceptor in `accept()`, an idle pool worker) has a
//! long self time and almost no running time, and must not be called coarse.
//!
//! Inputs: the reported executions (their self-time segments on their thread),
//! the lock analysis's blocked periods and waits, and per-thread CPU
//! checkpoints (cumulative on-CPU time at known times: the thread's start and
//! `ThreadEnd`; per-tick schedstat records when the trace has them). Between two
//! checkpoints a thread's CPU time is spread over its time there that was
//! neither blocked nor waiting, in proportion; time with no checkpoint around it
//! is counted as running and marked unmeasured (an upper bound).

use std::collections::BTreeMap;

use weft_trace::ThreadIndex;

use crate::locks::LockAnalysis;
use crate::model::Model;
use crate::tasks::{Distribution, TaskAnalysis, TaskKind};

/// A class whose busy time (on a CPU or ready to run) is below this share of its self time is "mostly
/// idle": what it is (waiting for work, blocked, in I/O) is said instead of
/// judging its granularity.
pub const IDLE_MAX_RUNNING_SHARE: f64 = 0.2;
/// A mostly off-CPU class with at most this many executions is a loop (an
/// acceptor, a selector), not many short tasks blocking in I/O.
pub const LOOP_MAX_EXECUTIONS: u64 = 4;
/// The CPU time of a class counts as measured when at least this share of its
/// not-blocked, not-waiting time lies between two CPU checkpoints of its thread.
pub const MEASURED_MIN_SHARE: f64 = 0.9;

/// Self time of one execution, split by what the thread was doing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SelfSplit {
    /// On a CPU (measured, or unmeasured time counted as running: see `unmeasured_ns`).
    pub running_ns: u64,
    /// Blocked acquiring a lock (LockAnalysis::blocked).
    pub blocked_ns: u64,
    /// In a recorded wait (LockAnalysis::wait_intervals).
    pub waiting_ns: u64,
    /// Ready to run, waiting for a CPU (schedstat's run-queue time; 0 without schedstat).
    pub runnable_ns: u64,
    /// Neither blocked nor waiting, and not on a CPU nor in the run queue: I/O,
    /// sleep, unrecorded blocking (and the run queue when it was not measured).
    pub off_cpu_ns: u64,
    /// Part of `running_ns` with no CPU measurement around it (counted as running).
    pub unmeasured_ns: u64,
}

impl SelfSplit {
    pub fn total(&self) -> u64 {
        self.running_ns + self.runnable_ns + self.blocked_ns + self.waiting_ns + self.off_cpu_ns
    }

    /// CPU demand: on a CPU or ready to run (WHATIF §1.5).
    pub fn demand_ns(&self) -> u64 {
        self.running_ns + self.runnable_ns
    }

    fn add(&mut self, o: &SelfSplit) {
        self.running_ns += o.running_ns;
        self.runnable_ns += o.runnable_ns;
        self.blocked_ns += o.blocked_ns;
        self.waiting_ns += o.waiting_ns;
        self.off_cpu_ns += o.off_cpu_ns;
        self.unmeasured_ns += o.unmeasured_ns;
    }
}

/// What a task class mostly did with its self time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Activity {
    /// Busy (on a CPU or ready to run) at least [`IDLE_MAX_RUNNING_SHARE`] of its self time.
    Running,
    /// Mostly in recorded waits: a worker waiting for work, a task waiting for others.
    Waiting,
    /// Mostly blocked on locks.
    Blocked,
    /// Mostly off-CPU without a recorded wait: a blocking-I/O loop (accept, read, select) or sleeps.
    OffCpu,
}

impl Activity {
    pub fn as_str(self) -> &'static str {
        match self {
            Activity::Running => "running",
            Activity::Waiting => "waiting",
            Activity::Blocked => "blocked",
            Activity::OffCpu => "off_cpu",
        }
    }
}

/// The split of one task class (an entry of `TaskAnalysis::classes`, same index).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassActivity {
    /// Sum over the class's reported executions.
    pub split: SelfSplit,
    /// Busy time (on a CPU or ready to run: [`SelfSplit::demand_ns`]) per reported execution.
    pub busy_ns: Distribution,
    /// Waiting time by wait kind (`Object.wait`, `park`, …): (kind, ns, waits begun in its executions).
    pub waits: Vec<(&'static str, u64, u64)>,
    /// Waiting time by what was waited on: (index into `LockAnalysis::wait_groups`,
    /// ns, waits begun in its executions), most waited first.
    pub wait_groups: Vec<(usize, u64, u64)>,
    pub activity: Activity,
    /// The CPU time behind `split.running_ns` was measured (see [`MEASURED_MIN_SHARE`]).
    pub cpu_measured: bool,
    /// Reported executions that host other reported executions (a pool thread running tasks).
    pub hosts_tasks: bool,
}

impl ClassActivity {
    /// Busy time ÷ self time.
    pub fn busy_share(&self) -> f64 {
        let t = self.split.total();
        if t == 0 {
            1.0
        } else {
            self.split.demand_ns() as f64 / t as f64
        }
    }

    /// Plain words for a mostly idle class (`None` when it is running).
    pub fn idle_label(&self, kind: TaskKind) -> Option<&'static str> {
        match self.activity {
            Activity::Running => None,
            // A thread that runs tasks and waits between them.
            Activity::Waiting if self.hosts_tasks => Some("idle worker (waits for work)"),
            // What it waits for is not known (for work, a row lock, a reply): say so.
            Activity::Waiting => Some("mostly waiting (see waits)"),
            Activity::Blocked => Some("mostly blocked on locks"),
            // A thread or a few long executions off-CPU: a loop blocked in I/O.
            Activity::OffCpu
                if kind == TaskKind::Thread || self.busy_ns.count <= LOOP_MAX_EXECUTIONS =>
            {
                Some("blocking loop (off-CPU: I/O or sleep)")
            }
            Activity::OffCpu => {
                Some("mostly off-CPU (I/O, sleep, or blocking weft does not record)")
            }
        }
    }
}

/// Per-thread CPU checkpoints: (time, cumulative on-CPU ns, cumulative run-queue
/// ns), increasing in time.
pub type CpuCheckpoints = BTreeMap<ThreadIndex, Vec<(u64, u64, u64)>>;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActivityAnalysis {
    /// The split of each reported execution: (index into `TaskAnalysis::executions`,
    /// split), by index. Aggregated executions have none (their time is in the
    /// reported execution they are folded into; a fork-join run has millions of
    /// them): read through [`ActivityAnalysis::split`].
    pub(crate) executions: Vec<(usize, SelfSplit)>,
    /// One per `TaskAnalysis::classes`.
    pub classes: Vec<ClassActivity>,
    /// Indices into the classes, by total busy time (largest first), then self time.
    pub order: Vec<usize>,
    /// Where the CPU times come from: `thread_end` (one value per ended thread) or `schedstat`.
    pub cpu_source: &'static str,
    /// Blocked time by (execution, lock index into `LockAnalysis::locks`), execution order.
    pub blocked_on: Vec<(usize, usize, u64)>,
    /// Waiting time by (execution, wait kind): (execution, kind, ns, waits begun), execution order.
    pub waited: Vec<(usize, &'static str, u64, u64)>,
}

impl ActivityAnalysis {
    /// The split of execution `i` (zero for an aggregated execution).
    pub fn split(&self, i: usize) -> SelfSplit {
        self.executions
            .binary_search_by_key(&i, |s| s.0)
            .map_or_else(|_| SelfSplit::default(), |k| self.executions[k].1)
    }

    /// The splits of the reported executions: (index into
    /// `TaskAnalysis::executions`, split), by index.
    pub fn splits(&self) -> &[(usize, SelfSplit)] {
        &self.executions
    }
}

/// CPU checkpoints from the model: each thread's schedstat readings (on-CPU and
/// run-queue time, every sampler tick and at its end; with its start as zero
/// when the readings begin after it), else its start (0) and its `ThreadEnd` CPU
/// time (no run-queue time: off-CPU then includes waiting for a CPU).
/// Also says which source most threads had: `schedstat` or `thread_end`.
pub fn cpu_checkpoints(model: &Model) -> (CpuCheckpoints, &'static str) {
    let mut out = CpuCheckpoints::new();
    let mut sched = 0;
    for t in model.threads.values() {
        if t.sched.len() >= 2 || (t.sched.len() == 1 && t.start_ns.is_some()) {
            let mut v: Vec<(u64, u64, u64)> = Vec::with_capacity(t.sched.len() + 1);
            if let (Some(s), Some(first)) = (t.start_ns, t.sched.first()) {
                // The counters start with the OS thread, just before its ThreadStart.
                let consistent =
                    first.on_cpu_ns + first.runq_ns <= first.ts_ns.saturating_sub(s) + 1_000_000;
                if first.ts_ns > s && consistent {
                    v.push((s, 0, 0));
                }
            }
            v.extend(t.sched.iter().map(|p| (p.ts_ns, p.on_cpu_ns, p.runq_ns)));
            v.dedup_by_key(|p| p.0);
            out.insert(t.index, v);
            sched += 1;
        } else if let (Some(s), Some(e), Some(cpu)) = (t.start_ns, t.end_ns, t.cpu_ns) {
            if e > s {
                out.insert(t.index, vec![(s, 0, 0), (e, cpu, 0)]);
            }
        }
    }
    (out, if sched > 0 { "schedstat" } else { "thread_end" })
}

/// The split for every reported execution, from the model's per-thread CPU times.
/// The split with the model's CPU checkpoints; `unmounted`: each virtual thread's
/// stretches unmounted (`VirtualThreadAnalysis::unmounted`), not its executions' self
/// time, so not split either. Without them a virtual-thread task class's "running"
/// upper bound was its wall time, unmounted waits included ("≤1513 s" over 20,000
/// virtual threads of a 0.6 s run).
pub fn analyze(
    model: &Model,
    tasks: &TaskAnalysis,
    locks: &LockAnalysis,
    unmounted: &BTreeMap<ThreadIndex, Vec<(u64, u64)>>,
) -> ActivityAnalysis {
    let (cpu, source) = cpu_checkpoints(model);
    analyze_unmounted(tasks, locks, &cpu, source, unmounted)
}

/// `segs` (disjoint, by time) without the parts inside `holes` (disjoint, by time).
fn without(segs: Vec<Span<usize>>, holes: &[(u64, u64)]) -> Vec<Span<usize>> {
    if holes.is_empty() {
        return segs;
    }
    let mut out = Vec::with_capacity(segs.len());
    let mut k = 0;
    for (mut s, e, i) in segs {
        while k < holes.len() && holes[k].1 <= s {
            k += 1;
        }
        let mut h = k;
        while s < e {
            match holes.get(h) {
                Some(&(hs, he)) if hs < e => {
                    if hs > s {
                        out.push((s, hs, i));
                    }
                    s = s.max(he);
                    h += 1;
                }
                _ => {
                    out.push((s, e, i));
                    break;
                }
            }
        }
    }
    out
}

/// A piece of a thread's timeline: `[s, e)` and a payload.
type Span<T> = (u64, u64, T);

/// The innermost reported execution at each instant of one thread: disjoint
/// segments, by time. Aggregated executions are transparent (their time is
/// their reported ancestor's), so the segments of an execution add up to its self time.
fn self_segments(tasks: &TaskAnalysis, mut execs: Vec<usize>) -> Vec<Span<usize>> {
    let ex = &tasks.executions;
    execs.sort_by_key(|&i| (ex[i].begin_ns, std::cmp::Reverse(ex[i].end_ns), i));
    let mut segs = Vec::with_capacity(execs.len() * 2);
    let mut stack: Vec<usize> = Vec::new();
    let mut cur = 0u64;
    let emit = |segs: &mut Vec<Span<usize>>, s: u64, e: u64, i: usize| {
        if e > s {
            segs.push((s, e, i));
        }
    };
    for i in execs {
        let b = ex[i].begin_ns;
        while let Some(&top) = stack.last() {
            if ex[top].end_ns > b {
                break;
            }
            let e = ex[top].end_ns.max(cur);
            emit(&mut segs, cur, e, top);
            cur = e;
            stack.pop();
        }
        if let Some(&top) = stack.last() {
            emit(&mut segs, cur, b, top);
        }
        cur = b.max(cur);
        stack.push(i);
    }
    while let Some(top) = stack.pop() {
        let e = ex[top].end_ns.max(cur);
        emit(&mut segs, cur, e, top);
        cur = e;
    }
    segs
}

/// Advances `k` past spans ending at or before `t`; the span containing `t`, if any.
fn at<T: Copy>(v: &[Span<T>], k: &mut usize, t: u64) -> Option<T> {
    while *k < v.len() && v[*k].1 <= t {
        *k += 1;
    }
    v.get(*k).filter(|x| x.0 <= t).map(|x| x.2)
}

/// What a piece of a thread's time was.
#[derive(Clone, Copy, PartialEq)]
enum State {
    /// On the lock (index into `LockAnalysis::locks`).
    Blocked(usize),
    /// In a wait: (kind, index into `LockAnalysis::wait_groups`).
    Waiting((&'static str, usize)),
    Available,
}

/// The split with explicit CPU checkpoints (`source` names where they come from).
pub fn analyze_with(
    tasks: &TaskAnalysis,
    locks: &LockAnalysis,
    cpu: &CpuCheckpoints,
    source: &'static str,
) -> ActivityAnalysis {
    analyze_unmounted(tasks, locks, cpu, source, &BTreeMap::new())
}

/// [`analyze_with`], leaving virtual threads' unmounted stretches out of the split.
fn analyze_unmounted(
    tasks: &TaskAnalysis,
    locks: &LockAnalysis,
    cpu: &CpuCheckpoints,
    source: &'static str,
    unmounted: &BTreeMap<ThreadIndex, Vec<(u64, u64)>>,
) -> ActivityAnalysis {
    let ex = &tasks.executions;
    let mut per_thread: BTreeMap<ThreadIndex, Vec<usize>> = BTreeMap::new();
    for (i, e) in ex.iter().enumerate() {
        if e.reported() {
            per_thread.entry(e.thread).or_default().push(i);
        }
    }
    let mut blocked: BTreeMap<ThreadIndex, Vec<Span<usize>>> = BTreeMap::new();
    for b in &locks.blocked {
        blocked
            .entry(b.thread)
            .or_default()
            .push((b.start_ns, b.end_ns, b.lock));
    }
    let mut waits: BTreeMap<ThreadIndex, Vec<Span<(&'static str, usize)>>> = BTreeMap::new();
    for w in &locks.wait_intervals {
        waits
            .entry(w.thread)
            .or_default()
            .push((w.start_ns, w.end_ns, (w.kind, w.group)));
    }
    // One per reported execution, by index (`split_at` finds an execution's).
    let mut splits: Vec<(usize, SelfSplit)> = ex
        .iter()
        .enumerate()
        .filter(|(_, e)| e.reported())
        .map(|(i, _)| (i, SelfSplit::default()))
        .collect();
    let split_at =
        |splits: &[(usize, SelfSplit)], i: usize| splits.binary_search_by_key(&i, |s| s.0).ok();
    // (execution, wait kind) -> (ns, waits begun)
    let mut wait_kinds: BTreeMap<(usize, &'static str), (u64, u64)> = BTreeMap::new();
    // (execution, wait group) -> (ns, waits begun)
    let mut wait_groups: BTreeMap<(usize, usize), (u64, u64)> = BTreeMap::new();
    let mut blocked_on: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    for (&thread, execs) in &per_thread {
        let segs = without(
            self_segments(tasks, execs.clone()),
            unmounted.get(&thread).map_or(&[][..], Vec::as_slice),
        );
        let mut bl = blocked.remove(&thread).unwrap_or_default();
        let mut wt = waits.remove(&thread).unwrap_or_default();
        bl.sort_unstable_by_key(|x| (x.0, x.1));
        wt.sort_unstable_by_key(|x| (x.0, x.1));
        // CPU windows: (start, end, cpu ns in it).
        // (start, end, (on-CPU ns, run-queue ns) in it).
        let windows: Vec<Span<(u64, u64)>> = cpu
            .get(&thread)
            .map(|c| {
                c.windows(2)
                    .filter(|w| w[1].0 > w[0].0)
                    .map(|w| {
                        let d = (w[1].1.saturating_sub(w[0].1), w[1].2.saturating_sub(w[0].2));
                        (w[0].0, w[1].0, d)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut points: Vec<u64> = Vec::with_capacity(2 * (segs.len() + bl.len() + wt.len()));
        for s in &segs {
            points.extend([s.0, s.1]);
        }
        for b in &bl {
            points.extend([b.0, b.1]);
        }
        for w in &wt {
            points.extend([w.0, w.1]);
        }
        for w in &windows {
            points.extend([w.0, w.1]);
        }
        points.sort_unstable();
        points.dedup();
        let state_at = |kb: &mut usize, kw: &mut usize, t: u64| {
            if let Some(l) = at(&bl, kb, t) {
                State::Blocked(l)
            } else if let Some(k) = at(&wt, kw, t) {
                State::Waiting(k)
            } else {
                State::Available
            }
        };
        // Pass 1: available (not blocked, not waiting) time in each CPU window.
        let mut avail = vec![0u64; windows.len()];
        let (mut kb, mut kw, mut kc) = (0, 0, 0);
        for p in points.windows(2) {
            let (a, b) = (p[0], p[1]);
            if state_at(&mut kb, &mut kw, a) == State::Available
                && at(&windows, &mut kc, a).is_some()
            {
                avail[kc] += b - a;
            }
        }
        // Pass 2: assign each piece owned by an execution.
        let (mut kb, mut kw, mut kc, mut ks) = (0, 0, 0, 0);
        for p in points.windows(2) {
            let (a, b) = (p[0], p[1]);
            let Some(owner) = at(&segs, &mut ks, a) else {
                continue;
            };
            let d = b - a;
            let Some(k) = split_at(&splits, owner) else {
                continue;
            };
            let sp = &mut splits[k].1;
            match state_at(&mut kb, &mut kw, a) {
                State::Blocked(l) => {
                    sp.blocked_ns += d;
                    *blocked_on.entry((owner, l)).or_default() += d;
                }
                State::Waiting((k, g)) => {
                    sp.waiting_ns += d;
                    wait_kinds.entry((owner, k)).or_default().0 += d;
                    wait_groups.entry((owner, g)).or_default().0 += d;
                }
                State::Available => match at(&windows, &mut kc, a) {
                    Some((cpu_ns, runq_ns)) => {
                        // Spread the window's CPU and run-queue time over its
                        // available time, in proportion; never more than the piece.
                        let av = avail[kc].max(1) as u128;
                        let d128 = d as u128;
                        let run = (d128 * cpu_ns as u128 / av).min(d128) as u64;
                        let rq = (d128 * runq_ns as u128 / av).min((d - run) as u128) as u64;
                        sp.running_ns += run;
                        sp.runnable_ns += rq;
                        sp.off_cpu_ns += d - run - rq;
                    }
                    None => {
                        sp.running_ns += d;
                        sp.unmeasured_ns += d;
                    }
                },
            }
        }
        // Waits begun inside each execution's self time.
        let mut ks = 0;
        for w in &wt {
            if let Some(owner) = at(&segs, &mut ks, w.0) {
                wait_kinds.entry((owner, w.2 .0)).or_default().1 += 1;
                wait_groups.entry((owner, w.2 .1)).or_default().1 += 1;
            }
        }
    }
    // Per class.
    let index: std::collections::HashMap<(&str, TaskKind), usize> = tasks
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.class.as_str(), c.kind), i))
        .collect();
    let n = tasks.classes.len();
    let mut sums = vec![SelfSplit::default(); n];
    let mut running: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut hosts = vec![false; n];
    let mut class_waits: Vec<BTreeMap<&'static str, (u64, u64)>> = vec![BTreeMap::new(); n];
    let mut class_wait_groups: Vec<BTreeMap<usize, (u64, u64)>> = vec![BTreeMap::new(); n];
    let class_of = |i: usize| index.get(&(tasks.class(&ex[i]), ex[i].kind)).copied();
    for (i, e) in ex.iter().enumerate() {
        if !e.reported() {
            continue;
        }
        if let Some(c) = class_of(i) {
            let s = split_at(&splits, i).map_or_else(SelfSplit::default, |k| splits[k].1);
            sums[c].add(&s);
            running[c].push(s.demand_ns());
        }
        // The nearest reported ancestor hosts this execution.
        let mut p = e.parent();
        while let Some(pi) = p {
            if ex[pi].reported() {
                if let Some(c) = class_of(pi) {
                    hosts[c] = true;
                }
                break;
            }
            p = ex[pi].parent();
        }
    }
    let waited: Vec<(usize, &'static str, u64, u64)> = wait_kinds
        .iter()
        .map(|(&(i, k), &(ns, n))| (i, k, ns, n))
        .collect();
    for ((i, k), (ns, count)) in wait_kinds {
        if let Some(c) = class_of(i) {
            let w = class_waits[c].entry(k).or_default();
            w.0 += ns;
            w.1 += count;
        }
    }
    for ((i, g), (ns, count)) in wait_groups {
        if let Some(c) = class_of(i) {
            let w = class_wait_groups[c].entry(g).or_default();
            w.0 += ns;
            w.1 += count;
        }
    }
    let classes: Vec<ClassActivity> = (0..n)
        .map(|c| {
            let s = sums[c];
            let mut waits: Vec<(&'static str, u64, u64)> = class_waits[c]
                .iter()
                .map(|(k, (ns, n))| (*k, *ns, *n))
                .collect();
            waits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let mut wait_groups: Vec<(usize, u64, u64)> = class_wait_groups[c]
                .iter()
                .map(|(g, (ns, n))| (*g, *ns, *n))
                .collect();
            wait_groups.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let available = s.demand_ns() + s.off_cpu_ns;
            let cpu_measured = available == 0
                || (available - s.unmeasured_ns) as f64 >= MEASURED_MIN_SHARE * available as f64;
            let total = s.total();
            let activity =
                if total == 0 || s.demand_ns() as f64 >= IDLE_MAX_RUNNING_SHARE * total as f64 {
                    Activity::Running
                } else if s.waiting_ns >= s.blocked_ns && s.waiting_ns >= s.off_cpu_ns {
                    Activity::Waiting
                } else if s.blocked_ns >= s.off_cpu_ns {
                    Activity::Blocked
                } else {
                    Activity::OffCpu
                };
            ClassActivity {
                split: s,
                busy_ns: Distribution::of(&running[c]),
                waits,
                wait_groups,
                activity,
                cpu_measured,
                hosts_tasks: hosts[c],
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        classes[b]
            .split
            .demand_ns()
            .cmp(&classes[a].split.demand_ns())
            .then(
                tasks.classes[b]
                    .granularity_ns
                    .total
                    .cmp(&tasks.classes[a].granularity_ns.total),
            )
            .then(a.cmp(&b))
    });
    ActivityAnalysis {
        executions: splits,
        classes,
        order,
        cpu_source: source,
        blocked_on: blocked_on
            .into_iter()
            .map(|((e, l), ns)| (e, l, ns))
            .collect(),
        waited,
    }
}

/// Collapsed stacks of the reported executions' self time (ns): `kind;class;site;state`,
/// state `running`, `off-CPU (I/O, sleep, run queue)`, `waiting: <kind>` or
/// `blocked on <lock class> (<kind>);<acquisition site>`. Every nanosecond of
/// self time is in exactly one stack, so the stacks of a class add up to its
/// total self time in the report, and all of them to the sum of those totals.
pub fn self_time_stacks(
    tasks: &TaskAnalysis,
    locks: &LockAnalysis,
    act: &ActivityAnalysis,
) -> Vec<(Vec<String>, u64)> {
    let site = |e: &crate::tasks::TaskExecution| match (e.submitted_site(), e.created_site()) {
        (Some(s), _) => format!("submitted at {s}"),
        (None, Some(c)) => format!("created at {c}"),
        (None, None) => "site not captured".to_string(),
    };
    let mut by: BTreeMap<Vec<String>, u64> = BTreeMap::new();
    let mut add = |frames: Vec<String>, ns: u64| {
        if ns > 0 {
            *by.entry(frames).or_default() += ns;
        }
    };
    let base = |i: usize| {
        let e = &tasks.executions[i];
        vec![
            e.kind.as_str().to_string(),
            tasks.class(e).to_string(),
            site(e),
        ]
    };
    for (i, e) in tasks.executions.iter().enumerate() {
        if !e.reported() {
            continue;
        }
        let s = act.split(i);
        // Time the split could not place (inconsistent nesting) stays running.
        let placed = s.total();
        let mut run = base(i);
        run.push("running".into());
        add(run, s.running_ns + e.self_ns.saturating_sub(placed));
        let mut off = base(i);
        off.push("off-CPU (I/O, sleep, run queue)".into());
        add(off, s.off_cpu_ns);
        let mut rq = base(i);
        rq.push("runnable (waiting for a CPU)".into());
        add(rq, s.runnable_ns);
    }
    for &(i, kind, ns, _) in &act.waited {
        let mut w = base(i);
        w.push(format!("waiting: {kind}"));
        add(w, ns);
    }
    for &(i, l, ns) in &act.blocked_on {
        let lock = &locks.locks[l];
        let mut b = base(i);
        b.push(format!("blocked on {} ({})", lock.class, lock.kind));
        b.push(
            lock.sites
                .first()
                .map_or("site not sampled".to_string(), |s| s.0.clone()),
        );
        add(b, ns);
    }
    by.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use weft_trace::{wait_kind, Record};

    const MS: u64 = 1_000_000;

    /// Holes cut segments: inside one, across two, over a whole one, at the ends.
    #[test]
    fn segments_without_unmounted_stretches() {
        let segs = vec![(0, 10, 1), (10, 20, 2), (30, 40, 3)];
        assert_eq!(without(segs.clone(), &[]), segs);
        assert_eq!(
            without(segs.clone(), &[(2, 4), (8, 12), (25, 45)]),
            vec![(0, 2, 1), (4, 8, 1), (12, 20, 2)]
        );
        assert_eq!(without(segs, &[(0, 100)]), vec![]);
    }

    /// Thread 1: one long task (0–1 s) that waits 600 ms; thread 2: one busy task
    /// (0–1 s) with a nested submitted task (200–400 ms). CPU: thread 1 used 100 ms,
    /// thread 2 its whole life.
    fn trace() -> weft_trace::Trace {
        let mut tb = TB::new();
        tb.start(1, 0, C_THREAD, (0, 0));
        tb.start(2, 0, C_THREAD, (0, 0));
        tb.submit(MAIN, 0, (C_OUTER, 1), 0);
        tb.submit(MAIN, 0, (C_OUTER, 2), 0);
        tb.submit(MAIN, 0, (C_WORK, 3), 0);
        tb.begin(1, 10 * MS, P_RUN, C_OUTER, 1);
        tb.recs.push((
            1,
            Record::WaitBegin {
                ts: 100 * MS,
                kind: wait_kind::PARK,
                lock: 0,
            },
        ));
        tb.recs.push((
            1,
            Record::WaitEnd {
                ts: 700 * MS,
                timed_out: false,
            },
        ));
        tb.end(1, 1010 * MS, P_RUN, 1);
        tb.begin(2, 10 * MS, P_RUN, C_OUTER, 2);
        tb.run(2, 200 * MS, 400 * MS, P_WORK_RUN, C_WORK, 3);
        tb.end(2, 1010 * MS, P_RUN, 2);
        for (t, cpu) in [(1, 100 * MS), (2, 1020 * MS)] {
            tb.recs.push((
                t,
                Record::ThreadEnd {
                    ts: 1020 * MS,
                    cpu_ns: cpu,
                    voluntary_cs: 0,
                    involuntary_cs: 0,
                },
            ));
        }
        tb.global(Record::End { ts: 1020 * MS });
        tb.trace()
    }

    #[test]
    fn splits_add_up_to_self_time() {
        let a = crate::analyze(&trace());
        let t = &a.tasks;
        for (i, e) in t.executions.iter().enumerate() {
            if e.reported() {
                assert_eq!(a.activity.split(i).total(), e.self_ns, "{e:?}");
            }
        }
        let i1 = t
            .executions
            .iter()
            .position(|e| e.thread == 1 && e.kind != TaskKind::Thread)
            .unwrap();
        let s = a.activity.split(i1);
        assert_eq!(s.waiting_ns, 600 * MS);
        // Thread 1 had 420 ms not waiting (0–100, 700–1020) and 100 ms of CPU:
        // the task's 400 ms of it get 400 × 100/420.
        // (floored piece by piece)
        assert!(s.running_ns.abs_diff(400 * MS * 100 / 420) <= 2, "{s:?}");
        assert_eq!(s.running_ns + s.off_cpu_ns, 400 * MS);
        assert_eq!(s.unmeasured_ns, 0);
        // Thread 2's outer task ran all its 800 ms of self time.
        let i2 = t
            .executions
            .iter()
            .position(|e| e.thread == 2 && t.class(e) == "demo.Outer")
            .unwrap();
        assert_eq!(a.activity.split(i2).running_ns, 800 * MS);
        // demo.Outer: 2 executions; 1 mostly idle but the class runs.
        let c = t
            .classes
            .iter()
            .position(|c| c.class == "demo.Outer")
            .unwrap();
        let ca = &a.activity.classes[c];
        assert_eq!(ca.activity, Activity::Running);
        assert!(ca.cpu_measured);
        assert_eq!(ca.waits, vec![("park", 600 * MS, 1)]);
        assert_eq!(ca.busy_ns.count, 2);
    }

    #[test]
    fn unknown_cpu_counts_as_unmeasured_running() {
        let a = crate::analyze(&trace());
        let b = analyze_with(&a.tasks, &a.locks, &CpuCheckpoints::new(), "none");
        let s: u64 = b.splits().iter().map(|s| s.1.unmeasured_ns).sum();
        assert!(s > 0);
        for c in &b.classes {
            let available = c.split.running_ns + c.split.off_cpu_ns;
            assert!(available == 0 || !c.cpu_measured, "{c:?}");
            assert_eq!(c.split.off_cpu_ns, 0);
        }
    }
}
