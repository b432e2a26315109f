//! weft's analyses: from a read trace ([`weft_trace::Trace`]) to a [`Model`] of
//! what happened, the task model ([`tasks`]), CPU utilisation ([`cpu`]) and
//! findings ([`findings`]). Pure computation: no bytes, no report formatting
//! (that is `weft-views`).

pub mod cpu;
pub mod findings;
pub mod model;
pub mod tasks;

pub use cpu::{CpuPoint, CpuProfile, WindowStats};
pub use findings::{human_ns, FieldValue, Finding, FindingKind};
pub use model::{GcPause, Loss, Model, ProbeDef, Sample, ThreadInfo};
pub use tasks::{Distribution, SitePair, TaskAnalysis, TaskClassStats, TaskExecution, TaskKind};

use weft_trace::Trace;

/// Everything the views show.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub model: Model,
    pub tasks: TaskAnalysis,
    pub cpu: CpuProfile,
    pub findings: Vec<Finding>,
}

/// Run every analysis on a trace.
pub fn analyze(trace: &Trace) -> Analysis {
    let model = Model::build(trace);
    let tasks = tasks::analyze_tasks(trace, &model);
    let cpu = CpuProfile::build(&model);
    let findings = findings::find(&model, &tasks, &cpu);
    Analysis {
        model,
        tasks,
        cpu,
        findings,
    }
}

#[cfg(test)]
pub(crate) mod testutil;
