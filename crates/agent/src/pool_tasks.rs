//! A pool's task runs as an attach session sees them (docs/attach.md).
//!
//! The launched agent sees every task a `ThreadPoolExecutor` runs at its worker loop's call of
//! `task.run()` (redirected to `weft.Probe.runTask`, crates/classfile/src/task_calls.rs): a
//! lambda, or a class without a probe of its own, has no other place to be seen. A worker
//! running when an attach retransforms the class keeps the old loop, in a frame entered
//! before; but each task still passes through `beforeExecute(Thread, Runnable)` and
//! `afterExecute(Runnable, Throwable)`, new calls that run the new bodies. So under attach
//! these two get entry hooks (`Probe.poolTaskBegin` / `poolTaskEnd`, the task as argument)
//! instead of the loop's redirect. A subclass that overrides `beforeExecute` without
//! calling `super` hides its tasks' beginnings from them (said in docs/attach.md).

use weft_classfile::ClassSummary;
use weft_trace::ProbeKind;

use crate::decide::Wrap;

const POOL: &str = "java/util/concurrent/ThreadPoolExecutor";
const BEFORE: (&str, &str) = ("beforeExecute", "(Ljava/lang/Thread;Ljava/lang/Runnable;)V");
const AFTER: (&str, &str) = (
    "afterExecute",
    "(Ljava/lang/Runnable;Ljava/lang/Throwable;)V",
);
const HOOK_DESC: &str = "(Ljava/lang/Object;Ljava/lang/Object;)V";

/// Whether a class's worker loop gets the `Runnable.run()` redirect: not under attach
/// (the hooks below see its tasks; both would record each run twice).
pub fn loop_redirected(class: &str, late: bool) -> bool {
    !(late && class == POOL)
}

/// The hook wraps of an attach session's retransformation of `ThreadPoolExecutor`.
pub fn late_wraps(s: &ClassSummary) -> Vec<Wrap> {
    if s.name != POOL {
        return Vec::new();
    }
    s.methods
        .iter()
        .filter(|m| [BEFORE, AFTER].contains(&(m.name.as_str(), m.descriptor.as_str())))
        .map(|m| Wrap {
            name: m.name.clone(),
            descriptor: m.descriptor.clone(),
            kind: ProbeKind::Execution,
            pass_arg0: true,
            loop_body: false,
            window: false,
            late: true,
        })
        .collect()
}

/// Whether `w` is one of [`late_wraps`] (its records carry the `runTask` probe: no
/// `ProbeDef` of its own).
pub fn is_hook(w: &Wrap) -> bool {
    w.late && [BEFORE, AFTER].contains(&(w.name.as_str(), w.descriptor.as_str()))
}

/// The `weft.Probe` hooks of a [`late_wraps`] wrap (None for other wraps).
pub fn hooks(w: &Wrap) -> Option<weft_classfile::Hooks> {
    if !is_hook(w) {
        return None;
    }
    let before = (w.name.as_str(), w.descriptor.as_str()) == BEFORE;
    Some(weft_classfile::Hooks {
        class: "weft/Probe".into(),
        enter: Some((
            if before {
                "poolTaskBegin"
            } else {
                "poolTaskEnd"
            }
            .into(),
            HOOK_DESC.into(),
        )),
        exit: None,
        // beforeExecute(Thread, Runnable): the task is the last reference argument.
        last_ref_arg: before,
    })
}
