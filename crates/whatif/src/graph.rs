//! The execution graph (docs/whatif.md §Graph): strands made of ops, pools and
//! locks. Built by [`crate::build`]; read by the simulator ([`crate::sim`]) and
//! the critical path ([`crate::critical`]).

/// Index of a strand in [`ExecGraph::strands`].
pub type StrandId = u32;
/// Index of a pool in [`ExecGraph::pools`].
pub type PoolId = u32;
/// Index of a lock in [`ExecGraph::locks`].
pub type LockId = u32;
/// Index of a one-shot signal (`0..ExecGraph::syncs`): an unpark that ended a wait.
pub type SyncId = u32;

/// One step of a strand. Times are nanoseconds of CPU demand (compute) or of wall (delay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Runs on a core for this many ns of CPU.
    Compute(u64),
    /// Takes this much time without a core and without depending on anything
    /// (an unmatched wait, anchored: kept as recorded under every edit).
    Delay(u64),
    /// Makes a strand runnable: a submit, a fork, a thread start.
    Spawn(StrandId),
    /// Waits until a strand has finished: a get, a join, a Thread.join.
    Await(StrandId),
    /// Takes a lock (waits while another strand holds it).
    Acquire(LockId),
    /// Releases a lock.
    Release(LockId),
    /// Fires a signal: the unpark that woke a waiter (a queue hand-off, a
    /// condition signal, a latch count-down).
    Signal(SyncId),
    /// Waits until the signal has fired (the park that unpark ended); goes on at
    /// once when it already has.
    AwaitSignal(SyncId),
}

/// Where a strand runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// Its own thread: `main` or an application thread's program.
    Thread,
    /// A worker of a pool, which it waits for in the pool's queue.
    Pool(PoolId),
}

/// A sequence of ops that runs in program order on one thread: a thread's
/// program, one executor task execution or one fork-join task run.
#[derive(Debug, Clone, PartialEq)]
pub struct Strand {
    /// Task class (or thread name for a thread program), index into [`ExecGraph::classes`].
    pub class: u32,
    pub runs: Runs,
    /// Ops in `ExecGraph::ops[first..first + len]`.
    pub first: u32,
    pub len: u32,
    /// A root strand starts by itself at this offset from the window start
    /// (`main`, threads whose start was not recorded); `None` = spawned by an op.
    pub root_start_ns: Option<u64>,
    /// Observed begin and end (ns from the window start), for the report and the critical path.
    pub observed_begin_ns: u64,
    pub observed_end_ns: u64,
    /// Site where it was submitted or forked, when known (index into [`ExecGraph::sites`]).
    pub site: Option<u32>,
    /// The recorded thread it ran on.
    pub thread: u32,
}

/// A pool of worker threads.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    /// Stable id users name in `pool:POOL=N` (the worker threads' name prefix).
    pub id: String,
    /// `executor` (FIFO queue) or `forkjoin` (deques with stealing).
    pub forkjoin: bool,
    /// Worker threads seen running its tasks.
    pub threads: u32,
    /// Median time from a submission to the start of the task when a worker was
    /// idle (the wake-up of a parked worker), ns.
    pub pickup_ns: u64,
}

/// A lock.
#[derive(Debug, Clone, PartialEq)]
pub struct Lock {
    /// `class@identityhash`, as `weft report --json` prints it (`locks.locks[].id`).
    pub id: String,
    pub class: String,
    /// Critical sections whose end was inferred from a hand-off (the next waiter's acquisition).
    pub holds_chained: u64,
    /// Critical sections whose length was set to the lock's median chained hold.
    pub holds_assumed: u64,
    /// Critical sections recorded by `--lock-detail` (request, acquisition, release).
    pub holds_recorded: u64,
    /// Median hand-off latency of its recorded sections (release of the holder to
    /// the acquisition of a waiter that was already waiting), ns; 0 without
    /// `--lock-detail` (an inferred hold ends at the next acquisition: the hand-off
    /// is inside it).
    pub handoff_ns: u64,
    /// A `synchronized` monitor (what `--lock-detail` records), not a j.u.c. lock.
    pub monitor: bool,
    /// A read-write or stamped lock: its readers' holds are shared and not recorded
    /// (a reader's blocked acquisition stays a recorded delay; an edit of the lock
    /// is low confidence).
    pub read_write: bool,
    /// A `Semaphore`: a permit is no thread's, its holds may span the holder's waits.
    pub semaphore: bool,
    /// How many may hold it at once: 1, or a semaphore's permits as its holds with a
    /// known release overlapped (build.rs).
    pub permits: u32,
}

/// Resolution class of a recorded wait (WHATIF.md §1.7): how its end was explained.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WaitTotals {
    /// Matched by id to what it waited for (future, fork-join task, thread, lock
    /// hand-off, the unpark that ended a park).
    pub exact_ns: u64,
    /// The part of `exact_ns` matched through an unpark (`Record::Unpark`) or, with
    /// `--lock-detail`, a notify (`Record::MonitorNotify`).
    pub unpark_ns: u64,
    /// Nothing matched: kept as a delay of its recorded length.
    pub anchored_ns: u64,
}

/// The run as strands and ops (ops of all strands in one array).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecGraph {
    pub strands: Vec<Strand>,
    pub ops: Vec<Op>,
    /// Observed begin of each op (ns from the window start), for the critical path.
    pub op_begin: Vec<u64>,
    pub pools: Vec<Pool>,
    pub locks: Vec<Lock>,
    /// Class names (task classes and thread names), indexed by `Strand::class`.
    pub classes: Vec<String>,
    /// CPUs the program ran on (the trace header).
    pub cores: u32,
    /// Distinct carrier threads its virtual threads were mounted on (0: none ran):
    /// at most that many virtual threads run at once in a simulation, each until it
    /// waits (a virtual thread is not preempted; sim.rs).
    pub vt_carriers: u32,
    /// Delay ops (by index in `ops`, sorted) of virtual threads that stayed mounted
    /// through the wait (pinned): their carrier stays taken meanwhile.
    pub pinned_waits: Vec<u32>,
    /// Monitor holds inferred from hand-offs that the builder kept across their
    /// virtual thread's unmount (JDK 24+, a sleep inside `synchronized`).
    pub inferred_holds_across_unmounts: u64,
    /// Cores the program actually got (docs/whatif.md §Cores): the recorded count,
    /// or less when its threads waited for a core while other processes ran; 0 = unset.
    pub cores_effective: f64,
    /// CPU time / wall of the program's compute (1 = never waited for a core).
    pub cpu_share: f64,
    /// Where the capacity went when it is below `cores` (0 otherwise): CPUs the
    /// JVM's own unrecorded threads (JIT compilers, GC) used, and other processes,
    /// where the program's threads waited for one (docs/whatif.md §Cores).
    pub cores_jvm_threads: f64,
    pub cores_other_processes: f64,
    /// Length of the recorded window (ns).
    pub observed_ns: u64,
    /// The model time (ns) of the graph's time 0: graph times are model times
    /// minus this (to place the analyses' intervals on the graph).
    pub origin_ns: u64,
    pub waits: WaitTotals,
    /// Median time from the end of an awaited strand to the return of a wait that
    /// blocked on it (the waiter's wake-up), ns.
    pub wake_ns: u64,
    /// Median time from an unpark to the return of the park it ended, ns.
    pub unpark_wake_ns: u64,
    /// Number of signals ([`Op::Signal`] / [`Op::AwaitSignal`] pairs).
    pub syncs: u32,
    /// Per signal: the recorded time from its unpark to the return of the park it
    /// ended (ns), the waiter's wake-up on that hand-off; 0 when the park began
    /// after the unpark (a permit: it did not block), and for graphs built by hand.
    /// The simulator uses [`ExecGraph::unpark_wake_ns`] then.
    pub sync_wake_ns: Vec<u64>,
    /// Per signal that ended a virtual thread's unmounted stretch: the park's cost on
    /// its carrier (ns) before the unmount (from the park's entry) and after it (the
    /// carrier's turn for it, the mount, up to the park's return), which the
    /// stretch's neighbouring compute ops hold. A virtual thread whose await does
    /// not block in a simulation does not park: the simulator leaves both out
    /// (docs/whatif.md §Virtual threads' park costs). Empty or zero elsewhere.
    pub sync_park_ns: Vec<(u64, u64)>,
    /// Per [`Op::Await`] that blocked when recorded: (its index in `ops`, the time
    /// from the end of the awaited strand to the wait's return, ns), by index. Other
    /// awaits that block in a simulation take [`ExecGraph::wake_ns`].
    pub await_wake_ns: Vec<(u32, u64)>,
    /// Per pool task picked up by an idle worker when recorded: (strand, the time
    /// from its submission to its begin, ns), by strand. Others take the pool's
    /// [`Pool::pickup_ns`].
    pub task_pickup_ns: Vec<(StrandId, u64)>,
    /// Per [`Op::Acquire`] of a recorded section (`--lock-detail`) that was handed
    /// the lock: (its index in `ops`, the time from the previous holder's release to
    /// this acquisition, ns), by index. Other acquisitions that block in a
    /// simulation take their lock's [`Lock::handoff_ns`].
    pub acquire_handoff_ns: Vec<(u32, u64)>,
    /// Per [`Op::Compute`] that was off the CPU longer than sharing the cores with
    /// the program's other computing threads explains: (its index in `ops`, that
    /// excess, ns), by index (docs/whatif.md §Durations: stalls). The simulator
    /// keeps the op's context off the cores that long after it computed. Empty
    /// for a loaded recording.
    pub compute_stall_ns: Vec<(u32, u64)>,
    /// Records the agent lost in the window.
    pub lost_records: u64,
    /// The program's threads' CPU samples whose innermost frames are a known spin-wait
    /// (`Thread.onSpinWait`, `Thread.yield`, the JDK's spinning hand-offs), as a share of
    /// their CPU samples, and the most frequent such frame: spinning is waiting that
    /// the graph counts as work (docs/whatif.md §Estimates). 0 without samples.
    pub spin_share: f64,
    pub spin_frame: Option<String>,
    /// Holds inferred from hand-offs were cut at their thread's next contended
    /// acquisition of another lock: as inferred, they nested where the program's
    /// did not, and the replay deadlocked ([`crate::build::build`]).
    pub holds_cut_at_next_block: bool,
    /// Recorded with `--lock-detail` (which records the application's monitors, not
    /// the JDK's or a library's in the JDK's packages).
    pub lock_detail_recorded: bool,
    /// Site frames (`Class.method:line`), indexed by `Strand::site`.
    pub sites: Vec<String>,
}

impl ExecGraph {
    pub fn ops_of(&self, s: StrandId) -> &[Op] {
        let st = &self.strands[s as usize];
        &self.ops[st.first as usize..(st.first + st.len) as usize]
    }

    /// Index of a class name, added when new.
    pub fn class_index(&mut self, name: &str) -> u32 {
        if let Some(i) = self.classes.iter().position(|c| c == name) {
            return i as u32;
        }
        self.classes.push(name.to_string());
        (self.classes.len() - 1) as u32
    }

    /// Appends a strand with its ops; returns its id.
    pub fn push_strand(&mut self, mut s: Strand, ops: &[Op]) -> StrandId {
        s.first = self.ops.len() as u32;
        s.len = ops.len() as u32;
        let at = s.observed_begin_ns;
        self.ops.extend_from_slice(ops);
        self.op_begin.extend(std::iter::repeat_n(at, ops.len()));
        self.strands.push(s);
        (self.strands.len() - 1) as StrandId
    }

    /// Total CPU demand of all compute ops.
    pub fn total_compute_ns(&self) -> u64 {
        self.ops
            .iter()
            .map(|o| match o {
                Op::Compute(n) => *n,
                _ => 0,
            })
            .sum()
    }

    pub fn site_frame(&self, site: u32) -> Option<&str> {
        self.sites.get(site as usize).map(String::as_str)
    }
}

/// The value recorded for `key` in a list of (key, value) sorted by key (the graph's
/// per-op and per-strand latencies and stalls).
pub(crate) fn recorded(list: &[(u32, u64)], key: u32) -> Option<u64> {
    list.binary_search_by_key(&key, |x| x.0)
        .ok()
        .map(|i| list[i].1)
}
