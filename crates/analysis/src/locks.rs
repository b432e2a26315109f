//! Lock contention: critical-section pressure (CSP, Free Lunch) per lock, per
//! interval and for the whole run, contended acquisitions, blocked time per lock
//! and thread, sites, owners, phases where a lock dominated, and waits apart.
//!
//! Definitions (docs/locks.md):
//! - blocked: from `LockBlock` to `LockAcquired` on the same thread (a monitor's
//!   contended enter, or the AQS / StampedLock slow path);
//! - running time of a thread in an interval = its lifetime in the interval minus
//!   its waits (`WaitBegin`..`WaitEnd`: Object.wait, parks outside a lock
//!   acquisition, latch awaits). A park that is a lock acquisition is blocked time
//!   and is not subtracted again (Free Lunch's semantics); sleep is running;
//! - CSP(lock, interval) = Σ threads' blocked time on the lock ÷ Σ threads' running time;
//! - counted threads: every thread the agent saw start, except the JVM's own
//!   (see [`JVM_THREADS`]).

use std::collections::{BTreeMap, HashMap};

use weft_trace::{lock_flags, lock_kind, thread_state, wait_kind, ThreadIndex};

use crate::cpu::{covers, merge_intervals};
use crate::events::{EventKind, LOCK_GAVE_UP};
use crate::model::Model;

/// Default CSP interval (Free Lunch: 1 s).
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000_000;
/// Header key with the interval chosen at record time (`weft record --lock-interval`).
pub const INTERVAL_HEADER: &str = "locks.interval_ns";
/// A lock "dominates" an interval when its CSP there is at least this.
pub const DOMINANT_CSP: f64 = 0.10;

/// JVM threads that never run the program's code; they are not counted in CSP
/// (they are RUNNABLE in native code or waiting, and would dilute every CSP).
pub const JVM_THREADS: &[&str] = &[
    "Reference Handler",
    "Finalizer",
    "Signal Dispatcher",
    "Notification Thread",
    "Common-Cleaner",
    "Attach Listener",
    "Service Thread",
    "Monitor Deflation Thread",
    "DestroyJavaVM",
    // The virtual-thread scheduler's helpers: the timer that ends virtual threads'
    // sleeps and timed parks (JDK 21-23), the thread that unblocks those a monitor
    // released (24+), blocked in the JVM between turns (no wait recorded: it read as
    // busy all its life, a load-imbalance finding beside 2,000 virtual threads).
    "VirtualThread-unparker",
    "VirtualThread-unblocker",
];

#[derive(Debug, Clone, PartialEq)]
pub struct LockStats {
    /// Agent id of the lock (LockDef).
    pub lock: u32,
    /// `class@identityhash`.
    pub id: String,
    pub class: String,
    pub kind: &'static str,
    pub ident: u32,
    /// Whole-run CSP.
    pub csp: f64,
    /// Highest CSP of one interval (intervals aligned on multiples of the interval).
    pub max_phase_csp: f64,
    pub max_phase_start_ns: u64,
    /// Highest CSP of any interval-long window, wherever it starts
    /// ([`LockAnalysis::peak_csp`]): a burst split by an interval boundary still counts whole.
    pub peak_csp: f64,
    pub peak_start_ns: u64,
    /// (interval start, CSP) for each interval where the lock was blocked on.
    pub phases: Vec<(u64, f64)>,
    /// CSP in every interval (0 where nobody blocked on the lock), one value per
    /// entry of [`LockAnalysis::running_per_interval`]: the series the views draw.
    pub csp_per_interval: Vec<f64>,
    /// Acquisitions that blocked (monitors: every contended enter; j.u.c.: a park in the slow path).
    pub contended: u64,
    /// Slow-path acquisitions (j.u.c.) including the ones resolved without parking.
    pub slow_acquisitions: u64,
    /// Slow paths that gave up without the lock (a timed `tryLock`/`tryAcquire` that
    /// ran out of time, an interrupted acquire): not among the acquisitions above,
    /// their blocked time is in `blocked_ns`.
    pub gave_up: u64,
    pub blocked_ns: u64,
    pub max_blocked_ns: u64,
    /// From the first blocked period's end to the last one's: ~0 when every waiter was
    /// let in at one release (a one-off: a lazy initialisation), about the longest wait
    /// when they went in one after another (a queue).
    pub release_spread_ns: u64,
    /// Blocked time on the shared (read) side, for read-write and stamped locks.
    pub shared_blocked_ns: u64,
    /// (thread name, blocked ns), largest first.
    pub blocked_per_thread: Vec<(String, u64)>,
    /// (site frame, contentions sampled there), most first.
    pub sites: Vec<(String, u64)>,
    /// (owner thread name, contentions), most first.
    pub owners: Vec<(String, u64)>,
    /// Wall samples of its holders while they held it and others waited (holds known
    /// from consecutive contended acquisitions), and those in which the holder was
    /// off the CPU (sleeping or in I/O: holding the lock across blocking), with their
    /// innermost frames (most first).
    pub holder_wall_samples: u64,
    pub holder_off_cpu_samples: u64,
    pub holder_off_cpu_frames: Vec<(String, u64)>,
    /// Its holders' own recorded waits while they held it and others waited.
    pub holder_waits: HolderWaits,
    /// A fair j.u.c. lock (`new ReentrantLock(true)`: its sync is a `FairSync`).
    pub fair: bool,
}

/// Per thread name, the sum: threads of one name (a pool's that came and went, H2's
/// `H2-save`) are one row. Collected as a map they overwrote each other, which one
/// survived depending on the hash order (a report read `H2-save` 0.31 s, then 9.64 s).
fn summed_by_name(rows: impl Iterator<Item = (String, u64)>) -> HashMap<String, u64> {
    let mut m: HashMap<String, u64> = HashMap::new();
    for (name, ns) in rows {
        *m.entry(name).or_default() += ns;
    }
    m
}

/// A lock's holders waiting for other threads while they held it and others waited
/// (a `Future.get`, a queue's `take`, a latch inside the critical section): known
/// from the recorded waits, without sampling.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HolderWaits {
    /// Time the lock was held while others waited, over the holds known from
    /// consecutive contended acquisitions.
    pub held_ns: u64,
    /// Of that, time its holder spent in its own recorded waits.
    pub waiting_ns: u64,
    /// (index into [`LockAnalysis::wait_groups`], ns of `waiting_ns`), most first.
    pub groups: Vec<(usize, u64)>,
}

impl HolderWaits {
    /// The share of the held time its holders spent waiting.
    pub fn share(&self) -> f64 {
        self.waiting_ns as f64 / self.held_ns.max(1) as f64
    }

    /// Adds another lock's (a group of instances).
    pub fn add(&mut self, o: &HolderWaits) {
        self.held_ns += o.held_ns;
        self.waiting_ns += o.waiting_ns;
        for &(g, ns) in &o.groups {
            match self.groups.iter_mut().find(|x| x.0 == g) {
                Some(x) => x.1 += ns,
                None => self.groups.push((g, ns)),
            }
        }
        self.groups
            .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    }
}

/// A lock's holders' wall samples (see `LockStats::holder_wall_samples`) and waits.
#[derive(Default)]
struct HolderSamples {
    samples: u64,
    off: u64,
    /// Stack id -> off-CPU samples.
    off_stacks: HashMap<u32, u64>,
    held_ns: u64,
    /// Index into the wait intervals -> ns of it inside the holds.
    waits: HashMap<usize, u64>,
}

impl HolderSamples {
    /// The innermost frame of each off-CPU sample, counted, most first.
    fn frames(&self, model: &Model) -> Vec<(String, u64)> {
        let r = &model.sampled;
        let mut by: HashMap<String, u64> = HashMap::new();
        for (stack, n) in &self.off_stacks {
            let name = r
                .stacks
                .get(stack)
                .and_then(|f| f.first())
                .and_then(|id| r.frames.get(id))
                .map_or_else(|| "[unknown frame]".to_string(), |f| f.name(true));
            *by.entry(name).or_default() += n;
        }
        let mut v: Vec<(String, u64)> = by.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// Per exclusive lock (`exclusive`: monitors and `ReentrantLock`s, one holder at a
/// time), its holders' wall samples while they held it and others waited, and those
/// in which the holder was off the CPU (sleeping or in I/O), with where. A waiter
/// granted the lock while another waited held it until that one was granted: the
/// holds between two consecutive contended acquisitions are known without sampling
/// the owner. `blocks`: (thread, lock, blocked from, acquired at).
fn holder_samples(
    model: &Model,
    blocks: &[(ThreadIndex, u32, u64, u64)],
    waits: &[WaitInterval],
    exclusive: &std::collections::HashSet<u32>,
) -> HashMap<u32, HolderSamples> {
    let mut out: HashMap<u32, HolderSamples> = HashMap::new();
    let mut wall: HashMap<ThreadIndex, Vec<(u64, u8, u32)>> = HashMap::new();
    for x in &model.sampled.samples {
        if x.mode == crate::profile::Mode::Wall {
            wall.entry(x.thread)
                .or_default()
                .push((x.ts_ns, x.state, x.stack));
        }
    }
    for v in wall.values_mut() {
        v.sort_unstable();
    }
    // Each thread's own recorded blocks and waits: a holder blocked on another lock,
    // or waiting, is not blocking in I/O or a sleep (another finding's).
    let recorded = crate::cpu::merged_by_thread(
        blocks
            .iter()
            .map(|&(th, _, s, e)| (th, s, e))
            .chain(waits.iter().map(|w| (w.thread, w.start_ns, w.end_ns))),
    );
    let in_recorded = |th: ThreadIndex, t: u64| recorded.get(&th).is_some_and(|v| covers(v, t));
    // Each thread's waits by start (a thread's waits do not overlap): (start, end,
    // index). `Object.wait` releases the monitor it waits on: not a wait while holding.
    let mut waits_of: HashMap<ThreadIndex, Vec<(u64, u64, usize)>> = HashMap::new();
    for (k, w) in waits.iter().enumerate() {
        if w.kind != "Object.wait" {
            waits_of
                .entry(w.thread)
                .or_default()
                .push((w.start_ns, w.end_ns, k));
        }
    }
    for v in waits_of.values_mut() {
        v.sort_unstable();
    }
    let mut by_lock: HashMap<u32, Vec<(u64, u64, ThreadIndex)>> = HashMap::new();
    for &(th, lock, s, e) in blocks {
        if exclusive.contains(&lock) {
            by_lock.entry(lock).or_default().push((e, s, th));
        }
    }
    for (lock, mut v) in by_lock {
        v.sort_unstable();
        // When some thread was blocked on the lock (someone held it): the union of its
        // blocked periods.
        let waited: Vec<(u64, u64)> = v.iter().map(|&(e, s, _)| (s, e)).collect();
        let held = merge_intervals(&waited);
        let h = out.entry(lock).or_default();
        // Between two contended acquisitions, while others waited, the lock's holder
        // is the first one's thread (a barging thread, which acquires without
        // blocking, is the one case this misses).
        for w in v.windows(2) {
            let ((acq, _, holder), (next, _, _)) = (w[0], w[1]);
            // The holds in (acq, next): the held periods inside it, and the holder's
            // waits in them.
            let own = waits_of.get(&holder).map_or(&[][..], |v| v.as_slice());
            let first = held.partition_point(|x| x.1 <= acq);
            for &(hs, he) in held[first..].iter().take_while(|x| x.0 < next) {
                let (hs, he) = (hs.max(acq), he.min(next));
                if hs >= he {
                    continue;
                }
                h.held_ns += he - hs;
                let from = own.partition_point(|x| x.1 <= hs);
                for &(ws, we, k) in own[from..].iter().take_while(|x| x.0 < he) {
                    let ns = we.min(he).saturating_sub(ws.max(hs));
                    if ns > 0 {
                        *h.waits.entry(k).or_default() += ns;
                    }
                }
            }
            let Some(samples) = wall.get(&holder) else {
                continue;
            };
            let from = samples.partition_point(|x| x.0 < acq);
            for &(ts, state, stack) in samples[from..].iter().take_while(|x| x.0 < next) {
                if !covers(&held, ts) || in_recorded(holder, ts) {
                    continue;
                }
                h.samples += 1;
                if state == thread_state::SLEEPING || state == thread_state::IO {
                    h.off += 1;
                    *h.off_stacks.entry(stack).or_default() += 1;
                }
            }
        }
    }
    out
}

/// Consecutive intervals where one lock's CSP was at least [`DOMINANT_CSP`].
#[derive(Debug, Clone, PartialEq)]
pub struct DominantPhase {
    /// Index into [`LockAnalysis::locks`].
    pub lock: usize,
    pub start_ns: u64,
    pub end_ns: u64,
    pub csp: f64,
    pub site: Option<String>,
    pub owner: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WaitStats {
    pub kind: &'static str,
    pub count: u64,
    pub total_ns: u64,
    pub max_ns: u64,
    /// (thread name, ns), largest first.
    pub threads: Vec<(String, u64)>,
}

/// One blocked period: a thread from `LockBlock` to `LockAcquired` (a contended
/// monitor enter, or a j.u.c. slow path). Views draw these; they never re-derive them.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockedInterval {
    pub thread: ThreadIndex,
    /// Index into [`LockAnalysis::locks`].
    pub lock: usize,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Holder when the contention began, when known (docs/locks.md §Owner).
    pub owner: Option<String>,
    /// Innermost frame outside the JDK of this acquisition, when its stack was sampled.
    pub site: Option<String>,
    /// The shared (read) side of a read-write or stamped lock.
    pub shared: bool,
    /// A j.u.c. slow path that parked (monitors: always); else resolved by a retry.
    pub parked: bool,
    /// Never acquired: still blocked at the thread's last record (a deadlock, or a
    /// recording stopped while it waited).
    pub unresolved: bool,
    /// Stopped waiting without the lock (`LockGaveUp`: a timed `tryLock` or
    /// `tryAcquire` ran out of time, or an interruptible acquire was interrupted):
    /// contention, but no hold follows.
    pub gave_up: bool,
}

/// One wait that is not a lock acquisition (`WaitBegin`..`WaitEnd`).
#[derive(Debug, Clone, PartialEq)]
pub struct WaitInterval {
    pub thread: ThreadIndex,
    /// `Object.wait`, `park`, `CountDownLatch.await`.
    pub kind: &'static str,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Index into [`LockAnalysis::wait_groups`].
    pub group: usize,
    /// Still open when its thread's records ended (no `WaitEnd`): closed by weft.
    pub open: bool,
    /// An `Object.wait(timeout)` that ended because its time ran out (not notified).
    pub timed_out: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct LockAnalysis {
    pub interval_ns: u64,
    /// Ranked by whole-run CSP.
    pub locks: Vec<LockStats>,
    pub phases: Vec<DominantPhase>,
    pub waits: Vec<WaitStats>,
    /// Running time of the counted threads, per interval.
    pub running_per_interval: Vec<u64>,
    pub running_ns: u64,
    pub blocked_ns: u64,
    /// Names of the counted threads.
    pub counted_threads: Vec<String>,
    pub excluded_threads: Vec<String>,
    /// Lifetime `[start, end)` of each counted thread, as CSP counts it (main's from
    /// `AppStart`); the possible-speedups analysis reads the same spans.
    pub lifetimes: BTreeMap<ThreadIndex, (u64, u64)>,
    /// Every blocked period of the counted threads, by start time.
    pub blocked: Vec<BlockedInterval>,
    /// Every wait of the counted threads, by start time.
    pub wait_intervals: Vec<WaitInterval>,
    /// The counted threads' unparks whose call was timed (`Unpark` with `ns`), in
    /// each thread's order: `(thread, ts, target Java id, ns)`. The
    /// possible-speedups analysis finds the lock hand-offs among them.
    pub timed_unparks: Vec<(ThreadIndex, u64, u64, u32)>,
    /// The waits by (kind, waited-on class, site), most waited first
    /// (crates/analysis/src/wait_groups.rs).
    pub wait_groups: Vec<crate::wait_groups::WaitGroup>,
    /// Running time over any span, for the sliding-window peaks.
    pub running_over: RunningOver,
}

/// Σ over segments `[s, e)` of their overlap with `[0, t)`, for any `t`, in O(log n):
/// with the starts and ends sorted, that is Σ_{s<t}(t − s) − Σ_{e<t}(t − e).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CoveredUpTo {
    starts: Vec<u64>,
    start_sums: Vec<u128>,
    ends: Vec<u64>,
    end_sums: Vec<u128>,
}

impl CoveredUpTo {
    pub fn new(segments: impl Iterator<Item = (u64, u64)>) -> CoveredUpTo {
        let (mut starts, mut ends): (Vec<u64>, Vec<u64>) = segments.filter(|(s, e)| e > s).unzip();
        starts.sort_unstable();
        ends.sort_unstable();
        let sums = |v: &[u64]| {
            let mut acc = Vec::with_capacity(v.len() + 1);
            acc.push(0u128);
            for &x in v {
                acc.push(acc[acc.len() - 1] + x as u128);
            }
            acc
        };
        CoveredUpTo {
            start_sums: sums(&starts),
            end_sums: sums(&ends),
            starts,
            ends,
        }
    }

    fn up_to(&self, t: u64) -> u128 {
        let i = self.starts.partition_point(|&s| s < t);
        let j = self.ends.partition_point(|&e| e < t);
        let t = t as u128;
        (i as u128 * t - self.start_sums[i]) - (j as u128 * t - self.end_sums[j])
    }

    /// Covered time within `[a, b)`.
    pub fn between(&self, a: u64, b: u64) -> u64 {
        if b <= a || self.starts.is_empty() {
            return 0;
        }
        (self.up_to(b).saturating_sub(self.up_to(a))) as u64
    }
}

/// Running time of the counted threads (as CSP counts it) over any span.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunningOver {
    end_ns: u64,
    lifetimes: CoveredUpTo,
    waits: CoveredUpTo,
}

impl RunningOver {
    pub fn between(&self, a: u64, b: u64) -> u64 {
        self.lifetimes
            .between(a, b)
            .saturating_sub(self.waits.between(a, b))
    }
}

impl LockAnalysis {
    /// The highest CSP of the given locks together over any window one interval long
    /// (start, CSP). Candidate windows: the aligned interval of each blocked period's
    /// start and end, a window starting where a period starts and one ending where a
    /// period ends; the CSP of a window is piecewise monotone between those points.
    /// A burst of contention split by an interval boundary counts whole here, so a
    /// finding does not depend on where the boundaries fall (docs/locks.md §Peak).
    pub fn peak_csp(&self, locks: &[usize]) -> (u64, f64) {
        let mut member = vec![false; self.locks.len()];
        for &l in locks {
            if let Some(m) = member.get_mut(l) {
                *m = true;
            }
        }
        let periods: Vec<(u64, u64)> = self
            .blocked
            .iter()
            .filter(|b| member.get(b.lock).copied().unwrap_or(false))
            .map(|b| (b.start_ns, b.end_ns))
            .collect();
        self.peak_of(&periods)
    }

    /// [`LockAnalysis::peak_csp`] of these blocked periods.
    fn peak_of(&self, periods: &[(u64, u64)]) -> (u64, f64) {
        let end = self.running_over.end_ns;
        let periods: Vec<(u64, u64)> = periods
            .iter()
            .map(|&(s, e)| (s.min(end), e.min(end)))
            .collect();
        let blocked = CoveredUpTo::new(periods.iter().copied());
        let i = self.interval_ns.max(1);
        let csp_of = |a: u64, b: u64| ratio(blocked.between(a, b), self.running_over.between(a, b));
        // A window starting at `a`, moved back to end at the run's end.
        let sliding = |a: u64| {
            let a = a.min(end.saturating_sub(i));
            (a, (a + i).min(end))
        };
        let aligned = |t: u64| {
            let a = t / i * i;
            (a, (a + i).min(end))
        };
        let mut best = (0, 0.0);
        for &(s, e) in &periods {
            for (a, b) in [
                sliding(s),
                sliding(e.saturating_sub(i)),
                aligned(s),
                aligned(e.saturating_sub(1)),
            ] {
                let c = csp_of(a, b);
                if c > best.1 {
                    best = (a, c);
                }
            }
        }
        best
    }

    /// Whole-run CSP of all locks together.
    pub fn total_csp(&self) -> f64 {
        ratio(self.blocked_ns, self.running_ns)
    }

    /// Blocked time by (lock index, site of the acquisition; `None`: stack not
    /// sampled), largest first. The sum is [`LockAnalysis::blocked_ns`].
    pub fn blocked_by_site(&self) -> Vec<(usize, Option<String>, u64)> {
        let mut m: HashMap<(usize, Option<&str>), u64> = HashMap::new();
        for b in &self.blocked {
            *m.entry((b.lock, b.site.as_deref())).or_default() += b.end_ns - b.start_ns;
        }
        let mut v: Vec<(usize, Option<String>, u64)> = m
            .into_iter()
            .map(|((l, s), ns)| (l, s.map(str::to_string), ns))
            .collect();
        v.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
        v
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Adds the overlap of [s, e) with each interval into `acc`.
fn spread(acc: &mut [u64], interval: u64, s: u64, e: u64, sign_add: bool) {
    if e <= s || acc.is_empty() {
        return;
    }
    let mut k = (s / interval) as usize;
    let mut t = s;
    while t < e && k < acc.len() {
        let end = ((k as u64 + 1) * interval).min(e);
        let d = end - t;
        if sign_add {
            acc[k] += d;
        } else {
            acc[k] = acc[k].saturating_sub(d);
        }
        t = end;
        k += 1;
    }
}

#[derive(Default)]
struct Acc {
    def: Option<(u8, String, u32)>,
    per_interval: Vec<u64>,
    contended: u64,
    slow: u64,
    gave_up: u64,
    blocked: u64,
    max_blocked: u64,
    /// Earliest and latest end of a blocked period.
    ends: Option<(u64, u64)>,
    shared: u64,
    per_thread: HashMap<ThreadIndex, u64>,
    sites: HashMap<u32, u64>,
    owners: HashMap<u64, u64>,
    /// (time, site, owner) of each LockBlock, for dominant phases.
    events: Vec<(u64, u32, u64)>,
}

/// Most intervals of the per-interval CSP; longer runs get a longer interval.
const MAX_INTERVALS: u64 = 100_000;

/// The lock analysis of a model, with the interval chosen at record time or 1 s.
pub fn analyze_locks(model: &Model) -> LockAnalysis {
    let interval = model
        .lock_interval_ns
        .filter(|&i| i >= 1_000_000)
        .unwrap_or(DEFAULT_INTERVAL_NS);
    analyze_locks_with(model, interval)
}

pub fn analyze_locks_with(model: &Model, interval_ns: u64) -> LockAnalysis {
    let end = model.duration_ns.max(1);
    // At most MAX_INTERVALS intervals per lock: a damaged or hostile trace's
    // duration must not size the per-interval arrays (a 1 s interval covers 27 h).
    let interval = interval_ns.max(1_000_000).max(end.div_ceil(MAX_INTERVALS));
    let n = end.div_ceil(interval) as usize;
    let mut out = LockAnalysis {
        interval_ns: interval,
        ..LockAnalysis::default()
    };
    let app_start = model.app_start_ns;
    let counted: HashMap<ThreadIndex, (u64, u64)> = model
        .threads
        .values()
        .filter_map(|t| {
            let name = t.name.as_deref()?;
            if JVM_THREADS.contains(&name) || t.start_ns.is_none() {
                out.excluded_threads.push(name.to_string());
                return None;
            }
            out.counted_threads.push(name.to_string());
            let mut s = t.start_ns.unwrap_or(t.first_ns);
            if t.is_main(model) {
                // JVM start-up before the program's first class is not the program.
                s = s.max(app_start.unwrap_or(0));
            }
            let e = t.end_ns.unwrap_or(end.max(t.last_ns)).max(s);
            Some((t.index, (s, e)))
        })
        .collect();
    let name_of = |i: ThreadIndex| {
        model
            .threads
            .get(&i)
            .map(|t| t.display_name())
            .unwrap_or_else(|| format!("thread #{i}"))
    };
    let by_java_id: HashMap<u64, String> = model
        .threads
        .values()
        .filter_map(|t| Some((t.java_id?, t.display_name())))
        .collect();

    let mut running = vec![0u64; n];
    for &(s, e) in counted.values() {
        spread(&mut running, interval, s, e.min(end), true);
    }
    let mut locks: BTreeMap<u32, Acc> = BTreeMap::new();
    // (kind) -> (count, total, max, per thread)
    let mut waits: BTreeMap<u8, (u64, u64, u64, HashMap<ThreadIndex, u64>)> = BTreeMap::new();
    // Open intervals per thread.
    struct Open {
        /// (lock, start, flags, owner, site)
        /// Open blocked periods, innermost last: a monitor contended inside a j.u.c.
        /// slow path (a class's initialization lock) nests in it.
        blocks: Vec<(u32, u64, u8, u64, u32)>,
        /// (kind, start, class id, site id)
        wait: Option<(u8, u64, u32, u32)>,
    }
    let mut open: HashMap<ThreadIndex, Open> = HashMap::new();
    // (thread, lock id, start, end, flags, owner, site, parked, unresolved, gave up)
    type RawBlock = (ThreadIndex, u32, u64, u64, u8, u64, u32, bool, bool, bool);
    let mut raw_blocks: Vec<RawBlock> = Vec::new();
    let mut wait_intervals: Vec<WaitInterval> = Vec::new();
    // (class id, site id) of each wait interval, for the wait groups.
    let mut wait_details: Vec<(u32, u32)> = Vec::new();
    let mut close_block = |locks: &mut BTreeMap<u32, Acc>,
                           th: ThreadIndex,
                           (lock, s, flags, owner, site): (u32, u64, u8, u64, u32),
                           e: u64,
                           parked: bool,
                           unresolved: bool,
                           gave_up: bool| {
        raw_blocks.push((
            th,
            lock,
            s,
            e.max(s),
            flags,
            owner,
            site,
            parked,
            unresolved,
            gave_up,
        ));
        let a = locks.entry(lock).or_default();
        if a.per_interval.is_empty() {
            a.per_interval = vec![0; n];
        }
        let d = e.saturating_sub(s);
        spread(&mut a.per_interval, interval, s, e.min(end), true);
        a.blocked += d;
        a.max_blocked = a.max_blocked.max(d);
        let end = e.max(s);
        a.ends = Some(
            a.ends
                .map_or((end, end), |(lo, hi)| (lo.min(end), hi.max(end))),
        );
        if gave_up {
            a.gave_up += 1;
        } else {
            a.slow += 1;
            if parked {
                a.contended += 1;
            }
        }
        if flags & lock_flags::SHARED != 0 {
            a.shared += d;
        }
        *a.per_thread.entry(th).or_default() += d;
    };
    for (id, d) in &model.lock_defs {
        locks.entry(*id).or_default().def = Some((d.kind, d.class.clone(), d.ident));
    }
    for evs in &model.events {
        let th = &evs.thread;
        let Some(&(tstart, tend)) = counted.get(th) else {
            continue;
        };
        if evs.is_empty() {
            continue;
        }
        // One entry per thread with events, as when it was looked up per event.
        let o = open.entry(*th).or_insert(Open {
            blocks: Vec::new(),
            wait: None,
        });
        // Every kind the match below reads.
        let lock_kinds = [
            EventKind::LockBlock,
            EventKind::LockAcquired,
            EventKind::WaitBegin,
            EventKind::WaitEnd,
            EventKind::Unpark,
        ];
        if !evs.has_any(&lock_kinds) {
            continue;
        }
        for e in evs.iter() {
            let ts = &e.ts;
            match e.kind {
                EventKind::LockBlock => {
                    let (lock, flags, owner, site) = (&e.b, &e.flag, &e.a, &e.c);
                    // Only a j.u.c. slow path runs code while it blocks (a class's
                    // initialization monitor contended inside `StampedLock.acquireWrite`
                    // nests in it); a thread blocked entering a monitor does nothing
                    // else, so another block after it, or one of the same lock, means
                    // the open ones lost their ends: closed here (not parked).
                    let nests = o.blocks.last().is_some_and(|b| {
                        b.0 != *lock
                            && locks
                                .get(&b.0)
                                .and_then(|a| a.def.as_ref())
                                .is_some_and(|d| d.0 != lock_kind::MONITOR)
                    });
                    if !nests {
                        for b in o.blocks.drain(..).rev() {
                            close_block(&mut locks, *th, b, *ts, false, false, false);
                        }
                    }
                    o.blocks.push((*lock, *ts, *flags, *owner, *site));
                    let a = locks.entry(*lock).or_default();
                    if *site != 0 {
                        *a.sites.entry(*site).or_default() += 1;
                    }
                    if *owner != 0 {
                        *a.owners.entry(*owner).or_default() += 1;
                    }
                    a.events.push((*ts, *site, *owner));
                }
                EventKind::LockAcquired => {
                    // The innermost open block of this lock (any nested in it lost
                    // their ends), else the innermost.
                    let i = o
                        .blocks
                        .iter()
                        .rposition(|b| b.0 == e.b)
                        .or(o.blocks.len().checked_sub(1));
                    let mut inner = i.map_or(Vec::new(), |i| o.blocks.split_off(i));
                    let b = (!inner.is_empty()).then(|| inner.remove(0));
                    for x in inner.into_iter().rev() {
                        close_block(&mut locks, *th, x, *ts, false, false, false);
                    }
                    if let Some(b) = b {
                        let p = e.flag != 0
                            || locks
                                .get(&b.0)
                                .and_then(|a| a.def.as_ref())
                                .is_some_and(|d| d.0 == lock_kind::MONITOR);
                        let gave_up = e.flag & LOCK_GAVE_UP != 0;
                        close_block(&mut locks, *th, b, *ts, p, false, gave_up);
                    }
                }
                EventKind::WaitBegin => {
                    o.wait = Some((e.flag, *ts, e.a as u32, e.c));
                }
                EventKind::Unpark if e.b > 0 => out.timed_unparks.push((*th, *ts, e.a, e.b)),
                EventKind::WaitEnd => {
                    if let Some((k, s, class, site)) = o.wait.take() {
                        let d = ts.saturating_sub(s);
                        spread(
                            &mut running,
                            interval,
                            s.max(tstart),
                            (*ts).min(end).min(tend),
                            false,
                        );
                        let w = waits.entry(k).or_default();
                        w.0 += 1;
                        w.1 += d;
                        w.2 = w.2.max(d);
                        *w.3.entry(*th).or_default() += d;
                        wait_intervals.push(WaitInterval {
                            thread: *th,
                            kind: wait_kind::name(k),
                            start_ns: s,
                            end_ns: (*ts).max(s),
                            group: 0,
                            open: false,
                            timed_out: e.flag != 0,
                        });
                        wait_details.push((class, site));
                    }
                }
                _ => {}
            }
        }
    }
    // Blocks and waits still open at the end of a thread.
    for (th, o) in open {
        let (tstart, tend) = counted.get(&th).copied().unwrap_or((0, end));
        for b in o.blocks {
            close_block(&mut locks, th, b, tend.max(b.1), true, true, false);
        }
        if let Some((k, s, class, site)) = o.wait {
            spread(&mut running, interval, s.max(tstart), tend.min(end), false);
            let d = tend.saturating_sub(s);
            let w = waits.entry(k).or_default();
            w.0 += 1;
            w.1 += d;
            w.2 = w.2.max(d);
            *w.3.entry(th).or_default() += d;
            wait_intervals.push(WaitInterval {
                thread: th,
                kind: wait_kind::name(k),
                start_ns: s,
                end_ns: tend.max(s),
                group: 0,
                open: true,
                timed_out: false,
            });
            wait_details.push((class, site));
        }
    }
    out.running_ns = running.iter().sum();
    // A set: looked up once per contended acquisition (Derby: thousands of locks).
    let exclusive: std::collections::HashSet<u32> = locks
        .iter()
        .filter(|(_, a)| {
            a.def
                .as_ref()
                .is_some_and(|d| d.0 == lock_kind::MONITOR || d.0 == lock_kind::REENTRANT_LOCK)
        })
        .map(|(id, _)| *id)
        .collect();
    let blocks: Vec<(ThreadIndex, u32, u64, u64)> =
        raw_blocks.iter().map(|b| (b.0, b.1, b.2, b.3)).collect();
    let holder_time = holder_samples(model, &blocks, &wait_intervals, &exclusive);
    let site_name = |id: u32| model.site_frame(id);
    let owner_name = |jid: u64| {
        by_java_id
            .get(&jid)
            .cloned()
            .unwrap_or_else(|| format!("thread id {jid}"))
    };
    let ranked = |m: HashMap<String, u64>| {
        let mut v: Vec<(String, u64)> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    };
    for (id, a) in locks {
        if a.slow == 0 && a.gave_up == 0 {
            continue;
        }
        let (kind, class, ident) =
            a.def
                .clone()
                .unwrap_or((lock_kind::OTHER_AQS, format!("<lock #{id}>"), 0));
        let csp_per_interval: Vec<f64> = (0..n)
            .map(|k| ratio(a.per_interval.get(k).copied().unwrap_or(0), running[k]))
            .collect();
        let phases: Vec<(u64, f64)> = a
            .per_interval
            .iter()
            .enumerate()
            .filter(|(_, &b)| b > 0)
            .map(|(k, _)| (k as u64 * interval, csp_per_interval[k]))
            .collect();
        let (max_start, max_csp) =
            phases
                .iter()
                .copied()
                .fold((0, 0.0), |m, p| if p.1 > m.1 { p } else { m });
        let mut sites: HashMap<String, u64> = HashMap::new();
        for (s, c) in &a.sites {
            if let Some(f) = site_name(*s) {
                *sites.entry(f).or_default() += c;
            }
        }
        let mut owners: HashMap<String, u64> = HashMap::new();
        for (o, c) in &a.owners {
            *owners.entry(owner_name(*o)).or_default() += c;
        }
        let per_thread = summed_by_name(a.per_thread.iter().map(|(t, d)| (name_of(*t), *d)));
        out.blocked_ns += a.blocked;
        let stats = LockStats {
            lock: id,
            id: format!("{class}@{ident:x}"),
            class,
            kind: lock_kind::name(kind),
            ident,
            csp: ratio(a.blocked, out.running_ns),
            max_phase_csp: max_csp,
            max_phase_start_ns: max_start,
            peak_csp: 0.0,
            peak_start_ns: 0,
            phases,
            csp_per_interval,
            contended: a.contended,
            slow_acquisitions: a.slow,
            gave_up: a.gave_up,
            blocked_ns: a.blocked,
            max_blocked_ns: a.max_blocked,
            release_spread_ns: a.ends.map_or(0, |(lo, hi)| hi - lo),
            shared_blocked_ns: a.shared,
            blocked_per_thread: ranked(per_thread),
            sites: ranked(sites),
            owners: ranked(owners),
            holder_wall_samples: holder_time.get(&id).map_or(0, |h| h.samples),
            holder_off_cpu_samples: holder_time.get(&id).map_or(0, |h| h.off),
            fair: model.lock_defs.get(&id).is_some_and(|d| d.fair),
            holder_off_cpu_frames: holder_time
                .get(&id)
                .map(|h| h.frames(model))
                .unwrap_or_default(),
            holder_waits: HolderWaits::default(),
        };
        // Dominant phases of this lock.
        let idx = out.locks.len();
        let mut k = 0;
        while k < n {
            let csp_k = ratio(a.per_interval[k], running[k]);
            if csp_k < DOMINANT_CSP {
                k += 1;
                continue;
            }
            let first = k;
            let (mut b, mut r) = (0u64, 0u64);
            while k < n && ratio(a.per_interval[k], running[k]) >= DOMINANT_CSP {
                b += a.per_interval[k];
                r += running[k];
                k += 1;
            }
            let (ps, pe) = (first as u64 * interval, (k as u64 * interval).min(end));
            let mut s_count: HashMap<u32, u64> = HashMap::new();
            let mut o_count: HashMap<u64, u64> = HashMap::new();
            for &(t, s, o) in &a.events {
                if t >= ps && t < pe {
                    if s != 0 {
                        *s_count.entry(s).or_default() += 1;
                    }
                    if o != 0 {
                        *o_count.entry(o).or_default() += 1;
                    }
                }
            }
            let top = |m: &HashMap<u32, u64>| {
                m.iter()
                    .max_by_key(|x| (x.1, std::cmp::Reverse(*x.0)))
                    .map(|x| *x.0)
            };
            let site = top(&s_count)
                .and_then(site_name)
                .or_else(|| stats.sites.first().map(|s| s.0.clone()));
            // The holder only when this phase's own samples name one thread for most
            // of them: the whole run's owner (or one stale sample) is not this
            // phase's holder when threads take turns.
            let sampled: u64 = o_count.values().sum();
            let owner = o_count
                .iter()
                .max_by_key(|x| (x.1, std::cmp::Reverse(*x.0)))
                .filter(|x| sampled >= 2 && *x.1 * 2 > sampled)
                .map(|x| owner_name(*x.0));
            out.phases.push(DominantPhase {
                lock: idx,
                start_ns: ps,
                end_ns: pe,
                csp: ratio(b, r),
                site,
                owner,
            });
        }
        out.locks.push(stats);
    }
    // Rank locks by CSP; remap phase indices.
    let mut order: Vec<usize> = (0..out.locks.len()).collect();
    order.sort_by(|&a, &b| {
        out.locks[b]
            .csp
            .partial_cmp(&out.locks[a].csp)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(out.locks[a].lock.cmp(&out.locks[b].lock))
    });
    let mut new_index = vec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let mut sorted: Vec<Option<LockStats>> = out.locks.drain(..).map(Some).collect();
    out.locks = order.iter().map(|&i| sorted[i].take().unwrap()).collect();
    for p in &mut out.phases {
        p.lock = new_index[p.lock];
    }
    out.phases.sort_by(|a, b| {
        b.csp
            .partial_cmp(&a.csp)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    out.waits = waits
        .into_iter()
        .map(|(k, (count, total, max, th))| WaitStats {
            kind: wait_kind::name(k),
            count,
            total_ns: total,
            max_ns: max,
            threads: ranked(summed_by_name(th.into_iter().map(|(t, d)| (name_of(t), d)))),
        })
        .collect();
    out.running_per_interval = running;
    // Individual intervals, with the locks' final (ranked) indices.
    let index_of: HashMap<u32, usize> = out
        .locks
        .iter()
        .enumerate()
        .map(|(i, l)| (l.lock, i))
        .collect();
    out.blocked = raw_blocks
        .into_iter()
        .filter_map(
            |(thread, lock, s, e, flags, owner, site, parked, unresolved, gave_up)| {
                Some(BlockedInterval {
                    thread,
                    lock: *index_of.get(&lock)?,
                    start_ns: s,
                    end_ns: e,
                    owner: (owner != 0).then(|| owner_name(owner)),
                    site: (site != 0).then(|| site_name(site)).flatten(),
                    shared: flags & lock_flags::SHARED != 0,
                    parked,
                    unresolved,
                    gave_up,
                })
            },
        )
        .collect();
    out.blocked
        .sort_by_key(|b| (b.start_ns, b.thread, b.end_ns));
    out.wait_groups =
        crate::wait_groups::group_waits(model, &mut wait_intervals, &wait_details, &name_of);
    // The holders' waits by group (the intervals' order is the one they were
    // indexed in until the sort below).
    for l in &mut out.locks {
        let Some(h) = holder_time.get(&l.lock) else {
            continue;
        };
        let mut by_group: HashMap<usize, u64> = HashMap::new();
        for (&k, &ns) in &h.waits {
            let Some(w) = wait_intervals.get(k) else {
                continue;
            };
            // A condition's `await` releases its lock while it waits (grouped as
            // `Condition.await` on its lock's class; older traces: `ConditionObject`).
            let releases = out.wait_groups.get(w.group).is_some_and(|g| {
                g.kind == "Condition.await"
                    || g.class
                        .as_deref()
                        .is_some_and(|c| c.ends_with("$ConditionObject"))
            });
            if !releases {
                *by_group.entry(w.group).or_default() += ns;
            }
        }
        let mut groups: Vec<(usize, u64)> = by_group.into_iter().collect();
        groups.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        l.holder_waits = HolderWaits {
            held_ns: h.held_ns,
            waiting_ns: groups.iter().map(|g| g.1).sum(),
            groups,
        };
    }
    wait_intervals.sort_by_key(|w| (w.start_ns, w.thread, w.end_ns));
    out.wait_intervals = wait_intervals;
    out.lifetimes = counted.into_iter().collect();
    out.running_over = RunningOver {
        end_ns: end,
        lifetimes: CoveredUpTo::new(out.lifetimes.values().map(|&(s, e)| (s, e.min(end)))),
        waits: CoveredUpTo::new(out.wait_intervals.iter().filter_map(|w| {
            let &(ts, te) = out.lifetimes.get(&w.thread)?;
            Some((w.start_ns.max(ts), w.end_ns.min(te).min(end)))
        })),
    };
    let mut by_lock: Vec<Vec<(u64, u64)>> = vec![Vec::new(); out.locks.len()];
    for b in &out.blocked {
        by_lock[b.lock].push((b.start_ns, b.end_ns));
    }
    for (l, periods) in by_lock.iter().enumerate() {
        (out.locks[l].peak_start_ns, out.locks[l].peak_csp) = out.peak_of(periods);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_trace::{Clock, Header, Record, Trace, GLOBAL_THREAD};

    fn trace(records: Vec<(ThreadIndex, Record)>) -> Trace {
        Trace {
            header: Header::default(),
            records,
            truncated: false,
            unknown_records: 0,
            clock: Clock::new(0, 1.0),
        }
    }

    fn start(name: &str, ts: u64, jid: u64) -> Record {
        Record::ThreadStart {
            ts,
            name: name.into(),
            java_id: jid,
            os_tid: 1,
            daemon: false,
            class_id: 0,
            target_class_id: 0,
            target_ident: 0,
            ident: 0,
        }
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn csp_with_waits_and_interval_split() {
        // Two threads over [0, 2 s); t1 blocked on lock 1 from 0.5 s to 1.5 s;
        // t0 waits (Object.wait) from 0 to 1 s; a JVM thread is not counted.
        let recs = vec![
            (
                GLOBAL_THREAD,
                Record::LockDef {
                    id: 1,
                    kind: lock_kind::MONITOR,
                    class: "A".into(),
                    ident: 7,
                    fair: false,
                },
            ),
            (0, start("main", 0, 1)),
            (1, start("w", 0, 2)),
            (2, start("Signal Dispatcher", 0, 3)),
            (
                0,
                Record::WaitBegin {
                    ts: 0,
                    kind: wait_kind::OBJECT_WAIT,
                    lock: 0,
                },
            ),
            (
                0,
                Record::WaitEnd {
                    ts: S,
                    timed_out: false,
                },
            ),
            (
                1,
                Record::LockBlock {
                    ts: S / 2,
                    lock: 1,
                    flags: 0,
                    owner: 1,
                    site: 0,
                },
            ),
            (
                1,
                Record::LockAcquired {
                    ts: 3 * S / 2,
                    lock: 1,
                    parked: true,
                },
            ),
            (
                0,
                Record::ThreadEnd {
                    ts: 2 * S,
                    cpu_ns: 0,
                    voluntary_cs: 0,
                    involuntary_cs: 0,
                },
            ),
            (
                1,
                Record::ThreadEnd {
                    ts: 2 * S,
                    cpu_ns: 0,
                    voluntary_cs: 0,
                    involuntary_cs: 0,
                },
            ),
            (
                2,
                Record::ThreadEnd {
                    ts: 2 * S,
                    cpu_ns: 0,
                    voluntary_cs: 0,
                    involuntary_cs: 0,
                },
            ),
            (GLOBAL_THREAD, Record::End { ts: 2 * S }),
        ];
        let t = trace(recs);
        let m = Model::build(&t);
        let a = analyze_locks_with(&m, S);
        assert_eq!(a.running_per_interval, vec![S, 2 * S]);
        let l = &a.locks[0];
        assert_eq!(l.kind, "monitor");
        assert_eq!(l.contended, 1);
        assert_eq!(l.blocked_ns, S);
        assert!((l.csp - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(l.phases, vec![(0, 0.5), (S, 0.25)]);
        assert!((l.max_phase_csp - 0.5).abs() < 1e-9);
        assert_eq!(l.owners, vec![("main".to_string(), 1)]);
        assert_eq!(a.phases.len(), 1);
        assert_eq!((a.phases[0].start_ns, a.phases[0].end_ns), (0, 2 * S));
        assert_eq!(a.waits[0].kind, "Object.wait");
        assert_eq!(a.excluded_threads, vec!["Signal Dispatcher".to_string()]);
        // The individual intervals the views draw.
        assert_eq!(
            a.blocked,
            vec![BlockedInterval {
                thread: 1,
                lock: 0,
                start_ns: S / 2,
                end_ns: 3 * S / 2,
                owner: Some("main".into()),
                site: None,
                shared: false,
                parked: true,
                unresolved: false,
                gave_up: false,
            }]
        );
        assert_eq!(
            a.wait_intervals,
            vec![WaitInterval {
                thread: 0,
                kind: "Object.wait",
                start_ns: 0,
                end_ns: S,
                group: 0,
                open: false,
                timed_out: false,
            }]
        );
        assert_eq!(a.blocked_by_site(), vec![(0, None, S)]);
    }
}

#[cfg(test)]
#[path = "locks_tests.rs"]
mod constructed_model_tests;
