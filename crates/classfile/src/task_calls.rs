//! Calls of `Runnable.run()` redirected to `weft/Probe.runTask` (docs/task-model.md §Lambdas).
//!
//! A lambda is a hidden class, which no ClassFileLoadHook sees, so its `run()` has no probe
//! of its own: a lambda given to `Executor.execute` (no JDK wrapper around it) ran unseen.
//! Its callers are ordinary classes, though: each `invokeinterface java/lang/Runnable.run()V`
//! in the methods asked for becomes `invokestatic weft/Probe.runTask(Ljava/lang/Runnable;)V;
//! nop; nop`, in place (the same length and stack effect: no offset, exception range or stack
//! map frame moves). `runTask` calls `run()` and records it when the object's class is
//! hidden or its `run()` has no probe of its own; other classes are recorded by theirs.

use crate::code;
use crate::cpool::Appender;
use crate::error::Error;
use crate::parse::{ClassFile, ACC_ABSTRACT, ACC_NATIVE};
use crate::{assemble, mutf8};

/// The class and method the redirected calls go to.
const RUN_TASK_CLASS: &str = "weft/Probe";
const RUN_TASK_METHOD: &str = "runTask";
const RUN_TASK_DESCRIPTOR: &[u8] = b"(Ljava/lang/Runnable;)V";
const RUNNABLE: &[u8] = b"java/lang/Runnable";

fn is_runnable_run(class: &[u8], name: &[u8], desc: &[u8]) -> bool {
    class == RUNNABLE && name == b"run" && desc == b"()V"
}

/// Redirects the `Runnable.run()` calls of every method of the class (`only`: of that
/// method, by name and descriptor). Ok(None): no such call. An `Err`: the caller keeps the
/// bytes it had.
pub fn redirect_runnable_runs(
    class_bytes: &[u8],
    only: Option<(&str, &str)>,
) -> std::result::Result<Option<Vec<u8>>, Error> {
    // Most classes never name Runnable: a byte search spares them the parse (the hook
    // runs this on every class of the program).
    if !class_bytes.windows(RUNNABLE.len()).any(|w| w == RUNNABLE) {
        return Ok(None);
    }
    let cf = ClassFile::parse(class_bytes)?;
    let data = cf.data;
    let only = only.map(|(n, d)| (mutf8::encode(n), mutf8::encode(d)));
    let mut app = Appender::new(cf.cp.count());
    let mut run_task: Option<u16> = None;
    let mut new_code: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    for (mi, m) in cf.methods.iter().enumerate() {
        if m.access & (ACC_ABSTRACT | ACC_NATIVE) != 0 {
            continue;
        }
        if let Some((n, d)) = &only {
            if m.name != n.as_slice() || m.desc != d.as_slice() {
                continue;
            }
        }
        let Some(ai) = m.attrs.iter().position(|a| a.name == b"Code") else {
            continue;
        };
        let attr = &m.attrs[ai];
        let ctx = |e: Error| {
            e.context(format!(
                "method {}{}",
                String::from_utf8_lossy(m.name),
                String::from_utf8_lossy(m.desc)
            ))
        };
        if !code::invokes_interface(data, attr, &cf.cp, is_runnable_run).map_err(ctx)? {
            continue;
        }
        let target = match run_task {
            Some(r) => r,
            None => {
                let c = app.class(&mutf8::encode(RUN_TASK_CLASS))?;
                let r =
                    app.method_ref(c, RUN_TASK_METHOD.as_bytes(), RUN_TASK_DESCRIPTOR, false)?;
                run_task = Some(r);
                r
            }
        };
        let mut bytes = data[attr.start..attr.end()].to_vec();
        code::redirect_calls(&mut bytes, code::INVOKEINTERFACE, |i| {
            let (c, n, d) = cf.cp.member_ref(i).ok()?;
            is_runnable_run(c, n, d).then_some(target)
        })
        .map_err(ctx)?;
        new_code.push((mi, ai, bytes));
    }
    if new_code.is_empty() {
        return Ok(None);
    }
    Ok(Some(assemble(&cf, &app, &new_code)?))
}
