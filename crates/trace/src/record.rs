//! The records of a trace. Times (`ts`) are clock ticks in the file and
//! nanoseconds since the start of recording once read back by [`crate::read_trace`].
//!
//! Object identities (`ident`) are `System.identityHashCode` values; together
//! with the class id they identify a task object for the length of a run
//! (collisions inside one class are possible but rare, see docs/task-model.md).
//! A class id or site id of 0 means "none / unknown".

/// Index of a thread in a trace, assigned by the agent in order of first event.
pub type ThreadIndex = u32;

/// Blocks holding records not tied to one thread (definitions, samples, GC).
pub const GLOBAL_THREAD: ThreadIndex = u32::MAX;

/// What an instrumented method is, decided by the agent at class-load time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProbeKind {
    /// An execution method: `run`, `call` or `exec` of a task class.
    Execution,
    /// An execution method of JDK executor plumbing (FutureTask, adapters, …)
    /// that stands for the user task it wraps.
    PlumbingExecution,
    /// A submission method: `Executor.execute`, `ExecutorService.submit`, FJP execute/submit/invoke.
    Submission,
    /// A task constructor.
    Creation,
    /// `ForkJoinTask.fork`.
    Fork,
    /// A join/get that may block (`Future.get`, `ForkJoinTask.join`, `Thread.join`).
    Join,
    /// A lock acquisition that may park.
    LockAcquire,
    /// A wait that is not lock acquisition (Condition.await, latch, sleep, queue take).
    Wait,
    Other(u8),
}

impl ProbeKind {
    pub fn code(self) -> u8 {
        match self {
            ProbeKind::Execution => 1,
            ProbeKind::PlumbingExecution => 2,
            ProbeKind::Submission => 3,
            ProbeKind::Creation => 4,
            ProbeKind::Fork => 5,
            ProbeKind::Join => 6,
            ProbeKind::LockAcquire => 7,
            ProbeKind::Wait => 8,
            ProbeKind::Other(c) => c,
        }
    }

    pub fn from_code(code: u8) -> ProbeKind {
        match code {
            1 => ProbeKind::Execution,
            2 => ProbeKind::PlumbingExecution,
            3 => ProbeKind::Submission,
            4 => ProbeKind::Creation,
            5 => ProbeKind::Fork,
            6 => ProbeKind::Join,
            7 => ProbeKind::LockAcquire,
            8 => ProbeKind::Wait,
            c => ProbeKind::Other(c),
        }
    }
}

/// Why records were lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossReason {
    /// A per-thread buffer could not be handed to the writer in time.
    BufferOverflow,
    /// Writing to the trace file failed (disk full, I/O error).
    WriteFailed,
    /// The agent disabled itself after an internal error.
    AgentDisabled,
    /// Never written by the agent: the reader skipped a damaged stretch of the
    /// file (a block whose checksum or records are bad) and stands it in as a loss.
    Corrupt,
    Other(u8),
}

impl LossReason {
    pub fn code(self) -> u8 {
        match self {
            LossReason::BufferOverflow => 1,
            LossReason::WriteFailed => 2,
            LossReason::AgentDisabled => 3,
            LossReason::Corrupt => 4,
            LossReason::Other(c) => c,
        }
    }
    pub fn from_code(code: u8) -> LossReason {
        match code {
            1 => LossReason::BufferOverflow,
            2 => LossReason::WriteFailed,
            3 => LossReason::AgentDisabled,
            4 => LossReason::Corrupt,
            c => LossReason::Other(c),
        }
    }
}

/// One trace record. Records in a thread's block happened on that thread, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    // ---- definitions (any block) ----
    /// A class seen by a probe. `name` is the binary name with dots; lambdas get a
    /// readable name naming their source (see docs/task-model.md).
    ClassDef {
        id: u32,
        name: String,
    },
    /// An instrumented method.
    ProbeDef {
        id: u32,
        kind: ProbeKind,
        // Box<str>, not String: the largest variants set every record's size.
        class: Box<str>,
        method: Box<str>,
        descriptor: Box<str>,
    },
    /// A call site: frames innermost first, each `pkg.Class.method:line`.
    SiteDef {
        id: u32,
        frames: Vec<String>,
    },

    // ---- thread lifecycle (the thread's own block) ----
    ThreadStart {
        ts: u64,
        name: Box<str>,
        java_id: u64,
        os_tid: u32,
        daemon: bool,
        /// Runtime class of the Thread object.
        class_id: u32,
        /// Class and identity of the thread's Runnable target (0 if none).
        target_class_id: u32,
        target_ident: u32,
        /// Identity of the Thread object itself.
        ident: u32,
    },
    /// End of a thread, with its CPU time and context switches (getrusage(RUSAGE_THREAD)).
    ThreadEnd {
        ts: u64,
        cpu_ns: u64,
        voluntary_cs: u64,
        involuntary_cs: u64,
    },

    // ---- task model (the executing thread's block) ----
    TaskBegin {
        ts: u64,
        probe: u32,
        class_id: u32,
        ident: u32,
        /// For plumbing: the user task it wraps (0 if none).
        inner_class_id: u32,
        inner_ident: u32,
    },
    TaskEnd {
        ts: u64,
        probe: u32,
        ident: u32,
    },
    /// An outermost submission on this thread.
    Submit {
        ts: u64,
        probe: u32,
        executor_class_id: u32,
        task_class_id: u32,
        task_ident: u32,
        inner_class_id: u32,
        inner_ident: u32,
        site: u32,
    },
    /// A task object finished construction on this thread.
    Created {
        ts: u64,
        class_id: u32,
        ident: u32,
        site: u32,
    },
    /// `ForkJoinTask.fork` of a task on this thread.
    Fork {
        ts: u64,
        class_id: u32,
        ident: u32,
        site: u32,
    },
    /// A possibly blocking join/get began; `target_*` is what is waited for.
    JoinBegin {
        ts: u64,
        probe: u32,
        target_class_id: u32,
        target_ident: u32,
    },
    JoinEnd {
        ts: u64,
        probe: u32,
    },

    // ---- process-wide (global block) ----
    GcStart {
        ts: u64,
    },
    GcEnd {
        ts: u64,
    },
    /// Sampler tick: cumulative process CPU time and context switches (getrusage(RUSAGE_SELF)).
    /// `machine_idle_ns` (trailing, optional): the whole machine's cumulative idle
    /// time, all CPUs (idle + iowait of `/proc/stat`), which says whether other
    /// processes held CPUs the program's threads waited for.
    Sample {
        ts: u64,
        process_cpu_ns: u64,
        voluntary_cs: u64,
        involuntary_cs: u64,
        live_threads: u32,
        machine_idle_ns: Option<u64>,
    },
    /// Scheduler statistics of one thread (`/proc/self/task/<tid>/schedstat`),
    /// cumulative since the thread began: time on a CPU, time runnable but waiting
    /// for one (run queue), and time slices. Written by the sampler at each tick for
    /// every live recorded thread, and by the thread itself at its end.
    ThreadSched {
        ts: u64,
        thread: ThreadIndex,
        on_cpu_ns: u64,
        runq_ns: u64,
        timeslices: u64,
    },
    // ---- virtual threads (tags 90–93; JDK 21+, docs/trace-format.md) ----
    // Written in the carrier's block; the reader moves them, and every record
    // the carrier wrote while the virtual thread was mounted, to the virtual
    // thread's own stream (thread index `VIRTUAL_THREAD_BASE + n`).
    /// Virtual thread `vt` (Java thread id) started, mounted on `carrier` (a
    /// thread index); `class_id`/`ident` are its task (the Runnable it runs; for
    /// a thread-per-task executor, the executor's wrapper of the submitted task).
    VtStart {
        ts: u64,
        vt: u64,
        carrier: ThreadIndex,
        class_id: u32,
        ident: u32,
    },
    /// Virtual thread `vt` ended (still mounted on `carrier`).
    VtEnd {
        ts: u64,
        vt: u64,
        carrier: ThreadIndex,
    },
    /// Virtual thread `vt` was mounted again, on `carrier`.
    VtMount {
        ts: u64,
        vt: u64,
        carrier: ThreadIndex,
    },
    /// Virtual thread `vt` was unmounted from `carrier` (it parked or yielded).
    VtUnmount {
        ts: u64,
        vt: u64,
        carrier: ThreadIndex,
    },
    /// The mounted virtual thread parks its carrier (it is pinned: inside
    /// `synchronized` on JDK 21-23, or under a native frame); the `WaitBegin`
    /// that follows is the blocking. `site`: the stack from the first frame
    /// outside the JDK (a SiteDef, 0 none); `monitor_site`: the stack from the
    /// frame that entered the innermost monitor the thread holds (what pins it on
    /// JDK 21-23; 0 none held, or unknown).
    VtPinned {
        ts: u64,
        site: u32,
        monitor_site: u32,
    },
    // ---- what-if recording (tags 100–109; docs/whatif.md §Recording) ----
    /// This thread unparked the thread whose Java id is `target` (`Unsafe.unpark`,
    /// behind every `LockSupport.unpark`: AQS releases, condition signals, queue
    /// hand-offs, latches, pool wake-ups). 0 when the target's id is unknown.
    /// `ns`: how long the unpark call took (waking a parked thread is a system call,
    /// on a VM an inter-processor interrupt: the releaser's cost of a lock hand-off,
    /// docs/speedups.md); 0 when not measured (agents before session 9 wrote no
    /// such field, and readers skip what follows the fields they know).
    Unpark {
        ts: u64,
        target: u64,
        ns: u64,
    },
    /// `--lock-detail`: this thread is about to enter the monitor `lock` (a LockDef
    /// id): a `synchronized` block's `monitorenter`, or the first instruction of a
    /// `synchronized` method (the monitor is already held then). The acquisition is
    /// the `MonitorEntered` that follows; without one it was at this time.
    MonitorEnter {
        ts: u64,
        lock: u32,
    },
    /// `--lock-detail`: the `monitorenter` of the last `MonitorEnter` returned (written
    /// only when it took longer than a few hundred ns: a spin, or a block).
    MonitorEntered {
        ts: u64,
    },
    /// `--lock-detail`: this thread released its innermost entered monitor (after a
    /// `monitorexit`, or at the end of a `synchronized` method, just before the JVM
    /// releases it).
    MonitorExit {
        ts: u64,
    },
    /// `--lock-detail`: this thread called `notify()` (`all`: `notifyAll()`) on the
    /// monitor `lock` (LockDef id) and it returned: the what-if graph's wake edge to
    /// the end of a waiter's `Object.wait` on that monitor (the waiter's `WaitBegin`
    /// carries the same `lock` under `--lock-detail`).
    MonitorNotify {
        ts: u64,
        lock: u32,
        all: bool,
    },
    /// A (ticks, CLOCK_MONOTONIC ns) pair used to convert ticks to ns.
    Calibration {
        ts: u64,
        mono_ns: u64,
    },
    /// Records the agent could not write: which thread, what time range, how many.
    Loss {
        thread: ThreadIndex,
        from_ts: u64,
        to_ts: u64,
        records: u64,
        reason: LossReason,
    },
    /// Recording ended normally (the trace is complete).
    End {
        ts: u64,
    },
    /// An attach session ended (global block, before `End`; docs/attach.md): the
    /// `classes` it changed were retransformed back to their original bytes. Methods
    /// of those classes calling weft's probes while recording (`probed_during`) and
    /// after the restore (`probed_after`, 0 when every class is back), and a digest
    /// of their methods (name, descriptor, bytecode length) before the attach and
    /// after the restore (equal when every class is back).
    AttachEnd {
        ts: u64,
        classes: u32,
        probed_during: u32,
        probed_after: u32,
        shape_before: u64,
        shape_after: u64,
    },

    // ---- fork-join (tags 27–39; docs/forkjoin.md) ----
    // Their `ts` is in clock ticks when the header says `forkjoin.clock = ticks`
    // (this agent); in older traces it is CLOCK_MONOTONIC ns (System.nanoTime),
    // which the reader converts with `start.mono_ns` ([`Record::mono_timed`]).
    /// A task usage began: `ForkJoinTask.fork()` (external false) or an external
    /// submission to a pool (true). `usage` is unique in the trace; `prev` the same
    /// object's previous usage (reuse), 0 if none. For external submissions `ident`
    /// is the task's identity hash and `pool` the pool's (0 otherwise).
    FjPush {
        ts: u64,
        usage: u64,
        prev: u64,
        class_id: u32,
        external: bool,
        ident: u32,
        pool: u32,
    },
    /// `ForkJoinTask.doExec` began running a task on this thread: a run of `usage`,
    /// or (usage 0) a direct execution of an object that was not forked or submitted.
    FjRunBegin {
        ts: u64,
        usage: u64,
        class_id: u32,
    },
    /// The innermost open `FjRunBegin` of this thread ended.
    FjRunEnd {
        ts: u64,
    },
    /// A forked usage was cancelled before it ran.
    FjCancel {
        ts: u64,
        usage: u64,
    },
    /// `reinitialize()` of an object whose last usage is `usage` (0: never used).
    FjReinit {
        ts: u64,
        usage: u64,
    },
    /// A join/get on a task that was not done began (`usage` 0: not a usage).
    FjJoinBegin {
        ts: u64,
        usage: u64,
    },
    FjJoinEnd {
        ts: u64,
    },
    /// Where `usage` was forked (sampled).
    FjSite {
        usage: u64,
        site: u32,
    },
    /// This thread is a worker of pool `pool` (identity hash) of class `class_id`.
    FjWorker {
        pool: u32,
        class_id: u32,
        parallelism: u32,
    },

    // ---- locks (tags 60–79; docs/locks.md) ----
    /// A lock, defined at its first contention (global block). `kind` is a
    /// [`lock_kind`] code, `class` the lock's class (dots), `ident` its identity hash;
    /// `fair` (trailing, written only when set): a fair j.u.c. lock (its sync is a
    /// `FairSync`: `new ReentrantLock(true)`).
    LockDef {
        id: u32,
        kind: u8,
        class: String,
        ident: u32,
        fair: bool,
    },
    /// This thread began blocking to acquire lock `lock` (monitor contended enter,
    /// or the AQS / StampedLock slow path). `flags`: [`lock_flags`]; `owner` the Java
    /// thread id of the holder when known (0 unknown); `site` a SiteDef (0 none).
    LockBlock {
        ts: u64,
        lock: u32,
        flags: u8,
        owner: u64,
        site: u32,
    },
    /// This thread acquired the lock it was blocked on; `parked` if it parked meanwhile
    /// (j.u.c.; always true for monitors).
    LockAcquired {
        ts: u64,
        lock: u32,
        parked: bool,
    },
    /// This thread stopped waiting for the lock it was blocked on without acquiring
    /// it: a timed `tryLock`/`tryAcquire` whose time ran out, or an interrupted
    /// `lockInterruptibly` (j.u.c.; since session 24, earlier agents wrote `LockAcquired`).
    LockGaveUp {
        ts: u64,
        lock: u32,
    },
    /// A wait that is not a lock acquisition began (`kind`: [`wait_kind`]; `lock`: a
    /// LockDef id or 0).
    WaitBegin {
        ts: u64,
        kind: u8,
        lock: u32,
    },
    /// `timed_out`: an `Object.wait(timeout)` that returned because its time ran
    /// out, not because it was notified (a timed wait used as a sleep or a poll).
    WaitEnd {
        ts: u64,
        timed_out: bool,
    },
    /// What the thread's next `WaitBegin` waits on (written just before it):
    /// `class_id` the ClassDef of the waited-on object (`Object.wait`) or of the
    /// park blocker (`LockSupport.park(blocker)`), 0 unknown; `site` a SiteDef
    /// of the wait (sampled per class; 0 not taken). docs/trace-format.md.
    WaitDetail {
        class_id: u32,
        site: u32,
    },
    /// The first application class was loaded (the program's `main` is about to
    /// run): JVM start-up before it is not counted as the main thread's running time.
    AppStart {
        ts: u64,
    },

    // ---- sampled stacks (tags 80–89; docs/sampling.md) ----
    /// A frame of sampled stacks: method, class and source line, resolved by the
    /// agent off the signal path. `kind` is a [`frame_kind`].
    FrameDef {
        id: u32,
        kind: u8,
        line: i32,
        class: Box<str>,
        method: Box<str>,
    },
    /// A sampled stack: frame ids innermost first.
    StackDef {
        id: u32,
        frames: Vec<u32>,
    },
    /// One stack sample of thread `thread` (global block). `mode_state` is a
    /// [`sample_mode`] in the low 4 bits and a [`thread_state`] in the high 4.
    StackSample {
        ts: u64,
        thread: ThreadIndex,
        stack: u32,
        mode_state: u8,
    },
    /// A thread whose start the agent did not see (it started before the agent's
    /// hooks), recorded so that its samples have a name (the thread's own block,
    /// first record). Unlike `ThreadStart` it is not a task execution.
    ThreadSeen {
        ts: u64,
        name: Box<str>,
        java_id: u64,
        os_tid: u32,
        daemon: bool,
    },
    // ---- measured window (tags 46–47; `weft record --window`, docs/trace-format.md) ----
    /// This thread entered the window method (header `window.method`).
    WindowEnter {
        ts: u64,
    },
    /// This thread left the window method (normally or by an exception).
    WindowExit {
        ts: u64,
    },
}

/// What a [`Record::FrameDef`] is.
pub mod frame_kind {
    /// A Java frame (interpreted, compiled or inlined).
    pub const JAVA: u8 = 0;
    /// A native method.
    pub const NATIVE: u8 = 1;
    /// A walk that failed: `method` names the reason; the stack has only this frame.
    pub const BROKEN: u8 = 2;
    /// A sample taken while the thread had no Java frame to walk (in the VM or in
    /// native code before any Java call): `method` names the reason; the stack has
    /// only this frame. Not a failed walk.
    pub const NO_JAVA: u8 = 3;
}

/// Low 4 bits of [`Record::StackSample::mode_state`].
pub mod sample_mode {
    /// On-CPU sample (the thread's own CPU-time timer).
    pub const CPU: u8 = 1;
    /// Wall-clock sample (running or not).
    pub const WALL: u8 = 2;
}

/// High 4 bits of [`Record::StackSample::mode_state`]: the OS state of the thread
/// when it was sampled (from /proc; the lock/task state comes from the thread's
/// own records at the same time).
pub mod thread_state {
    pub const UNKNOWN: u8 = 0;
    pub const RUNNING: u8 = 1;
    pub const SLEEPING: u8 = 2;
    /// Uninterruptible sleep: usually I/O.
    pub const IO: u8 = 3;

    pub fn name(s: u8) -> &'static str {
        match s {
            RUNNING => "running",
            SLEEPING => "sleeping",
            IO => "io",
            _ => "unknown",
        }
    }
}

/// `LockDef.class` of a monitor that is a class's initialization lock (HotSpot's
/// `int[0]` per class): threads blocked on it wait for another thread to finish
/// that class's static initializer. Not a Java class name.
pub const CLASS_INIT_LOCK: &str = "(class initialization)";

/// `LockDef.kind` codes.
pub mod lock_kind {
    pub const MONITOR: u8 = 1;
    pub const REENTRANT_LOCK: u8 = 2;
    pub const READ_WRITE_LOCK: u8 = 3;
    pub const SEMAPHORE: u8 = 4;
    pub const STAMPED_LOCK: u8 = 5;
    pub const OTHER_AQS: u8 = 6;

    /// The JSON name of a kind.
    pub fn name(k: u8) -> &'static str {
        match k {
            MONITOR => "monitor",
            REENTRANT_LOCK => "reentrant_lock",
            READ_WRITE_LOCK => "read_write_lock",
            SEMAPHORE => "semaphore",
            STAMPED_LOCK => "stamped_lock",
            _ => "other_aqs",
        }
    }
}

/// `LockBlock.flags` bits.
pub mod lock_flags {
    /// Shared (read) side of a read-write or stamped lock.
    pub const SHARED: u8 = 1;
    /// Re-acquisition after `Condition.await` / `Object.wait`.
    pub const REACQUIRE: u8 = 2;
}

/// `WaitBegin.kind` codes.
pub mod wait_kind {
    /// `Object.wait` (also `Thread.join`), from MonitorWait/MonitorWaited.
    pub const OBJECT_WAIT: u8 = 1;
    /// `Unsafe.park` outside a lock acquisition (Condition.await, queues, idle pools, …).
    pub const PARK: u8 = 2;
    /// A `CountDownLatch.await` slow path.
    pub const LATCH: u8 = 3;

    pub fn name(k: u8) -> &'static str {
        match k {
            OBJECT_WAIT => "Object.wait",
            PARK => "park",
            LATCH => "CountDownLatch.await",
            _ => "other",
        }
    }
}

impl Record {
    /// The record's time, if it has one.
    pub fn ts(&self) -> Option<u64> {
        use Record::*;
        match self {
            FjSite { .. } | FjWorker { .. } => None,
            FjPush { ts, .. }
            | FjRunBegin { ts, .. }
            | FjRunEnd { ts }
            | FjCancel { ts, .. }
            | FjReinit { ts, .. }
            | FjJoinBegin { ts, .. }
            | FjJoinEnd { ts } => Some(*ts),
            ClassDef { .. } | ProbeDef { .. } | SiteDef { .. } | LockDef { .. } => None,
            WaitDetail { .. } => None,
            FrameDef { .. } | StackDef { .. } => None,
            StackSample { ts, .. } | ThreadSeen { ts, .. } => Some(*ts),
            LockBlock { ts, .. }
            | LockAcquired { ts, .. }
            | LockGaveUp { ts, .. }
            | WaitBegin { ts, .. }
            | WaitEnd { ts, .. }
            | AppStart { ts }
            | WindowEnter { ts }
            | WindowExit { ts } => Some(*ts),
            ThreadStart { ts, .. }
            | ThreadEnd { ts, .. }
            | TaskBegin { ts, .. }
            | TaskEnd { ts, .. }
            | Submit { ts, .. }
            | Created { ts, .. }
            | Fork { ts, .. }
            | JoinBegin { ts, .. }
            | JoinEnd { ts, .. }
            | GcStart { ts }
            | GcEnd { ts }
            | Sample { ts, .. }
            | ThreadSched { ts, .. }
            | VtStart { ts, .. }
            | VtEnd { ts, .. }
            | VtMount { ts, .. }
            | VtUnmount { ts, .. }
            | VtPinned { ts, .. }
            | Unpark { ts, .. }
            | MonitorEnter { ts, .. }
            | MonitorNotify { ts, .. }
            | MonitorEntered { ts }
            | MonitorExit { ts }
            | Calibration { ts, .. }
            | AttachEnd { ts, .. }
            | End { ts } => Some(*ts),
            Loss { from_ts, .. } => Some(*from_ts),
        }
    }

    /// Fork-join records, whose `ts` is CLOCK_MONOTONIC ns in traces without
    /// `forkjoin.clock = ticks`.
    pub fn mono_timed(&self) -> bool {
        use Record::*;
        matches!(
            self,
            FjPush { .. }
                | FjRunBegin { .. }
                | FjRunEnd { .. }
                | FjCancel { .. }
                | FjReinit { .. }
                | FjJoinBegin { .. }
                | FjJoinEnd { .. }
        )
    }

    /// The record's time, to rewrite it (the reader converts ticks to ns; a
    /// restricted trace maps times onto its window).
    pub fn ts_mut(&mut self) -> Option<&mut u64> {
        use Record::*;
        match self {
            FjSite { .. } | FjWorker { .. } => None,
            FjPush { ts, .. }
            | FjRunBegin { ts, .. }
            | FjRunEnd { ts }
            | FjCancel { ts, .. }
            | FjReinit { ts, .. }
            | FjJoinBegin { ts, .. }
            | FjJoinEnd { ts } => Some(ts),
            ClassDef { .. } | ProbeDef { .. } | SiteDef { .. } | LockDef { .. } => None,
            WaitDetail { .. } => None,
            FrameDef { .. } | StackDef { .. } => None,
            StackSample { ts, .. } | ThreadSeen { ts, .. } => Some(ts),
            LockBlock { ts, .. }
            | LockAcquired { ts, .. }
            | LockGaveUp { ts, .. }
            | WaitBegin { ts, .. }
            | WaitEnd { ts, .. }
            | AppStart { ts }
            | WindowEnter { ts }
            | WindowExit { ts } => Some(ts),
            ThreadStart { ts, .. }
            | ThreadEnd { ts, .. }
            | TaskBegin { ts, .. }
            | TaskEnd { ts, .. }
            | Submit { ts, .. }
            | Created { ts, .. }
            | Fork { ts, .. }
            | JoinBegin { ts, .. }
            | JoinEnd { ts, .. }
            | GcStart { ts }
            | GcEnd { ts }
            | Sample { ts, .. }
            | ThreadSched { ts, .. }
            | VtStart { ts, .. }
            | VtEnd { ts, .. }
            | VtMount { ts, .. }
            | VtUnmount { ts, .. }
            | VtPinned { ts, .. }
            | Unpark { ts, .. }
            | MonitorEnter { ts, .. }
            | MonitorNotify { ts, .. }
            | MonitorEntered { ts }
            | MonitorExit { ts }
            | Calibration { ts, .. }
            | AttachEnd { ts, .. }
            | End { ts } => Some(ts),
            Loss { from_ts, .. } => Some(from_ts),
        }
    }
}

#[cfg(test)]
mod size_tests {
    /// A trace in memory is a list of records, each as large as the largest variant:
    /// large payloads stay behind a pointer (`Box<str>`), so that fork-join traces of
    /// millions of small records do not pay for the rare large ones.
    #[test]
    fn a_record_takes_64_bytes_at_most() {
        let size = std::mem::size_of::<super::Record>();
        assert!(size <= 64, "Record is {size} bytes");
    }
}
