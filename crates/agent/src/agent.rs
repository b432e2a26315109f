//! Global agent state: the JVMTI env, Java references resolved at VMInit, the
//! probe table, class ids, sites, and the disable path.
//!
//! Locks here guard plain Rust data only: no JNI/JVMTI call is made while one
//! is held (a thread blocked in a JNI call at a safepoint must not hold a lock
//! a GC callback or another thread needs).

// Integer keys looked up per task (plumbing classes, site counts): Fx, not SipHash.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use weft_trace::{LossReason, ProbeKind, Record, GLOBAL_THREAD};

use crate::clock;
use crate::jni::{jclass, jfieldID, jmethodID, jobject, Jni};
use crate::jvmti::Jvmti;
use crate::plumbing::{self, Field, PlumbingClass};
use crate::sink;

pub static JVMTI: OnceLock<Jvmti> = OnceLock::new();
/// VMStart has happened (class transformation may begin).
pub static STARTED: AtomicBool = AtomicBool::new(false);
/// VMInit has happened and VMDeath has not.
pub static LIVE: AtomicBool = AtomicBool::new(false);
static DISABLED: AtomicBool = AtomicBool::new(false);
pub static JDK_MAJOR: AtomicU32 = AtomicU32::new(17);
/// Our descriptor of the in-memory jar of probe classes (crates/agent/src/probe_jar.rs).
pub static PROBE_JAR: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// The JavaVM (saved at OnLoad / OnAttach), for a later GetEnv.
static JAVA_VM: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub fn set_java_vm(vm: *mut crate::jni::JavaVM) {
    JAVA_VM.store(vm as usize, Ordering::SeqCst);
}

pub fn java_vm() -> Option<*mut crate::jni::JavaVM> {
    let v = JAVA_VM.load(Ordering::SeqCst);
    (v != 0).then_some(v as *mut crate::jni::JavaVM)
}

pub fn disabled() -> bool {
    DISABLED.load(Ordering::Relaxed)
}

pub fn jvmti() -> Option<Jvmti> {
    JVMTI.get().copied()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ---------------------------------------------------------------- Java refs

/// Global references and ids resolved at VMInit (stored as usize: they are
/// process-wide handles, valid on any thread).
pub struct JavaRefs {
    probe_class: usize,
    on_field: usize,
    /// `Probe.runProbe` (crates/classfile/src/task_calls.rs).
    run_probe_field: Option<usize>,
    class_id_of: usize,
    ident_of: usize,
    thread_get_id: Option<usize>,
    thread_target: Vec<usize>,
    probe_methods: HashSet<usize>,
}

pub static REFS: OnceLock<JavaRefs> = OnceLock::new();

/// Resolves a field path starting at `class`; each later step's class is the previous field's type.
fn resolve_path(jni: Jni, class: jclass, path: &[Field]) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    let mut cls = class;
    for (i, (name, sig)) in path.iter().enumerate() {
        let f = jni.get_field_id(cls, name, sig)?;
        out.push(f as usize);
        if i + 1 < path.len() {
            let next = sig.strip_prefix('L')?.strip_suffix(';')?;
            cls = jni.find_class(next)?;
        }
    }
    Some(out)
}

pub fn init_refs(jvmti: Jvmti, jni: Jni) -> Result<(), String> {
    let probe = jni
        .find_class("weft/Probe")
        .ok_or("cannot load weft/Probe")?;
    let on_field = jni
        .get_static_field_id(probe, "on", "Z")
        .ok_or("weft/Probe.on missing")?;
    let run_probe_field = jni
        .get_static_field_id(probe, "runProbe", "I")
        .map(|f| f as usize);
    let class_id_of = jni
        .get_static_method_id(probe, "classIdOf", "(Ljava/lang/Object;)I")
        .ok_or("weft/Probe.classIdOf missing")?;
    let ident_of = jni
        .get_static_method_id(probe, "identOf", "(Ljava/lang/Object;)I")
        .ok_or("weft/Probe.identOf missing")?;
    let mut probe_methods: HashSet<usize> = jvmti
        .get_class_methods(probe)
        .map_err(|e| format!("GetClassMethods(weft/Probe) failed: {e}"))?
        .into_iter()
        .map(|m| m as usize)
        .collect();
    // Fork-join probe frames are skipped in sites too (crates/agent/src/forkjoin.rs).
    probe_methods.extend(crate::forkjoin::probe_methods(jvmti, jni));
    let (thread_get_id, thread_target) = match jni.find_class("java/lang/Thread") {
        Some(t) => (
            jni.get_method_id(t, "getId", "()J").map(|m| m as usize),
            resolve_path(
                jni,
                t,
                plumbing::thread_target(JDK_MAJOR.load(Ordering::Relaxed)),
            )
            .unwrap_or_default(),
        ),
        None => (None, Vec::new()),
    };
    let _ = REFS.set(JavaRefs {
        probe_class: jni.new_global_ref(probe) as usize,
        on_field: on_field as usize,
        run_probe_field,
        class_id_of: class_id_of as usize,
        ident_of: ident_of as usize,
        thread_get_id,
        thread_target,
        probe_methods,
    });
    Ok(())
}

/// Classes (internal names) whose `run()V` got an execution or plumbing probe.
static RUN_PROBED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Notes that class `name`'s `run()V` records itself (the class hook's outcome).
pub fn note_run_probed(name: &str) {
    lock(&RUN_PROBED)
        .get_or_insert_with(HashSet::default)
        .insert(name.to_string());
}

/// Whether the `run()V` that objects of class `cls` run (the first declared up its
/// superclass chain) has a probe of its own. A class weft skips (`sun.*`, the JDK's
/// internals), one loaded before the class hook, a hidden class: no, and
/// `Probe.runTask` records their runs at the call (the HTTP server's exchanges a
/// `ThreadPoolExecutor` runs).
pub fn run_probed(jni: Jni, cls: jclass) -> bool {
    let Some(jvmti) = jvmti() else { return true };
    // `cls` is the caller's reference; the superclasses' are ours to delete.
    let mut cur = cls;
    let mut owned = false;
    let mut probed = false;
    while !cur.is_null() {
        let declares_run = jvmti.get_class_methods(cur).is_ok_and(|ms| {
            ms.into_iter().any(|m| {
                jvmti
                    .get_method_name(m)
                    .is_ok_and(|(n, d)| n == "run" && d == "()V")
            })
        });
        if declares_run {
            probed = jvmti.get_class_signature(cur).is_ok_and(|sig| {
                let name = sig.trim_start_matches('L').trim_end_matches(';');
                lock(&RUN_PROBED)
                    .as_ref()
                    .is_some_and(|set| set.contains(name))
            });
            break;
        }
        let up = jni.get_superclass(cur);
        if owned {
            jni.delete_local_ref(cur);
        }
        cur = up;
        owned = true;
    }
    if owned && !cur.is_null() {
        jni.delete_local_ref(cur);
    }
    probed
}

/// The probe id of the redirected `Runnable.run()` calls, allocated once.
static RUN_TASK_PROBE: OnceLock<Option<i32>> = OnceLock::new();

/// Defines the execution probe of `Probe.runTask` in this trace (its `ProbeDef`: an
/// execution of `java.lang.Runnable.run`, whatever class runs) and gives its id to Java.
/// Called before the probes go on.
pub fn start_run_task_probe(jni: Jni) {
    let Some(r) = REFS.get() else { return };
    let Some(field) = r.run_probe_field else {
        return;
    };
    let Some(id) = *RUN_TASK_PROBE.get_or_init(|| new_probe(ProbeKind::Execution, None)) else {
        return;
    };
    sink::emit_global(&Record::ProbeDef {
        id: id as u32,
        kind: ProbeKind::Execution,
        class: "java.lang.Runnable".into(),
        method: "run".into(),
        descriptor: "()V".into(),
    });
    jni.set_static_int_field(r.probe_class as jclass, field as jfieldID, id);
}

pub fn set_probe_on(jni: Jni, on: bool) {
    if let Some(r) = REFS.get() {
        jni.set_static_boolean_field(r.probe_class as jclass, r.on_field as jfieldID, on);
    }
}

/// (class id, identity) of an object: the identity is JVMTI GetObjectHashCode
/// (= System.identityHashCode), the id from [`class_id_of`]; no Java code runs
/// unless the class is new to native code.
pub fn class_and_ident(jni: Jni, o: jobject) -> (u32, u32) {
    if o.is_null() || REFS.get().is_none() {
        return (0, 0);
    }
    (class_id_of(jni, o), ident(jni, o))
}

/// Identity of an object (0 for null): JVMTI GetObjectHashCode
/// (= System.identityHashCode), through Probe.identOf without JVMTI.
pub fn ident(jni: Jni, o: jobject) -> u32 {
    let Some(r) = REFS.get() else { return 0 };
    if o.is_null() {
        return 0;
    }
    let i = match jvmti().map(|t| t.get_object_hash_code(o)) {
        Some(Ok(h)) => h,
        _ => jni
            .call_static_int_method1(r.probe_class as jclass, r.ident_of as jmethodID, o)
            .unwrap_or(0),
    };
    i as u32
}

/// Class id of an object (0 if unknown): from the native table of ids
/// (class_ids.rs), through Probe.classIdOf the first time a class is seen. Leaves a
/// local reference (the class) to the caller's frame.
pub fn class_id_of(jni: Jni, o: jobject) -> u32 {
    let Some(r) = REFS.get() else { return 0 };
    if o.is_null() {
        return 0;
    }
    let up_call = || {
        jni.call_static_int_method1(r.probe_class as jclass, r.class_id_of as jmethodID, o)
            .unwrap_or(0) as u32
    };
    match jvmti() {
        Some(t) => crate::class_ids::class_id(jni, t, o, up_call),
        None => up_call(),
    }
}

// ---------------------------------------------------------------- disable

/// Switches the agent off after an internal error: the program goes on unchanged.
pub fn disable(jni: Option<Jni>, reason: &str) {
    if DISABLED.swap(true, Ordering::SeqCst) {
        return;
    }
    sink::set_recording(false);
    let now = clock::now();
    sink::push_global_force(&Record::Loss {
        thread: GLOBAL_THREAD,
        from_ts: now,
        to_ts: now,
        records: 0,
        reason: LossReason::AgentDisabled,
    });
    let reason: String = reason.chars().filter(|c| *c != '\n').take(300).collect();
    eprintln!("weft: agent disabled: {reason}");
    if let Some(jni) = jni {
        set_probe_on(jni, false);
    }
}

/// Runs a callback body; a panic or an error disables the agent.
pub fn guard<R: Default>(jni: Option<Jni>, what: &str, f: impl FnOnce() -> Result<R, String>) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            disable(jni, &format!("{what}: {e}"));
            R::default()
        }
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            disable(jni, &format!("{what}: internal error: {msg}"));
            R::default()
        }
    }
}

// ---------------------------------------------------------------- probes

pub struct ProbeInfo {
    pub plumbing: Option<&'static PlumbingClass>,
    /// Resolved field path of a plumbing probe (jfieldIDs).
    fields: OnceLock<Option<Vec<usize>>>,
}

static PROBES: RwLock<Vec<Arc<ProbeInfo>>> = RwLock::new(Vec::new());

/// Allocates a probe id: bits 24..27 kind code, low 24 bits index.
pub fn new_probe(kind: ProbeKind, plumbing: Option<&'static PlumbingClass>) -> Option<i32> {
    new_probe_with_code(kind.code(), plumbing)
}

/// Dispatch code (bits 24..27 of a probe id, read by weft.Probe) of a parallel-loop
/// body: an execution recorded whatever the class implements (a plain execution is
/// recorded only for a Runnable, Callable or ForkJoinTask). Its ProbeDef kind is
/// Execution.
pub const LOOP_BODY_CODE: u8 = 9;

pub fn new_probe_with_code(code: u8, plumbing: Option<&'static PlumbingClass>) -> Option<i32> {
    let mut t = PROBES.write().unwrap_or_else(|e| e.into_inner());
    let index = t.len();
    if index >= 1 << 24 {
        return None;
    }
    t.push(Arc::new(ProbeInfo {
        plumbing,
        fields: OnceLock::new(),
    }));
    Some(((code as i32 & 0xF) << 24) | index as i32)
}

fn probe(id: i32) -> Option<Arc<ProbeInfo>> {
    let t = PROBES.read().unwrap_or_else(|e| e.into_inner());
    t.get((id & 0xFF_FFFF) as usize).cloned()
}

/// Plumbing classes by class id (filled when Probe registers a class), with
/// their resolved field paths (jfieldIDs; None when a field is missing).
#[derive(Default)]
struct PlumbingIds {
    classes: HashMap<u32, &'static PlumbingClass>,
    /// Shared, so that a look-up on the hot path copies no vector.
    fields: HashMap<u32, Option<Arc<[usize]>>>,
}
static PLUMBING_IDS: RwLock<Option<PlumbingIds>> = RwLock::new(None);

fn plumbing_of(class_id: u32) -> Option<&'static PlumbingClass> {
    let g = PLUMBING_IDS.read().unwrap_or_else(|e| e.into_inner());
    g.as_ref()?.classes.get(&class_id).copied()
}

/// Whether class `class_id` is plumbing with an inner task to unwrap.
pub fn wraps_task(class_id: u32) -> bool {
    plumbing_of(class_id).is_some_and(|pl| !pl.inner.is_empty())
}

/// Field path of plumbing class `class_id` for object `o` (resolved once per class).
fn plumbing_fields(
    jni: Jni,
    class_id: u32,
    pl: &PlumbingClass,
    o: jobject,
) -> Option<Arc<[usize]>> {
    {
        let g = PLUMBING_IDS.read().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = g.as_ref().and_then(|p| p.fields.get(&class_id)) {
            return f.clone();
        }
    }
    // Resolved outside the lock (JNI); a concurrent duplicate is harmless.
    let c = jni.get_object_class(o);
    let r: Option<Arc<[usize]>> = resolve_path(jni, c, pl.inner).map(Into::into);
    jni.delete_local_ref(c);
    let mut g = PLUMBING_IDS.write().unwrap_or_else(|e| e.into_inner());
    g.get_or_insert_with(PlumbingIds::default)
        .fields
        .insert(class_id, r.clone());
    r
}

/// How a plumbing object of a probe or a class is unwrapped one step, as this thread
/// last resolved it. Both facts are fixed once known (a class's plumbing is set when
/// it is registered, before its id is handed out; a probe's path resolves once), so
/// each thread keeps its own copy: the unwrap of every executor task and virtual
/// thread then takes no lock and touches no shared counter (the carriers starting
/// virtual threads together bounced the tables' lock words between their caches).
#[derive(Clone)]
enum Step {
    /// Nothing to unwrap (not plumbing, no inner task, or a field missing).
    None,
    /// A probe on a plumbing base class: unwrap by the object's runtime class.
    ByClass,
    /// Follow these jfieldIDs.
    Fields(Rc<[usize]>),
}

thread_local! {
    /// Unwrap steps by class id.
    static CLASS_STEPS: RefCell<HashMap<u32, Step>> = RefCell::new(HashMap::default());
    /// First unwrap steps by probe id.
    static PROBE_STEPS: RefCell<HashMap<i32, Step>> = RefCell::new(HashMap::default());
}

/// The step `cache` holds under `key`, else `resolve`'s, then kept (JNI runs outside
/// the borrow).
fn cached_step<K: std::hash::Hash + Eq + Copy>(
    cache: &'static std::thread::LocalKey<RefCell<HashMap<K, Step>>>,
    key: K,
    resolve: impl FnOnce() -> Step,
) -> Step {
    let hit = cache
        .try_with(|m| m.try_borrow().ok().and_then(|m| m.get(&key).cloned()))
        .ok()
        .flatten();
    if let Some(step) = hit {
        return step;
    }
    let step = resolve();
    let _ = cache.try_with(|m| {
        if let Ok(mut m) = m.try_borrow_mut() {
            m.insert(key, step.clone());
        }
    });
    step
}

/// The unwrap step from object `o` of class `class_id`.
fn class_step(jni: Jni, class_id: u32, o: jobject) -> Step {
    cached_step(&CLASS_STEPS, class_id, || {
        match plumbing_of(class_id).filter(|pl| !pl.inner.is_empty()) {
            Some(pl) => match plumbing_fields(jni, class_id, pl, o) {
                Some(f) => Step::Fields(Rc::from(&f[..])),
                None => Step::None,
            },
            None => Step::None,
        }
    })
}

/// The first unwrap step of plumbing probe `probe_id` from `self_`.
fn probe_step(jni: Jni, probe_id: i32, self_: jobject) -> Step {
    cached_step(&PROBE_STEPS, probe_id, || {
        let Some(p) = probe(probe_id) else {
            return Step::None;
        };
        let Some(pl) = p.plumbing else {
            return Step::None;
        };
        if pl.inner.is_empty() {
            return Step::ByClass;
        }
        let fields = p.fields.get_or_init(|| {
            let c = jni.get_object_class(self_);
            let r = resolve_path(jni, c, pl.inner);
            jni.delete_local_ref(c);
            r
        });
        match fields {
            Some(f) => Step::Fields(Rc::from(&f[..])),
            None => Step::None,
        }
    })
}

fn follow(jni: Jni, mut o: jobject, fields: &[usize]) -> jobject {
    for &f in fields {
        if o.is_null() {
            break;
        }
        o = jni.get_object_field(o, f as jfieldID);
    }
    o
}

/// Unwraps plumbing objects (a FutureTask's RunnableAdapter, …): the innermost
/// task and its class id, or (null, 0) if `o` (of class `class_id`) is not plumbing.
fn unwrap_with_class(jni: Jni, o: jobject, class_id: u32) -> (jobject, u32) {
    let mut cur = o;
    let mut cls = class_id;
    let mut unwrapped = false;
    for _ in 0..4 {
        if cur.is_null() {
            break;
        }
        let Step::Fields(fields) = class_step(jni, cls, cur) else {
            break;
        };
        let next = follow(jni, cur, &fields);
        if next.is_null() {
            break;
        }
        cur = next;
        unwrapped = true;
        cls = class_id_of(jni, cur);
    }
    if unwrapped {
        (cur, cls)
    } else {
        (std::ptr::null_mut(), 0)
    }
}

/// One unwrap step for `weft.Probe` (which looks the classes up in its own table and
/// loops): the object plumbing probe `probe_id`'s first step reaches from `self_`;
/// `self_` itself when the probe's class holds its task in subclasses (unwrap by
/// the runtime class); null when there is none.
pub fn first_step(jni: Jni, probe_id: i32, self_: jobject) -> jobject {
    if self_.is_null() {
        return std::ptr::null_mut();
    }
    match probe_step(jni, probe_id, self_) {
        Step::None => std::ptr::null_mut(),
        Step::ByClass => self_,
        Step::Fields(f) => follow(jni, self_, &f),
    }
}

/// One unwrap step for `weft.Probe`: the object plumbing object `o` of class
/// `class_id` holds (null if none).
pub fn step(jni: Jni, o: jobject, class_id: u32) -> jobject {
    if o.is_null() {
        return std::ptr::null_mut();
    }
    match class_step(jni, class_id, o) {
        Step::Fields(f) => follow(jni, o, &f),
        _ => std::ptr::null_mut(),
    }
}

/// The inner task of a plumbing execution (null if none) with its class id (0 with a
/// null task): the unwrap looked it up already (the virtual-thread start hook records it).
pub fn inner_with_class(jni: Jni, probe_id: i32, self_: jobject) -> (jobject, u32) {
    let none = (std::ptr::null_mut(), 0);
    if self_.is_null() {
        return none;
    }
    let fields = match probe_step(jni, probe_id, self_) {
        Step::None => return none,
        Step::ByClass => {
            // A plumbing base class whose subclasses hold the task (JDK 25's
            // ForkJoinTask$InterruptibleTask, plumbing.rs): unwrap by the runtime
            // class; null for classes without an inner task (ThreadPoolExecutor$Worker).
            let cls = class_id_of(jni, self_);
            return unwrap_with_class(jni, self_, cls);
        }
        Step::Fields(f) => f,
    };
    let first = follow(jni, self_, &fields);
    if first.is_null() {
        return none;
    }
    let cls = class_id_of(jni, first);
    let deeper = unwrap_with_class(jni, first, cls);
    if deeper.0.is_null() {
        (first, cls)
    } else {
        deeper
    }
}

// ---------------------------------------------------------------- classes

static NEXT_CLASS: AtomicU32 = AtomicU32::new(1);

pub fn register_class(jni: Jni, c: jclass, name: &str, hidden: bool, host: jobject) -> u32 {
    let id = NEXT_CLASS.fetch_add(1, Ordering::Relaxed);
    let readable = match (hidden, jvmti()) {
        (true, Some(t)) => crate::lambda::lambda_name(t, jni, c, name, host),
        (true, None) => crate::lambda::strip_hidden_suffix(name),
        _ => name.to_string(),
    };
    if !hidden {
        if let Some(pl) = plumbing::find_dotted(JDK_MAJOR.load(Ordering::Relaxed), name) {
            let mut g = PLUMBING_IDS.write().unwrap_or_else(|e| e.into_inner());
            g.get_or_insert_with(PlumbingIds::default)
                .classes
                .insert(id, pl);
        }
    }
    crate::vthreads::class_registered(&readable, id);
    if sink::SESSION.load(Ordering::Relaxed) != 0 {
        // An attach session: the next session's trace needs the definition again
        // (Probe keeps the id of a class for good).
        lock(&CLASS_NAMES).push((id, readable.clone()));
    }
    sink::emit_global(&Record::ClassDef { id, name: readable });
    id
}

/// Classes registered during attach sessions (id, name).
static CLASS_NAMES: Mutex<Vec<(u32, String)>> = Mutex::new(Vec::new());

/// Writes the definitions of the classes earlier attach sessions registered.
pub fn emit_known_classes() {
    let known = lock(&CLASS_NAMES).clone();
    for (id, name) in known {
        sink::emit_global(&Record::ClassDef { id, name });
    }
}

/// A new attach session writes a new trace: its sites are defined and numbered anew.
pub fn new_session() {
    *lock(&SITES) = None;
    for c in SITE_COUNTS.iter().flatten() {
        c.store(0, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------- threads

/// `Thread.getId()` of a thread (0 if it cannot be called).
pub fn java_thread_id(jni: Jni, thread: jobject) -> u64 {
    REFS.get()
        .and_then(|r| r.thread_get_id)
        .and_then(|m| jni.call_long_method0(thread, m as jmethodID))
        .unwrap_or(0) as u64
}

pub fn thread_start_record(jvmti: Jvmti, jni: Jni, thread: jobject) -> Record {
    let (name, daemon) = jvmti.get_thread_info(thread).unwrap_or_default();
    let refs = REFS.get();
    let java_id = java_thread_id(jni, thread);
    let (class_id, ident) = class_and_ident(jni, thread);
    let (target_class_id, target_ident) = match refs {
        Some(r) if !r.thread_target.is_empty() => {
            let t = follow(jni, thread, &r.thread_target);
            let ids = class_and_ident(jni, t);
            jni.delete_local_ref(t);
            ids
        }
        _ => (0, 0),
    };
    Record::ThreadStart {
        ts: clock::now(),
        name: name.into(),
        java_id,
        // SAFETY: gettid has no preconditions.
        os_tid: unsafe { libc::gettid() } as u32,
        daemon,
        class_id,
        target_class_id,
        target_ident,
        ident,
    }
}

/// This thread's CPU time and context switches so far (at its ThreadStart record).
pub fn thread_usage() -> (u64, u64, u64) {
    let (_, vcs, ics) = sink::rusage(libc::RUSAGE_THREAD);
    (clock::thread_cpu_ns(), vcs, ics)
}

/// The ThreadEnd record: usage since the thread's ThreadStart record.
pub fn thread_end_record() -> Record {
    let (cpu, vcs, ics) = thread_usage();
    let (c0, v0, i0) = sink::with_local(|l| l.usage_at_start).unwrap_or((0, 0, 0));
    Record::ThreadEnd {
        ts: clock::now(),
        cpu_ns: cpu.saturating_sub(c0),
        voluntary_cs: vcs.saturating_sub(v0),
        involuntary_cs: ics.saturating_sub(i0),
    }
}

// ---------------------------------------------------------------- sites

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum SiteKind {
    Submit = 1,
    Created = 2,
    Fork = 3,
    /// A `Thread.start()` (thread_starts.rs): the site is its caller.
    ThreadStart = 4,
}

#[derive(Default)]
struct Sites {
    counts: HashMap<(u8, u32), u64>,
    frames: HashMap<(usize, i64), Arc<str>>,
    ids: HashMap<Vec<Arc<str>>, u32>,
}

static SITES: Mutex<Option<Sites>> = Mutex::new(None);

/// Class ids below this count their sampled sites in [`SITE_COUNTS`].
const COUNTED_CLASSES: usize = 1 << 14;
/// How many sites of (kind, class id) were asked for, by kind then class id: the
/// decision "not this one" (all but 16 + 1 in 512) takes no lock. Per executor task
/// the submitter asked twice (created, submitted), each time under the sites' lock.
/// Counted without a locked instruction ([`capture_site`]): approximate when threads
/// race on one class.
static SITE_COUNTS: [[AtomicU64; COUNTED_CLASSES]; 3] =
    [const { [const { AtomicU64::new(0) }; COUNTED_CLASSES] }; 3];

fn site_count(kind: SiteKind, class_id: u32) -> Option<&'static AtomicU64> {
    SITE_COUNTS.get(kind as usize - 1)?.get(class_id as usize)
}

fn with_sites<R>(f: impl FnOnce(&mut Sites) -> R) -> R {
    let mut g = lock(&SITES);
    f(g.get_or_insert_with(Sites::default))
}

/// A frame's string (`pkg.Class.method:line`), formatted once per (method, location).
fn cached_frame(jvmti: Jvmti, jni: Jni, f: &crate::jvmti::FrameInfo) -> Arc<str> {
    let key = (f.method as usize, f.location);
    if let Some(s) = with_sites(|s| s.frames.get(&key).cloned()) {
        return s;
    }
    let s: Arc<str> = frame_string(jvmti, jni, f.method, f.location).into();
    with_sites(|st| st.frames.insert(key, s.clone()));
    s
}

/// The id of a site (its frames, innermost first); a new one is defined in the trace.
fn intern_site(frames: Vec<Arc<str>>) -> u32 {
    let (id, new) = with_sites(|s| {
        let next = s.ids.len() as u32 + 1;
        match s.ids.get(&frames) {
            Some(&id) => (id, false),
            None => {
                s.ids.insert(frames.clone(), next);
                (next, true)
            }
        }
    });
    if new {
        sink::emit_global(&Record::SiteDef {
            id,
            frames: frames.iter().map(|s| s.to_string()).collect(),
        });
    }
    id
}

/// Frames kept per site.
const SITE_FRAMES: usize = 4;

/// Frames of an object made by reflection, left out of its creation site.
const REFLECTION_FRAMES: &[&str] = &[
    "jdk.internal.reflect.",
    "java.lang.reflect.Constructor.",
    "java.lang.Class.newInstance",
    // JDK 21+: reflection through method handles (`DirectMethodHandle$Holder`,
    // `Invokers$Holder`, `LambdaForm$MH`).
    "java.lang.invoke.",
];

/// Frames between a thread's start and the code that asked for it, left out of its site.
const THREAD_START_PLUMBING: &[&str] = &["java.lang.System$", "jdk.internal.vm."];

/// The index of the first frame from `i` on whose string starts with none of `prefixes`.
fn skip_frames(
    jvmti: Jvmti,
    jni: Jni,
    frames: &[crate::jvmti::FrameInfo],
    mut i: usize,
    prefixes: &[&str],
) -> usize {
    while i < frames.len() && {
        let s = cached_frame(jvmti, jni, &frames[i]);
        prefixes.iter().any(|p| s.starts_with(p))
    } {
        i += 1;
    }
    i
}

fn frame_string(jvmti: Jvmti, jni: Jni, m: jmethodID, bci: i64) -> String {
    let (name, _) = jvmti.get_method_name(m).unwrap_or_default();
    let class = match jvmti.get_method_declaring_class(m) {
        Ok(c) => {
            let s = jvmti.get_class_signature(c).unwrap_or_default();
            jni.delete_local_ref(c);
            crate::lambda::sig_to_name(&s)
        }
        Err(_) => "?".into(),
    };
    let line = jvmti
        .get_line_number_table(m)
        .ok()
        .and_then(|t| {
            t.iter()
                .filter(|e| e.0 <= bci)
                .max_by_key(|e| e.0)
                .map(|e| e.1)
        })
        .unwrap_or(0);
    format!("{class}.{name}:{line}")
}

/// Captures the caller's site (sampled: the first 16 per kind and class, then 1 in 512:
/// a capture costs microseconds, and is charged to the enclosing task).
/// `obj` is the created object for `Created` (its constructor chain is skipped).
pub fn capture_site(jni: Jni, kind: SiteKind, class_id: u32, obj: jobject) -> u32 {
    let Some(jvmti) = jvmti() else { return 0 };
    let Some(refs) = REFS.get() else { return 0 };
    let n = match site_count(kind, class_id) {
        // A load and a store, not a fetch_add: its locked instruction (a full fence,
        // ~12 ns here) was a tenth of the natives' cost per executor task. Two threads
        // counting one class together may lose a count: a site is then sampled a
        // little later, or twice; one submitting thread (most programs) counts exactly.
        Some(c) => {
            let n = c.load(Ordering::Relaxed) + 1;
            c.store(n, Ordering::Relaxed);
            n
        }
        None => with_sites(|s| {
            let n = s.counts.entry((kind as u8, class_id)).or_insert(0);
            *n += 1;
            *n
        }),
    };
    if !(n <= 16 || n % 512 == 0) {
        return 0;
    }
    let Ok(frames) = jvmti.get_stack_trace_current(SITE_FRAMES + 12) else {
        return 0;
    };
    let mut i = 0;
    while i < frames.len() && refs.probe_methods.contains(&(frames[i].method as usize)) {
        i += 1;
    }
    match kind {
        // the instrumented method itself
        SiteKind::Submit | SiteKind::Fork => i += 1,
        SiteKind::ThreadStart => {
            // JDK 21+ starts a pool's threads through `Thread.start(ThreadContainer)`,
            // called by `JavaLangAccess.start` (`java.lang.System$2`) from a thread
            // container (`jdk.internal.vm.SharedThreadContainer.start`): the site is
            // their caller (`ThreadPoolExecutor.addWorker`), as on 17.
            i = skip_frames(jvmti, jni, &frames, i + 1, THREAD_START_PLUMBING);
        }
        SiteKind::Created => {
            let oc = if obj.is_null() {
                std::ptr::null_mut()
            } else {
                jni.get_object_class(obj)
            };
            while i < frames.len() {
                let m = frames[i].method;
                let is_init = jvmti
                    .get_method_name(m)
                    .map(|(n, _)| n == "<init>")
                    .unwrap_or(false);
                if !is_init {
                    break;
                }
                let own = match jvmti.get_method_declaring_class(m) {
                    Ok(dc) => {
                        let r = !oc.is_null() && jni.is_assignable_from(oc, dc);
                        jni.delete_local_ref(dc);
                        r
                    }
                    Err(_) => false,
                };
                if !own {
                    break;
                }
                i += 1;
            }
            jni.delete_local_ref(oc);
            // Made by reflection (`Constructor.newInstance`: a plugin, a framework's
            // bean): the site is the code that asked, not the JDK's accessors (it read
            // "created at jdk.internal.reflect.NativeConstructorAccessorImpl.newInstance0").
            i = skip_frames(jvmti, jni, &frames, i, REFLECTION_FRAMES);
        }
    }
    let keep: Vec<_> = frames.iter().skip(i).take(SITE_FRAMES).collect();
    if keep.is_empty() {
        return 0;
    }
    let mut out: Vec<Arc<str>> = Vec::with_capacity(keep.len());
    for f in keep {
        let s = cached_frame(jvmti, jni, f);
        out.push(s);
    }
    intern_site(out)
}

/// A site id for explicit frames (lock contention sites, docs/locks.md): leading
/// frames whose string starts with one of `skip` are dropped, then `keep` are kept.
pub fn site_for_frames(
    jvmti: Jvmti,
    jni: Jni,
    frames: &[crate::jvmti::FrameInfo],
    skip: &[&str],
    keep: usize,
) -> u32 {
    let mut out: Vec<Arc<str>> = Vec::with_capacity(keep);
    for f in frames {
        let s = cached_frame(jvmti, jni, f);
        if out.is_empty() && skip.iter().any(|p| s.starts_with(p)) {
            continue;
        }
        out.push(s);
        if out.len() >= keep {
            break;
        }
    }
    if out.is_empty() {
        return 0;
    }
    intern_site(out)
}
