//! Who started each platform thread. A thread's spawner is found from the creation
//! of its `Thread` object or of its Runnable (a constructor probe), but neither exists
//! for the commonest form, `new Thread(() -> …)`: `Thread` is loaded before any class
//! hook and a lambda's hidden class never passes one. Without it the what-if graph
//! started such a thread by itself at its recorded time, and the critical path stopped
//! there ("delay start"). So `Thread.start()` gets an entry hook (Probe.threadStart,
//! added by the same body-only retransformation at VMInit as the virtual-thread hooks)
//! that records a `Created` of the Thread object on the starting thread, its site the
//! caller of `start` (no new record kind). A virtual thread's `start` is
//! `VirtualThread`'s own and is not hooked here.

use std::sync::atomic::{AtomicBool, Ordering};

/// The class whose `start()` gets the hook.
pub const THREAD: &str = "java/lang/Thread";
/// `Thread.start(ThreadContainer)` (JDK 21+).
const IN_CONTAINER: &str = "(Ljdk/internal/vm/ThreadContainer;)V";

/// The VMInit retransformation of `Thread` is in progress: the class hook
/// instruments it ([`instrument_thread`]).
static WANTED: AtomicBool = AtomicBool::new(false);

/// Runs `retransform` (of `Thread` with any other loaded classes, at VMInit) with the
/// class hook adding the start hook to `Thread`.
pub fn during<R>(retransform: impl FnOnce() -> R) -> R {
    WANTED.store(true, Ordering::SeqCst);
    let r = retransform();
    WANTED.store(false, Ordering::SeqCst);
    r
}

/// Says once on stderr when `Thread` could not get its hook.
pub fn report(hooked: bool) {
    if !hooked {
        eprintln!("weft: cannot instrument java.lang.Thread.start; threads started from lambdas have no starting thread");
    }
}

/// The class hook's part for `java/lang/Thread`: the start hook during [`during`],
/// else unchanged.
pub fn instrument_thread(bytes: &[u8]) -> Option<Vec<u8>> {
    if !WANTED.load(Ordering::SeqCst) {
        return None;
    }
    // JDK 21+ also starts threads through `start(ThreadContainer)` (executors' workers,
    // via their thread container), a copy of `start()`'s body that does not call it.
    let wrap = |descriptor: &str| weft_classfile::WrapRequest {
        name: "start".into(),
        descriptor: descriptor.into(),
        probe_id: 0,
        pass_arg0: false,
        pass_result: false,
        hooks: Some(weft_classfile::Hooks {
            class: "weft/Probe".into(),
            enter: Some(("threadStart".into(), "(Ljava/lang/Object;)V".into())),
            exit: None,
            last_ref_arg: false,
        }),
    };
    let mut wraps = vec![wrap("()V")];
    if weft_classfile::summarize(bytes)
        .ok()?
        .methods
        .iter()
        .any(|m| m.name == "start" && m.descriptor == IN_CONTAINER)
    {
        wraps.push(wrap(IN_CONTAINER));
    }
    let wanted = wraps.len();
    let what = weft_classfile::Instrumentation {
        wraps,
        constructor_probe: None,
    };
    let r = weft_classfile::instrument(bytes, &what).ok()?;
    if r.wrapped.len() != wanted {
        return None;
    }
    crate::attach::note_loaded_change(THREAD);
    Some(r.bytes)
}
