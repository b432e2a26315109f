//! Lock contention and waits (docs/locks.md).
//!
//! - `synchronized` monitors: JVMTI MonitorContendedEnter/Entered (only contended
//!   acquisitions reach the agent: the uncontended path stays untouched) and
//!   MonitorWait/Waited (`Object.wait`, `Thread.join`).
//! - `java.util.concurrent`: the slow paths `AbstractQueuedSynchronizer.acquire(Node,…)`
//!   (and `reacquire` on 25, the `Long` variant) and `StampedLock.acquireWrite/acquireRead`
//!   are wrapped with probes (kind `LockAcquire`); they are entered only after a failed
//!   fast try. The Sync object's class tells the kind.
//! - Every `Unsafe.park` goes through [`park_hook`] (the native is replaced at its
//!   NativeMethodBind). A park inside a wrapped acquire is lock blocking (it only marks
//!   the acquisition as parked); any other park is a wait (`WaitBegin{PARK}`).
//!
//! A lock is identified by its identity hash and class (compared with IsSameObject);
//! it gets an id and a `LockDef` at its first contention. Sites (a short stack) are
//! taken at the first contentions of a lock, then 1 in 1024; the owner of a monitor
//! (GetObjectMonitorUsage, a safepoint operation) only then too; the owner of an
//! exclusive AQS lock (`exclusiveOwnerThread`) at every contention.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use weft_classfile::ClassSummary;
use weft_trace::{lock_flags, lock_kind, wait_kind, ProbeKind, Record};

use crate::agent::{self, LIVE};
use crate::clock;
use crate::decide::Wrap;
use crate::jni::{jboolean, jclass, jfieldID, jint, jlong, jmethodID, jobject, JNIEnv, Jni};
use crate::jvmti::{self, Callbacks, Jvmti, JvmtiEnvRaw};
use crate::sink;

// ---------------------------------------------------------------- what to wrap

const AQS: &str = "java/util/concurrent/locks/AbstractQueuedSynchronizer";
const AQLS: &str = "java/util/concurrent/locks/AbstractQueuedLongSynchronizer";
const STAMPED: &str = "java/util/concurrent/locks/StampedLock";

/// The lock slow paths of a class (called from `decide::decide`).
pub fn lock_wraps(s: &ClassSummary) -> Vec<Wrap> {
    let targets: &[(&str, &str, bool)] = match s.name.as_str() {
        AQS => &[
            (
                "acquire",
                "(Ljava/util/concurrent/locks/AbstractQueuedSynchronizer$Node;IZZZJ)I",
                true,
            ),
            (
                "reacquire",
                "(Ljava/util/concurrent/locks/AbstractQueuedSynchronizer$Node;I)V",
                true,
            ),
        ],
        AQLS => &[
            (
                "acquire",
                "(Ljava/util/concurrent/locks/AbstractQueuedLongSynchronizer$Node;JZZZJ)I",
                true,
            ),
            (
                "reacquire",
                "(Ljava/util/concurrent/locks/AbstractQueuedLongSynchronizer$Node;J)V",
                true,
            ),
        ],
        STAMPED => &[
            ("acquireWrite", "(ZZJ)J", false),
            ("acquireRead", "(ZZJ)J", false),
        ],
        _ => return Vec::new(),
    };
    targets
        .iter()
        .filter(|(n, d, _)| s.methods.iter().any(|m| m.name == *n && m.descriptor == *d))
        .map(|(n, d, arg0)| Wrap {
            name: n.to_string(),
            descriptor: d.to_string(),
            kind: ProbeKind::LockAcquire,
            pass_arg0: *arg0,
            loop_body: false,
            window: false,
            late: false,
        })
        .collect()
}

// ---------------------------------------------------------------- lock registry

/// What a contended object is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Lock(u8),
    /// A CountDownLatch: its acquisition is a wait.
    Latch,
}

struct Entry {
    class_ref: usize,
    id: u32,
    role: Role,
    contentions: AtomicU64,
}

type Registry = HashMap<u32, Vec<Arc<Entry>>>;
static LOCKS: RwLock<Option<Registry>> = RwLock::new(None);
static NEXT_LOCK: AtomicU32 = AtomicU32::new(1);

/// A new attach session writes a new trace: its locks are defined anew.
pub fn new_session() {
    *LOCKS.write().unwrap_or_else(|e| e.into_inner()) = None;
}

/// Kind and reported class of an AQS subclass / StampedLock / monitor object.
fn classify(class: &str, monitor: bool) -> (Role, String) {
    if monitor {
        return (Role::Lock(lock_kind::MONITOR), class.to_string());
    }
    let outer = |o: &str| class.starts_with(&format!("{o}$")) || class == o;
    const RL: &str = "java.util.concurrent.locks.ReentrantLock";
    const RW: &str = "java.util.concurrent.locks.ReentrantReadWriteLock";
    const SEM: &str = "java.util.concurrent.Semaphore";
    const SL: &str = "java.util.concurrent.locks.StampedLock";
    const CDL: &str = "java.util.concurrent.CountDownLatch";
    if outer(RL) {
        (Role::Lock(lock_kind::REENTRANT_LOCK), RL.into())
    } else if outer(RW) {
        (Role::Lock(lock_kind::READ_WRITE_LOCK), RW.into())
    } else if outer(SEM) {
        (Role::Lock(lock_kind::SEMAPHORE), SEM.into())
    } else if outer(SL) {
        (Role::Lock(lock_kind::STAMPED_LOCK), SL.into())
    } else if outer(CDL) {
        (Role::Latch, CDL.into())
    } else {
        (Role::Lock(lock_kind::OTHER_AQS), class.to_string())
    }
}

/// The registry entry of `obj`, created (with a LockDef) at its first contention.
fn lookup(jvmti: Jvmti, jni: Jni, obj: jobject, monitor: bool) -> Option<Arc<Entry>> {
    let ident = jvmti.get_object_hash_code(obj).ok()? as u32;
    let cls = jni.get_object_class(obj);
    if cls.is_null() {
        return None;
    }
    let known = {
        let g = LOCKS.read().unwrap_or_else(|e| e.into_inner());
        g.as_ref().and_then(|m| m.get(&ident)).and_then(|v| {
            v.iter()
                .find(|e| jni.is_same_object(cls, e.class_ref as jobject))
                .cloned()
        })
    };
    if known.is_some() {
        jni.delete_local_ref(cls);
        return known;
    }
    let name = jvmti
        .get_class_signature(cls)
        .map(|s| crate::lambda::sig_to_name(&s))
        .unwrap_or_else(|_| "?".into());
    let (role, mut class) = classify(&name, monitor);
    // HotSpot's lock of a class's initialization is an `int[0]` per class: threads
    // blocked on one wait for another thread to finish that class's static
    // initializer (a program's own `int[]` monitor is never empty in practice).
    if monitor && name == "[I" && jni.get_array_length(obj) == 0 {
        class = weft_trace::CLASS_INIT_LOCK.to_string();
    }
    let e = {
        let mut g = LOCKS.write().unwrap_or_else(|e| e.into_inner());
        let same = g.get_or_insert_with(HashMap::new).entry(ident).or_default();
        // Threads meet a lock's first contention together: the one that got here
        // first defined it since the look-up above (else one object, two LockDefs).
        if let Some(found) = same
            .iter()
            .find(|e| jni.is_same_object(cls, e.class_ref as jobject))
        {
            let found = found.clone();
            drop(g);
            jni.delete_local_ref(cls);
            return Some(found);
        }
        let e = Arc::new(Entry {
            class_ref: jni.new_global_ref(cls) as usize,
            id: NEXT_LOCK.fetch_add(1, Ordering::Relaxed),
            role,
            contentions: AtomicU64::new(0),
        });
        same.push(e.clone());
        e
    };
    jni.delete_local_ref(cls);
    let id = e.id;
    if let Role::Lock(kind) = role {
        sink::emit_global(&Record::LockDef {
            id,
            kind,
            class,
            ident,
            // ReentrantLock's, ReentrantReadWriteLock's and Semaphore's fair syncs.
            fair: !monitor && name.ends_with("$FairSync"),
        });
    }
    Some(e)
}

/// The LockDef id of the monitor `obj` (defined at its first sight): the
/// `--lock-detail` probes (monitors.rs).
pub(crate) fn monitor_id(jvmti: Jvmti, jni: Jni, obj: jobject) -> Option<u32> {
    lookup(jvmti, jni, obj, true).map(|e| e.id)
}

/// Whether this contention of `e` takes a site (and, for monitors, the owner).
fn sampled(e: &Entry) -> bool {
    let n = e.contentions.fetch_add(1, Ordering::Relaxed);
    n < 3 || n.is_multiple_of(1024)
}

/// Frames of the JDK's lock machinery and weft's probes, skipped at the front of a site.
const SITE_SKIP: &[&str] = &[
    "weft.Probe.",
    "java.util.concurrent.locks.",
    "java.util.concurrent.Semaphore",
    "java.util.concurrent.CountDownLatch",
];
const SITE_FRAMES: usize = 6;

fn site(jvmti: Jvmti, jni: Jni) -> u32 {
    match jvmti.get_stack_trace_from(0, SITE_FRAMES + 10) {
        Ok(frames) => agent::site_for_frames(jvmti, jni, &frames, SITE_SKIP, SITE_FRAMES),
        Err(_) => 0,
    }
}

// ---------------------------------------------------------------- wait details

/// Frames of the wait and park machinery, skipped at the front of a wait's site.
const WAIT_SITE_SKIP: &[&str] = &[
    "weft.Probe.",
    "weft.ParkProbe.",
    // A virtual thread's park, seen from the hook of `VirtualThread.park` (vthreads.rs):
    // the JDK's frames between `LockSupport.park` and the hook.
    "weft.VtProbe.",
    "java.lang.VirtualThread",
    "java.lang.System$",
    "jdk.internal.misc.VirtualThreads",
    "jdk.internal.vm.Continuation",
    "java.lang.Object.wait",
    "java.lang.Thread.join",
    "java.util.concurrent.locks.",
    "java.util.concurrent.CountDownLatch",
    "jdk.internal.misc.Unsafe.",
];

/// Waits seen per waited-on class (class id modulo the table's size).
static WAIT_SITE_COUNTS: [AtomicU32; 4096] = [const { AtomicU32::new(0) }; 4096];

/// Whether this wait on class `class_id` takes a site: the first 16 of a class,
/// then 1 in 128 (a stack costs microseconds; a wait on a hot queue is frequent).
fn wait_site_sampled(class_id: u32) -> bool {
    let n = WAIT_SITE_COUNTS[class_id as usize % WAIT_SITE_COUNTS.len()]
        .fetch_add(1, Ordering::Relaxed);
    n < 16 || n.is_multiple_of(128)
}

/// The `WaitDetail` of a wait on `object` (null: a park without a blocker), or
/// `None` while inside another of this module's callbacks.
fn wait_detail(jvmti: Jvmti, jni: Jni, object: jobject) -> Option<Record> {
    if !busy_enter() {
        return None;
    }
    let class_id = agent::class_id_of(jni, object);
    jni.check_clear();
    let site = if wait_site_sampled(class_id) {
        wait_site(jvmti, jni)
    } else {
        0
    };
    busy_exit();
    Some(Record::WaitDetail { class_id, site })
}

/// The site of the current wait (its wait and park frames skipped).
fn wait_site(jvmti: Jvmti, jni: Jni) -> u32 {
    match jvmti.get_stack_trace_from(0, SITE_FRAMES + 12) {
        Ok(frames) => agent::site_for_frames(jvmti, jni, &frames, WAIT_SITE_SKIP, SITE_FRAMES),
        Err(_) => 0,
    }
}

/// The current thread's park blocker (`LockSupport.park(blocker)`; a local
/// reference, null if none).
fn park_blocker(jvmti: Jvmti, jni: Jni) -> jobject {
    let Some(f) = REFS.get().and_then(|r| r.park_blocker) else {
        return std::ptr::null_mut();
    };
    let Ok(t) = jvmti.get_current_thread() else {
        return std::ptr::null_mut();
    };
    if t.is_null() {
        return t;
    }
    let b = jni.get_object_field(t, f as jfieldID);
    jni.delete_local_ref(t);
    condition_owner(jni, b)
}

/// A `Condition.await` parks with its `ConditionObject` as blocker: the lock it
/// belongs to (the AQS in the inner class's `this$0`: `ReentrantLock$NonfairSync`)
/// says more. Any other blocker is returned as it is; the argument's local
/// reference is consumed.
fn condition_owner(jni: Jni, blocker: jobject) -> jobject {
    let Some(r) = REFS.get() else { return blocker };
    if blocker.is_null() || r.conditions.is_empty() {
        return blocker;
    }
    let cls = jni.get_object_class(blocker);
    if cls.is_null() {
        return blocker;
    }
    let field = r
        .conditions
        .iter()
        .find(|(c, _)| jni.is_same_object(cls, *c as jobject))
        .map(|(_, f)| *f);
    jni.delete_local_ref(cls);
    let Some(f) = field else { return blocker };
    let owner = jni.get_object_field(blocker, f as jfieldID);
    jni.check_clear();
    if owner.is_null() {
        return blocker;
    }
    jni.delete_local_ref(blocker);
    owner
}

// ---------------------------------------------------------------- Java refs

struct Refs {
    /// AbstractOwnableSynchronizer.exclusiveOwnerThread
    owner_field: Option<usize>,
    thread_get_id: Option<usize>,
    /// Global reference to `java.lang.Thread`: an `Object.wait` on a Thread is a
    /// `Thread.join` (JDK 17..: `join` waits on the Thread's monitor).
    thread_class: Option<usize>,
    /// Thread.parkBlocker: the object of `LockSupport.park(blocker)`.
    park_blocker: Option<usize>,
    /// (global ref to a `ConditionObject` class, its `this$0` field): AQS and AQLS.
    conditions: Vec<(usize, usize)>,
}
static REFS: OnceLock<Refs> = OnceLock::new();

/// Resolves the fields and methods used at contention (at VMInit), and installs the
/// park hook if the native was bound before the event could replace it.
pub fn init(jni: Jni) {
    let owner_field = jni
        .find_class("java/util/concurrent/locks/AbstractOwnableSynchronizer")
        .and_then(|c| jni.get_field_id(c, "exclusiveOwnerThread", "Ljava/lang/Thread;"))
        .map(|f| f as usize);
    let thread = jni.find_class("java/lang/Thread");
    let thread_get_id = thread
        .and_then(|t| jni.get_method_id(t, "getId", "()J"))
        .map(|m| m as usize);
    if let Some(f) = thread.and_then(|t| jni.get_field_id(t, "tid", "J")) {
        TID_FIELD.store(f as usize, Ordering::SeqCst);
    }
    let thread_class = thread.map(|t| jni.new_global_ref(t) as usize);
    let park_blocker = thread
        .and_then(|t| jni.get_field_id(t, "parkBlocker", "Ljava/lang/Object;"))
        .map(|f| f as usize);
    jni.check_clear();
    let mut conditions = Vec::new();
    for aqs in [
        "java/util/concurrent/locks/AbstractQueuedSynchronizer",
        "java/util/concurrent/locks/AbstractQueuedLongSynchronizer",
    ] {
        let Some(c) = jni.find_class(&format!("{aqs}$ConditionObject")) else {
            jni.check_clear();
            continue;
        };
        if let Some(f) = jni.get_field_id(c, "this$0", &format!("L{aqs};")) {
            conditions.push((jni.new_global_ref(c) as usize, f as usize));
        }
        jni.check_clear();
        jni.delete_local_ref(c);
    }
    let _ = REFS.set(Refs {
        owner_field,
        thread_get_id,
        thread_class,
        park_blocker,
        conditions,
    });
    hook_park_late(jni);
}

fn java_id(jni: Jni, thread: jobject) -> u64 {
    if thread.is_null() {
        return 0;
    }
    let id = REFS
        .get()
        .and_then(|r| r.thread_get_id)
        .and_then(|m| jni.call_long_method0(thread, m as jmethodID))
        .unwrap_or(0);
    jni.check_clear();
    id.max(0) as u64
}

fn aqs_owner(jni: Jni, sync: jobject) -> u64 {
    let Some(f) = REFS.get().and_then(|r| r.owner_field) else {
        return 0;
    };
    let t = jni.get_object_field(sync, f as jfieldID);
    let id = java_id(jni, t);
    jni.delete_local_ref(t);
    id
}

// ---------------------------------------------------------------- per-thread state

#[derive(Clone, Copy, PartialEq, Eq)]
enum Current {
    None,
    Lock(u32),
    Wait,
    /// Inside an acquire that is not recorded (not live, nested, …).
    Ignored,
}

thread_local! {
    /// The attach session of this thread's acquire depth (sink::SESSION).
    static LOCK_SESSION: Cell<u32> = const { Cell::new(0) };
    /// Depth of wrapped acquire slow paths on this thread.
    static ACQUIRE_DEPTH: Cell<u32> = const { Cell::new(0) };
    /// What the outermost acquire records.
    static CURRENT: Cell<Current> = const { Cell::new(Current::None) };
    /// A park happened inside the current acquire.
    static PARKED: Cell<bool> = const { Cell::new(false) };
    /// The lock of the monitor contention in progress (0 none).
    static MONITOR: Cell<u32> = const { Cell::new(0) };
    /// Inside one of this module's callbacks (no re-entry).
    static BUSY: Cell<bool> = const { Cell::new(false) };
    /// The current `Object.wait` is a `Thread.join` (a `JoinBegin` was written).
    static JOINING: Cell<bool> = const { Cell::new(false) };
}

/// A virtual thread's part of the per-thread state above, taken from its carrier
/// when it unmounts and given to the carrier it mounts on next (vthreads.rs). The
/// state is the Java thread's, and a virtual thread blocked in an acquire resumes on
/// any carrier: kept per carrier, the acquire's end found another thread's state (no
/// `LockAcquired`) and the first carrier kept a depth that swallowed every later
/// acquire on it (300 virtual threads queued on one `ReentrantLock`: 2 contended
/// acquisitions recorded, "no contended lock" reported).
#[derive(Clone, Copy)]
pub struct TravellingState {
    session: u32,
    depth: u32,
    current: Current,
    parked: bool,
    monitor: u32,
    joining: bool,
}

/// Takes this carrier's lock state as the mounted virtual thread's, leaving the
/// carrier idle; None when there is nothing in progress (the common case).
pub fn take_for_unmount() -> Option<TravellingState> {
    let depth = ACQUIRE_DEPTH.try_with(|d| d.get()).ok()?;
    let monitor = MONITOR.try_with(|m| m.get()).ok()?;
    let joining = JOINING.try_with(|j| j.get()).ok()?;
    if depth == 0 && monitor == 0 && !joining {
        return None;
    }
    let state = TravellingState {
        session: LOCK_SESSION.try_with(|s| s.replace(0)).ok()?,
        depth: ACQUIRE_DEPTH.try_with(|d| d.replace(0)).ok()?,
        current: CURRENT.try_with(|c| c.replace(Current::None)).ok()?,
        // Unmounting inside an acquire is its park.
        parked: PARKED.try_with(|p| p.replace(false)).ok()? || depth > 0,
        monitor: MONITOR.try_with(|m| m.replace(0)).ok()?,
        joining: JOINING.try_with(|j| j.replace(false)).ok()?,
    };
    Some(state)
}

/// Gives this carrier the state a virtual thread took along ([`take_for_unmount`]).
pub fn give_at_mount(state: TravellingState) {
    let _ = LOCK_SESSION.try_with(|s| s.set(state.session));
    let _ = ACQUIRE_DEPTH.try_with(|d| d.set(state.depth));
    let _ = CURRENT.try_with(|c| c.set(state.current));
    let _ = PARKED.try_with(|p| p.set(state.parked));
    let _ = MONITOR.try_with(|m| m.set(state.monitor));
    let _ = JOINING.try_with(|j| j.set(state.joining));
}

fn busy_enter() -> bool {
    BUSY.try_with(|b| !b.replace(true)).unwrap_or(false)
}
fn busy_exit() {
    let _ = BUSY.try_with(|b| b.set(false));
}

/// Records only for threads whose ThreadStart was recorded (system threads started
/// before VMInit are not part of the program; docs/locks.md).
pub(crate) fn recordable() -> bool {
    LIVE.load(Ordering::Relaxed)
        && sink::recording()
        && !agent::disabled()
        && sink::with_local(|l| l.started) == Some(true)
}

// ---------------------------------------------------------------- AQS / StampedLock probes

/// Probe.enter of a `LockAcquire` probe: `self_` is the AQS (or the StampedLock),
/// `node` the AQS Node argument (non-null: re-acquisition after Condition.await).
#[no_mangle]
pub extern "system" fn Java_weft_Probe_nLockBegin(
    e: *mut JNIEnv,
    _c: jclass,
    _probe: jint,
    self_: jobject,
    node: jobject,
) {
    let ts = clock::now();
    // SAFETY: the JVM passes the current thread's JNIEnv to every native method.
    let jni = unsafe { Jni::from_raw(e) };
    // An acquire whose end was not recorded (the probes went off at the end of an
    // attach session while it waited) must not hide this thread's later ones.
    let session = sink::SESSION.load(Ordering::Relaxed);
    if LOCK_SESSION.with(|s| s.replace(session)) != session {
        ACQUIRE_DEPTH.with(|d| d.set(0));
    }
    let depth = ACQUIRE_DEPTH.with(|d| {
        d.set(d.get() + 1);
        d.get()
    });
    if depth != 1 {
        return;
    }
    PARKED.with(|p| p.set(false));
    CURRENT.with(|c| c.set(Current::Ignored));
    if self_.is_null() || !recordable() || !busy_enter() {
        return;
    }
    agent::guard(jni, "nLockBegin", || {
        let (Some(jni), Some(jvmti)) = (jni, agent::jvmti()) else {
            return Ok(());
        };
        let Some(entry) = lookup(jvmti, jni, self_, false) else {
            return Ok(());
        };
        match entry.role {
            Role::Latch => {
                // Inside this callback already (BUSY): the detail is taken here.
                let class_id = agent::class_id_of(jni, self_);
                jni.check_clear();
                let site = if wait_site_sampled(class_id) {
                    wait_site(jvmti, jni)
                } else {
                    0
                };
                sink::emit(&Record::WaitDetail { class_id, site });
                sink::emit(&Record::WaitBegin {
                    ts,
                    kind: wait_kind::LATCH,
                    lock: 0,
                });
                crate::sampling::thread_waits();
                CURRENT.with(|c| c.set(Current::Wait));
            }
            Role::Lock(kind) => {
                let mut flags = 0;
                if !node.is_null() {
                    flags |= lock_flags::REACQUIRE;
                }
                if matches!(kind, lock_kind::READ_WRITE_LOCK | lock_kind::STAMPED_LOCK)
                    && shared_side(jvmti)
                {
                    flags |= lock_flags::SHARED;
                }
                let owner = if flags & lock_flags::SHARED == 0
                    && matches!(
                        kind,
                        lock_kind::REENTRANT_LOCK
                            | lock_kind::READ_WRITE_LOCK
                            | lock_kind::OTHER_AQS
                    ) {
                    aqs_owner(jni, self_)
                } else {
                    0
                };
                let site = if sampled(&entry) { site(jvmti, jni) } else { 0 };
                sink::emit(&Record::LockBlock {
                    ts,
                    lock: entry.id,
                    flags,
                    owner,
                    site,
                });
                crate::sampling::thread_waits();
                CURRENT.with(|c| c.set(Current::Lock(entry.id)));
            }
        }
        Ok(())
    });
    busy_exit();
}

/// Method ids known to be a shared (read) acquisition entry, or not.
static SHARED_METHODS: Mutex<Option<HashMap<usize, bool>>> = Mutex::new(None);

/// Whether the current acquisition is the shared side (read lock): a caller frame
/// named `acquireShared*`, `tryAcquireShared*` or `acquireRead`.
fn shared_side(jvmti: Jvmti) -> bool {
    let Ok(frames) = jvmti.get_stack_trace_from(0, 6) else {
        return false;
    };
    for f in frames {
        let key = f.method as usize;
        let known = SHARED_METHODS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|m| m.get(&key).copied());
        let shared = match known {
            Some(s) => s,
            None => {
                let name = jvmti.get_method_name(f.method).unwrap_or_default().0;
                let s = name.starts_with("acquireShared")
                    || name.starts_with("tryAcquireShared")
                    || name.starts_with("acquireRead");
                SHARED_METHODS
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert_with(HashMap::new)
                    .insert(key, s);
                s
            }
        };
        if shared {
            return true;
        }
    }
    false
}

/// Probe.exit of a `LockAcquire` probe (normal return or exception).
#[no_mangle]
pub extern "system" fn Java_weft_Probe_nLockEnd(e: *mut JNIEnv, _c: jclass, _probe: jint) {
    lock_end(e, true);
}

/// Probe.exitInt/exitLong of a `LockAcquire` probe whose slow path returned without
/// the lock (a timed `tryLock`/`tryAcquire` ran out of time, an interruptible one was
/// interrupted, or it threw): `LockGaveUp`, or a timed-out wait (`CountDownLatch.await`
/// with a timeout).
#[no_mangle]
pub extern "system" fn Java_weft_Probe_nLockGaveUp(e: *mut JNIEnv, _c: jclass, _probe: jint) {
    lock_end(e, false);
}

/// The end of a `LockAcquire` slow path: `acquired` or not.
fn lock_end(e: *mut JNIEnv, acquired: bool) {
    let ts = clock::now();
    let depth = ACQUIRE_DEPTH.with(|d| {
        let v = d.get().saturating_sub(1);
        d.set(v);
        v
    });
    if depth != 0 {
        return;
    }
    let cur = CURRENT.with(|c| c.replace(Current::None));
    let parked = PARKED.with(|p| p.replace(false));
    let rec = match cur {
        Current::Lock(lock) if acquired => Record::LockAcquired { ts, lock, parked },
        Current::Lock(lock) => Record::LockGaveUp { ts, lock },
        Current::Wait => Record::WaitEnd {
            ts,
            timed_out: !acquired,
        },
        _ => return,
    };
    // SAFETY: the JVM passes the current thread's JNIEnv to every native method.
    let jni = unsafe { Jni::from_raw(e) };
    agent::guard(jni, "nLockEnd", || {
        sink::emit(&rec);
        Ok(())
    });
}

// ---------------------------------------------------------------- Unsafe.park

type ParkFn = unsafe extern "system" fn(*mut JNIEnv, jobject, jboolean, jlong);
static ORIG_PARK: AtomicUsize = AtomicUsize::new(0);
/// Parks recorded as waits (for the start-up self-check; docs/locks.md).
pub static PARKS_SEEN: AtomicU64 = AtomicU64::new(0);

/// Replacement of `jdk.internal.misc.Unsafe.park(ZJ)V`: records a park outside a lock
/// acquisition as a wait, then calls the JVM's own native.
unsafe extern "system" fn park_hook(
    env: *mut JNIEnv,
    unsafe_: jobject,
    abs: jboolean,
    time: jlong,
) {
    let orig = ORIG_PARK.load(Ordering::Relaxed);
    // SAFETY: ORIG_PARK holds the JVM's Unsafe_Park, stored before the hook was installed.
    let orig: ParkFn = unsafe { std::mem::transmute::<usize, ParkFn>(orig) };
    if ACQUIRE_DEPTH.try_with(|d| d.get()).unwrap_or(0) > 0 {
        let _ = PARKED.try_with(|p| p.set(true));
        // SAFETY: same arguments the JVM passed to us.
        unsafe { orig(env, unsafe_, abs, time) };
        return;
    }
    let record = std::panic::catch_unwind(|| {
        if !recordable() {
            return false;
        }
        if crate::vthreads::mounted() {
            crate::vthreads::pinned_park(env);
            // Its park on a blocker is already a wait (vthreads::park_wait_open).
            if crate::vthreads::park_wait_open() {
                return false;
            }
        }
        park_wait_begin(env, std::ptr::null_mut());
        true
    })
    .unwrap_or(false);
    // SAFETY: as above.
    unsafe { orig(env, unsafe_, abs, time) };
    if record {
        let _ = std::panic::catch_unwind(|| {
            sink::emit(&Record::WaitEnd {
                ts: clock::now(),
                timed_out: false,
            })
        });
    }
}

/// Whether a wrapped lock acquisition is in progress on this thread (a park there is
/// the acquisition's, not a wait).
pub(crate) fn in_acquire() -> bool {
    ACQUIRE_DEPTH.try_with(|d| d.get()).unwrap_or(0) > 0
}

/// A park outside a lock acquisition begins: its `WaitDetail` (the blocker: `given`,
/// else the thread's `parkBlocker`) and `WaitBegin{PARK}`.
pub(crate) fn park_wait_begin(env: *mut JNIEnv, given: jobject) {
    PARKS_SEEN.fetch_add(1, Ordering::Relaxed);
    // SAFETY: the JVM passes the current thread's JNIEnv to every native method.
    if let (Some(jni), Some(jvmti)) = (unsafe { Jni::from_raw(env) }, agent::jvmti()) {
        let blocker = if given.is_null() {
            park_blocker(jvmti, jni)
        } else {
            condition_owner(jni, given)
        };
        let detail = wait_detail(jvmti, jni, blocker);
        if !blocker.is_null() {
            jni.delete_local_ref(blocker);
        }
        if let Some(d) = detail {
            sink::emit(&d);
        }
    }
    sink::emit(&Record::WaitBegin {
        ts: clock::now(),
        kind: wait_kind::PARK,
        lock: 0,
    });
    crate::sampling::thread_waits();
}

// ---------------------------------------------------------------- LockSupport.park (attach)

const LOCK_SUPPORT: &str = "java/util/concurrent/locks/LockSupport";

/// The parks of a late agent: `Unsafe.park` was bound long before the attach (its
/// NativeMethodBind is gone), so an attach session wraps the bodies of
/// `LockSupport.park*` instead (pipeline::Load::Retransform only; the hooks are
/// `weft.ParkProbe`'s). Parks that call `Unsafe.park` directly are not seen.
pub fn late_park_wraps(s: &ClassSummary) -> Vec<Wrap> {
    const ACC_STATIC: u16 = 0x0008;
    if s.name != LOCK_SUPPORT {
        return Vec::new();
    }
    s.methods
        .iter()
        .filter(|m| m.access & ACC_STATIC != 0)
        .filter(|m| matches!(m.name.as_str(), "park" | "parkNanos" | "parkUntil"))
        .map(|m| Wrap {
            name: m.name.clone(),
            descriptor: m.descriptor.clone(),
            kind: ProbeKind::Wait,
            pass_arg0: true,
            loop_body: false,
            window: false,
            late: false,
        })
        .collect()
}

/// The `weft.ParkProbe` hooks of a [`late_park_wraps`] wrap (None for other wraps).
pub fn park_hooks(w: &Wrap) -> Option<weft_classfile::Hooks> {
    (w.kind == ProbeKind::Wait).then(|| weft_classfile::Hooks {
        class: "weft/ParkProbe".into(),
        enter: Some((
            "park".into(),
            "(Ljava/lang/Object;Ljava/lang/Object;)V".into(),
        )),
        exit: Some(("parkEnd".into(), "(Ljava/lang/Object;)V".into())),
        last_ref_arg: false,
    })
}

thread_local! {
    /// The attach session (sink::SESSION) whose `WaitBegin` the current
    /// `LockSupport.park*` recorded, 0 if none: a park that began in an earlier
    /// session (its frame kept the instrumented code) ends without a record.
    static PARK_OPEN: Cell<u32> = const { Cell::new(0) };
}

/// `weft.ParkProbe.park`: entry of `LockSupport.park*` (a platform thread's; the
/// blocker argument, null for the methods without one). Inside a wrapped acquire
/// it marks the acquisition as parked; otherwise a wait begins.
#[no_mangle]
pub extern "system" fn Java_weft_ParkProbe_nBegin(e: *mut JNIEnv, _c: jclass, blocker: jobject) {
    let _ = PARK_OPEN.try_with(|p| p.set(0));
    // A launched agent sees every park in Unsafe.park already.
    if park_hooked() {
        return;
    }
    if ACQUIRE_DEPTH.try_with(|d| d.get()).unwrap_or(0) > 0 {
        let _ = PARKED.try_with(|p| p.set(true));
        return;
    }
    // SAFETY: the JVM passes the current thread's JNIEnv to every native method.
    let jni = unsafe { Jni::from_raw(e) };
    agent::guard(jni, "ParkProbe.nBegin", || {
        if recordable() {
            park_wait_begin(e, blocker);
            let session = sink::SESSION.load(Ordering::Relaxed);
            let _ = PARK_OPEN.try_with(|p| p.set(session));
        }
        Ok(())
    });
}

/// `weft.ParkProbe.parkEnd`: exit of `LockSupport.park*`.
#[no_mangle]
pub extern "system" fn Java_weft_ParkProbe_nEnd(e: *mut JNIEnv, _c: jclass) {
    let open = PARK_OPEN.try_with(|p| p.replace(0)).unwrap_or(0);
    if open == 0 || open != sink::SESSION.load(Ordering::Relaxed) {
        return;
    }
    let ts = clock::now();
    // SAFETY: the JVM passes the current thread's JNIEnv to every native method.
    let jni = unsafe { Jni::from_raw(e) };
    agent::guard(jni, "ParkProbe.nEnd", || {
        sink::emit(&Record::WaitEnd {
            ts,
            timed_out: false,
        });
        Ok(())
    });
}

// ---------------------------------------------------------------- Unsafe.unpark

type UnparkFn = unsafe extern "system" fn(*mut JNIEnv, jobject, jobject);
static ORIG_UNPARK: AtomicUsize = AtomicUsize::new(0);
/// `java.lang.Thread.tid` (the Java thread id), resolved at VMInit; 0 = unknown.
static TID_FIELD: AtomicUsize = AtomicUsize::new(0);

/// Replacement of `jdk.internal.misc.Unsafe.unpark(Object)V` (behind every
/// `LockSupport.unpark`): records who woke whom (`Unpark`, the what-if graph's
/// wake edges, docs/whatif.md §Recording), then calls the JVM's own native.
unsafe extern "system" fn unpark_hook(env: *mut JNIEnv, unsafe_: jobject, thread: jobject) {
    let seen = std::panic::catch_unwind(|| {
        if thread.is_null() || !recordable() {
            return None;
        }
        let ts = clock::now();
        let tid = TID_FIELD.load(Ordering::Relaxed);
        let target = match jni_of(env) {
            // `Unsafe.unpark` takes a Thread (HotSpot reads it as one).
            Some(jni) if tid != 0 => jni.get_long_field(thread, tid as jfieldID).max(0) as u64,
            _ => 0,
        };
        Some((ts, target, clock::now()))
    })
    .unwrap_or(None);
    let orig = ORIG_UNPARK.load(Ordering::Relaxed);
    // SAFETY: ORIG_UNPARK holds the JVM's Unsafe_Unpark, stored before the hook was installed.
    let orig: UnparkFn = unsafe { std::mem::transmute::<usize, UnparkFn>(orig) };
    // SAFETY: same arguments the JVM passed to us.
    unsafe { orig(env, unsafe_, thread) };
    // Written after the call, with its duration: waking a parked thread is a system
    // call (on a VM an inter-processor interrupt), the releaser's share of a lock
    // hand-off that removing the lock removes too (docs/speedups.md).
    if let Some((ts, target, before)) = seen {
        let ns = sink::ticks_to_ns(clock::now().saturating_sub(before));
        let _ = std::panic::catch_unwind(|| sink::emit(&Record::Unpark { ts, target, ns }));
    }
}

// ---------------------------------------------------------------- program start

static APP_STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// At each class load: the first class of the application (a non-boot loader, not
/// a JDK package) marks the program's start (`AppStart`; docs/locks.md).
pub fn class_loaded(has_loader: bool, name: &str) {
    if !has_loader || APP_STARTED.load(Ordering::Relaxed) || !LIVE.load(Ordering::Relaxed) {
        return;
    }
    if crate::decide::is_jdk_class(name) || name.starts_with("weft/Probe") {
        return;
    }
    if !APP_STARTED.swap(true, Ordering::SeqCst) {
        sink::emit_global(&Record::AppStart { ts: clock::now() });
    }
}

// ---------------------------------------------------------------- JVMTI callbacks

unsafe extern "system" fn on_native_method_bind(
    _t: *mut JvmtiEnvRaw,
    _env: *mut JNIEnv,
    _thread: jobject,
    method: jmethodID,
    address: *mut c_void,
    new_address: *mut *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        if address.is_null()
            || new_address.is_null()
            || std::ptr::eq(address, park_hook as *const c_void)
            || std::ptr::eq(address, unpark_hook as *const c_void)
        {
            return;
        }
        if park_hooked() && unpark_hooked() {
            return;
        }
        let Some(jvmti) = agent::jvmti() else { return };
        let (name, sig) = match jvmti.get_method_name(method) {
            Ok(x) => x,
            Err(_) => {
                // The primordial phase (JVMTI_ERROR_WRONG_PHASE): matched at VMInit.
                EARLY_BINDS
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((method as usize, address as usize));
                return;
            }
        };
        let (orig, hook) = match (name.as_str(), sig.as_str()) {
            ("park", "(ZJ)V") => (&ORIG_PARK, park_hook as *mut c_void),
            ("unpark", UNPARK_SIG) => (&ORIG_UNPARK, unpark_hook as *mut c_void),
            _ => return,
        };
        if orig.load(Ordering::Relaxed) != 0 {
            return;
        }
        let Ok(c) = jvmti.get_method_declaring_class(method) else {
            return;
        };
        if jvmti.get_class_signature(c).as_deref() != Ok("Ljdk/internal/misc/Unsafe;") {
            return;
        }
        orig.store(address as usize, Ordering::SeqCst);
        // SAFETY: JVMTI passes a valid out-pointer for the new native address.
        unsafe { *new_address = hook };
    });
}

/// Natives bound before GetMethodName works: (jmethodID, address).
static EARLY_BINDS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

const UNPARK_SIG: &str = "(Ljava/lang/Object;)V";

/// At VMInit: if `Unsafe.park` or `Unsafe.unpark` was bound in the primordial phase,
/// re-registers it with its hook (its original address is known from the bind event).
fn hook_park_late(jni: Jni) {
    if park_hooked() && unpark_hooked() {
        return;
    }
    let Some(c) = jni.find_class("jdk/internal/misc/Unsafe") else {
        return;
    };
    let early = std::mem::take(&mut *EARLY_BINDS.lock().unwrap_or_else(|e| e.into_inner()));
    let natives: [(&str, &str, &AtomicUsize, *mut c_void); 2] = [
        ("park", "(ZJ)V", &ORIG_PARK, park_hook as *mut c_void),
        (
            "unpark",
            UNPARK_SIG,
            &ORIG_UNPARK,
            unpark_hook as *mut c_void,
        ),
    ];
    for (name, sig, orig, hook) in natives {
        if orig.load(Ordering::Relaxed) != 0 {
            continue;
        }
        let Some(m) = jni.get_method_id(c, name, sig) else {
            continue;
        };
        let Some(&(_, addr)) = early.iter().find(|(mm, _)| *mm == m as usize) else {
            continue;
        };
        orig.store(addr, Ordering::SeqCst);
        // Re-registering a JDK native makes HotSpot print a jni+resolve warning on the
        // program's stdout; the program's output must not change, so that log goes off.
        if let Some(jvmti) = crate::agent::jvmti() {
            let _ = jvmti.silence_jni_resolve_log();
        }
        if !jni.register_native(c, name, sig, hook) {
            orig.store(0, Ordering::SeqCst);
        }
    }
}

/// Whether the Unsafe.park native was replaced.
pub fn park_hooked() -> bool {
    ORIG_PARK.load(Ordering::Relaxed) != 0
}

/// Whether the Unsafe.unpark native was replaced (`Unpark` records).
pub fn unpark_hooked() -> bool {
    ORIG_UNPARK.load(Ordering::Relaxed) != 0
}

fn jni_of(env: *mut JNIEnv) -> Option<Jni> {
    // SAFETY: JVMTI passes the current thread's JNIEnv to its callbacks.
    unsafe { Jni::from_raw(env) }
}

unsafe extern "system" fn on_contended_enter(
    _t: *mut JvmtiEnvRaw,
    env: *mut JNIEnv,
    _thread: jobject,
    object: jobject,
) {
    let ts = clock::now();
    if object.is_null() || !recordable() || !busy_enter() {
        return;
    }
    let jni = jni_of(env);
    agent::guard(jni, "MonitorContendedEnter", || {
        let (Some(jni), Some(jvmti)) = (jni, agent::jvmti()) else {
            return Ok(());
        };
        let Some(entry) = lookup(jvmti, jni, object, true) else {
            return Ok(());
        };
        let (site, owner) = if sampled(&entry) {
            let s = site(jvmti, jni);
            let o = match jvmti.get_monitor_owner(object) {
                Ok(t) => {
                    let id = java_id(jni, t);
                    jni.delete_local_ref(t);
                    id
                }
                Err(_) => 0,
            };
            (s, o)
        } else {
            (0, 0)
        };
        sink::emit(&Record::LockBlock {
            ts,
            lock: entry.id,
            flags: 0,
            owner,
            site,
        });
        crate::sampling::thread_waits();
        MONITOR.with(|m| m.set(entry.id));
        Ok(())
    });
    busy_exit();
}

unsafe extern "system" fn on_contended_entered(
    _t: *mut JvmtiEnvRaw,
    env: *mut JNIEnv,
    _thread: jobject,
    _object: jobject,
) {
    let ts = clock::now();
    let lock = MONITOR.try_with(|m| m.replace(0)).unwrap_or(0);
    if lock == 0 {
        return;
    }
    agent::guard(jni_of(env), "MonitorContendedEntered", || {
        sink::emit(&Record::LockAcquired {
            ts,
            lock,
            parked: true,
        });
        Ok(())
    });
}

/// (class id, identity) of the Thread `object` when it is one (a `Thread.join`).
fn join_target(jni: Jni, object: jobject) -> Option<(u32, u32)> {
    let tc = REFS.get()?.thread_class? as jclass;
    if object.is_null() || !busy_enter() {
        return None;
    }
    let cls = jni.get_object_class(object);
    let is_thread = !cls.is_null() && jni.is_assignable_from(cls, tc);
    if !cls.is_null() {
        jni.delete_local_ref(cls);
    }
    let r = is_thread.then(|| agent::class_and_ident(jni, object));
    jni.check_clear();
    busy_exit();
    r
}

unsafe extern "system" fn on_monitor_wait(
    _t: *mut JvmtiEnvRaw,
    env: *mut JNIEnv,
    _thread: jobject,
    object: jobject,
    _timeout: jlong,
) {
    let ts = clock::now();
    if !recordable() {
        return;
    }
    let jni = jni_of(env);
    agent::guard(jni, "MonitorWait", || {
        // Thread.join waits on the Thread object: a happens-before edge target
        // (docs/task-model.md §Edges). Probe 0 = Thread.join seen as a wait.
        if let Some((target_class_id, target_ident)) = jni.and_then(|j| join_target(j, object)) {
            sink::emit(&Record::JoinBegin {
                ts,
                probe: 0,
                target_class_id,
                target_ident,
            });
            let _ = JOINING.try_with(|j| j.set(true));
        }
        let mut lock = 0;
        if let (Some(jni), Some(jvmti)) = (jni, agent::jvmti()) {
            if let Some(d) = wait_detail(jvmti, jni, object) {
                sink::emit(&d);
            }
            // --lock-detail: the monitor, which its notifies name (MonitorNotify).
            if crate::monitors::enabled() {
                lock = monitor_id(jvmti, jni, object).unwrap_or(0);
            }
        }
        sink::emit(&Record::WaitBegin {
            ts,
            kind: wait_kind::OBJECT_WAIT,
            lock,
        });
        crate::sampling::thread_waits();
        Ok(())
    });
}

unsafe extern "system" fn on_monitor_waited(
    _t: *mut JvmtiEnvRaw,
    env: *mut JNIEnv,
    _thread: jobject,
    _object: jobject,
    timed_out: jboolean,
) {
    let ts = clock::now();
    if !recordable() {
        return;
    }
    agent::guard(jni_of(env), "MonitorWaited", || {
        sink::emit(&Record::WaitEnd {
            ts,
            timed_out: timed_out != 0,
        });
        if JOINING.try_with(|j| j.replace(false)).unwrap_or(false) {
            sink::emit(&Record::JoinEnd { ts, probe: 0 });
        }
        Ok(())
    });
}

/// At OnLoad: asks for the capabilities, sets the callbacks; returns the events to
/// enable. Without the capabilities the agent records no locks (one line says so).
pub fn setup(jvmti: Jvmti, cb: &mut Callbacks) -> Vec<jint> {
    let mut events = vec![
        jvmti::EVENT_MONITOR_CONTENDED_ENTER,
        jvmti::EVENT_MONITOR_CONTENDED_ENTERED,
        jvmti::EVENT_MONITOR_WAIT,
        jvmti::EVENT_MONITOR_WAITED,
    ];
    cb.set(
        jvmti::EVENT_MONITOR_CONTENDED_ENTER,
        on_contended_enter as *const c_void,
    );
    cb.set(
        jvmti::EVENT_MONITOR_CONTENDED_ENTERED,
        on_contended_entered as *const c_void,
    );
    cb.set(jvmti::EVENT_MONITOR_WAIT, on_monitor_wait as *const c_void);
    cb.set(
        jvmti::EVENT_MONITOR_WAITED,
        on_monitor_waited as *const c_void,
    );
    if jvmti
        .add_capabilities(&[jvmti::CAP_NATIVE_METHOD_BIND])
        .is_ok()
    {
        cb.set(
            jvmti::EVENT_NATIVE_METHOD_BIND,
            on_native_method_bind as *const c_void,
        );
        events.push(jvmti::EVENT_NATIVE_METHOD_BIND);
    } else {
        eprintln!("weft: no NativeMethodBind events; parks (j.u.c. waits) are not recorded");
    }
    if jvmti
        .add_capabilities(&[jvmti::CAP_GET_MONITOR_INFO])
        .is_err()
    {
        // Monitor owners stay unknown (0).
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_syncs() {
        let k = |c: &str| classify(c, false);
        assert!(matches!(
            k("java.util.concurrent.locks.ReentrantLock$NonfairSync").0,
            Role::Lock(lock_kind::REENTRANT_LOCK)
        ));
        assert_eq!(
            k("java.util.concurrent.locks.ReentrantReadWriteLock$FairSync").1,
            "java.util.concurrent.locks.ReentrantReadWriteLock"
        );
        assert!(matches!(
            k("java.util.concurrent.Semaphore$NonfairSync").0,
            Role::Lock(lock_kind::SEMAPHORE)
        ));
        assert!(matches!(
            k("java.util.concurrent.CountDownLatch$Sync").0,
            Role::Latch
        ));
        assert!(matches!(
            k("com.example.MyAqs").0,
            Role::Lock(lock_kind::OTHER_AQS)
        ));
        assert!(matches!(
            classify("com.example.X", true).0,
            Role::Lock(lock_kind::MONITOR)
        ));
    }
}
