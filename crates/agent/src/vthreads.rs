//! Virtual threads (JDK 21+): where each one runs.
//!
//! A virtual thread runs on a carrier (a platform thread of the scheduler's
//! pool) only while mounted, and may come back on another carrier after each
//! park. The agent's buffers are per OS thread, so everything a virtual thread
//! records lands in its current carrier's buffer; this engine brackets those
//! stretches with `VtStart`/`VtMount` and `VtUnmount`/`VtEnd` records. The trace
//! reader then gives every virtual thread a stream of its own
//! (docs/trace-format.md), so a task that parks on one carrier and ends on
//! another is still one execution.
//!
//! All four come from Java hooks `java.lang.VirtualThread` gets at VMInit (a
//! body-only retransformation, `weft.VtProbe`), not from JVMTI: `run(Runnable)`
//! (entered mounted at the thread's start, with its task; left at its end) and,
//! on JDK 21-23, `yieldContinuation` (the only place a virtual thread leaves its
//! carrier there: park, sleep, `Thread.yield`), on 24+ `mount`/`unmount` (around
//! every stretch on a carrier, also those a monitor ends inside the JVM; the final
//! unmount, after `run` returned, records nothing). The
//! JVMTI route (VirtualThreadStart/End, the Mount/Unmount extension events)
//! needs `can_support_virtual_threads`, and with it the JVM creates and frees a
//! JvmtiThreadState per virtual thread under a global lock, which cost more
//! than everything weft records per virtual thread (docs/virtual-threads.md).
//!
//! The virtual thread is named by its Java thread id (`Thread.getId()`, passed
//! by the hook).

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use weft_trace::{ProbeKind, Record};

use crate::agent::{self, LIVE};
use crate::jni::{jclass, jint, jlong, jobject, JNIEnv, Jni};
use crate::sink;
use crate::{clock, lock, locks};

thread_local! {
    /// A virtual thread is mounted on this (carrier) thread.
    static MOUNTED: Cell<bool> = const { Cell::new(false) };
    /// Its id (0: none).
    static MOUNTED_VT: Cell<u64> = const { Cell::new(0) };
    /// The virtual thread that ended last on this carrier, until its final unmount
    /// (JDK 24+: `unmount()` runs after `run` returned), which records nothing: its
    /// `VtEnd` said it.
    static ENDED: Cell<u64> = const { Cell::new(0) };
}

/// Whether the current OS thread is running a virtual thread.
pub fn mounted() -> bool {
    MOUNTED.try_with(Cell::get).unwrap_or(false)
}

/// Whether the virtual thread mounted here is inside a park whose wait the park hook
/// recorded: a pinned park reaching `Unsafe.park` then writes no second wait.
pub fn park_wait_open() -> bool {
    let vt = MOUNTED_VT.try_with(Cell::get).unwrap_or(0);
    vt != 0 && PARKED_WAITS.contains(vt)
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
    // The frame that entered the innermost monitor it holds: what pins it on JDK
    // 21-23, where the fix goes (the blocking call may be deeper, in a helper). The
    // depths count from the same frame as the stack trace below (this native's caller).
    let monitor_depth = jvmti
        .owned_monitor_depths()
        .ok()
        .and_then(|d| d.into_iter().filter(|&d| d >= 0).min())
        .map(|d| d as usize);
    let want = (PINNED_SITE_FRAMES + 16).max(monitor_depth.map_or(0, |d| d + PINNED_SITE_FRAMES));
    let (site, monitor_site) = match jvmti.get_stack_trace_from(0, want) {
        Ok(frames) => (
            agent::site_for_frames(jvmti, jni, &frames, JDK_FRAMES, PINNED_SITE_FRAMES),
            monitor_depth
                .and_then(|d| frames.get(d..))
                .map_or(0, |held| {
                    agent::site_for_frames(jvmti, jni, held, &[], PINNED_SITE_FRAMES)
                }),
        ),
        Err(_) => (0, 0),
    };
    sink::emit(&Record::VtPinned {
        ts: clock::now(),
        site,
        monitor_site,
    });
}

/// `java.lang.VirtualThread` was instrumented at VMInit: virtual threads are followed.
static FOLLOWING: AtomicBool = AtomicBool::new(false);
/// The VMInit retransformation of `VirtualThread` is in progress: the class hook
/// instruments it ([`instrument_virtual_thread`]) for JDK `major` (0: not wanted).
static HOOKS_WANTED_FOR: AtomicU32 = AtomicU32::new(0);

/// The class whose methods get the start/end and mount hooks.
pub const VIRTUAL_THREAD: &str = "java/lang/VirtualThread";

/// How mounts are followed on JDK `major` (the trace header's `vthreads.mounts`):
/// 21-23 by the hooks of `yieldContinuation`, the only place a virtual thread
/// leaves its carrier there; 24+ by those of `mount`/`unmount`, which
/// `runContinuation` calls around every stretch on a carrier, including those
/// that end inside the JVM (a virtual thread blocked on a monitor unmounts there).
pub fn mounts_how(major: u32) -> &'static str {
    if major < 24 {
        "yield_probe"
    } else {
        "mount_probe"
    }
}

/// Runs `retransform` (of `VirtualThread`, at VMInit, JDK 21+) with the class hook
/// adding weft's hooks ([`instrument_virtual_thread`]); true when it did, and virtual
/// threads are then followed. No JVMTI virtual-thread event or capability is used:
/// with `can_support_virtual_threads` (needed for VirtualThreadStart/End) the JVM
/// creates and frees a JvmtiThreadState per virtual thread under a global lock
/// (docs/virtual-threads.md).
pub fn follow(major: u32, retransform: impl FnOnce() -> bool) -> bool {
    if major < 21 {
        return false;
    }
    HOOKS_WANTED_FOR.store(major, Ordering::SeqCst);
    let changed = retransform();
    HOOKS_WANTED_FOR.store(0, Ordering::SeqCst);
    if changed {
        FOLLOWING.store(true, Ordering::Relaxed);
    } else {
        eprintln!("weft: cannot instrument java.lang.VirtualThread; virtual threads are recorded as their carriers");
    }
    changed
}

/// The wraps of `java.lang.VirtualThread` on JDK `major`: `run(Runnable)` (the
/// thread's whole life, mounted: its task is the argument) and the mount hooks.
fn virtual_thread_wraps(major: u32) -> Vec<weft_classfile::WrapRequest> {
    const O: &str = "(Ljava/lang/Object;)V";
    const OO: &str = "(Ljava/lang/Object;Ljava/lang/Object;)V";
    let wrap = |name: &str,
                descriptor: &str,
                pass_arg0,
                enter: Option<(&str, &str)>,
                exit: Option<&str>| {
        weft_classfile::WrapRequest {
            name: name.into(),
            descriptor: descriptor.into(),
            probe_id: 0,
            pass_arg0,
            pass_result: false,
            hooks: Some(weft_classfile::Hooks {
                class: "weft/VtProbe".into(),
                enter: enter.map(|(n, d)| (n.into(), d.into())),
                exit: exit.map(|n| (n.into(), O.into())),
                last_ref_arg: false,
            }),
        }
    };
    let mut wraps = vec![wrap(
        "run",
        "(Ljava/lang/Runnable;)V",
        true,
        Some(("start", OO)),
        Some("end"),
    )];
    // Parks (`LockSupport.park(blocker)` on a virtual thread), entered and left
    // mounted: the wait's record is written with the thread's own frames (its site).
    wraps.push(wrap(
        "park",
        "()V",
        false,
        Some(("park", O)),
        Some("parkEnd"),
    ));
    wraps.push(wrap(
        "parkNanos",
        "(J)V",
        false,
        Some(("park", O)),
        Some("parkEnd"),
    ));
    if major < 24 {
        wraps.push(wrap(
            "yieldContinuation",
            "()Z",
            false,
            Some(("unmount", O)),
            Some("mount"),
        ));
    } else {
        wraps.push(wrap("mount", "()V", false, None, Some("mount")));
        wraps.push(wrap("unmount", "()V", false, Some(("unmount", O)), None));
    }
    wraps
}

/// `LockSupport`, whose `unpark(Thread)` gets the hook that records a virtual
/// thread's unparks ([`instrument_lock_support`]).
pub const LOCK_SUPPORT: &str = "java/util/concurrent/locks/LockSupport";

/// Whether the VMInit retransformation of [`follow`] is in progress (the class hook
/// then gives `LockSupport` the unpark hook).
pub fn hooks_wanted() -> bool {
    HOOKS_WANTED_FOR.load(Ordering::SeqCst) != 0
}

/// The class hook's part for `LockSupport` during [`follow`]: an entry hook of
/// `unpark(Thread)`, `weft.VtProbe.unpark`. A virtual thread's unpark never reaches
/// `Unsafe.unpark` (locks.rs's native hook, every platform thread's unpark):
/// `LockSupport.unpark` hands it to `VirtualThread.unpark`, which submits the thread
/// to its scheduler. Hooked here rather than in `VirtualThread.unpark`, which the
/// JDK's own timer also calls to end a timed park or a sleep: those are no hand-off.
pub fn instrument_lock_support(bytes: &[u8]) -> Option<Vec<u8>> {
    if !hooks_wanted() {
        return None;
    }
    let what = weft_classfile::Instrumentation {
        wraps: vec![weft_classfile::WrapRequest {
            name: "unpark".into(),
            descriptor: "(Ljava/lang/Thread;)V".into(),
            probe_id: 0,
            pass_arg0: true,
            pass_result: false,
            hooks: Some(weft_classfile::Hooks {
                class: "weft/VtProbe".into(),
                enter: Some((
                    "unpark".into(),
                    "(Ljava/lang/Object;Ljava/lang/Object;)V".into(),
                )),
                exit: None,
                last_ref_arg: false,
            }),
        }],
        constructor_probe: None,
    };
    let r = weft_classfile::instrument(bytes, &what).ok()?;
    if r.wrapped.len() != 1 {
        return None;
    }
    crate::attach::note_loaded_change(LOCK_SUPPORT);
    Some(r.bytes)
}

/// `weft.VtProbe.unpark`: this thread unparks the virtual thread `tid`
/// (`LockSupport.unpark`): the same `Unpark` record as a platform thread's, with no
/// duration (the unpark only submits the thread to its scheduler).
#[no_mangle]
pub extern "system" fn Java_weft_VtProbe_nUnpark(e: *mut JNIEnv, _c: jclass, tid: jlong) {
    let ts = clock::now();
    if tid <= 0 || !locks::recordable() {
        return;
    }
    // SAFETY: the JVM passes the current thread's JNIEnv to natives.
    let jni = unsafe { Jni::from_raw(e) };
    agent::guard(jni, "VtProbe.nUnpark", || {
        sink::emit(&Record::Unpark {
            ts,
            target: tid as u64,
            ns: 0,
        });
        Ok(())
    })
}

/// The class hook's part for `java/lang/VirtualThread`: weft's hooks added during
/// [`follow`] (all of them or none), else unchanged.
pub fn instrument_virtual_thread(bytes: &[u8]) -> Option<Vec<u8>> {
    let major = HOOKS_WANTED_FOR.load(Ordering::SeqCst);
    if major == 0 {
        return None;
    }
    let what = weft_classfile::Instrumentation {
        wraps: virtual_thread_wraps(major),
        constructor_probe: None,
    };
    // All the start/end and mount hooks or none; the park hooks are extra (without
    // them a virtual thread's waits are its unmounted stretches only).
    let required = what
        .wraps
        .iter()
        .filter(|w| !w.name.starts_with("park"))
        .count();
    let r = weft_classfile::instrument(bytes, &what).ok()?;
    if r.wrapped
        .iter()
        .filter(|w| !w.0.starts_with("park"))
        .count()
        != required
    {
        return None;
    }
    crate::attach::note_loaded_change(VIRTUAL_THREAD);
    Some(r.bytes)
}

/// `weft.VtProbe`: the virtual thread `tid` starts on this carrier, running `task`
/// (class id and identity computed by weft.Probe's class table). Returns the task
/// whose execution probes the records written here cover ([`covered_task`]), or null.
#[no_mangle]
pub extern "system" fn Java_weft_VtProbe_nStart(
    e: *mut JNIEnv,
    _c: jclass,
    tid: jlong,
    task: jobject,
    class_id: jint,
    ident: jint,
) -> jobject {
    let start = Start {
        task,
        class_id: class_id as u32,
        ident: ident as u32,
    };
    record(e, tid, "VtProbe.nStart", Event::Start(start))
}

/// `weft.VtProbe`: the virtual thread `tid` ends (its task returned or threw); first
/// the end of its thread-per-task wrapper of identity `wrapper_ident` (0: none), which
/// weft.Probe left to this call (the start's begin covered it).
#[no_mangle]
pub extern "system" fn Java_weft_VtProbe_nEnd(
    e: *mut JNIEnv,
    _c: jclass,
    tid: jlong,
    wrapper_ident: jint,
    wrapper_end: jlong,
) {
    let wrapper = WrapperEnd {
        ident: wrapper_ident as u32,
        ts: wrapper_end as u64,
    };
    record(e, tid, "VtProbe.nEnd", Event::End(wrapper));
}

/// `weft.VtProbe`: the virtual thread `tid` is about to leave this carrier.
#[no_mangle]
pub extern "system" fn Java_weft_VtProbe_nUnmount(e: *mut JNIEnv, _c: jclass, tid: jlong) {
    record(e, tid, "VtProbe.nUnmount", Event::Unmount);
}

/// `weft.VtProbe.park`: the virtual thread `tid` parks on `blocker` (its
/// `parkBlocker`: a queue, a condition, a latch): a wait, as a platform thread's park
/// is (`WaitDetail` with the thread's own frames as site, `WaitBegin`); its `WaitEnd`
/// when the park returns ([`Java_weft_VtProbe_nParkEnd`]), mounted again, on whichever
/// carrier. Not inside a lock acquisition (the park is the acquisition's). A virtual
/// thread's park never reaches `Unsafe.park`: without this its waits on queues and
/// conditions were unmounted stretches with no object, site or wake-up.
#[no_mangle]
pub extern "system" fn Java_weft_VtProbe_nParkBegin(
    e: *mut JNIEnv,
    _c: jclass,
    tid: jlong,
    blocker: jobject,
) {
    if tid <= 0 || !locks::recordable() || locks::in_acquire() {
        return;
    }
    // SAFETY: the JVM passes the current thread's JNIEnv to natives.
    let jni = unsafe { Jni::from_raw(e) };
    agent::guard(jni, "VtProbe.nParkBegin", || {
        locks::park_wait_begin(e, blocker);
        PARKED_WAITS.insert(tid as u64, ());
        Ok(())
    })
}

/// `weft.VtProbe.parkEnd`: the park of `tid` returned; its wait ends if one began.
#[no_mangle]
pub extern "system" fn Java_weft_VtProbe_nParkEnd(e: *mut JNIEnv, _c: jclass, tid: jlong) {
    let ts = clock::now();
    // SAFETY: the JVM passes the current thread's JNIEnv to natives.
    let jni = unsafe { Jni::from_raw(e) };
    agent::guard(jni, "VtProbe.nParkEnd", || {
        if PARKED_WAITS.take(tid as u64).is_some() {
            sink::emit(&Record::WaitEnd {
                ts,
                timed_out: false,
            });
        }
        Ok(())
    })
}

/// Virtual threads whose park wait is open (`nParkBegin`).
static PARKED_WAITS: ByVirtualThread<()> = ByVirtualThread::new();

/// `weft.VtProbe`: the virtual thread `tid` is mounted on this carrier.
#[no_mangle]
pub extern "system" fn Java_weft_VtProbe_nMount(e: *mut JNIEnv, _c: jclass, tid: jlong) {
    record(e, tid, "VtProbe.nMount", Event::Mount);
}

/// A virtual thread's start: its task (a local reference of the native call).
#[derive(Clone, Copy)]
struct Start {
    task: jobject,
    class_id: u32,
    ident: u32,
}

/// A thread-per-task wrapper's end that weft.VtProbe left to its thread's end.
#[derive(Clone, Copy)]
struct WrapperEnd {
    /// Its identity (0: none to write).
    ident: u32,
    /// When it ended (the agent's ticks; 0: at the thread's end).
    ts: u64,
}

/// What a hook records.
#[derive(Clone, Copy)]
enum Event {
    Start(Start),
    /// With the wrapper's end to write first.
    End(WrapperEnd),
    Mount,
    Unmount,
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
/// virtual thread's start hook records the begin of its `FutureTask.run`
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
    if BOUND_FUTURE_CLASS.contains(class_id) {
        WRAPPER_BY_AGENT.store(true, Ordering::Relaxed);
        return 1;
    }
    0
}

/// weft.Probe was told that the wrapper's begin is recorded here (a wrapper first
/// met by Probe before any virtual thread started stays recorded by Probe).
static WRAPPER_BY_AGENT: AtomicBool = AtomicBool::new(false);

/// The plumbing execution of a thread-per-task wrapper `task` (class id, identity)
/// at its virtual thread's start, as `FutureTask.run`'s probe would record it, with
/// the task inside (a local reference, maybe null); None for other tasks.
fn wrapper_begin(
    jni: Jni,
    ts: u64,
    task: jobject,
    class_id: u32,
    ident: u32,
) -> Option<(Record, jobject)> {
    let probe = FUTURE_RUN_PROBE.load(Ordering::Relaxed);
    if probe == 0
        || class_id == 0
        || !BOUND_FUTURE_CLASS.contains(class_id)
        || !WRAPPER_BY_AGENT.load(Ordering::Relaxed)
    {
        return None;
    }
    // `inner` is freed with the native call's frame.
    let (inner, inner_class_id) = agent::inner_with_class(jni, probe, task);
    let inner_ident = agent::ident(jni, inner);
    let begin = Record::TaskBegin {
        ts,
        probe: probe as u32,
        class_id,
        ident,
        inner_class_id,
        inner_ident,
    };
    Some((begin, inner))
}

/// The wrapper's end, written with its thread's end (at `now`) when weft.VtProbe left
/// it here; its time is when it ended, at most `now`.
fn wrapper_end(now: u64, end: WrapperEnd) -> Option<Record> {
    let probe = FUTURE_RUN_PROBE.load(Ordering::Relaxed);
    (end.ident != 0 && probe != 0).then_some(Record::TaskEnd {
        ts: if end.ts == 0 { now } else { end.ts.min(now) },
        probe: probe as u32,
        ident: end.ident,
    })
}

/// Slots of weft.VtProbe's table of what virtual threads' records cover, by thread id
/// modulo its size (VtProbe.SLOTS): the id of the thread holding each, 0 when free.
/// Claimed here by compare-and-set at a thread's start, so that Java keeps plain
/// arrays (VtProbe says why).
static COVER_SLOTS: [AtomicU64; 4096] = [const { AtomicU64::new(0) }; 4096];

fn cover_slot(vt: u64) -> &'static AtomicU64 {
    &COVER_SLOTS[vt as usize % COVER_SLOTS.len()]
}

/// The task whose execution probes a virtual thread's records cover, so that
/// weft.Probe skips them on that thread (weft.VtProbe.covers): the task inside a
/// thread-per-task wrapper whose begin the start wrote (its end then comes with the
/// thread's end), or the thread's own task when it is no plumbing (its `VtStart` names
/// it; a plumbing task's inner task is named by its probe's begin). Null: none.
fn covered_task(start: &Start, wrapper_inner: Option<jobject>) -> jobject {
    match wrapper_inner {
        Some(inner) => inner,
        None if !start.task.is_null() && !agent::wraps_task(start.class_id) => start.task,
        None => std::ptr::null_mut(),
    }
}

/// Records `event` of the virtual thread `vt`; returns the start's [`covered_task`]
/// (null for other events).
fn record(env: *mut JNIEnv, vt: jlong, what: &str, event: Event) -> jobject {
    let ts = clock::now();
    if !LIVE.load(Ordering::Relaxed) || !sink::recording() {
        return std::ptr::null_mut();
    }
    // SAFETY: the JVM passes the current thread's JNIEnv to natives.
    let jni = unsafe { Jni::from_raw(env) };
    // As an address: guard's result needs a Default.
    let covered: usize = agent::guard(jni, what, || {
        let Some(jni) = jni else { return Ok(0) };
        Ok(emit(jni, ts, vt as u64, event) as usize)
    });
    covered as jobject
}

/// Something each of a few virtual threads has in progress, by thread id, found again
/// on whichever carrier the thread is next; a count lets the common case (none) look up
/// nothing without taking the lock.
struct ByVirtualThread<T> {
    map: Mutex<Option<HashMap<u64, T>>>,
    count: AtomicUsize,
}

impl<T> ByVirtualThread<T> {
    const fn new() -> Self {
        Self {
            map: Mutex::new(None),
            count: AtomicUsize::new(0),
        }
    }

    fn insert(&self, vt: u64, value: T) {
        if lock(&self.map)
            .get_or_insert_with(HashMap::new)
            .insert(vt, value)
            .is_none()
        {
            self.count.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn take(&self, vt: u64) -> Option<T> {
        if self.count.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let v = lock(&self.map).as_mut().and_then(|m| m.remove(&vt));
        if v.is_some() {
            self.count.fetch_sub(1, Ordering::Relaxed);
        }
        v
    }

    fn contains(&self, vt: u64) -> bool {
        self.count.load(Ordering::Relaxed) != 0
            && lock(&self.map)
                .as_ref()
                .is_some_and(|m| m.contains_key(&vt))
    }
}

/// Lock states virtual threads took along while unmounted (locks::TravellingState).
static CARRIED_STATES: ByVirtualThread<locks::TravellingState> = ByVirtualThread::new();

/// Moves the lock state in progress (an acquire that parked, a contended monitor
/// enter, a join) from the carrier a virtual thread leaves to the one it mounts on.
fn carry_lock_state(vt: u64, event: Event) {
    match event {
        Event::Unmount => {
            if let Some(state) = locks::take_for_unmount() {
                CARRIED_STATES.insert(vt, state);
            }
        }
        Event::Mount | Event::Start(_) => {
            if let Some(state) = CARRIED_STATES.take(vt) {
                locks::give_at_mount(state);
            }
        }
        Event::End(_) => {}
    }
}

/// Emits `event` of the virtual thread `vt`; returns the start's [`covered_task`].
fn emit(jni: Jni, ts: u64, vt: u64, event: Event) -> jobject {
    let none = std::ptr::null_mut();
    if vt == 0 {
        return none;
    }
    let on = matches!(event, Event::Start(_) | Event::Mount);
    let _ = MOUNTED.try_with(|m| m.set(on));
    let _ = MOUNTED_VT.try_with(|m| m.set(if on { vt } else { 0 }));
    let final_unmount = ENDED
        .try_with(|e| {
            let ended = e.replace(if matches!(event, Event::End(_)) {
                vt
            } else {
                0
            });
            matches!(event, Event::Unmount) && ended == vt
        })
        .unwrap_or(false);
    if final_unmount {
        return none;
    }
    carry_lock_state(vt, event);
    let (wrapper, covered) = match event {
        Event::Start(s) => {
            let begin = wrapper_begin(jni, ts, s.task, s.class_id, s.ident);
            let mut covered = covered_task(&s, begin.as_ref().map(|b| b.1));
            if !covered.is_null()
                && cover_slot(vt)
                    .compare_exchange(0, vt, Ordering::AcqRel, Ordering::Relaxed)
                    .is_err()
            {
                covered = none; // another live thread holds the slot
            }
            (begin.map(|b| b.0), covered)
        }
        Event::End(_) => {
            let _ = cover_slot(vt).compare_exchange(vt, 0, Ordering::AcqRel, Ordering::Relaxed);
            (None, none)
        }
        _ => (None, none),
    };
    sink::emit_with_index(|carrier| match event {
        Event::Start(s) => {
            let start = Record::VtStart {
                ts,
                vt,
                carrier,
                class_id: s.class_id,
                ident: s.ident,
            };
            (start, wrapper)
        }
        Event::End(wrapper) => {
            let end = Record::VtEnd { ts, vt, carrier };
            match wrapper_end(ts, wrapper) {
                Some(wrapper_end) => (wrapper_end, Some(end)),
                None => (end, None),
            }
        }
        Event::Mount => (Record::VtMount { ts, vt, carrier }, None),
        Event::Unmount => (Record::VtUnmount { ts, vt, carrier }, None),
    });
    covered
}
