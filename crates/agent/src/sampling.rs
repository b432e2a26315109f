//! The sampling engine (docs/sampling.md): CPU and wall-clock stack samples of
//! every Java thread, with Java frames from AsyncGetCallTrace.
//!
//! - CPU: each Java thread gets a perf_event cpu-clock timer on its own CPU time
//!   that sends it SIGPROF; the handler walks its stack and re-arms the timer with
//!   a period drawn around the configured one (no aliasing with periodic programs).
//! - Wall: the `weft-sampler` thread reads each thread's OS state from /proc and
//!   sends it SIGVTALRM; the same handler walks the stack.
//! - The handler only fills a preallocated ring (sampling_signal.rs); the sampler
//!   thread drains it, interns frames and stacks, and writes `StackSample`
//!   records; method, class and line are resolved at the end (`FrameDef`,
//!   `StackDef`), on a JVM thread, never in the handler.
//!
//! Not here: what a sample means for tasks and locks (crates/analysis/src/profile.rs
//! ties samples to the thread's executions and lock waits by time).

use rustc_hash::FxHashMap as HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use weft_trace::{frame_kind, Header, LossReason, Record, GLOBAL_THREAD};

use crate::jni::{jclass, jmethodID, jobject, JNIEnv, Jni};
use crate::jvmti::{self, Callbacks, Jvmti, JvmtiEnvRaw};
use crate::sampling_signal as sig;
use crate::sink;

/// Sampling periods (0: that mode is off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleOptions {
    pub cpu_ns: u64,
    pub wall_ns: u64,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            cpu_ns: 10_000_000,
            wall_ns: 50_000_000,
        }
    }
}

/// Whether an agent option key belongs to this engine (options.rs skips them).
pub fn is_option(key: &str) -> bool {
    matches!(
        key,
        "cpusample" | "wallsample" | "nosample" | "samplefault" | "norecover"
    )
}

fn parse_period(key: &str, v: &str) -> Result<u64, String> {
    if v == "off" || v == "0" {
        return Ok(0);
    }
    let (num, mult) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1_000_000u64)
    } else if let Some(n) = v.strip_suffix("us") {
        (n, 1_000)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1_000_000_000)
    } else {
        (v, 1_000_000)
    };
    let ns = num
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("bad {key} '{v}' (expected e.g. 10ms, 500us or off)"))?;
    if !(100_000..=10_000_000_000).contains(&ns) {
        return Err(format!("{key} '{v}' out of range (100us..10s)"));
    }
    Ok(ns)
}

/// Parses this engine's keys from the agent option string: `cpusample=10ms`,
/// `wallsample=50ms` (`off` switches a mode off), `nosample` (both off).
pub fn parse_options(s: Option<&str>) -> Result<SampleOptions, String> {
    let mut o = SampleOptions::default();
    for item in s.unwrap_or("").split(',').map(str::trim) {
        let (k, v) = item.split_once('=').unwrap_or((item, ""));
        match k {
            "cpusample" => o.cpu_ns = parse_period(k, v)?,
            "wallsample" => o.wall_ns = parse_period(k, v)?,
            "nosample" => {
                o = SampleOptions {
                    cpu_ns: 0,
                    wall_ns: 0,
                }
            }
            "samplefault" => sig::FAULT_TEST.store(true, Ordering::Relaxed),
            // Failed walks of compiled prologues/epilogues stay failed (for A/B).
            "norecover" => sig::RECOVER.store(false, Ordering::Relaxed),
            _ => {}
        }
    }
    Ok(o)
}

static OPTIONS: OnceLock<SampleOptions> = OnceLock::new();
/// The engine was set up (OnLoad) and not switched off.
static ENABLED: AtomicBool = AtomicBool::new(false);
static STOP: Mutex<Option<(Sender<()>, std::thread::JoinHandle<()>)>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Switches sampling off for the rest of the run, with one message.
fn switch_off(why: &str) {
    sig::ACTIVE.store(false, Ordering::SeqCst);
    if ENABLED.swap(false, Ordering::SeqCst) {
        eprintln!("weft: sampling off: {why}; the rest of the recording goes on");
    }
}

// ---------------------------------------------------------------- OnLoad

/// Sets the engine up at OnLoad: capabilities, the class events that make
/// AsyncGetCallTrace work, the signal handler and the ring. Nothing happens
/// until VMInit ([`start`]).
pub fn setup(jvmti: Jvmti, cb: &mut Callbacks, opt_str: Option<&str>) {
    ONLOAD_NS.store(crate::clock::mono_ns(), Ordering::Relaxed);
    let opts = parse_options(opt_str).unwrap_or_default();
    let _ = OPTIONS.set(opts);
    let exp = std::env::var("WEFT_SAMPLE_EXP").unwrap_or_default();
    let has = |k: &str| exp.split(',').any(|x| x == k);
    if has("stats") {
        sig::STATS_ON.store(true, Ordering::Relaxed);
    }
    if has("cmlonly") {
        let _ = jvmti.add_capabilities(&[jvmti::CAP_COMPILED_METHOD_LOAD]);
        cb.set(
            jvmti::EVENT_COMPILED_METHOD_LOAD,
            on_compiled_method_load as *const c_void,
        );
        if !has("capsonly") {
            let _ = jvmti.enable_event(jvmti::EVENT_COMPILED_METHOD_LOAD);
        }
        return;
    }
    if opts.cpu_ns == 0 && opts.wall_ns == 0 {
        return;
    }
    if !sig::resolve_agct() {
        eprintln!("weft: sampling off: AsyncGetCallTrace not found in libjvm.so");
        return;
    }
    // Compiled-method events make the JIT keep debug info at every PC
    // (as -XX:+DebugNonSafepoints), so compiled frames walk with their inlined methods.
    if !has("nocml") {
        let _ = jvmti.add_capabilities(&[jvmti::CAP_COMPILED_METHOD_LOAD]);
    }
    cb.set(jvmti::EVENT_CLASS_LOAD, on_class_load as *const c_void);
    cb.set(
        jvmti::EVENT_CLASS_PREPARE,
        on_class_prepare as *const c_void,
    );
    cb.set(
        jvmti::EVENT_COMPILED_METHOD_LOAD,
        on_compiled_method_load as *const c_void,
    );
    cb.set(
        jvmti::EVENT_DYNAMIC_CODE_GENERATED,
        on_dynamic_code_generated as *const c_void,
    );
    cb.set(
        jvmti::EVENT_COMPILED_METHOD_UNLOAD,
        on_compiled_method_unload as *const c_void,
    );
    // AsyncGetCallTrace refuses to walk unless ClassLoad is enabled.
    if jvmti.enable_event(jvmti::EVENT_CLASS_LOAD).is_err()
        || jvmti.enable_event(jvmti::EVENT_CLASS_PREPARE).is_err()
    {
        eprintln!("weft: sampling off: cannot enable class events");
        return;
    }
    if !has("nocml") {
        let _ = jvmti.enable_event(jvmti::EVENT_COMPILED_METHOD_LOAD);
        let _ = jvmti.enable_event(jvmti::EVENT_COMPILED_METHOD_UNLOAD);
        let _ = jvmti.enable_event(jvmti::EVENT_DYNAMIC_CODE_GENERATED);
    }
    sig::init_ring(opts.cpu_ns);
    if !sig::install_handler() {
        eprintln!("weft: sampling off: cannot install the signal handler");
        return;
    }
    sig::set_periods(opts.cpu_ns, opts.wall_ns);
    ENABLED.store(true, Ordering::SeqCst);
}

/// Header facts of the sampler (at VMInit).
pub fn header(h: &mut Header) {
    let o = OPTIONS.get().copied().unwrap_or_default();
    let on = ENABLED.load(Ordering::Relaxed);
    h.set(
        "sampling.cpu_period_ns",
        if on { o.cpu_ns } else { 0 }.to_string(),
    );
    h.set(
        "sampling.wall_period_ns",
        if on { o.wall_ns } else { 0 }.to_string(),
    );
}

unsafe extern "system" fn on_class_load(
    _t: *mut JvmtiEnvRaw,
    _env: *mut JNIEnv,
    _thread: jobject,
    _class: jclass,
) {
}

/// Where the method's code lies: the handler names the top frame of a walk
/// that failed in a prologue or epilogue by it (compiled_code.rs).
unsafe extern "system" fn on_compiled_method_load(
    _t: *mut JvmtiEnvRaw,
    method: jmethodID,
    size: i32,
    addr: *const c_void,
    _map_len: i32,
    _map: *const c_void,
    _info: *const c_void,
) {
    let size = usize::try_from(size).unwrap_or(0);
    let t0 = crate::clock::now();
    let _ = std::panic::catch_unwind(|| {
        crate::compiled_code::loaded(method as usize, addr as usize, size)
    });
    CODE_EVENTS[0].fetch_add(1, Ordering::Relaxed);
    CODE_EVENTS[1].fetch_add(crate::clock::now() - t0, Ordering::Relaxed);
}

/// Where the JVM's stubs lie (arraycopy and the like): a walk that failed in
/// one is taken again from the compiled method that called it (compiled_code.rs).
unsafe extern "system" fn on_dynamic_code_generated(
    _t: *mut JvmtiEnvRaw,
    _name: *const std::ffi::c_char,
    addr: *const c_void,
    len: i32,
) {
    let len = usize::try_from(len).unwrap_or(0);
    let _ = std::panic::catch_unwind(|| crate::compiled_code::stub_generated(addr as usize, len));
}

unsafe extern "system" fn on_compiled_method_unload(
    _t: *mut JvmtiEnvRaw,
    method: jmethodID,
    addr: *const c_void,
) {
    let t0 = crate::clock::now();
    let _ =
        std::panic::catch_unwind(|| crate::compiled_code::unloaded(method as usize, addr as usize));
    CODE_EVENTS[2].fetch_add(1, Ordering::Relaxed);
    CODE_EVENTS[3].fetch_add(crate::clock::now() - t0, Ordering::Relaxed);
}

/// Creates the class's jmethodIDs now: AsyncGetCallTrace only reports methods
/// that have one, and cannot create one inside a signal handler.
unsafe extern "system" fn on_class_prepare(
    _t: *mut JvmtiEnvRaw,
    env: *mut JNIEnv,
    _thread: jobject,
    class: jclass,
) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let t0 = crate::clock::now();
    let r = std::panic::catch_unwind(|| {
        if let Some(t) = crate::agent::jvmti() {
            let methods = t.get_class_methods(class).unwrap_or_default();
            let t1 = crate::clock::now();
            PREP[2].fetch_add(t1 - t0, Ordering::Relaxed);
            PREP[3].fetch_add(methods.len() as u64, Ordering::Relaxed);
            // SAFETY: the JNIEnv of this callback's thread (or null).
            if let Some(jni) = unsafe { Jni::from_raw(env) } {
                if !methods.is_empty() && may_be_unloaded(t, jni, class) {
                    resolve_now(t, jni, &methods);
                }
            }
        }
    });
    PREP[0].fetch_add(1, Ordering::Relaxed);
    PREP[1].fetch_add(crate::clock::now() - t0, Ordering::Relaxed);
    if r.is_err() {
        switch_off("internal error in ClassPrepare");
    }
}

/// Whether a class may be unloaded before the end (when its jmethodIDs stop
/// resolving): a class of a loader other than the boot, platform and
/// application loaders, or a hidden class that is not a lambda (lambdas live as
/// long as their host's loader; other hidden classes, such as the JDK's
/// LambdaForms, may go on their own).
fn may_be_unloaded(jvmti: Jvmti, jni: Jni, class: jclass) -> bool {
    let sig = jvmti.get_class_signature(class).unwrap_or_default();
    let hidden = sig.contains("/0x") || sig.contains(".0x") || sig.contains("+0x");
    if hidden {
        return !sig.contains("$$Lambda");
    }
    let Ok(loader) = jvmti.get_class_loader(class) else {
        return false;
    };
    if loader.is_null() {
        return false; // the boot loader never unloads
    }
    let lc = jni.get_object_class(loader);
    let loader_sig = jvmti.get_class_signature(lc).unwrap_or_default();
    jni.delete_local_ref(lc);
    jni.delete_local_ref(loader);
    !matches!(
        loader_sig.as_str(),
        "Ljdk/internal/loader/ClassLoaders$AppClassLoader;"
            | "Ljdk/internal/loader/ClassLoaders$PlatformClassLoader;"
    )
}

/// Names of methods of classes that may be unloaded, resolved when the class
/// was prepared: at the end their jmethodIDs may no longer resolve (the
/// ClassUnload extension event only comes after the class is gone, with its name).
static EARLY_NAMES: Mutex<Option<HashMap<usize, MethodInfo>>> = Mutex::new(None);

fn resolve_now(jvmti: Jvmti, jni: Jni, methods: &[jmethodID]) {
    let mut names = Names::new(jvmti, jni);
    names.early = true;
    let resolved: Vec<(usize, MethodInfo)> = methods
        .iter()
        .filter_map(|&m| Some((m as usize, names.resolve(m)?)))
        .collect();
    lock(&EARLY_NAMES)
        .get_or_insert_with(HashMap::default)
        .extend(resolved);
}

// ---------------------------------------------------------------- VMInit, threads

/// Starts sampling at VMInit: method ids of the classes loaded so far, the
/// current thread, and the sampler thread.
pub fn start(jvmti: Jvmti, jni: Jni, env: *mut JNIEnv) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let t0 = Instant::now();
    start_inner(jvmti, jni, env);
    if sig::STATS_ON.load(Ordering::Relaxed) {
        eprintln!("weft-stats: start {:?}", t0.elapsed());
    }
}

fn start_inner(jvmti: Jvmti, jni: Jni, env: *mut JNIEnv) {
    if jni.push_local_frame(LOCAL_REFS) {
        if let Ok(classes) = jvmti.get_loaded_classes() {
            for c in classes {
                let _ = jvmti.get_class_methods(c);
            }
        }
        jni.pop_local_frame();
    }
    // After the JVM's handlers (installed before VMInit): every fault that is
    // not in a walk goes on to them. Under -Xcheck:jni the JVM checks that its
    // SIGSEGV handler is still in place and prints a warning on stdout: the
    // program's output would change, so the walk runs unprotected there.
    if checks_jni() {
        // Unprotected, only the JVM's own walk runs: the second walk, from a
        // caller frame the agent rebuilt, is taken only where a fault in it
        // would be caught.
        sig::RECOVER.store(false, Ordering::Relaxed);
    } else if !sig::install_fault_handler() {
        switch_off("cannot install the crash protection of the stack walker");
        return;
    }
    if let Some(vm) = jni.java_vm() {
        sig::set_vm(vm);
    }
    sig::ACTIVE.store(true, Ordering::SeqCst);
    thread_start(env);
    // Before the sampler thread exists: until it has named itself, the kernel
    // shows it as `java`, the name the Java main thread is matched by.
    arm_existing_threads(jvmti, jni);
    let (tx, rx) = channel::<()>();
    let (ready, started) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("weft-sampler".into())
        .spawn(move || {
            sink::note_agent_thread();
            let _ = ready.send(());
            sampler_main(rx)
        });
    match spawned {
        Ok(h) => {
            *lock(&STOP) = Some((tx, h));
            let _ = started.recv_timeout(Duration::from_secs(1));
        }
        Err(e) => {
            switch_off(&format!("cannot start the sampler thread: {e}"));
            sig::close_all();
        }
    }
}

/// Records and arms the Java threads that started before the agent's hooks (at
/// VMInit: the JVM's Reference Handler, Finalizer, Signal Dispatcher, ...; after
/// a late attach: every thread), which get no ThreadStart. JVMTI lists them
/// without their OS ids; the kernel lists the OS ids with the names HotSpot gave
/// them (the Java name cut to 15 bytes; the launcher's main thread keeps the
/// process name `java`). A thread is armed when its cut name is unique on both
/// sides; the others (same names) are counted in `unmatched` and left unsampled.
/// Returns (armed, unmatched).
pub fn arm_existing_threads(jvmti: Jvmti, jni: Jni) -> (usize, usize) {
    if !ENABLED.load(Ordering::Relaxed) || !jni.push_local_frame(LOCAL_REFS) {
        return (0, 0);
    }
    let mut by_name: HashMap<Vec<u8>, Vec<jobject>> = HashMap::default();
    for t in jvmti.get_all_threads().unwrap_or_default() {
        if let Ok((name, _)) = jvmti.get_thread_info(t) {
            let os_name = if name == "main" {
                b"java".to_vec()
            } else {
                name.as_bytes()[..name.len().min(15)].to_vec()
            };
            by_name.entry(os_name).or_default().push(t);
        }
    }
    let pid = std::process::id();
    let mut by_comm: HashMap<Vec<u8>, Vec<u32>> = HashMap::default();
    for tid in task_ids() {
        if tid == pid || sig::is_registered(tid) || sink::is_agent_thread(tid) {
            // The launcher's primordial thread and the agent's threads run no
            // Java code (a signal handler must never call into the JVM on them:
            // the JVM's thread-local storage would be allocated there, in a
            // signal handler, and malloc could deadlock).
            continue;
        }
        if let Ok(mut comm) = std::fs::read(format!("/proc/self/task/{tid}/comm")) {
            if comm.last() == Some(&b'\n') {
                comm.pop();
            }
            by_comm.entry(comm).or_default().push(tid);
        }
    }
    let (mut armed, mut unmatched) = (0, 0);
    for (comm, tids) in &by_comm {
        let Some(threads) = by_name.get(comm) else {
            continue; // not a Java thread JVMTI shows (GC, compiler, agent threads)
        };
        if tids.len() != 1 || threads.len() != 1 {
            unmatched += tids.len();
            continue;
        }
        let (name, daemon) = jvmti.get_thread_info(threads[0]).unwrap_or_default();
        let start = Record::ThreadSeen {
            ts: crate::clock::now(),
            name: name.into(),
            java_id: crate::agent::java_thread_id(jni, threads[0]),
            os_tid: tids[0],
            daemon,
        };
        if let Some(index) = sink::record_foreign_thread(tids[0], &start) {
            if sig::register_other(tids[0], index, sig::cpu_period_ns()) {
                armed += 1;
            }
        }
    }
    jni.pop_local_frame();
    (armed, unmatched)
}

/// The OS ids of this process's threads.
fn task_ids() -> Vec<u32> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the JVM runs with -Xcheck:jni (its command line or the option
/// variables every JVM reads).
fn checks_jni() -> bool {
    let cmdline = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    let in_args = cmdline.split(|&b| b == 0).any(|a| a == b"-Xcheck:jni");
    in_args
        || ["JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"]
            .iter()
            .filter_map(std::env::var_os)
            .any(|v| {
                v.to_string_lossy()
                    .split_whitespace()
                    .any(|a| a == "-Xcheck:jni")
            })
}

/// Local references a JVMTI call may hand back at once (every loaded class);
/// HotSpot refuses more than -XX:MaxJNILocalCapacity (65,536 by default).
const LOCAL_REFS: i32 = 65_536;

/// Registers the current Java thread (ThreadStart, and the VMInit thread).
pub fn thread_start(env: *mut JNIEnv) {
    if !ENABLED.load(Ordering::Relaxed) || env.is_null() {
        return;
    }
    let Some(index) = sink::local_index() else {
        return;
    };
    if !sig::register(env as *mut c_void, index, sig::cpu_period_ns()) {
        sig::DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

/// Unregisters the current thread (ThreadEnd): its JNIEnv is about to go.
pub fn thread_end() {
    if ENABLED.load(Ordering::Relaxed) {
        sig::unregister();
    }
}

// ---------------------------------------------------------------- sampler thread

/// Frames and stacks seen so far (the sampler thread; the end resolves them).
#[derive(Default)]
struct Interner {
    /// (jmethodID, bci, kind) -> frame id; for broken walks (0, error code, BROKEN).
    frames: HashMap<(usize, i32, u8), u32>,
    stacks: HashMap<Vec<u32>, u32>,
    /// Stack of each thread's last wall sample (by trace thread index).
    last_wall: HashMap<u32, u32>,
    samples: u64,
    scratch: Vec<u32>,
}

static INTERNER: Mutex<Option<Interner>> = Mutex::new(None);

impl Interner {
    fn frame(&mut self, key: (usize, i32, u8)) -> u32 {
        let next = self.frames.len() as u32 + 1;
        *self.frames.entry(key).or_insert(next)
    }

    fn add(&mut self, e: &sig::Entry) {
        self.scratch.clear();
        if e.num_frames <= 0 {
            // 0 and -3: the thread was not in Java code (no frame to walk).
            let kind = if matches!(e.num_frames, 0 | -3) {
                frame_kind::NO_JAVA
            } else {
                frame_kind::BROKEN
            };
            let f = self.frame((0, e.num_frames, kind));
            self.scratch.push(f);
        } else {
            let n = (e.num_frames as usize).min(sig::MAX_FRAMES);
            for f in &e.frames[..n] {
                let kind = if f.lineno == -3 {
                    frame_kind::NATIVE
                } else {
                    frame_kind::JAVA
                };
                let id = self.frame((f.method as usize, f.lineno.max(-1), kind));
                self.scratch.push(id);
            }
        }
        let next = self.stacks.len() as u32 + 1;
        let stack = match self.stacks.get(&self.scratch) {
            Some(&id) => id,
            None => {
                self.stacks.insert(self.scratch.clone(), next);
                next
            }
        };
        self.samples += 1;
        if e.mode_state & 0xF == weft_trace::sample_mode::WALL {
            self.last_wall.insert(e.thread, stack);
        }
        emit(&Record::StackSample {
            ts: e.ts,
            thread: e.thread,
            stack,
            mode_state: e.mode_state,
        });
    }
}

fn drain_once() {
    let t0 = crate::clock::now();
    crate::compiled_code::publish_if_dirty();
    let t1 = crate::clock::now();
    let mut g = lock(&INTERNER);
    let it = g.get_or_insert_with(Interner::default);
    sig::drain(|e| it.add(e));
    SAMPLER_T[6].fetch_add(t1 - t0, Ordering::Relaxed);
    SAMPLER_T[7].fetch_add(crate::clock::now() - t1, Ordering::Relaxed);
}

/// OS state of a thread from /proc (R running, D uninterruptible: I/O, else sleeping).
/// (Read into a buffer on the stack: only the first bytes after the name are needed.)
fn os_state(buf: &[u8]) -> u8 {
    use weft_trace::thread_state as ts;
    // "tid (name) S ...": the name may hold spaces and parentheses, so the last ')'.
    let state = buf
        .iter()
        .rposition(|&b| b == b')')
        .and_then(|i| buf.get(i + 2));
    match state {
        Some(b'R') => ts::RUNNING,
        Some(b'D') => ts::IO,
        Some(_) => ts::SLEEPING,
        None => ts::UNKNOWN,
    }
}

/// CPU a thread may use after its last wall sample's handler and still count as
/// "not run since" (going back to sleep after the handler costs a few µs).
const IDLE_SLACK_NS: u64 = 20_000;

/// The calling thread begins a lock wait or a wait (called from the lock and
/// wait hooks): its next wall sample is taken afresh, not repeated.
pub fn thread_waits() {
    if sig::ACTIVE.load(Ordering::Relaxed) && sig::wall_period_ns() > 0 {
        sig::note_wait();
    }
}

/// Threads whose schedstat file the sampler keeps open (beyond, it opens it at each read).
const KEPT_SCHEDSTAT_FILES: usize = 256;

/// What the sampler thread knows of one thread between wall ticks.
#[derive(Default)]
struct WallWatch {
    /// `/proc/self/task/<tid>/schedstat` and `stat`, kept open (a read at
    /// offset 0 regenerates the file: ~1 µs instead of open, read, close).
    schedstat: Option<std::fs::File>,
    stat: Option<std::fs::File>,
    /// Times the thread had been scheduled in when it was last signalled while
    /// not running (None: it was running then, or its schedstat was unreadable).
    runs_at_signal: Option<u64>,
    /// Its count of waits begun (`ThreadSlot::waits`) then.
    waits_at_signal: u64,
    /// The wall tick that last saw the thread live.
    tick: u64,
}

/// Keeps the per-thread facts of [`WallWatch`] for the live threads.
#[derive(Default)]
struct WallWatches {
    by_tid: HashMap<u32, WallWatch>,
    tick: u64,
}

impl WallWatches {
    /// Reads `/proc/self/task/<tid>/stat` (or `schedstat`) into `buf` (the
    /// file kept open for the first [`KEPT_SCHEDSTAT_FILES`] threads).
    fn read(&mut self, tid: u32, stat: bool, buf: &mut [u8]) -> Option<usize> {
        let t0 = crate::clock::now();
        let r = self.read_inner(tid, stat, buf);
        let k = if stat { 0 } else { 2 };
        SAMPLER_T[k].fetch_add(1, Ordering::Relaxed);
        SAMPLER_T[k + 1].fetch_add(crate::clock::now() - t0, Ordering::Relaxed);
        r
    }

    fn read_inner(&mut self, tid: u32, stat: bool, buf: &mut [u8]) -> Option<usize> {
        use std::os::unix::fs::FileExt;
        let kept = self.by_tid.len() <= KEPT_SCHEDSTAT_FILES;
        let w = self.by_tid.entry(tid).or_default();
        w.tick = self.tick;
        let file = if stat { &mut w.stat } else { &mut w.schedstat };
        let read = |f: &std::fs::File, buf: &mut [u8]| f.read_at(buf, 0).ok().filter(|&n| n > 0);
        if let Some(n) = file.as_ref().and_then(|f| read(f, buf)) {
            return Some(n);
        }
        // Not open yet, or a thread of the same id that ended (the file then fails).
        let name = if stat { "stat" } else { "schedstat" };
        let f = std::fs::File::open(format!("/proc/self/task/{tid}/{name}")).ok()?;
        let n = read(&f, buf)?;
        *file = kept.then_some(f);
        Some(n)
    }

    /// OS state of `tid` (see [`os_state`]).
    fn state(&mut self, tid: u32) -> u8 {
        let mut buf = [0u8; 160];
        let n = self.read(tid, true, &mut buf).unwrap_or(0);
        os_state(&buf[..n])
    }

    /// (CPU ns, times scheduled in) of `tid` from its schedstat.
    fn schedstat(&mut self, tid: u32) -> Option<(u64, u64)> {
        let mut buf = [0u8; 96];
        let n = self.read(tid, false, &mut buf)?;
        // "on-CPU ns  run-queue ns  times scheduled in"
        let mut it = std::str::from_utf8(&buf[..n])
            .ok()?
            .split_ascii_whitespace();
        let cpu = it.next()?.parse().ok()?;
        let runs = it.nth(1)?.parse().ok()?;
        Some((cpu, runs))
    }

    /// Notes that `tid` is signalled now, in OS state `state`.
    fn signalled(&mut self, tid: u32, runs: Option<u64>, state: u8, waits: u64) {
        let w = self.by_tid.entry(tid).or_default();
        w.tick = self.tick;
        w.waits_at_signal = waits;
        w.runs_at_signal = runs.filter(|_| state != weft_trace::thread_state::RUNNING);
    }

    /// Forgets the threads not seen live at the current tick.
    fn prune(&mut self) {
        let tick = self.tick;
        self.by_tid.retain(|_, w| w.tick == tick);
    }
}

/// Threads signalled per wall tick at most (each costs a /proc read and a walk):
/// with more busy threads, they are taken in turn.
const WALL_SIGNALS_PER_TICK: usize = sig::WALL_BURST;

/// A wall sample of a thread that has not run since its last one, without
/// waking it: the same stack and state again (async-profiler does the same for
/// idle threads). "Not run since": it was asleep when last signalled, it has
/// been scheduled in once since (the signal's wake-up, for the handler), it
/// began no lock wait or wait since (its hooks count them), and it used at most
/// [`IDLE_SLACK_NS`] of CPU after the handler (going back to sleep). CPU time
/// alone was not enough: a thread whose sleep inside a critical section ended
/// during the handler left the section and blocked on its lock again within
/// ~15 µs, and kept the stack of its sleep, tied to its new lock wait.
fn repeat_wall(s: &sig::ThreadSlot, tid: u32, watch: &mut WallWatches) -> bool {
    // The handler of the last signal published its sample (else the stack kept
    // would be an older one).
    if s.wall_done.load(Ordering::Acquire) != s.wall_asked.load(Ordering::Relaxed) {
        return false;
    }
    let after = s.cpu_after_wall.load(Ordering::Relaxed);
    let Some(w) = watch.by_tid.get(&tid) else {
        return false;
    };
    let waits = s.waits.load(Ordering::Relaxed);
    let (Some(since), true) = (w.runs_at_signal, after > 0 && waits == w.waits_at_signal) else {
        return false;
    };
    let Some((cpu, runs)) = watch.schedstat(tid) else {
        return false;
    };
    if runs > since + 1 || cpu.saturating_sub(after) > IDLE_SLACK_NS {
        return false;
    }
    let index = s.index.load(Ordering::Relaxed);
    let mut g = lock(&INTERNER);
    let it = g.get_or_insert_with(Interner::default);
    // That sample may still be in the ring.
    sig::drain(|e| it.add(e));
    let Some(&stack) = it.last_wall.get(&index) else {
        return false;
    };
    it.samples += 1;
    // It has not run since: not running now, whatever it was then.
    let state = match s.wall_state.load(Ordering::Relaxed) {
        weft_trace::thread_state::RUNNING => weft_trace::thread_state::SLEEPING,
        other => other,
    };
    emit(&Record::StackSample {
        ts: crate::clock::now(),
        thread: index,
        stack,
        mode_state: weft_trace::sample_mode::WALL | (state << 4),
    });
    true
}

/// Faults of the stack walker after which sampling stops (each was recovered).
const MAX_FAULTS: u64 = 10;

fn sampler_main(stop: std::sync::mpsc::Receiver<()>) {
    let wall = sig::wall_period_ns();
    let rng = AtomicU64::new(crate::clock::tsc() | 1);
    let mut next_wall = Instant::now() + Duration::from_nanos(sig::jitter(&rng, wall.max(1)));
    let my_tid = sig::gettid();
    let mut start = 0;
    let mut watch = WallWatches::default();
    loop {
        if crate::agent::disabled() {
            // The agent switched itself off (and said so): no more samples.
            sig::ACTIVE.store(false, Ordering::SeqCst);
            sig::close_all();
            return;
        }
        let faults = sig::FAULTS.load(Ordering::Relaxed);
        if faults >= MAX_FAULTS {
            switch_off(&format!(
                "the stack walker faulted {faults} times (recovered each time)"
            ));
            sig::close_all();
            drain_once();
            return;
        }
        let now = Instant::now();
        if wall > 0 && now >= next_wall && sink::recording() {
            watch.tick += 1;
            let mut signalled = 0;
            let mut all_seen = true;
            for (k, tid, s) in sig::live_threads(start) {
                if tid == my_tid {
                    continue;
                }
                if repeat_wall(s, tid, &mut watch) {
                    WALL_REPEATS.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                if signalled == WALL_SIGNALS_PER_TICK {
                    // The others first at the next tick.
                    start = k;
                    all_seen = false;
                    break;
                }
                // Times scheduled in before the state: a wake-up between the two
                // only makes the next tick sample it afresh.
                let waits = s.waits.load(Ordering::Relaxed);
                let runs = watch.schedstat(tid).map(|(_, runs)| runs);
                let state = watch.state(tid);
                watch.signalled(tid, runs, state, waits);
                s.wall_state.store(state, Ordering::Relaxed);
                s.wall_asked.fetch_add(1, Ordering::AcqRel);
                let t0 = crate::clock::now();
                sig::signal_wall(tid);
                SAMPLER_T[4].fetch_add(1, Ordering::Relaxed);
                SAMPLER_T[5].fetch_add(crate::clock::now() - t0, Ordering::Relaxed);
                WALL_SIGNALS.fetch_add(1, Ordering::Relaxed);
                signalled += 1;
            }
            if all_seen {
                watch.prune();
            }
            next_wall = Instant::now() + Duration::from_nanos(sig::jitter(&rng, wall));
        }
        drain_once();
        let until_wall = if wall > 0 {
            next_wall.saturating_duration_since(Instant::now())
        } else {
            Duration::from_nanos(sig::DRAIN_NS)
        };
        match stop.recv_timeout(until_wall.min(Duration::from_nanos(sig::DRAIN_NS))) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            _ => {
                SAMPLER_CPU_NS.store(crate::clock::thread_cpu_ns(), Ordering::Relaxed);
                return;
            }
        }
    }
}

// ---------------------------------------------------------------- VMDeath

/// Stops sampling, drains the ring and writes the frame and stack definitions
/// (names resolved now, on this JVM thread). Called at VMDeath after recording
/// stopped, before the last blocks are written.
pub fn finish(jvmti: Jvmti, jni: Jni) {
    let t0 = Instant::now();
    finish_inner(jvmti, jni);
    if sig::STATS_ON.load(Ordering::Relaxed) {
        let st: Vec<u64> = sig::STATS
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect();
        let us = |tsc: u64, n: u64| tsc as f64 / ticks_per_us() / n.max(1) as f64;
        eprintln!(
            "weft-stats: finish {:?} (join {:?} drain {:?} names {:?}); cpu {} x {:.1}us, wall {} x {:.1}us, recover {} x {:.1}us; sampler cpu {:.1}ms, wall signals {}, repeats {}, frames {}, stacks {}",
            t0.elapsed(), *lock(&T_JOIN), *lock(&T_DRAIN), *lock(&T_NAMES),
            st[0], us(st[1], st[0]), st[2], us(st[3], st[2]), st[4], us(st[5], st[4]),
            SAMPLER_CPU_NS.load(Ordering::Relaxed) as f64 / 1e6,
            WALL_SIGNALS.load(Ordering::Relaxed), WALL_REPEATS.load(Ordering::Relaxed),
            FRAMES_N.load(Ordering::Relaxed), STACKS_N.load(Ordering::Relaxed),
        );
        log_percentiles();
        eprintln!(
            "weft-stats: walked at a proven half-built frame {}, caller changed {}",
            st[6], st[7]
        );
        let t: Vec<f64> = SAMPLER_T
            .iter()
            .map(|a| a.load(Ordering::Relaxed) as f64)
            .collect();
        eprintln!(
            "weft-stats: sampler: stat {} x {:.1}us, schedstat {} x {:.1}us, tgkill {} x {:.1}us, publish {:.2}ms, drain {:.2}ms",
            t[0], t[1] / ticks_per_us() / t[0].max(1.0), t[2], t[3] / ticks_per_us() / t[2].max(1.0),
            t[4], t[5] / ticks_per_us() / t[4].max(1.0), t[6] / ticks_per_us() / 1000.0, t[7] / ticks_per_us() / 1000.0
        );
        let c: Vec<u64> = CODE_EVENTS
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect();
        eprintln!(
            "weft-stats: CompiledMethodLoad {} x {:.1}us, Unload {} x {:.1}us",
            c[0],
            c[1] as f64 / ticks_per_us() / c[0].max(1) as f64,
            c[2],
            c[3] as f64 / ticks_per_us() / c[2].max(1) as f64
        );
        let p: Vec<u64> = PREP.iter().map(|a| a.load(Ordering::Relaxed)).collect();
        eprintln!(
            "weft-stats: prepare {} classes {:.2}ms (methods {:.2}ms, {} methods)",
            p[0],
            p[1] as f64 / ticks_per_us() / 1000.0,
            p[2] as f64 / ticks_per_us() / 1000.0,
            p[3]
        );
    }
}
/// Clock ticks per µs (the agent's clock: the TSC, or ns).
fn ticks_per_us() -> f64 {
    // ticks_to_ns(10^9 ticks) = 10^9 ticks in ns.
    1e12 / crate::sink::ticks_to_ns(1_000_000_000).max(1) as f64
}
fn log_percentiles() {
    let n = sig::SAMPLE_LOG_N
        .load(Ordering::Relaxed)
        .min(sig::SAMPLE_LOG.len());
    for (name, signo) in [("cpu", sig::CPU_SIGNAL), ("wall", sig::WALL_SIGNAL)] {
        for (col, what) in [(1, "walk"), (2, "arm"), (3, "total")] {
            if what == "arm" && signo != sig::CPU_SIGNAL {
                continue; // only CPU samples re-arm a timer
            }
            let mut v: Vec<u64> = (0..n)
                .filter(|&i| sig::SAMPLE_LOG[i][0].load(Ordering::Relaxed) == signo as u64)
                .map(|i| sig::SAMPLE_LOG[i][col].load(Ordering::Relaxed))
                .collect();
            if v.is_empty() {
                continue;
            }
            v.sort_unstable();
            let q = |f: f64| v[((v.len() - 1) as f64 * f) as usize] as f64 / ticks_per_us();
            let sum: u64 = v.iter().sum();
            eprintln!(
                "weft-stats: {name} {what}: n {} p10 {:.1} p50 {:.1} p90 {:.1} p99 {:.1} max {:.1} sum {:.2}ms",
                v.len(), q(0.1), q(0.5), q(0.9), q(0.99), q(1.0), sum as f64 / ticks_per_us() / 1000.0
            );
        }
    }
}
static ONLOAD_NS: AtomicU64 = AtomicU64::new(0);

/// Experiment (WEFT_SAMPLE_EXP=threads): ms since OnLoad at a phase (VMInit, VMDeath).
pub fn log_phase(what: &str) {
    if std::env::var("WEFT_SAMPLE_EXP").is_ok_and(|v| v.split(',').any(|x| x == "threads")) {
        let ms =
            crate::clock::mono_ns().saturating_sub(ONLOAD_NS.load(Ordering::Relaxed)) as f64 / 1e6;
        eprintln!("weft-threads: {what} at {ms:.1} ms after OnLoad");
    }
}

/// Experiment (WEFT_SAMPLE_EXP=threads): on-CPU ms of the live threads, by name group.
pub fn log_thread_cpu() {
    if !std::env::var("WEFT_SAMPLE_EXP").is_ok_and(|v| v.split(',').any(|x| x == "threads")) {
        return;
    }
    log_phase("VMDeath");
    let mut by: std::collections::BTreeMap<String, (f64, u32)> = Default::default();
    for tid in task_ids() {
        let comm =
            std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")).unwrap_or_default();
        let ss =
            std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).unwrap_or_default();
        let ns: f64 = ss
            .split_whitespace()
            .next()
            .and_then(|x| x.parse().ok())
            .unwrap_or(0.0);
        let c = comm.trim();
        let g = if c.starts_with("ForkJoinPool") || c.starts_with("pool-") {
            "workers".to_string()
        } else if c.starts_with("C2 ") {
            "C2".into()
        } else if c.starts_with("C1 ") {
            "C1".into()
        } else if c.starts_with("GC ") || c.starts_with("G1 ") {
            "GC".into()
        } else {
            c.to_string()
        };
        let e = by.entry(g).or_default();
        e.0 += ns / 1e6;
        e.1 += 1;
    }
    let v: Vec<String> = by
        .iter()
        .filter(|(_, (ms, _))| *ms >= 0.5)
        .map(|(k, (ms, n))| format!("{k}:{ms:.1}/{n}"))
        .collect();
    eprintln!("weft-threads: {}", v.join(" "));
}
static SAMPLER_T: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];
static CODE_EVENTS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
static PREP: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
static T_JOIN: Mutex<Duration> = Mutex::new(Duration::ZERO);
static T_DRAIN: Mutex<Duration> = Mutex::new(Duration::ZERO);
static T_NAMES: Mutex<Duration> = Mutex::new(Duration::ZERO);
static SAMPLER_CPU_NS: AtomicU64 = AtomicU64::new(0);
static WALL_SIGNALS: AtomicU64 = AtomicU64::new(0);
static WALL_REPEATS: AtomicU64 = AtomicU64::new(0);
static FRAMES_N: AtomicU64 = AtomicU64::new(0);
static STACKS_N: AtomicU64 = AtomicU64::new(0);

fn finish_inner(jvmti: Jvmti, jni: Jni) {
    sig::ACTIVE.store(false, Ordering::SeqCst);
    FINISHING.store(true, Ordering::SeqCst);
    if !ENABLED.load(Ordering::Relaxed) && lock(&STOP).is_none() {
        return;
    }
    sig::close_all();
    let t = Instant::now();
    if let Some((tx, h)) = lock(&STOP).take() {
        let _ = tx.send(());
        let _ = h.join();
    }
    *lock(&T_JOIN) = t.elapsed();
    if crate::agent::disabled() {
        return;
    }
    let t = Instant::now();
    drain_once();
    *lock(&T_DRAIN) = t.elapsed();
    let t = Instant::now();
    let Some(it) = lock(&INTERNER).take() else {
        return;
    };
    FRAMES_N.store(it.frames.len() as u64, Ordering::Relaxed);
    STACKS_N.store(it.stacks.len() as u64, Ordering::Relaxed);
    let framed = jni.push_local_frame(LOCAL_REFS);
    if !framed {
        jni.check_clear();
    }
    let mut names = Names::new(jvmti, jni);
    let mut probes = StaleCallers::default();
    for (&(method, bci, kind), &id) in &it.frames {
        let def = names.frame_def(id, method, bci, kind);
        probes.note(&def);
        emit(&def);
    }
    drop(names);
    if framed {
        jni.pop_local_frame();
    }
    // A walk cut at a stale caller keeps its frames up to there, then
    // `[broken:stale_caller]` (counted as partial by the analysis).
    let stale = it.frames.len() as u32 + 1;
    let defs: Vec<(u32, Vec<u32>)> = it
        .stacks
        .iter()
        .map(|(frames, &id)| match probes.stale_from(frames) {
            Some(at) => (id, frames[..at].iter().copied().chain([stale]).collect()),
            None => (id, frames.clone()),
        })
        .collect();
    if defs.iter().any(|(_, f)| f.last() == Some(&stale)) {
        emit(&Record::FrameDef {
            id: stale,
            kind: frame_kind::BROKEN,
            line: 0,
            class: "".into(),
            method: "stale_caller".into(),
        });
    }
    for (id, frames) in defs {
        emit(&Record::StackDef { id, frames });
    }
    *lock(&T_NAMES) = t.elapsed();
    let dropped = sig::DROPPED.load(Ordering::Relaxed);
    if dropped > 0 {
        let now = crate::clock::now();
        emit(&Record::Loss {
            thread: GLOBAL_THREAD,
            from_ts: now,
            to_ts: now,
            records: dropped,
            reason: LossReason::Other(SAMPLES_DROPPED),
        });
    }
}

/// The end's drain and definitions are written after the other engines stopped
/// recording (at VMDeath), so their last records stay as they were without us.
static FINISHING: AtomicBool = AtomicBool::new(false);

fn emit(r: &Record) {
    if FINISHING.load(Ordering::Relaxed) {
        sink::push_global_force(r);
    } else {
        sink::emit_global(r);
    }
}

/// Frames of weft's own probes (`weft.FjProbe`, `weft.Probe`, …: the package
/// `weft` itself) and of the application (neither a probe nor the JDK), by
/// frame id, to find walks that went through a stale return address.
#[derive(Default)]
struct StaleCallers {
    probe: std::collections::HashSet<u32>,
    app: std::collections::HashSet<u32>,
}

impl StaleCallers {
    fn note(&mut self, def: &Record) {
        let Record::FrameDef {
            id, kind, class, ..
        } = def
        else {
            return;
        };
        if *kind != frame_kind::JAVA && *kind != frame_kind::NATIVE {
            return;
        }
        let jdk = ["java.", "javax.", "jdk.", "sun.", "com.sun."];
        if class
            .strip_prefix("weft.")
            .is_some_and(|c| !c.contains('.'))
        {
            self.probe.insert(*id);
        } else if !jdk.iter().any(|p| class.starts_with(p)) && !class.starts_with('[') {
            self.app.insert(*id);
        }
    }

    /// Where a walk (leaf first) went wrong: a probe frame whose callee is
    /// application code. A probe never calls the application, so that frame
    /// came from a stale return address (AsyncGetCallTrace's sender lookup met
    /// one, docs/sampling.md § Stale callers) and so did every frame below it.
    fn stale_from(&self, frames: &[u32]) -> Option<usize> {
        (1..frames.len())
            .find(|&i| self.probe.contains(&frames[i]) && self.app.contains(&frames[i - 1]))
    }
}

/// Loss reason code of samples dropped (ring full or thread table full).
pub const SAMPLES_DROPPED: u8 = 80;

/// Readable AsyncGetCallTrace error codes (HotSpot's forte.cpp).
fn walk_error(code: i32) -> &'static str {
    match code {
        0 => "no_Java_frame",
        -1 => "no_class_load",
        -2 => "GC_active",
        -3 => "unknown_not_Java",
        -4 => "not_walkable_not_Java",
        -5 => "unknown_Java",
        -6 => "not_walkable_Java",
        -7 => "unknown_state",
        -8 => "thread_exit",
        -9 => "deopt",
        -10 => "safepoint",
        sig::WALK_FAULTED => "walk_faulted",
        _ => "unknown_error",
    }
}

/// A method's declaring class, name and line table ((bytecode index, line) pairs).
type MethodInfo = (String, String, Vec<(i64, i32)>);

/// Method, class and line table per jmethodID, resolved once.
struct Names {
    jvmti: Jvmti,
    jni: Jni,
    methods: HashMap<usize, Option<MethodInfo>>,
    /// Loaded classes by signature (for lambda hosts), built on first need.
    by_sig: Option<HashMap<String, jclass>>,
    /// Resolving at ClassPrepare: no lambda-host lookup (it lists every loaded class).
    early: bool,
}

impl Names {
    fn new(jvmti: Jvmti, jni: Jni) -> Names {
        Names {
            jvmti,
            jni,
            methods: HashMap::default(),
            by_sig: None,
            early: false,
        }
    }

    fn frame_def(&mut self, id: u32, method: usize, bci: i32, kind: u8) -> Record {
        let def = |kind, class: &str, method: &str, line| Record::FrameDef {
            id,
            kind,
            line,
            class: class.into(),
            method: method.into(),
        };
        if kind == frame_kind::BROKEN || kind == frame_kind::NO_JAVA {
            return def(kind, "", walk_error(bci), 0);
        }
        if method == 0 {
            return def(frame_kind::JAVA, "[unknown]", "[unknown]", 0);
        }
        let m = method;
        if !self.methods.contains_key(&m) {
            let r = self.resolve(m as jmethodID).or_else(|| {
                // Unloaded since: the names taken when its class was prepared.
                lock(&EARLY_NAMES).as_ref()?.get(&m).cloned()
            });
            self.methods.insert(m, r);
        }
        match self.methods.get(&m).and_then(|x| x.as_ref()) {
            Some((class, name, table)) => {
                let line = if bci < 0 {
                    0
                } else {
                    table
                        .iter()
                        .filter(|e| e.0 <= bci as i64)
                        .max_by_key(|e| e.0)
                        .map(|e| e.1)
                        .unwrap_or(0)
                };
                def(kind, class, name, line)
            }
            None => def(kind, "[unloaded]", "[unloaded]", 0),
        }
    }

    fn resolve(&mut self, m: jmethodID) -> Option<MethodInfo> {
        let (name, _) = self.jvmti.get_method_name(m).ok()?;
        let c = self.jvmti.get_method_declaring_class(m).ok()?;
        let sig = self.jvmti.get_class_signature(c).unwrap_or_default();
        let class = self.class_name(c, &sig);
        self.jni.delete_local_ref(c);
        let table = self.jvmti.get_line_number_table(m).unwrap_or_default();
        Some((class, name, table))
    }

    /// The class name as the task report gives it: hidden classes without their
    /// address, lambdas as `Host$$Lambda[method:line]` (crates/agent/src/lambda.rs).
    fn class_name(&mut self, c: jclass, sig: &str) -> String {
        let internal = sig
            .strip_prefix('L')
            .and_then(|s| s.strip_suffix(';'))
            .unwrap_or(sig);
        // Hidden classes: `pkg/Host$$Lambda$14.0x0000000800c03000` (or `/0x…`, `+0x…`).
        let hidden_at = internal
            .rfind(['.', '+', '/'])
            .filter(|&i| internal[i + 1..].starts_with("0x"));
        let Some(at) = hidden_at else {
            return internal.replace('/', ".");
        };
        let dotted = format!(
            "{}/{}",
            internal[..at].replace('/', "."),
            &internal[at + 1..]
        );
        let host_sig = internal[..at]
            .find("$$Lambda")
            .map(|i| format!("L{};", &internal[..i]));
        let host = host_sig
            .filter(|_| !self.early)
            .and_then(|hs| self.loaded_classes().get(&hs).copied())
            .unwrap_or(std::ptr::null_mut());
        crate::lambda::lambda_name(self.jvmti, self.jni, c, &dotted, host)
    }

    fn loaded_classes(&mut self) -> &HashMap<String, jclass> {
        let jvmti = self.jvmti;
        self.by_sig.get_or_insert_with(|| {
            let mut m = HashMap::default();
            // Local references, freed with the caller's local frame.
            for c in jvmti.get_loaded_classes().unwrap_or_default() {
                if let Ok(s) = jvmti.get_class_signature(c) {
                    m.insert(s, c);
                }
            }
            m
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sampling_options() {
        assert_eq!(parse_options(None).unwrap(), SampleOptions::default());
        let o = parse_options(Some("out=x,cpusample=1ms,wallsample=off")).unwrap();
        assert_eq!((o.cpu_ns, o.wall_ns), (1_000_000, 0));
        let o = parse_options(Some("nosample")).unwrap();
        assert_eq!((o.cpu_ns, o.wall_ns), (0, 0));
        assert_eq!(
            parse_options(Some("cpusample=500us")).unwrap().cpu_ns,
            500_000
        );
        assert!(parse_options(Some("cpusample=10x")).is_err());
        assert!(parse_options(Some("wallsample=20s")).is_err());
        assert!(is_option("cpusample") && !is_option("interval"));
    }

    #[test]
    fn walks_through_a_probe_frame_above_application_code_are_cut() {
        let def = |id, class: &str| Record::FrameDef {
            id,
            kind: frame_kind::JAVA,
            line: 0,
            class: class.into(),
            method: "m".into(),
        };
        let mut s = StaleCallers::default();
        for d in [
            def(1, "weft.workloads.fj.Fibonacci"),
            def(2, "weft.FjProbe"),
            def(3, "java.util.concurrent.ForkJoinTask"),
            def(4, "weft.Probe"),
        ] {
            s.note(&d);
        }
        // Leaf first: seqFib <- seqFib <- FjProbe.now (stale) <- ...
        assert_eq!(s.stale_from(&[1, 1, 2, 3]), Some(2));
        // A probe calling the JDK, or another probe, is what probes do.
        assert_eq!(s.stale_from(&[3, 2, 1]), None);
        assert_eq!(s.stale_from(&[2, 4, 1]), None);
        assert_eq!(s.stale_from(&[1]), None);
    }

    #[test]
    fn jitter_stays_around_the_period() {
        let rng = AtomicU64::new(12345);
        let mut sum = 0u64;
        for _ in 0..10_000 {
            let p = sig::jitter(&rng, 10_000_000);
            assert!((5_000_000..15_000_000).contains(&p));
            sum += p;
        }
        let mean = sum / 10_000;
        assert!((9_800_000..10_200_000).contains(&mean), "{mean}");
    }

    /// The first period is the residual of jitter's renewal process: mean
    /// E[X²]/2E[X] = 13p/24, half of the draws under p/2, none at 3p/2 or over.
    #[test]
    fn a_thread_s_first_period_is_the_residual_time_to_a_tick() {
        let rng = AtomicU64::new(12345);
        let p = 10_000_000u64;
        let (mut sum, mut short) = (0u64, 0u32);
        for _ in 0..100_000 {
            let x = sig::first_period(&rng, p);
            assert!(x < 3 * p / 2, "{x}");
            sum += x;
            short += (x < p / 2) as u32;
        }
        let mean = sum as f64 / 100_000.0 / p as f64;
        assert!((mean - 13.0 / 24.0).abs() < 0.01, "{mean}");
        assert!((49_000..51_000).contains(&short), "{short}");
    }
}
