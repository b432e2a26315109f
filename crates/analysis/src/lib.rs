//! weft's analyses: from a read trace ([`weft_trace::Trace`]) to a [`Model`] of
//! what happened, the task model ([`tasks`]), CPU utilisation ([`cpu`]) and
//! findings ([`findings`]). Pure computation: no bytes, no report formatting
//! (that is `weft-views`).

pub mod activity;
pub mod cpu;
pub mod edges;
pub mod events;
pub mod findings;
pub mod forkjoin;
pub mod graph;
pub mod jvms;
pub mod lock_groups;
pub mod locks;
pub mod model;
pub mod profile;
pub mod speedups;
pub mod tasks;
pub mod timeline;
pub mod vthreads;
pub mod wait_groups;
pub mod window;

pub use cpu::{CpuPoint, CpuProfile, WindowStats};
pub use findings::{human_ns, FieldValue, Finding, FindingKind};
pub use model::{GcPause, Loss, Model, ModelBuilder, ProbeDef, Sample, SchedPoint, ThreadInfo};
pub use tasks::{Distribution, SitePair, TaskAnalysis, TaskClassStats, TaskExecution, TaskKind};

use weft_trace::Trace;

/// Everything the views show.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub model: Model,
    pub tasks: TaskAnalysis,
    pub cpu: CpuProfile,
    pub findings: Vec<Finding>,
    /// Lock contention and waits (docs/locks.md).
    pub locks: locks::LockAnalysis,
    /// Fork-join computations (docs/forkjoin.md).
    pub forkjoin: forkjoin::ForkJoinAnalysis,
    /// Locks grouped by class, kind and site, ranked by blocked time.
    pub lock_groups: Vec<lock_groups::LockGroup>,
    /// Each execution's self time split into running, blocked, waiting and off-CPU.
    pub activity: activity::ActivityAnalysis,
    /// Sampled stacks tied to tasks and locks (docs/sampling.md).
    pub profile: profile::Profile,
    /// The window the analyses cover (None: the whole recording); see [`window`].
    pub window: Option<window::Window>,
    /// Virtual threads and where they were pinned (JDK 21+; docs/virtual-threads.md).
    pub virtual_threads: vthreads::VirtualThreadAnalysis,
    /// Possible speedups (docs/speedups.md); without a baseline run until the
    /// CLI adds one ([`Analysis::with_baseline`]).
    pub speedups: speedups::Speedups,
}

impl Analysis {
    /// The possible speedups again, with the overhead terms from `baseline`, the
    /// analysis of a one-worker or sequential run of the same program.
    pub fn with_baseline(mut self, baseline: &Analysis) -> Analysis {
        let base = speedups::baseline_work(&speedups::gather(
            &baseline.model,
            &baseline.locks,
            baseline.window.as_ref(),
        ));
        self.speedups = speedups::compute(
            &speedups::gather(&self.model, &self.locks, self.window.as_ref()),
            Some(base),
        );
        self
    }
}

/// Run every analysis on the part of a trace inside `window` (None: all of it).
/// The restriction is one step: the trace is cut to the window's ranges
/// ([`window::restrict`]) and every analysis reads the cut trace.
pub fn analyze_window(trace: &Trace, window: Option<window::Window>) -> Analysis {
    let Some(w) = window else {
        return analyze(trace);
    };
    analyze_model_window(Model::build(&window::restrict(trace, &w.ranges)), Some(w))
}

/// Run every analysis on a trace read into memory (builds its [`Model`] first).
pub fn analyze(trace: &Trace) -> Analysis {
    analyze_model(Model::build(trace))
}

/// Run every analysis on a model. Analyses read the model only (docs/model.md).
pub fn analyze_model(model: Model) -> Analysis {
    analyze_model_staged(model, None, |_| {})
}

/// Run every analysis on the model of a window's part of a trace
/// ([`window::read_model`]); the analyses that cover a time span (possible
/// speedups) cover the whole window.
pub fn analyze_model_window(model: Model, window: Option<window::Window>) -> Analysis {
    analyze_model_staged(model, window, |_| {})
}

/// [`analyze_model_window`], calling `stage(name)` after each analysis (for
/// the benchmark's per-stage times and memory).
pub fn analyze_model_staged(
    mut model: Model,
    window: Option<window::Window>,
    mut stage: impl FnMut(&str),
) -> Analysis {
    // Two threads (the report's wall time; the machine weft runs on has more than
    // one CPU): the analyses that read the model only run beside the task model,
    // and the ones that read the task model beside the fork-join model. The two
    // models (the largest) never run at once: their peaks would add up. The
    // longer work of each pair is this thread's (its CPU time is then the
    // report's critical path: WEFT_REPORT_STAGES).
    let (tasks, (cpu, locks, virtual_threads, speedups)) = std::thread::scope(|s| {
        let side = s.spawn(|| {
            let cpu = CpuProfile::build(&model);
            let locks = locks::analyze_locks(&model);
            let virtual_threads = vthreads::analyze_virtual_threads(&model);
            let speedups = speedups::analyze(&model, &locks, window.as_ref());
            (cpu, locks, virtual_threads, speedups)
        });
        let tasks = tasks::analyze_tasks(&model);
        (tasks, joined(side))
    });
    stage("tasks, cpu, locks, virtual threads, speedups");
    // The usage slots are for the two models only: the fork-join model frees them
    // before its peak.
    let slots = std::mem::take(&mut model.usage_slots);
    let (forkjoin, (profile, lock_groups, activity)) = std::thread::scope(|s| {
        let side = s.spawn(|| {
            let profile = profile::Profile::build(&model, &tasks, &locks);
            let lock_groups = lock_groups::group(&locks);
            let activity = activity::analyze(&model, &tasks, &locks, &virtual_threads.unmounted);
            (profile, lock_groups, activity)
        });
        let forkjoin = forkjoin::analyze_taking_slots(&model, slots);
        (forkjoin, joined(side))
    });
    stage("forkjoin, profile, activity");
    let findings = findings::find(&findings::Inputs {
        model: &model,
        tasks: &tasks,
        cpu: &cpu,
        locks: &locks,
        lock_groups: &lock_groups,
        forkjoin: &forkjoin,
        activity: &activity,
        virtual_threads: &virtual_threads,
        speedups: &speedups,
    });
    stage("findings");
    Analysis {
        model,
        tasks,
        cpu,
        findings,
        locks,
        forkjoin,
        lock_groups,
        activity,
        profile,
        window,
        virtual_threads,
        speedups,
    }
}

/// The result of a scoped thread; its panic goes on in the caller.
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

#[cfg(test)]
pub(crate) mod testutil;
