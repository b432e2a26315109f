//! `--lock-detail` (docs/whatif.md §Recording: lock detail): the natives of
//! `weft.MonitorProbe`, called by application classes whose `synchronized` blocks
//! and methods the rewriter instrumented (`weft_classfile::instrument_monitors`).
//! Each acquisition writes `MonitorEnter` (the request, with the lock's LockDef id),
//! `MonitorEntered` when the enter took longer than [`SPUN_TICKS`] (a spin or a
//! block), and each release `MonitorExit`. The thread keeps a stack of the monitors
//! it entered so that `exit()` needs no argument and no lookup.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};

use weft_trace::Record;

use crate::jni::{jboolean, jclass, jobject, JNIEnv, Jni};
use crate::{agent, clock, locks, sink};

/// Header key: `on` when the trace has the lock-detail records.
pub const HEADER_KEY: &str = "locks.detail";

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Switches the class rewriting on (OnLoad, before the first class loads).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Application classes only: the JDK's own monitors (class loading, StringBuffer,
/// Hashtable) are not the program's locks, and a probe inside the JDK could recurse.
/// (weft's own classes never get here: `decide::skip_class`.)
pub fn instruments(has_loader: bool, class: &str) -> bool {
    enabled() && has_loader && !crate::decide::is_jdk_class(class)
}

/// An enter shorter than this (in clock ticks: 0.38 µs at 2.6 GHz, or ns) writes no
/// `MonitorEntered`: the acquisition is then at the request (the probes' own cost is
/// ~0.2 µs).
fn spun_ticks() -> u64 {
    if clock::uses_tsc() {
        1000
    } else {
        400
    }
}

thread_local! {
    /// LockDef ids of the monitors this thread entered (0: not recorded), innermost last.
    static HELD: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// Time of the last recorded `MonitorEnter` whose `entered()` has not come yet (0 none).
    static REQUESTED: Cell<u64> = const { Cell::new(0) };
}

/// The LockDef id of monitor `lock` from a probe native (0: none, or not recording).
fn recorded_monitor(e: *mut JNIEnv, lock: jobject) -> u32 {
    if lock.is_null() || !locks::recordable() {
        return 0;
    }
    // SAFETY: the JVM passes the current thread's JNIEnv to every native method.
    let jni = unsafe { Jni::from_raw(e) };
    let (Some(jni), Some(jvmti)) = (jni, agent::jvmti()) else {
        return 0;
    };
    let id = locks::monitor_id(jvmti, jni, lock).unwrap_or(0);
    jni.check_clear();
    id
}

#[no_mangle]
pub extern "system" fn Java_weft_MonitorProbe_enter(e: *mut JNIEnv, _c: jclass, lock: jobject) {
    let ts = clock::now();
    let _ = std::panic::catch_unwind(|| {
        let id = recorded_monitor(e, lock);
        if id != 0 {
            sink::emit(&Record::MonitorEnter { ts, lock: id });
        }
        // A synchronized method's enter has no `entered()`: a later one must not
        // pair with it.
        let _ = REQUESTED.try_with(|r| r.set(if id != 0 { ts } else { 0 }));
        let _ = HELD.try_with(|h| h.borrow_mut().push(id));
    });
}

#[no_mangle]
pub extern "system" fn Java_weft_MonitorProbe_entered(_e: *mut JNIEnv, _c: jclass) {
    let ts = clock::now();
    let _ = std::panic::catch_unwind(|| {
        let requested = REQUESTED.try_with(|r| r.replace(0)).unwrap_or(0);
        if requested != 0 && ts.saturating_sub(requested) >= spun_ticks() && locks::recordable() {
            sink::emit(&Record::MonitorEntered { ts });
        }
    });
}

#[no_mangle]
pub extern "system" fn Java_weft_MonitorProbe_exit(_e: *mut JNIEnv, _c: jclass) {
    let ts = clock::now();
    let _ = std::panic::catch_unwind(|| {
        let id = HELD
            .try_with(|h| h.borrow_mut().pop().unwrap_or(0))
            .unwrap_or(0);
        if id != 0 && locks::recordable() {
            sink::emit(&Record::MonitorExit { ts });
        }
    });
}

/// `notify()` / `notifyAll()` (`all`) of `lock` returned (the application's call
/// site calls `weft.MonitorProbe.notify`, which notifies, then calls this): the
/// waker side of an `Object.wait`'s what-if edge.
#[no_mangle]
pub extern "system" fn Java_weft_MonitorProbe_notified(
    e: *mut JNIEnv,
    _c: jclass,
    lock: jobject,
    all: jboolean,
) {
    let ts = clock::now();
    let _ = std::panic::catch_unwind(|| {
        let id = recorded_monitor(e, lock);
        if id != 0 {
            sink::emit(&Record::MonitorNotify {
                ts,
                lock: id,
                all: all != 0,
            });
        }
    });
}
