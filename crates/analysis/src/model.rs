//! The trace as facts: definitions (classes, probes, sites), threads, GC pauses,
//! CPU samples, losses and header facts, indexed for the analyses.
//!
//! This module only gathers and indexes what the trace says; it does not
//! interpret task records (see `tasks.rs`) or compute rates (see `cpu.rs`).

use std::collections::{BTreeMap, HashMap};

use weft_trace::{header_keys, LossReason, ProbeKind, Record, ThreadIndex, Trace, GLOBAL_THREAD};

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

    /// The thread's name, or `thread #N` when it was never named in the trace.
    pub fn display_name(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("thread #{}", self.index),
        }
    }
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
}

impl Model {
    pub fn build(trace: &Trace) -> Model {
        let h = &trace.header;
        let mut m = Model {
            pid: h.get_u64(header_keys::PID),
            java_version: h.get(header_keys::JVM_VERSION).map(str::to_string),
            jvm_vendor: h.get(header_keys::JVM_VENDOR).map(str::to_string),
            cpus: h
                .get_u64(header_keys::CPUS)
                .filter(|&c| c > 0)
                .map(|c| c.min(u32::MAX as u64) as u32),
            sample_interval_ns: h.get_u64(header_keys::SAMPLE_INTERVAL_NS),
            truncated: trace.truncated,
            unknown_records: trace.unknown_records,
            blind_spots: blind_spots(h),
            ..Model::default()
        };
        let mut gc_events: Vec<(u64, bool)> = Vec::new();
        // Scheduler readings name their thread from the global block; they are
        // attached once every thread is known (they never make a thread).
        let mut sched: Vec<(ThreadIndex, SchedPoint)> = Vec::new();
        let mut max_ts = 0u64;
        for (thread, rec) in &trace.records {
            if let Some(ts) = rec.ts() {
                max_ts = max_ts.max(ts);
                if *thread != GLOBAL_THREAD {
                    let t = m.threads.entry(*thread).or_insert_with(|| ThreadInfo {
                        index: *thread,
                        first_ns: ts,
                        last_ns: ts,
                        ..ThreadInfo::default()
                    });
                    t.first_ns = t.first_ns.min(ts);
                    t.last_ns = t.last_ns.max(ts);
                }
            }
            match rec {
                Record::ClassDef { id, name } => {
                    m.classes.insert(*id, java_type_name(name));
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
                }
                Record::SiteDef { id, frames } => {
                    m.sites
                        .insert(*id, frames.iter().map(|f| unrename_frame(f)).collect());
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
                } if *thread != GLOBAL_THREAD => {
                    if let Some(t) = m.threads.get_mut(thread) {
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
                }
                Record::ThreadEnd {
                    ts,
                    cpu_ns,
                    voluntary_cs,
                    involuntary_cs,
                } if *thread != GLOBAL_THREAD => {
                    if let Some(t) = m.threads.get_mut(thread) {
                        t.end_ns = Some(*ts);
                        t.cpu_ns = Some(*cpu_ns);
                        t.voluntary_cs = Some(*voluntary_cs);
                        t.involuntary_cs = Some(*involuntary_cs);
                    }
                }
                Record::ThreadSched {
                    ts,
                    thread: sched_thread,
                    on_cpu_ns,
                    runq_ns,
                    timeslices,
                } => sched.push((
                    *sched_thread,
                    SchedPoint {
                        ts_ns: *ts,
                        on_cpu_ns: *on_cpu_ns,
                        runq_ns: *runq_ns,
                        timeslices: *timeslices,
                    },
                )),
                Record::GcStart { ts } => gc_events.push((*ts, true)),
                Record::GcEnd { ts } => gc_events.push((*ts, false)),
                Record::Sample {
                    ts,
                    process_cpu_ns,
                    voluntary_cs,
                    involuntary_cs,
                    live_threads,
                } => m.samples.push(Sample {
                    ts_ns: *ts,
                    process_cpu_ns: *process_cpu_ns,
                    voluntary_cs: *voluntary_cs,
                    involuntary_cs: *involuntary_cs,
                    live_threads: *live_threads,
                }),
                Record::Loss {
                    thread,
                    from_ts,
                    to_ts,
                    records,
                    reason,
                } => {
                    max_ts = max_ts.max(*to_ts);
                    m.losses.push(Loss {
                        thread: *thread,
                        from_ns: *from_ts,
                        to_ns: (*to_ts).max(*from_ts),
                        records: *records,
                        reason: *reason,
                    });
                }
                Record::End { ts } => {
                    m.end_ns = Some(m.end_ns.map_or(*ts, |e| e.max(*ts)));
                }
                _ => {}
            }
        }
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
        let frames = self.sites.get(&id);
        let user = frames.and_then(|fs| fs.iter().find(|f| !is_jdk_frame(f)));
        Some(match user.or_else(|| frames.and_then(|f| f.first())) {
            Some(f) => f.clone(),
            None => format!("<unknown site #{id}>"),
        })
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

/// Frames of the JDK's own packages, which a user cannot change.
/// A frame of a method the agent wrapped names the renamed original
/// (`Cls.run$weft:119`, see weft_classfile::RENAME_SUFFIX): show the method's own name.
fn unrename_frame(frame: &str) -> String {
    const SUFFIX: &str = "$weft";
    match frame.find(&format!("{SUFFIX}:")) {
        Some(i) => format!("{}{}", &frame[..i], &frame[i + SUFFIX.len()..]),
        None => frame.strip_suffix(SUFFIX).unwrap_or(frame).to_string(),
    }
}

pub fn is_jdk_frame(frame: &str) -> bool {
    ["java.", "javax.", "jdk.", "sun.", "com.sun."]
        .iter()
        .any(|p| frame.starts_with(p))
}

#[cfg(test)]
mod real_app_fixes {
    use super::*;
    use crate::testutil::TB;

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
        let mut tb = TB::new();
        tb.site(7, "edu.rit.pj.ParallelTeamThread.run$weft:119");
        let m = Model::build(&tb.trace());
        assert_eq!(m.sites[&7][0], "edu.rit.pj.ParallelTeamThread.run:119");
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
}
