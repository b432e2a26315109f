//! The weft trace format: what the agent writes and the analyses read.
//!
//! This crate knows nothing about JVMTI or about reports. It defines the records
//! ([`Record`]), how a thread's records are packed into a checksummed block
//! ([`BlockEncoder`]), and how a file of blocks is read back ([`read_trace`]),
//! tolerating a file cut short by a crash. The layout is specified in
//! `docs/trace-format.md`; keep the two in step.

mod codec;
#[cfg(test)]
mod codec_golden;
mod damage;
pub mod fjevents;
mod reader;
mod record;
mod stream;
mod vthreads;

pub use codec::{encode_file_header, BlockEncoder, FORMAT_VERSION, MAGIC};
pub use reader::{
    read_header, read_trace, read_trace_bytes, read_trace_bytes_with_warnings,
    read_trace_with_warnings, Clock, Trace, TraceError, TraceTail,
};
pub use record::{
    frame_kind, lock_flags, lock_kind, sample_mode, thread_state, wait_kind, LossReason, ProbeKind,
    Record, ThreadIndex, CLASS_INIT_LOCK, GLOBAL_THREAD,
};
pub use stream::{stream_trace, RecordSink, StreamEnd};
pub use vthreads::{is_virtual_thread, VirtualThreadDemux, VIRTUAL_THREAD_BASE};

/// Header of a trace: free-form key/value pairs, so that later versions can add
/// facts (probe costs, options) without a format break. Well-known keys are
/// listed in [`header_keys`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Header {
    pub entries: Vec<(String, String)>,
}

impl Header {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        let value = value.into();
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key.to_string(), value)),
        }
    }

    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(|v| v.parse().ok())
    }

    pub fn get_f64(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(|v| v.parse().ok())
    }
}

/// Keys the agent writes into the [`Header`].
pub mod header_keys {
    pub const JVM_VERSION: &str = "jvm.version";
    pub const JVM_VENDOR: &str = "jvm.vendor";
    /// The JVM's main class or jar (the first word of `sun.java.command`).
    pub const JVM_MAIN: &str = "jvm.main";
    pub const PID: &str = "pid";
    pub const AGENT_VERSION: &str = "agent.version";
    pub const AGENT_OPTIONS: &str = "agent.options";
    /// The JVM's command line (`/proc/self/cmdline`, arguments joined by spaces).
    pub const COMMAND_LINE: &str = "jvm.command_line";
    /// Wall-clock time of the start of recording, ns since the Unix epoch.
    pub const START_WALL_NS: &str = "start.wall_ns";
    /// Clock ticks at the start of recording: time zero of every report.
    pub const START_TICKS: &str = "start.ticks";
    /// CLOCK_MONOTONIC at the start of recording, ns.
    pub const START_MONO_NS: &str = "start.mono_ns";
    /// Ticks per second, as first estimated at start-up (refined by `Calibration` records).
    pub const TICKS_PER_SEC: &str = "clock.ticks_per_sec";
    /// "tsc" or "monotonic" (then ticks are ns).
    pub const CLOCK_SOURCE: &str = "clock.source";
    pub const SAMPLE_INTERVAL_NS: &str = "sampler.interval_ns";
    pub const CPUS: &str = "cpus";
    /// "false" when AbstractQueuedSynchronizer was loaded before the agent could
    /// instrument it: j.u.c. lock contention is then not attributed to its lock.
    pub const LOCKS_AQS_INSTRUMENTED: &str = "locks.aqs_instrumented";
    /// How virtual-thread mounts are followed: `yield_probe` (a probe on
    /// `VirtualThread.yieldContinuation`, JDK 21-23), `mount_probe` (probes on its
    /// `mount`/`unmount`, JDK 24+) or `jvmti` (the JVM's events, earlier traces).
    pub const VT_MOUNTS: &str = "vthreads.mounts";
    /// The unit of the fork-join records' `ts`: "ticks" (the clock of every other
    /// record); absent in traces before it (then CLOCK_MONOTONIC ns, converted with
    /// `start.mono_ns`).
    pub const FORKJOIN_CLOCK: &str = "forkjoin.clock";
    /// The measured window (`weft record --window`): `pkg.Class.method` whose calls
    /// are recorded as `WindowEnter`/`WindowExit`.
    pub const WINDOW_METHOD: &str = "window.method";
    /// `each` when every call of the window method is its own window (`weft record
    /// --window-all`); absent: one window from the first entry to the last exit.
    pub const WINDOW_CALLS: &str = "window.calls";
    /// Prefix of probe costs measured at start-up: `probe_cost_ns.<kind>`.
    pub const PROBE_COST_PREFIX: &str = "probe_cost_ns.";
    /// Set in a trace recorded by `weft attach` (docs/attach.md): the attach session's
    /// number in this JVM (1 for the first).
    pub const ATTACH_SESSION: &str = "attach.session";
    /// Live threads found at the attach (their starts are not seen).
    pub const ATTACH_THREADS_FOUND: &str = "attach.threads_found";
    /// Classes already loaded at the attach.
    pub const ATTACH_CLASSES_LOADED: &str = "attach.classes_loaded";
    /// Loaded classes the attach instrumented (body-only retransformation).
    pub const ATTACH_CLASSES_CHANGED: &str = "attach.classes_changed";
    /// Digest of those classes' methods before the attach (hex; see `AttachEnd`).
    pub const ATTACH_SHAPE_BEFORE: &str = "attach.shape_before";
    /// Where an attach session sees parks: `lock_support` (the bodies of
    /// `LockSupport.park*`), `none` (not instrumented; absent in older traces).
    pub const ATTACH_PARKS: &str = "attach.parks";
    /// How an attach session records fork-join tasks: `side_tables` (fork, run, join
    /// and steal events, the tasks' state keyed by identity), `none` (ForkJoinTask not
    /// instrumented; absent in older traces, which saw executions only).
    pub const ATTACH_FORKJOIN: &str = "attach.forkjoin";
}
