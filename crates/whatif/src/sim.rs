//! Mode S (docs/whatif.md §Simulator): a deterministic discrete-event
//! simulation of the graph on P cores under processor sharing, with pools
//! (executor: one FIFO queue; fork-join: a deque per worker, LIFO pops, FIFO
//! steals), mutexes with waiter queues, and the edits of an [`Overlay`].

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use crate::graph::{recorded, ExecGraph, LockId, Op, PoolId, Runs, StrandId};

/// How a lock behaves under an edit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LockMode {
    Normal,
    /// Acquire and release are no-ops.
    Removed,
    /// Compute inside its critical sections is multiplied by this factor.
    Shorten(f64),
    /// Each acquisition goes to one of N stripes, chosen by a seeded hash.
    Split(u32),
}

/// An edit as the simulator reads it: parameters and per-class / per-strand
/// factors over the unchanged graph (never a copy of it).
#[derive(Debug, Clone, PartialEq)]
pub struct Overlay {
    /// Cores (None = the recorded count).
    pub cores: Option<f64>,
    /// Worker threads per pool (None = as recorded).
    pub pool_threads: Vec<Option<u32>>,
    /// CPU factor per class (1.0 = unchanged).
    pub class_factor: Vec<f64>,
    pub lock_mode: Vec<LockMode>,
    /// Strands that run as a call at their spawn, on the spawning thread.
    pub inline: Vec<bool>,
    /// The CPUs the program gets, set by [`with_jvm_work`] (None: from the graph's
    /// capacity and `cores`).
    pub capacity: Option<f64>,
}

impl Overlay {
    /// The unedited run.
    pub fn identity(g: &ExecGraph) -> Overlay {
        Overlay {
            cores: None,
            pool_threads: vec![None; g.pools.len()],
            class_factor: vec![1.0; g.classes.len()],
            lock_mode: vec![LockMode::Normal; g.locks.len()],
            inline: vec![false; g.strands.len()],
            capacity: None,
        }
    }
}

/// Model choices varied by the sensitivity runs (WHATIF.md §6.3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimParams {
    /// A fork-join worker whose joined task was stolen runs other tasks while it
    /// waits (the JDK's helping); else it blocks. Either way a joined task still in
    /// the joiner's own deque is run by the joiner (tryUnpush).
    pub fj_help: bool,
    /// Locks grant waiters in FIFO order; else the last to arrive first (barging-like).
    pub lock_fifo: bool,
    /// Seed of the steal victim order and of lock stripes.
    pub seed: u64,
    /// Multiplies the measured wake-up and pickup latencies.
    pub latency_scale: f64,
    /// Ignore the load the recording saw: the program gets all its cores (the
    /// optimistic end of a range on a loaded machine, docs/whatif.md §Cores).
    pub idle_machine: bool,
}

impl Default for SimParams {
    fn default() -> Self {
        SimParams {
            fj_help: true,
            lock_fifo: true,
            seed: 1,
            latency_scale: 1.0,
            idle_machine: false,
        }
    }
}

/// What a simulation gives.
#[derive(Debug, Clone, PartialEq)]
pub struct SimResult {
    /// Time from the window start until the last strand ended.
    pub makespan_ns: u64,
    /// Nothing could run while strands were unfinished (a pool starved by its own
    /// waiting tasks, or a lock cycle): the makespan is then not an estimate.
    pub deadlock: bool,
    /// Most workers running a task at once, per pool.
    pub peak_busy: Vec<u32>,
    /// End time of each strand (ns), `u64::MAX` when it never ran.
    pub strand_end_ns: Vec<u64>,
    /// Where each strand ran: its context, start (ns) and nesting depth on that
    /// context (0: outermost); `None` when it never ran. Only from
    /// [`simulate_scheduled`] (empty otherwise): for the schedule views.
    pub strand_run: Vec<Option<(u32, u64, u8)>>,
    /// What each context is: a pool's worker, or the thread of a thread strand.
    pub contexts: Vec<SimContext>,
}

/// A simulated context (a thread of the simulated run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimContext {
    /// Worker `worker` of pool `pool`.
    Worker { pool: PoolId, worker: u32 },
    /// The thread that runs thread strand `strand` (main, a started thread).
    Thread { strand: StrandId },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    NotSpawned,
    Queued,
    Running,
    Done,
}

struct Frame {
    strand: StrandId,
    pc: u32,
    end: u32,
    /// (lock as named by the op, stripe actually held).
    held: Vec<(LockId, u32)>,
}

struct Ctx {
    what: SimContext,
    stack: Vec<Frame>,
    /// CPU time it may still run in the woken class (set at each wake-up).
    preference: f64,
    /// Demand of its current compute op left for the CPU-bound class.
    rest: f64,
    pool: Option<PoolId>,
    deque: VecDeque<StrandId>,
    /// Index among its pool's workers.
    worker: u32,
    /// A virtual thread's context holds one of the carriers (from its first
    /// compute until it waits or ends).
    on_carrier: bool,
    /// It has a compute op in one of the CPU classes.
    computing: bool,
    /// A virtual thread's await that did not block: its next compute op leaves out
    /// the park's cost after the unmount (`ExecGraph::sync_park_ns`), ns.
    park_skipped_ns: f64,
}

#[derive(Clone, Copy, PartialEq)]
struct F(f64);
impl Eq for F {}
impl PartialOrd for F {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for F {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum TimerKind {
    DelayEnd,
    Start,
    /// A blocked or idle context becomes ready (after a wake-up latency).
    Wake,
    /// A context's stall after a compute op ends.
    StallEnd,
}

/// Computing contexts that share the cores left to them equally.
#[derive(Default)]
struct CpuClass {
    vclock: f64,
    /// (virtual finish, seq, context).
    running: BinaryHeap<Reverse<(F, u64, u32)>>,
}

const WOKEN: usize = 0;
const CPU_BOUND: usize = 1;

/// The scheduler's preference for a thread that wakes up, as CPU time: the
/// Linux EEVDF base slice (6.6+: 0.75 ms × (1 + log2 of the CPUs, at most 8)).
/// A thread that slept keeps a positive lag and an earlier deadline and runs ahead
/// of threads that kept computing for about one slice (docs/whatif.md §Cores:
/// processor sharing among the program's threads).
fn wake_preference_ns(cores: u32) -> f64 {
    let c = cores.clamp(1, 8);
    750_000.0 * (1 + c.ilog2()) as f64
}

struct LockState {
    holder: Option<u32>,
    queue: VecDeque<u32>,
    /// More than 1: a semaphore's permits, of which `taken` are held (by anyone:
    /// `holder` is not used); `granted`: waiters a release passed its permit to,
    /// until they are back at their acquisition.
    permits: u32,
    taken: u32,
    granted: Vec<u32>,
}

struct Sim<'a> {
    g: &'a ExecGraph,
    ov: &'a Overlay,
    p: SimParams,
    cores: f64,
    /// Whether recorded hand-offs keep their own latencies: not when the recording
    /// was loaded (docs/whatif.md §Latencies: they then hold time other processes
    /// had the CPU, which the capacity already accounts for).
    per_hand_off: bool,
    now: f64,
    /// Computing contexts in two classes, each with its processor-sharing virtual
    /// clock: [`WOKEN`] (within their wake-up preference) ahead of [`CPU_BOUND`].
    classes: [CpuClass; 2],
    /// CPU time a context may run ahead of CPU-bound ones after a wake-up.
    wake_preference_ns: f64,
    timers: BinaryHeap<Reverse<(F, u64, u32, TimerKind)>>,
    seq: u64,
    ready: VecDeque<u32>,
    ctxs: Vec<Ctx>,
    state: Vec<State>,
    end: Vec<f64>,
    /// (context, start, depth) of each strand that ran; empty when not kept.
    run: Vec<Option<(u32, f64, u8)>>,
    waiters: Vec<Vec<u32>>,
    locks: Vec<LockState>,
    /// First stripe of each lock in `locks` (split locks have several).
    lock_base: Vec<u32>,
    pool_queue: Vec<VecDeque<StrandId>>,
    pool_workers: Vec<Vec<u32>>,
    /// Tasks in the pool's workers' deques: a worker looks for one to steal only
    /// when there is one (a pool of 100,000 virtual-thread workers scanned them all
    /// at every take: a what-if of 5 minutes).
    deque_tasks: Vec<usize>,
    idle: Vec<Vec<u32>>,
    busy: Vec<u32>,
    peak_busy: Vec<u32>,
    /// Pending root starts (strand per timer).
    starts: Vec<StrandId>,
    /// Whether each signal has fired, and who waits for it.
    signalled: Vec<bool>,
    signal_waiters: Vec<Vec<u32>>,
    /// Carriers of virtual threads (0: no limit) and how many are free.
    carriers: u32,
    carriers_free: u32,
    /// Virtual threads' contexts ready to compute (with their demand), waiting for a
    /// carrier, in order.
    carrier_queue: VecDeque<(u32, f64)>,
}

/// Carriers of the virtual threads under `ov` (0: no virtual thread ran). The
/// default scheduler has a carrier per CPU: `cores:N` gives N, unless the recording
/// had fewer carriers than cores (a parallelism set by the program), which stays.
fn carriers(g: &ExecGraph, ov: &Overlay) -> u32 {
    if g.vt_carriers == 0 {
        return 0;
    }
    match ov.cores {
        Some(n) if g.vt_carriers >= g.cores => (n.ceil() as u32).max(1),
        _ => g.vt_carriers,
    }
}

/// Runs mode S on the graph with an overlay.
pub fn simulate(g: &ExecGraph, ov: &Overlay, p: SimParams) -> SimResult {
    run_mode_s(g, ov, p, false)
}

/// [`simulate`], keeping where and when each strand ran (`SimResult::strand_run`)
/// for the schedule views; the estimates do not need it.
pub fn simulate_scheduled(g: &ExecGraph, ov: &Overlay, p: SimParams) -> SimResult {
    run_mode_s(g, ov, p, true)
}

/// Other processes' share of the recorded cores under which the capacity lost is
/// the JVM's own threads' alone (for `cores:N`).
const OTHER_PROCESSES_NEGLIGIBLE: f64 = 0.1;

/// The capacity the program got; `cores:N` gives N CPUs, of which a machine
/// loaded by other processes still gives it no more than it got (the kernel
/// shares the CPUs between sessions: its share does not grow), while the JVM's
/// own threads (JIT, GC) alone take the same part of N as they took of the
/// recorded cores: they share the CPUs with the program's threads. Also whether
/// the JVM's threads alone took what the program did not get.
fn capacity(g: &ExecGraph, ov: &Overlay, p: SimParams) -> (f64, bool) {
    let recorded = g.cores.max(1) as f64;
    let got = got(g, p);
    let jvm_only = jvm_threads_alone(g);
    let cores = match (ov.capacity, ov.cores) {
        (Some(c), _) => c,
        (None, Some(n)) if got < recorded && jvm_only => (got * n / recorded).min(n),
        (None, Some(n)) if got < recorded => n.min(got),
        (None, Some(n)) => n,
        (None, None) => got,
    };
    (cores.max(0.01), got < recorded && jvm_only)
}

/// The CPUs the program got when recorded (all the cores under `idle_machine`).
fn got(g: &ExecGraph, p: SimParams) -> f64 {
    let recorded = g.cores.max(1) as f64;
    if g.cores_effective > 0.0 && !p.idle_machine {
        g.cores_effective.min(recorded)
    } else {
        recorded
    }
}

/// Whether what the program's threads did not get of the cores went to the JVM's own
/// threads (JIT, GC) alone, other processes' share negligible.
pub(crate) fn jvm_threads_alone(g: &ExecGraph) -> bool {
    g.cores_jvm_threads > 0.0
        && g.cores_other_processes < OTHER_PROCESSES_NEGLIGIBLE * g.cores.max(1) as f64
}

/// `r` (the run of `ov` on `g`) again where the JVM's own threads took CPUs the
/// program wanted: their work (JIT compilation, GC) is a fixed amount of CPU, not a
/// share of the cores, so a run the edit shortens leaves the program less of the
/// cores, and a longer one more. `base_ns`: the unedited run's makespan under the
/// same parameters, over which the JVM's threads took `recorded - got` CPUs. The
/// program's work and theirs on the edit's cores give the run's length if it is
/// CPU-bound; the edit is simulated once more at the capacity that length leaves.
/// 50,000 virtual-thread tasks halved: ×1.76 at the recorded share, measured ×1.52
/// (the JIT used 0.4 of 2 CPUs in the base run, 0.6 in the shorter one, the same
/// 0.26 CPU-seconds). The unedited run is its own fixed point.
pub fn with_jvm_work(
    g: &ExecGraph,
    ov: &Overlay,
    p: SimParams,
    base_ns: u64,
    r: SimResult,
) -> SimResult {
    let (c0, jvm_cut) = capacity(g, ov, p);
    if !jvm_cut || ov.capacity.is_some() || r.deadlock || r.makespan_ns == 0 || base_ns == 0 {
        return r;
    }
    let recorded = g.cores.max(1) as f64;
    let n = ov.cores.unwrap_or(recorded);
    let jvm_work = (recorded - got(g, p)) * base_ns as f64;
    let cpu_bound_ns = (r.makespan_ns as f64 * c0 + jvm_work) / n;
    let c = (n - jvm_work / cpu_bound_ns).clamp(0.05 * n, n);
    if (c - c0).abs() <= 0.005 * c0 {
        return r;
    }
    let ov = Overlay {
        capacity: Some(c),
        ..ov.clone()
    };
    simulate(g, &ov, p)
}

fn run_mode_s(g: &ExecGraph, ov: &Overlay, p: SimParams, keep_runs: bool) -> SimResult {
    let recorded = g.cores.max(1) as f64;
    let (cores, _) = capacity(g, ov, p);
    let carriers = carriers(g, ov);
    let mut lock_base = Vec::with_capacity(g.locks.len());
    let mut stripe_permits: Vec<u32> = Vec::new();
    for l in 0..g.locks.len() {
        lock_base.push(stripe_permits.len() as u32);
        let n = match ov.lock_mode.get(l) {
            Some(LockMode::Split(n)) => (*n).max(1),
            _ => 1,
        };
        let permits = g.locks[l].permits.max(1);
        stripe_permits.extend((0..n).map(|_| permits));
    }
    let mut s = Sim {
        g,
        ov,
        p,
        cores,
        per_hand_off: !(g.cores_effective > 0.0 && g.cores_effective < recorded),
        now: 0.0,
        classes: [CpuClass::default(), CpuClass::default()],
        wake_preference_ns: wake_preference_ns(g.cores),
        timers: BinaryHeap::new(),
        seq: 0,
        ready: VecDeque::new(),
        ctxs: Vec::new(),
        state: vec![State::NotSpawned; g.strands.len()],
        end: vec![f64::NAN; g.strands.len()],
        run: if keep_runs {
            vec![None; g.strands.len()]
        } else {
            Vec::new()
        },
        waiters: vec![Vec::new(); g.strands.len()],
        locks: stripe_permits
            .iter()
            .map(|&permits| LockState {
                holder: None,
                queue: VecDeque::new(),
                permits,
                taken: 0,
                granted: Vec::new(),
            })
            .collect(),
        lock_base,
        pool_queue: vec![VecDeque::new(); g.pools.len()],
        pool_workers: vec![Vec::new(); g.pools.len()],
        deque_tasks: vec![0; g.pools.len()],
        idle: vec![Vec::new(); g.pools.len()],
        busy: vec![0; g.pools.len()],
        peak_busy: vec![0; g.pools.len()],
        starts: Vec::new(),
        signalled: vec![false; g.syncs as usize],
        signal_waiters: vec![Vec::new(); g.syncs as usize],
        carriers,
        carriers_free: carriers,
        carrier_queue: VecDeque::new(),
    };
    for (pi, pool) in g.pools.iter().enumerate() {
        let k = ov
            .pool_threads
            .get(pi)
            .copied()
            .flatten()
            .unwrap_or(pool.threads)
            .max(1);
        for w in 0..k {
            let c = s.ctxs.len() as u32;
            s.ctxs.push(Ctx {
                what: SimContext::Worker {
                    pool: pi as PoolId,
                    worker: w,
                },
                stack: Vec::new(),
                preference: 0.0,
                rest: 0.0,
                pool: Some(pi as PoolId),
                deque: VecDeque::new(),
                worker: w,
                on_carrier: false,
                computing: false,
                park_skipped_ns: 0.0,
            });
            s.pool_workers[pi].push(c);
            s.idle[pi].push(c);
        }
        // Idle workers are taken from the back: the first worker first.
        s.idle[pi].reverse();
    }
    for (i, st) in g.strands.iter().enumerate() {
        if let Some(t) = st.root_start_ns {
            let k = s.starts.len() as u32;
            s.starts.push(i as StrandId);
            s.timer(t as f64, k, TimerKind::Start);
        }
    }
    s.run();
    let deadlock = s
        .state
        .iter()
        .any(|st| matches!(st, State::Queued | State::Running))
        || s.signal_waiters.iter().any(|w| !w.is_empty());
    let makespan = s
        .end
        .iter()
        .filter(|e| !e.is_nan())
        .fold(0.0f64, |a, &e| a.max(e));
    SimResult {
        makespan_ns: makespan.round() as u64,
        deadlock,
        peak_busy: s.peak_busy,
        strand_end_ns: s
            .end
            .iter()
            .map(|e| {
                if e.is_nan() {
                    u64::MAX
                } else {
                    e.round() as u64
                }
            })
            .collect(),
        strand_run: s
            .run
            .iter()
            .map(|r| r.map(|(c, t, d)| (c, t.round() as u64, d)))
            .collect(),
        contexts: s.ctxs.iter().map(|c| c.what).collect(),
    }
}

impl Sim<'_> {
    fn timer(&mut self, at: f64, ctx: u32, kind: TimerKind) {
        self.seq += 1;
        self.timers.push(Reverse((F(at), self.seq, ctx, kind)));
    }

    /// Progress rate of each computing context of both classes: the woken ones share
    /// the cores, the CPU-bound ones share what the woken leave.
    fn rates(&self) -> [f64; 2] {
        let share = |n: usize, cores: f64| {
            if n as f64 <= cores {
                1.0
            } else {
                cores / n as f64
            }
        };
        let woken = self.classes[WOKEN].running.len();
        let left = (self.cores - (woken as f64).min(self.cores)).max(0.0);
        [
            share(woken, self.cores),
            share(self.classes[CPU_BOUND].running.len(), left),
        ]
    }

    /// Moves time to `t`, advancing the processor-sharing virtual clocks.
    fn advance_to(&mut self, t: f64) {
        let rates = self.rates();
        if t > self.now {
            for (k, r) in rates.iter().enumerate() {
                self.classes[k].vclock += (t - self.now) * r;
            }
            self.now = t;
        }
    }

    /// When the first computing context of class `k` would finish (None: none, or
    /// the class gets no core now).
    fn next_finish(&self, k: usize, rate: f64) -> Option<(f64, usize)> {
        let Reverse((v, _, _)) = self.classes[k].running.peek()?;
        (rate > 0.0).then(|| (self.now + (v.0 - self.classes[k].vclock).max(0.0) / rate, k))
    }

    /// Starts `demand` ns of computing on context `c`: in the woken class for as
    /// much of it as its wake-up preference covers, the rest CPU-bound.
    fn start_compute(&mut self, c: u32, demand: f64) {
        // A virtual thread computes on a carrier: it waits for a free one, in order.
        if self.carriers > 0 && !self.ctxs[c as usize].on_carrier && self.virtual_thread(c) {
            if self.carriers_free == 0 {
                self.carrier_queue.push_back((c, demand));
                return;
            }
            self.carriers_free -= 1;
            self.ctxs[c as usize].on_carrier = true;
        }
        let ctx = &mut self.ctxs[c as usize];
        let woken = demand.min(ctx.preference);
        if woken > 0.0 {
            ctx.preference -= woken;
            ctx.rest = demand - woken;
            self.compute_in(WOKEN, c, woken);
        } else {
            self.compute_in(CPU_BOUND, c, demand);
        }
    }

    /// Whether context `c` runs a virtual thread's strand now.
    fn virtual_thread(&self, c: u32) -> bool {
        self.ctxs[c as usize].stack.last().is_some_and(|f| {
            weft_trace::is_virtual_thread(self.g.strands[f.strand as usize].thread)
        })
    }

    /// After context `c` stepped: a virtual thread that no longer computes (it waits,
    /// or its strand ended) leaves its carrier to the next one waiting.
    fn unmount_if_waiting(&mut self, c: u32) {
        let ctx = &self.ctxs[c as usize];
        if !ctx.on_carrier || ctx.computing {
            return;
        }
        // Pinned: it waits at a delay (its pc until the delay ends) where it stayed
        // mounted when recorded (`ExecGraph::pinned_waits` holds delays only).
        if ctx
            .stack
            .last()
            .is_some_and(|f| self.g.pinned_waits.binary_search(&f.pc).is_ok())
        {
            return;
        }
        let ctx = &mut self.ctxs[c as usize];
        ctx.on_carrier = false;
        match self.carrier_queue.pop_front() {
            Some((n, demand)) => {
                self.ctxs[n as usize].on_carrier = true;
                self.start_compute(n, demand);
            }
            None => self.carriers_free += 1,
        }
    }

    /// Context `c` computes `demand` ns in CPU class `k`.
    fn compute_in(&mut self, k: usize, c: u32, demand: f64) {
        self.ctxs[c as usize].computing = true;
        self.seq += 1;
        let class = &mut self.classes[k];
        class
            .running
            .push(Reverse((F(class.vclock + demand), self.seq, c)));
    }

    /// Context `c` was blocked and can run again: it gets the wake-up preference.
    fn make_ready(&mut self, c: u32) {
        self.ctxs[c as usize].preference = self.wake_preference_ns;
        self.ready.push_back(c);
    }

    fn run(&mut self) {
        loop {
            while let Some(c) = self.ready.pop_front() {
                self.step(c);
                self.unmount_if_waiting(c);
            }
            let rates = self.rates();
            let tc = match (
                self.next_finish(WOKEN, rates[WOKEN]),
                self.next_finish(CPU_BOUND, rates[CPU_BOUND]),
            ) {
                (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
                (a, b) => a.or(b),
            };
            let tt = self.timers.peek().map(|Reverse((t, _, _, _))| t.0);
            let take_compute = match (tc, tt) {
                (None, None) => return,
                (Some(a), Some(b)) => a.0 <= b,
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            if let (true, Some((a, k))) = (take_compute, tc) {
                self.advance_to(a);
                let Some(Reverse((v, _, c))) = self.classes[k].running.pop() else {
                    return;
                };
                // The earliest finish is exact: set the virtual clock to it (no drift).
                self.classes[k].vclock = self.classes[k].vclock.max(v.0);
                self.ctxs[c as usize].computing = false;
                let rest = std::mem::take(&mut self.ctxs[c as usize].rest);
                if rest > 0.0 {
                    // Its wake-up preference is used up: the rest of the op CPU-bound.
                    self.compute_in(CPU_BOUND, c, rest);
                } else {
                    self.computed(c);
                }
            } else {
                let Some(Reverse((t, _, c, kind))) = self.timers.pop() else {
                    return;
                };
                self.advance_to(t.0);
                match kind {
                    TimerKind::DelayEnd => {
                        self.bump_pc(c);
                        self.make_ready(c);
                    }
                    TimerKind::Wake => self.make_ready(c),
                    // Off the CPU without having slept: no wake-up preference.
                    TimerKind::StallEnd => self.go_on(c),
                    TimerKind::Start => {
                        let strand = self.starts[c as usize];
                        match self.g.strands[strand as usize].runs {
                            Runs::Thread => {
                                let ctx = self.new_thread_ctx(strand);
                                self.ready.push_back(ctx);
                            }
                            // A task whose submission was not recorded: queued at its start.
                            Runs::Pool(p) => self.enqueue(None, strand, p),
                        }
                    }
                }
            }
        }
    }

    /// Context `c` has computed its op: it goes on, after the op's recorded stall
    /// (off the CPU beyond sharing the cores, `ExecGraph::compute_stall_ns`), scaled
    /// with the latencies in the sensitivity runs (whether a stall shrinks with its op's
    /// compute under an edit is not known: the range covers ×0.5 and ×2).
    fn computed(&mut self, c: u32) {
        let stall = self.ctxs[c as usize]
            .stack
            .last()
            .and_then(|f| recorded(&self.g.compute_stall_ns, f.pc));
        match stall {
            Some(ns) if ns > 0 => {
                let at = self.now + ns as f64 * self.p.latency_scale;
                self.timer(at, c, TimerKind::StallEnd)
            }
            _ => self.go_on(c),
        }
    }

    /// Context `c` goes on with its next op (ready, without a wake-up preference).
    fn go_on(&mut self, c: u32) {
        self.bump_pc(c);
        self.ready.push_back(c);
    }

    /// The park cost before a virtual thread's unmount that the compute op at `pc`
    /// holds, when the await right after it (before its strand's `end`) will not
    /// block (its signal came).
    fn park_not_needed_ns(&self, pc: u32, end: u32) -> f64 {
        if pc + 1 >= end {
            return 0.0;
        }
        match self.g.ops.get(pc as usize + 1) {
            Some(&Op::AwaitSignal(k)) if self.signalled.get(k as usize) == Some(&true) => self
                .g
                .sync_park_ns
                .get(k as usize)
                .map_or(0.0, |p| p.0 as f64),
            _ => 0.0,
        }
    }

    fn bump_pc(&mut self, c: u32) {
        if let Some(f) = self.ctxs[c as usize].stack.last_mut() {
            f.pc += 1;
        }
    }

    fn new_thread_ctx(&mut self, strand: StrandId) -> u32 {
        let c = self.ctxs.len() as u32;
        self.ctxs.push(Ctx {
            what: SimContext::Thread { strand },
            stack: Vec::new(),
            preference: 0.0,
            rest: 0.0,
            pool: None,
            deque: VecDeque::new(),
            worker: 0,
            on_carrier: false,
            computing: false,
            park_skipped_ns: 0.0,
        });
        self.push_frame(c, strand);
        c
    }

    fn push_frame(&mut self, c: u32, strand: StrandId) {
        // A park's cost skipped belongs to the strand that skipped it.
        self.ctxs[c as usize].park_skipped_ns = 0.0;
        let st = &self.g.strands[strand as usize];
        self.state[strand as usize] = State::Running;
        if let Some(r) = self.run.get_mut(strand as usize) {
            let depth = self.ctxs[c as usize].stack.len().min(u8::MAX as usize) as u8;
            *r = Some((c, self.now, depth));
        }
        if let (Some(p), true) = (
            self.ctxs[c as usize].pool,
            self.ctxs[c as usize].stack.is_empty(),
        ) {
            let p = p as usize;
            self.busy[p] += 1;
            self.peak_busy[p] = self.peak_busy[p].max(self.busy[p]);
        }
        self.ctxs[c as usize].stack.push(Frame {
            strand,
            pc: st.first,
            end: st.first + st.len,
            held: Vec::new(),
        });
    }

    fn compute_factor(&self, c: u32) -> f64 {
        let Some(f) = self.ctxs[c as usize].stack.last() else {
            return 1.0;
        };
        let class = self.g.strands[f.strand as usize].class as usize;
        let mut k = self.ov.class_factor.get(class).copied().unwrap_or(1.0);
        for (l, _) in &f.held {
            if let Some(LockMode::Shorten(x)) = self.ov.lock_mode.get(*l as usize) {
                k *= x;
            }
        }
        k.max(0.0)
    }

    /// Runs context `c` until it computes, waits, or has nothing to do.
    fn step(&mut self, c: u32) {
        loop {
            let ci = c as usize;
            let Some(fr) = self.ctxs[ci].stack.last() else {
                match self.ctxs[ci].pool {
                    Some(p) => {
                        if !self.find_work(c, p) {
                            self.idle[p as usize].push(c);
                            return;
                        }
                        continue;
                    }
                    None => return,
                }
            };
            let (strand, pc, end) = (fr.strand, fr.pc, fr.end);
            if pc >= end {
                self.finish(c, strand);
                continue;
            }
            match self.g.ops[pc as usize] {
                Op::Compute(ns) => {
                    // A virtual thread's park that this run does not need (its signal
                    // came already) costs its carrier nothing: not the unmount before
                    // it, not the turn and mount after it (docs/whatif.md).
                    let skipped = std::mem::take(&mut self.ctxs[ci].park_skipped_ns)
                        + self.park_not_needed_ns(pc, end);
                    let eff = ns as f64 * self.compute_factor(c) - skipped;
                    if eff <= 0.0 {
                        self.bump_pc(c);
                        continue;
                    }
                    self.start_compute(c, eff);
                    return;
                }
                Op::Delay(ns) => {
                    if ns == 0 {
                        self.bump_pc(c);
                        continue;
                    }
                    self.timer(self.now + ns as f64, c, TimerKind::DelayEnd);
                    return;
                }
                Op::Spawn(s) => {
                    self.bump_pc(c);
                    if self.state[s as usize] != State::NotSpawned {
                        continue;
                    }
                    if self.ov.inline.get(s as usize).copied().unwrap_or(false) {
                        self.push_frame(c, s);
                        continue;
                    }
                    match self.g.strands[s as usize].runs {
                        Runs::Thread => {
                            let t = self.new_thread_ctx(s);
                            self.ready.push_back(t);
                        }
                        Runs::Pool(p) => self.enqueue(Some(c), s, p),
                    }
                }
                Op::Await(s) => {
                    let st = self.state[s as usize];
                    if st == State::Done {
                        self.bump_pc(c);
                        continue;
                    }
                    if st == State::NotSpawned
                        && self.ov.inline.get(s as usize).copied().unwrap_or(false)
                    {
                        // An inlined strand awaited before its spawn op: run it now.
                        self.bump_pc(c);
                        self.push_frame(c, s);
                        continue;
                    }
                    // The task is still in the joiner's own deque: it runs it (tryUnpush).
                    let dq = &mut self.ctxs[ci].deque;
                    if st == State::Queued {
                        if let Some(i) = dq.iter().rposition(|&x| x == s) {
                            dq.remove(i);
                            if let Some(p) = self.ctxs[ci].pool {
                                self.deque_tasks[p as usize] -= 1;
                            }
                            self.bump_pc(c);
                            self.push_frame(c, s);
                            continue;
                        }
                    }
                    // Helping: a fork-join worker runs other tasks while it waits, and
                    // comes back to this join after each.
                    if self.p.fj_help {
                        if let Some(p) = self.ctxs[ci].pool {
                            if self.g.pools[p as usize].forkjoin {
                                if let Some(t) = self.take_work(c, p) {
                                    self.push_frame(c, t);
                                    continue;
                                }
                            }
                        }
                    }
                    self.waiters[s as usize].push(c);
                    return;
                }
                Op::Acquire(l) => {
                    let mode = self
                        .ov
                        .lock_mode
                        .get(l as usize)
                        .copied()
                        .unwrap_or(LockMode::Normal);
                    if mode == LockMode::Removed {
                        self.bump_pc(c);
                        continue;
                    }
                    let stripe = match mode {
                        LockMode::Split(n) if n > 1 => {
                            self.lock_base[l as usize]
                                + (mix(self.p.seed, strand as u64, pc as u64) % n as u64) as u32
                        }
                        _ => self.lock_base[l as usize],
                    };
                    let ls = &mut self.locks[stripe as usize];
                    if ls.permits > 1 {
                        // A semaphore: the permit a release passed to it, else a
                        // free one, else wait in order.
                        if let Some(i) = ls.granted.iter().position(|&g| g == c) {
                            ls.granted.swap_remove(i);
                        } else if ls.queue.contains(&c) {
                            return;
                        } else if ls.taken >= ls.permits {
                            ls.queue.push_back(c);
                            return;
                        } else {
                            ls.taken += 1;
                        }
                    } else {
                        match ls.holder {
                            None => ls.holder = Some(c),
                            Some(h) if h == c => {}
                            Some(_) => {
                                if !ls.queue.contains(&c) {
                                    ls.queue.push_back(c);
                                }
                                return;
                            }
                        }
                    }
                    if let Some(f) = self.ctxs[ci].stack.last_mut() {
                        f.held.push((l, stripe));
                        f.pc += 1;
                    }
                }
                Op::Signal(k) => {
                    self.bump_pc(c);
                    let k = k as usize;
                    if k < self.signalled.len() && !self.signalled[k] {
                        self.signalled[k] = true;
                        // The wake-up this hand-off took in the recording
                        // (docs/whatif.md §Latencies), else the median one.
                        let lat = match self.g.sync_wake_ns.get(k) {
                            Some(&ns) if ns > 0 && self.per_hand_off => ns,
                            _ => self.g.unpark_wake_ns,
                        } as f64
                            * self.p.latency_scale;
                        for w in std::mem::take(&mut self.signal_waiters[k]) {
                            self.wake(w, lat);
                        }
                    }
                }
                Op::AwaitSignal(k) => {
                    let k = k as usize;
                    if k >= self.signalled.len() || self.signalled[k] {
                        if let Some(&(_, after)) = self.g.sync_park_ns.get(k) {
                            self.ctxs[ci].park_skipped_ns = after as f64;
                        }
                        self.bump_pc(c);
                        continue;
                    }
                    // Woken by the signal: the op is done then.
                    self.bump_pc(c);
                    self.signal_waiters[k].push(c);
                    return;
                }
                Op::Release(l) => {
                    self.bump_pc(c);
                    let Some(f) = self.ctxs[ci].stack.last_mut() else {
                        continue;
                    };
                    let Some(i) = f.held.iter().rposition(|h| h.0 == l) else {
                        continue; // removed, or never taken
                    };
                    let (_, stripe) = f.held.remove(i);
                    self.release(stripe);
                }
            }
        }
    }

    /// Queues strand `s` on pool `p`: on the forking worker's deque (fork-join), else
    /// on the pool's queue; wakes an idle worker.
    fn enqueue(&mut self, from: Option<u32>, s: StrandId, p: PoolId) {
        self.state[s as usize] = State::Queued;
        let fj = self.g.pools[p as usize].forkjoin;
        match from {
            Some(c) if fj && self.ctxs[c as usize].pool == Some(p) => {
                self.ctxs[c as usize].deque.push_back(s);
                self.deque_tasks[p as usize] += 1;
            }
            _ => self.pool_queue[p as usize].push_back(s),
        }
        if let Some(w) = self.idle[p as usize].pop() {
            // The pickup this task took in the recording, else the pool's median
            // (docs/whatif.md §Latencies).
            let ns = recorded(&self.g.task_pickup_ns, s)
                .filter(|_| self.per_hand_off)
                .unwrap_or(self.g.pools[p as usize].pickup_ns);
            let lat = ns as f64 * self.p.latency_scale;
            self.wake(w, lat);
        }
    }

    fn wake(&mut self, c: u32, latency: f64) {
        if latency > 0.0 {
            self.timer(self.now + latency, c, TimerKind::Wake);
        } else {
            self.make_ready(c);
        }
    }

    /// Releases a lock stripe: the next waiter holds it from now and runs after the
    /// hand-off latency its acquisition took when recorded (docs/whatif.md
    /// §Latencies; the lock's median on a loaded recording), none when it had none.
    fn release(&mut self, stripe: u32) {
        let fifo = self.p.lock_fifo;
        let ls = &mut self.locks[stripe as usize];
        let next = if fifo {
            ls.queue.pop_front()
        } else {
            ls.queue.pop_back()
        };
        if ls.permits > 1 {
            // The permit goes to the next waiter, else back to the semaphore.
            match next {
                Some(n) => ls.granted.push(n),
                None => ls.taken = ls.taken.saturating_sub(1),
            }
        } else {
            ls.holder = next;
        }
        let Some(n) = next else { return };
        let Some(f) = self.ctxs[n as usize].stack.last() else {
            self.make_ready(n);
            return;
        };
        // The waiter is at its Acquire op. One that was not handed the lock when
        // recorded (it found the lock free, or spun until it was) takes it at once:
        // its wait here comes from the simulated order, not from a wake-up.
        let ns = match (
            self.g.ops.get(f.pc as usize),
            recorded(&self.g.acquire_handoff_ns, f.pc),
        ) {
            (Some(&Op::Acquire(_)), Some(ns)) if self.per_hand_off => ns,
            (Some(&Op::Acquire(l)), Some(_)) => {
                self.g.locks.get(l as usize).map_or(0, |k| k.handoff_ns)
            }
            _ => 0,
        };
        self.wake(n, ns as f64 * self.p.latency_scale);
    }

    fn finish(&mut self, c: u32, strand: StrandId) {
        let ci = c as usize;
        if let Some(f) = self.ctxs[ci].stack.pop() {
            // A strand that ends holding a lock releases it (clamped inferred holds).
            for (_, stripe) in f.held {
                self.release(stripe);
            }
        }
        if let (Some(p), true) = (self.ctxs[ci].pool, self.ctxs[ci].stack.is_empty()) {
            self.busy[p as usize] -= 1;
        }
        self.state[strand as usize] = State::Done;
        self.end[strand as usize] = self.now;
        let w = std::mem::take(&mut self.waiters[strand as usize]);
        for c in w {
            // The waiter is at its Await op: the wake-up that wait took in the
            // recording, else the median one.
            let ns = self.ctxs[c as usize]
                .stack
                .last()
                .and_then(|f| recorded(&self.g.await_wake_ns, f.pc))
                .filter(|_| self.per_hand_off)
                .unwrap_or(self.g.wake_ns);
            self.wake(c, ns as f64 * self.p.latency_scale);
        }
    }

    fn find_work(&mut self, c: u32, p: PoolId) -> bool {
        match self.take_work(c, p) {
            Some(s) => {
                self.push_frame(c, s);
                true
            }
            None => false,
        }
    }

    /// Next task for worker `c` of pool `p`: its own deque (LIFO), the pool's
    /// queue (FIFO), else a steal (FIFO) from the first non-empty deque in a seeded order.
    fn take_work(&mut self, c: u32, p: PoolId) -> Option<StrandId> {
        let ci = c as usize;
        let pi = p as usize;
        if self.deque_tasks[pi] == 0 {
            return self.pool_queue[pi].pop_front();
        }
        if let Some(s) = self.ctxs[ci].deque.pop_back() {
            self.deque_tasks[pi] -= 1;
            return Some(s);
        }
        self.pool_queue[pi].pop_front().or_else(|| {
            let ws = &self.pool_workers[pi];
            let n = ws.len();
            let me = self.ctxs[ci].worker as usize;
            let start = (mix(self.p.seed, me as u64, 0) as usize) % n.max(1);
            (0..n)
                .map(|k| ws[(start + k) % n])
                .filter(|&v| v != c)
                .find(|&v| !self.ctxs[v as usize].deque.is_empty())
                .and_then(|v| self.ctxs[v as usize].deque.pop_front())
                .inspect(|_| self.deque_tasks[pi] -= 1)
        })
    }
}

/// A small deterministic hash (splitmix64).
fn mix(seed: u64, a: u64, b: u64) -> u64 {
    let mut z = seed
        .wrapping_add(a.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(b.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
