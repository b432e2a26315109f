//! weft's analyses: from a read trace ([`weft_trace::Trace`]) to a [`Model`] of
//! what happened, the task model ([`tasks`]), CPU utilisation ([`cpu`]) and
//! findings ([`findings`]). Pure computation: no bytes, no report formatting
//! (that is `weft-views`).

pub mod cpu;
pub mod edges;
pub mod findings;
pub mod forkjoin;
pub mod locks;
pub mod model;
pub mod speedups;
pub mod tasks;
pub mod timeline;

pub use cpu::{CpuPoint, CpuProfile, WindowStats};
pub use findings::{human_ns, FieldValue, Finding, FindingKind};
pub use model::{GcPause, Loss, Model, ProbeDef, Sample, SchedPoint, ThreadInfo};
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
    /// Possible speedups (docs/speedups.md); without a baseline run until the
    /// CLI adds one ([`Analysis::with_baseline`]).
    pub speedups: speedups::Speedups,
}

impl Analysis {
    /// The possible speedups again, with the overhead terms from `baseline`, the
    /// analysis of a one-worker or sequential run of the same program.
    pub fn with_baseline(mut self, baseline: &Analysis) -> Analysis {
        let base = speedups::baseline_work(&speedups::gather(&baseline.model, &baseline.locks));
        self.speedups = speedups::compute(&speedups::gather(&self.model, &self.locks), Some(base));
        self
    }
}

/// Run every analysis on a trace.
pub fn analyze(trace: &Trace) -> Analysis {
    let model = Model::build(trace);
    // ForkJoinTask executions come from the fork-join records (docs/forkjoin.md).
    let tasks = match forkjoin::task_view(trace, &model) {
        Some((t, m)) => tasks::analyze_tasks(&t, &m),
        None => tasks::analyze_tasks(trace, &model),
    };
    let forkjoin = forkjoin::analyze(trace, &model);
    let cpu = CpuProfile::build(&model);
    let findings = findings::find(&model, &tasks, &cpu);
    let locks = locks::analyze_locks(trace, &model);
    let speedups = speedups::analyze(&model, &locks);
    Analysis {
        model,
        tasks,
        cpu,
        findings,
        locks,
        forkjoin,
        speedups,
    }
}

#[cfg(test)]
pub(crate) mod testutil;
