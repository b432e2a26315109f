//! The class-transform pipeline: what to instrument in one class (`decide`), with which probe
//! ids, and the rewrite (`weft_classfile::instrument` in place, plus the fork-join fields at first
//! load). The agent's ClassFileLoadHook and the offline transform of the whole-JDK test
//! (`offline.rs`) both call [`transform`], so that test checks what ships.

use weft_classfile::{instrument, ClassSummary, Instrumentation, WrapRequest};
use weft_trace::ProbeKind;

use crate::{agent, decide, forkjoin, locks, plumbing, pool_tasks};

/// One instrumented method: its probe id, kind, name and descriptor (for its `ProbeDef`).
#[derive(Debug, Clone, PartialEq)]
pub struct Probed {
    pub id: i32,
    pub kind: ProbeKind,
    pub method: String,
    pub descriptor: String,
}

/// A rewritten class.
#[derive(Debug)]
pub struct Transformed {
    pub bytes: Vec<u8>,
    pub probed: Vec<Probed>,
    /// The creation probe's id, when at least one constructor got it.
    pub creation: Option<i32>,
    pub constructors: usize,
    /// The fork-join fields were added (ForkJoinTask, ForkJoinWorkerThread).
    pub fields_added: bool,
}

impl Transformed {
    /// New bytes with no probe of their own (fields added, or calls redirected).
    fn bytes_only(bytes: Vec<u8>, fields_added: bool) -> Transformed {
        Transformed {
            bytes,
            probed: Vec::new(),
            creation: None,
            constructors: 0,
            fields_added,
        }
    }
}

#[derive(Debug)]
pub enum Outcome {
    /// Skipped by name, or nothing to instrument: loaded unchanged.
    Unchanged,
    Changed(Transformed),
    /// The rewriter refused the class (or probe ids ran out): loaded unchanged.
    Rejected(String),
}

/// When the class is being transformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// ClassFileLoadHook at the class's first load: fields may be added.
    First,
    /// RetransformClasses of a loaded class (late attach): method bodies only. The fork-join
    /// wraps call `weft/FjLateProbe` (no `weft$u` field: side tables), and parks are seen in
    /// `LockSupport.park*` (locks::late_park_wraps).
    Retransform,
}

/// Without the fork-join fields FjProbe stays off: a late agent's fork-join wraps call
/// `weft/FjLateProbe`, which keeps the same state in side tables (docs/attach.md).
fn late_fork_join(d: &mut decide::Decision) {
    for w in &mut d.wraps {
        if w.kind == forkjoin::KIND {
            w.late = true;
        }
    }
}

/// The probe id of one instrumented method (from the agent's tables, also offline: ids are
/// only numbers there).
fn probe_id(w: &decide::Wrap, pl: Option<&'static plumbing::PlumbingClass>) -> Option<i32> {
    if w.window {
        Some(0) // the window hooks take no probe id
    } else if w.kind == forkjoin::KIND {
        forkjoin::new_probe(&w.name)
    } else if w.loop_body {
        agent::new_probe_with_code(agent::LOOP_BODY_CODE, None)
    } else {
        agent::new_probe(w.kind, pl)
    }
}

/// Transforms one class for the JDK `major`. `decide_with(summary, is_plumbing)` runs the
/// decision with the caller's supertype cache (after adding the class to it).
pub fn transform(
    bytes: &[u8],
    summary: &ClassSummary,
    major: u32,
    load: Load,
    decide_with: impl FnOnce(&ClassSummary, bool) -> decide::Decision,
) -> Outcome {
    if decide::skip_class(&summary.name) {
        return Outcome::Unchanged;
    }
    let outcome = transform_methods(bytes, summary, major, load, decide_with);
    let Some(scope) = run_call_scope(&summary.name, load) else {
        return outcome;
    };
    // The `Runnable.run()` calls (task_calls.rs) on what the wraps made. A class the
    // rewriter refuses keeps its bytes; one it cannot redirect keeps its wraps.
    match outcome {
        Outcome::Unchanged => match weft_classfile::redirect_runnable_runs(bytes, scope) {
            Ok(Some(b)) => Outcome::Changed(Transformed::bytes_only(b, false)),
            _ => Outcome::Unchanged,
        },
        Outcome::Changed(mut t) => {
            if let Ok(Some(b)) = weft_classfile::redirect_runnable_runs(&t.bytes, scope) {
                t.bytes = b;
            }
            Outcome::Changed(t)
        }
        rejected @ Outcome::Rejected(_) => rejected,
    }
}

/// Where a class's `Runnable.run()` calls go through `weft/Probe.runTask` (docs/task-model.md
/// §Lambdas): every method of the program's classes (libraries included: their executors run
/// lambdas too), and the worker loop of `ThreadPoolExecutor` (a lambda given to `execute` is
/// queued as it is). Other JDK classes run lambdas inside plumbing weft already follows.
/// None: no call is redirected; Some(None): all methods.
fn run_call_scope(class: &str, load: Load) -> Option<Option<(&'static str, &'static str)>> {
    if !pool_tasks::loop_redirected(class, load == Load::Retransform) {
        None // its tasks are seen at beforeExecute/afterExecute (pool_tasks.rs)
    } else if class == "java/util/concurrent/ThreadPoolExecutor" {
        Some(Some((
            "runWorker",
            "(Ljava/util/concurrent/ThreadPoolExecutor$Worker;)V",
        )))
    } else if decide::is_jdk_class(class) {
        None
    } else {
        Some(None)
    }
}

/// [`transform`]'s method wraps, constructor probe and fork-join fields.
fn transform_methods(
    bytes: &[u8],
    summary: &ClassSummary,
    major: u32,
    load: Load,
    decide_with: impl FnOnce(&ClassSummary, bool) -> decide::Decision,
) -> Outcome {
    let pl = plumbing::find(major, &summary.name);
    let mut decision = decide_with(summary, pl.is_some());
    if load == Load::Retransform {
        late_fork_join(&mut decision);
        decision.wraps.extend(locks::late_park_wraps(summary));
        decision.wraps.extend(pool_tasks::late_wraps(summary));
    }
    let fj_fields = match load {
        Load::First => forkjoin::fields(&summary.name),
        Load::Retransform => Vec::new(),
    };
    let add_fields = |b: &[u8]| weft_classfile::add_fields(b, &fj_fields).map(|(b, _)| b);
    if decision.wraps.is_empty() && !decision.creation {
        if fj_fields.is_empty() {
            return Outcome::Unchanged;
        }
        return match add_fields(bytes) {
            Ok(b) => Outcome::Changed(Transformed::bytes_only(b, true)),
            Err(e) => Outcome::Rejected(format!("add_fields: {e}")),
        };
    }
    let mut probed = Vec::new();
    let mut wraps = Vec::new();
    for w in &decision.wraps {
        let Some(id) = probe_id(w, pl) else {
            return Outcome::Rejected("probe ids exhausted".into());
        };
        if !w.window && !pool_tasks::is_hook(w) {
            probed.push(Probed {
                id,
                kind: w.kind,
                method: w.name.clone(),
                descriptor: w.descriptor.clone(),
            });
        }
        wraps.push(WrapRequest {
            name: w.name.clone(),
            descriptor: w.descriptor.clone(),
            probe_id: id,
            pass_arg0: w.pass_arg0,
            // A lock slow path's result says whether it acquired (a timed `tryLock` can give up).
            pass_result: w.kind == ProbeKind::LockAcquire,
            hooks: if w.window {
                Some(decide::window_hooks())
            } else {
                forkjoin::hooks(w)
                    .or_else(|| locks::park_hooks(w))
                    .or_else(|| pool_tasks::hooks(w))
            },
        });
    }
    let ctor = if decision.creation {
        agent::new_probe(ProbeKind::Creation, None)
    } else {
        None
    };
    let mut what = Instrumentation {
        wraps,
        constructor_probe: ctor,
    };
    let result = match instrument(bytes, &what) {
        Ok(r) => r,
        // A constructor the rewriter refuses: the methods alone.
        Err(_) if what.constructor_probe.is_some() => {
            what.constructor_probe = None;
            match instrument(bytes, &what) {
                Ok(r) => r,
                Err(e) => return Outcome::Rejected(format!("instrument: {e}")),
            }
        }
        Err(e) => return Outcome::Rejected(format!("instrument: {e}")),
    };
    if !result.changed() {
        return Outcome::Unchanged;
    }
    probed.retain(|p| {
        result
            .wrapped
            .iter()
            .any(|(n, d)| *n == p.method && *d == p.descriptor)
    });
    let bytes = if fj_fields.is_empty() {
        result.bytes
    } else {
        // ForkJoinTask: the usage-state field of the fork-join probes. Without it the
        // hooks are useless (FjProbe stays off), so the class is kept as it is.
        match add_fields(&result.bytes) {
            Ok(b) => b,
            Err(e) => return Outcome::Rejected(format!("add_fields: {e}")),
        }
    };
    Outcome::Changed(Transformed {
        bytes,
        probed,
        creation: what.constructor_probe.filter(|_| result.constructors > 0),
        constructors: result.constructors,
        fields_added: !fj_fields.is_empty(),
    })
}
