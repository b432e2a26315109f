//! Virtual threads (JDK 21+): where each one runs.
//!
//! A virtual thread runs on a carrier (a platform thread of the scheduler's
//! pool) only while mounted, and may come back on another carrier after each
//! park. The agent's buffers are per OS thread, so everything a virtual thread
//! records lands in its current carrier's buffer; this engine brackets those
//! stretches with `VtMount` / `VtUnmount` records (the JVMTI events
//! VirtualThreadStart/End and the HotSpot extension events
//! VirtualThreadMount/Unmount, all on the carrier with the virtual thread
//! mounted). The trace reader then gives every virtual thread a stream of its
//! own (docs/trace-format.md), so a task that parks on one carrier and ends on
//! another is still one execution.
//!
//! The virtual thread is named by its Java thread id (`Thread.tid`), read with
//! one JNI field access: no Java code runs inside a mount transition.
//!
//! On JDK 21-23 a virtual thread leaves its carrier only in
//! `VirtualThread.yieldContinuation` (a park, a sleep, `Thread.yield`; 24+ also
//! unmounts from inside the JVM when blocked on a monitor). There the agent
//! retransforms that method at VMInit to call `weft.VtProbe` before it unmounts
//! and after it is mounted again, and turns the JVM's mount/unmount events off:
//! the JVM posts them at every thread's first mount and last unmount too, two
//! events per virtual thread that VirtualThreadStart/End already say (~2% of
//! the process's CPU on 100,000 short tasks, BENCHMARKS.md).

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

use weft_trace::{ProbeKind, Record};

use crate::agent::{self, LIVE};
use crate::clock;
use crate::jni::{jclass, jfieldID, jint, jlong, jobject, JNIEnv, Jni};
use crate::jvmti::{self, Callbacks, Jvmti, JvmtiEnvRaw};
use crate::sink;

const MOUNT_EVENT: &str = "com.sun.hotspot.events.VirtualThreadMount";
const UNMOUNT_EVENT: &str = "com.sun.hotspot.events.VirtualThreadUnmount";

thread_local! {
    /// A virtual thread is mounted on this (carrier) thread.
    static MOUNTED: Cell<bool> = const { Cell::new(false) };
}

/// Whether the current OS thread is running a virtual thread.
pub fn mounted() -> bool {
    MOUNTED.try_with(Cell::get).unwrap_or(false)
}

/// Frames of the JDK, skipped to find where a pinned virtual thread blocked.
const JDK_FRAMES: &[&str] = &["java.", "jdk.", "sun."];
const PINNED_SITE_FRAMES: usize = 6;

/// A park that reached the carrier while a virtual thread is mounted: the
/// virtual thread is pinned (an unpinned one parks by unmounting, never
/// reaching `Unsafe.park`). Records where, before the park's `WaitBegin`.
pub fn pinned_park(env: *mut JNIEnv) {
    // SAFETY: the park hook passes the current thread's JNIEnv.
    let (Some(jni), Some(jvmti)) = (unsafe { Jni::from_raw(env) }, agent::jvmti()) else {
        return;
    };
    let site = match jvmti.get_stack_trace_from(0, PINNED_SITE_FRAMES + 16) {
        Ok(frames) => agent::site_for_frames(jvmti, jni, &frames, JDK_FRAMES, PINNED_SITE_FRAMES),
        Err(_) => 0,
    };
    sink::emit(&Record::VtPinned {
        ts: clock::now(),
        site,
    });
}

/// The extension events' indices (set at OnLoad when virtual threads are followed).
static MOUNT_EVENTS: OnceLock<(jint, jint)> = OnceLock::new();
/// The VMInit retransformation of `VirtualThread` is in progress: the class hook
/// instruments `yieldContinuation` ([`instrument_yield`]).
static YIELD_PROBE_WANTED: AtomicBool = AtomicBool::new(false);

/// The class whose `yieldContinuation` gets the mount hooks.
pub const VIRTUAL_THREAD: &str = "java/lang/VirtualThread";

/// Whether mounts can be followed by the `yieldContinuation` probe on JDK `major`
/// (21-23: no unmount from inside the JVM) with the mount events set up.
pub fn yield_probe_possible(major: u32) -> bool {
    (21..24).contains(&major) && MOUNT_EVENTS.get().is_some()
}

/// Runs `retransform` (of `VirtualThread`, at VMInit) with the class hook
/// instrumenting `yieldContinuation`; when it did, the JVM's mount/unmount events
/// are turned off (the hooks say the same, only at the yields).
pub fn follow_mounts_by_probe(jvmti: Jvmti, retransform: impl FnOnce() -> bool) -> bool {
    let Some(&(mount, unmount)) = MOUNT_EVENTS.get() else {
        return false;
    };
    YIELD_PROBE_WANTED.store(true, Ordering::SeqCst);
    let changed = retransform();
    YIELD_PROBE_WANTED.store(false, Ordering::SeqCst);
    if !changed {
        return false;
    }
    // No virtual thread has run yet (VMInit): no mount is missed in between.
    let _ = jvmti.disable_event(mount);
    let _ = jvmti.disable_event(unmount);
    let _ = jvmti.set_extension_event_callback(mount, std::ptr::null());
    let _ = jvmti.set_extension_event_callback(unmount, std::ptr::null());
    true
}

/// The class hook's part for `java/lang/VirtualThread`: `yieldContinuation` wrapped
/// with the `weft.VtProbe` hooks during [`follow_mounts_by_probe`], else unchanged.
pub fn instrument_yield(bytes: &[u8]) -> Option<Vec<u8>> {
    if !YIELD_PROBE_WANTED.load(Ordering::SeqCst) {
        return None;
    }
    const O: &str = "(Ljava/lang/Object;)V";
    let what = weft_classfile::Instrumentation {
        wraps: vec![weft_classfile::WrapRequest {
            name: "yieldContinuation".into(),
            descriptor: "()Z".into(),
            probe_id: 0,
            pass_arg0: false,
            hooks: Some(weft_classfile::Hooks {
                class: "weft/VtProbe".into(),
                enter: Some(("unmount".into(), O.into())),
                exit: Some(("mount".into(), O.into())),
            }),
        }],
        constructor_probe: None,
    };
    let r = weft_classfile::instrument(bytes, &what).ok()?;
    if r.wrapped.is_empty() {
        return None;
    }
    crate::attach::note_loaded_change(VIRTUAL_THREAD);
    Some(r.bytes)
}

/// `weft.VtProbe`: the virtual thread `tid` is about to leave this carrier.
#[no_mangle]
pub extern "system" fn Java_weft_VtProbe_nUnmount(e: *mut JNIEnv, _c: jclass, tid: jlong) {
    record(e, Vt::Id(tid as u64), "VtProbe.nUnmount", Event::Unmount);
}

/// `weft.VtProbe`: the virtual thread `tid` is mounted on this carrier again.
#[no_mangle]
pub extern "system" fn Java_weft_VtProbe_nMount(e: *mut JNIEnv, _c: jclass, tid: jlong) {
    record(e, Vt::Id(tid as u64), "VtProbe.nMount", Event::Mount);
}

/// `Thread.tid`'s jfieldID (0: not resolved yet).
static TID_FIELD: AtomicUsize = AtomicUsize::new(0);
/// The field could not be resolved: virtual threads are not followed.
static TID_MISSING: AtomicBool = AtomicBool::new(false);

/// Asks for virtual-thread support and sets the callbacks (at OnLoad, JDK 21+);
/// returns the events to enable once the callbacks are installed. JDKs without
/// virtual threads get nothing and lose nothing.
pub fn setup(jvmti: Jvmti, major: u32, cb: &mut Callbacks) -> Vec<jint> {
    if major < 21 {
        return Vec::new();
    }
    if jvmti
        .add_capabilities(&[jvmti::cap::CAN_SUPPORT_VIRTUAL_THREADS])
        .is_err()
    {
        eprintln!("weft: this JVM does not support virtual threads in JVMTI; virtual threads are recorded as their carriers");
        return Vec::new();
    }
    let mount = jvmti.extension_event_index(MOUNT_EVENT);
    let unmount = jvmti.extension_event_index(UNMOUNT_EVENT);
    let (Some(mount), Some(unmount)) = (mount, unmount) else {
        eprintln!("weft: no virtual-thread mount events in this JVM; virtual threads are recorded as their carriers");
        return Vec::new();
    };
    let ext = jvmti
        .set_extension_event_callback(mount, on_mount as *const c_void)
        .and_then(|_| jvmti.set_extension_event_callback(unmount, on_unmount as *const c_void));
    if ext.is_err() {
        eprintln!("weft: cannot follow virtual-thread mounts; virtual threads are recorded as their carriers");
        return Vec::new();
    }
    let _ = MOUNT_EVENTS.set((mount, unmount));
    FOLLOWING.store(true, Ordering::Relaxed);
    cb.set(jvmti::EVENT_VIRTUAL_THREAD_START, on_start as *const c_void);
    cb.set(jvmti::EVENT_VIRTUAL_THREAD_END, on_end as *const c_void);
    vec![
        jvmti::EVENT_VIRTUAL_THREAD_START,
        jvmti::EVENT_VIRTUAL_THREAD_END,
        mount,
        unmount,
    ]
}

/// The Java thread id of `thread` (0 when it cannot be read).
fn thread_id(jni: Jni, thread: jobject) -> u64 {
    if thread.is_null() || TID_MISSING.load(Ordering::Relaxed) {
        return 0;
    }
    let mut fid = TID_FIELD.load(Ordering::Relaxed);
    if fid == 0 {
        let Some(c) = jni.find_class("java/lang/Thread") else {
            TID_MISSING.store(true, Ordering::Relaxed);
            return 0;
        };
        match jni.get_field_id(c, "tid", "J") {
            Some(f) => {
                fid = f as usize;
                TID_FIELD.store(fid, Ordering::Relaxed);
            }
            None => {
                TID_MISSING.store(true, Ordering::Relaxed);
                eprintln!(
                    "weft: Thread.tid not found; virtual threads are recorded as their carriers"
                );
            }
        }
        jni.delete_local_ref(c);
        if fid == 0 {
            return 0;
        }
    }
    jni.get_long_field(thread, fid as jfieldID) as u64
}

/// What a callback records.
#[derive(Clone, Copy)]
enum Event {
    Start,
    End,
    Mount,
    Unmount,
}

/// jfieldIDs from a virtual thread to its task: `VirtualThread.cont` ->
/// `Continuation.target` (the anonymous `VThreadContinuation$1`) -> `val$task`
/// (checked on JDK 21 and 25). `None`: not found; the task stays unknown.
static TASK_PATH: OnceLock<Option<[usize; 3]>> = OnceLock::new();

fn resolve_task_path(jni: Jni, vthread: jobject) -> Option<[usize; 3]> {
    let vc = jni.get_object_class(vthread);
    let cont = jni.get_field_id(vc, "cont", "Ljdk/internal/vm/Continuation;");
    jni.delete_local_ref(vc);
    let cont = cont?;
    let cont_obj = jni.get_object_field(vthread, cont);
    if cont_obj.is_null() {
        return None;
    }
    let cc = jni.find_class("jdk/internal/vm/Continuation")?;
    let target = jni.get_field_id(cc, "target", "Ljava/lang/Runnable;");
    jni.delete_local_ref(cc);
    let target = target?;
    let wrapper = jni.get_object_field(cont_obj, target);
    jni.delete_local_ref(cont_obj);
    if wrapper.is_null() {
        return None;
    }
    let wc = jni.get_object_class(wrapper);
    let task = jni.get_field_id(wc, "val$task", "Ljava/lang/Runnable;");
    jni.delete_local_ref(wc);
    jni.delete_local_ref(wrapper);
    Some([cont as usize, target as usize, task? as usize])
}

/// The task a virtual thread runs (a local reference, as are the objects on the way,
/// freed with the callback's frame; null if unknown).
fn task_object(jni: Jni, vthread: jobject) -> jobject {
    let Some(path) = TASK_PATH.get_or_init(|| resolve_task_path(jni, vthread)) else {
        return std::ptr::null_mut();
    };
    let mut o = vthread;
    for &f in path {
        o = jni.get_object_field(o, f as jfieldID);
        if o.is_null() {
            break;
        }
    }
    o
}

// ---------------------------------------------------------------- thread-per-task wrappers

/// Probe id of `FutureTask.run` (0: not instrumented).
static FUTURE_RUN_PROBE: AtomicI32 = AtomicI32::new(0);
/// Class ids of `ThreadPerTaskExecutor$ThreadBoundFuture`.
static BOUND_FUTURE_CLASS: ClassIds = ClassIds::new();
/// Class ids of `Executors$RunnableAdapter`.
static RUNNABLE_ADAPTER_CLASS: ClassIds = ClassIds::new();

/// Every id one class name was registered under. Probe can compute a class's info
/// on two threads at once (two carriers starting their first virtual
/// threads), each registering the class, and the info it keeps need not be the last
/// registered: keeping one id only, the wrapper's begins were skipped by Probe and
/// not written here for a whole run (all 100,000 ends unmatched, once in a test run).
struct ClassIds([AtomicU32; 4]);

impl ClassIds {
    const fn new() -> Self {
        Self([const { AtomicU32::new(0) }; 4])
    }

    fn add(&self, id: u32) {
        for slot in &self.0 {
            if slot
                .compare_exchange(0, id, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }

    fn contains(&self, id: u32) -> bool {
        id != 0 && self.0.iter().any(|slot| slot.load(Ordering::Relaxed) == id)
    }
}
/// VirtualThreadStart/End are followed (set at OnLoad).
static FOLLOWING: AtomicBool = AtomicBool::new(false);

const BOUND_FUTURE: &str = "java.util.concurrent.ThreadPerTaskExecutor$ThreadBoundFuture";
const RUNNABLE_ADAPTER: &str = "java.util.concurrent.Executors$RunnableAdapter";

/// A probe was defined: `FutureTask.run`'s id is kept for [`wrapper_begin`].
pub fn probe_defined(class: &str, method: &str, descriptor: &str, kind: ProbeKind, id: i32) {
    if kind == ProbeKind::PlumbingExecution
        && class == "java.util.concurrent.FutureTask"
        && method == "run"
        && descriptor == "()V"
    {
        FUTURE_RUN_PROBE.store(id, Ordering::Relaxed);
    }
}

/// A class got its id (agent::register_class).
pub fn class_registered(name: &str, id: u32) {
    if name == BOUND_FUTURE {
        BOUND_FUTURE_CLASS.add(id);
    } else if name == RUNNABLE_ADAPTER {
        RUNNABLE_ADAPTER_CLASS.add(id);
    }
}

/// What weft.Probe leaves out for objects of class `class_id` on a virtual thread
/// (0: nothing). 1: a thread-per-task executor's wrapper (`ThreadBoundFuture`): the
/// VirtualThreadStart callback records the begin of its `FutureTask.run`
/// ([`wrapper_begin`], with the task it wraps, no up-call), Probe only the end; an
/// execution probe of its own (its `run` on JDK 25) records nothing, being the
/// same execution. 2: the `RunnableAdapter` inside it records nothing, its record
/// saying again what the wrapper's says (the same innermost task; on a virtual
/// thread a `RunnableAdapter` runs inside a `FutureTask.run`). Per task: two
/// records and five JNI calls fewer on JDK 21, four records on 25 (BENCHMARKS.md).
pub fn skipped_on_virtual(class_id: u32) -> u8 {
    if class_id == 0
        || FUTURE_RUN_PROBE.load(Ordering::Relaxed) == 0
        || !FOLLOWING.load(Ordering::Relaxed)
    {
        return 0;
    }
    if RUNNABLE_ADAPTER_CLASS.contains(class_id) {
        return 2;
    }
    // The wrapper is registered by the first VirtualThreadStart, after its task
    // path was resolved: without the path the callback cannot record it.
    if BOUND_FUTURE_CLASS.contains(class_id) && matches!(TASK_PATH.get(), Some(Some(_))) {
        WRAPPER_BY_AGENT.store(true, Ordering::Relaxed);
        return 1;
    }
    0
}

/// weft.Probe was told that the wrapper's begin is recorded here (a wrapper first
/// met by Probe before any virtual thread started stays recorded by Probe).
static WRAPPER_BY_AGENT: AtomicBool = AtomicBool::new(false);

/// The plumbing execution of a thread-per-task wrapper `task` (class id, identity)
/// at its virtual thread's start, as `FutureTask.run`'s probe would record it; None
/// for other tasks.
fn wrapper_begin(jni: Jni, ts: u64, task: jobject, class_id: u32, ident: u32) -> Option<Record> {
    let probe = FUTURE_RUN_PROBE.load(Ordering::Relaxed);
    if probe == 0
        || class_id == 0
        || !BOUND_FUTURE_CLASS.contains(class_id)
        || !WRAPPER_BY_AGENT.load(Ordering::Relaxed)
    {
        return None;
    }
    // `inner` is freed with the callback's frame.
    let (inner, inner_class_id) = agent::inner_with_class(jni, probe, task);
    let inner_ident = agent::ident(jni, inner);
    Some(Record::TaskBegin {
        ts,
        probe: probe as u32,
        class_id,
        ident,
        inner_class_id,
        inner_ident,
    })
}

/// The virtual thread an event is about: its object (a JVMTI callback) or its Java
/// thread id (a `weft.VtProbe` hook).
#[derive(Clone, Copy)]
enum Vt {
    Object(jobject),
    Id(u64),
}

fn record(env: *mut JNIEnv, vt: Vt, what: &str, event: Event) {
    let ts = clock::now();
    if !LIVE.load(Ordering::Relaxed) || !sink::recording() {
        return;
    }
    // SAFETY: the JVM passes the current thread's JNIEnv to JVMTI callbacks and natives.
    let jni = unsafe { Jni::from_raw(env) };
    agent::guard(jni, what, || {
        let Some(jni) = jni else { return Ok(()) };
        let (id, thread) = match vt {
            Vt::Object(t) => (thread_id(jni, t), t),
            Vt::Id(id) => (id, std::ptr::null_mut()),
        };
        emit(jni, ts, id, thread, event);
        Ok(())
    })
}

/// Emits `event` of the virtual thread `vt` (`thread`: its object, needed for a start).
/// The local references taken here die with the callback's frame: deleting them one
/// by one cost a JNI call each.
fn emit(jni: Jni, ts: u64, vt: u64, thread: jobject, event: Event) {
    if vt == 0 {
        return;
    }
    let _ = MOUNTED.try_with(|m| m.set(matches!(event, Event::Start | Event::Mount)));
    let (class_id, ident, wrapper) = match event {
        Event::Start => {
            let task = task_object(jni, thread);
            let (class_id, ident) = agent::class_and_ident(jni, task);
            (
                class_id,
                ident,
                wrapper_begin(jni, ts, task, class_id, ident),
            )
        }
        _ => (0, 0, None),
    };
    sink::emit_with_index(|carrier| {
        let r = match event {
            Event::Start => Record::VtStart {
                ts,
                vt,
                carrier,
                class_id,
                ident,
            },
            Event::End => Record::VtEnd { ts, vt, carrier },
            Event::Mount => Record::VtMount { ts, vt, carrier },
            Event::Unmount => Record::VtUnmount { ts, vt, carrier },
        };
        (r, wrapper)
    });
}

unsafe extern "system" fn on_start(_t: *mut JvmtiEnvRaw, env: *mut JNIEnv, thread: jobject) {
    record(env, Vt::Object(thread), "VirtualThreadStart", Event::Start);
}

unsafe extern "system" fn on_end(_t: *mut JvmtiEnvRaw, env: *mut JNIEnv, thread: jobject) {
    record(env, Vt::Object(thread), "VirtualThreadEnd", Event::End);
}

unsafe extern "system" fn on_mount(_t: *mut JvmtiEnvRaw, env: *mut JNIEnv, thread: jobject) {
    record(env, Vt::Object(thread), "VirtualThreadMount", Event::Mount);
}

unsafe extern "system" fn on_unmount(_t: *mut JvmtiEnvRaw, env: *mut JNIEnv, thread: jobject) {
    record(
        env,
        Vt::Object(thread),
        "VirtualThreadUnmount",
        Event::Unmount,
    );
}
