//! weft's JVMTI agent: `java -agentpath:libweft_agent.so=out=trace.weft ...`.
//!
//! It instruments task, submission, fork and constructor methods at class load
//! (through `weft_classfile`), records threads, tasks, submissions, GC and
//! process samples into per-thread blocks, and writes them to a trace file
//! (`weft_trace` format). See docs/agent.md.
//!
//! `unsafe` is confined to the FFI modules (`jni`, `jvmti`) and the exported
//! entry points (`Agent_OnLoad`, the event callbacks, the `Java_weft_Probe_*` natives).

mod agent;
mod attach;
mod class_ids;
mod clock;
mod compiled_code;
mod decide;
mod forkjoin;
mod half_built_frame;
mod jni;
mod joins;
mod jvmti;
mod lambda;
mod launcher;
mod locks;
mod monitors;
mod natives;
pub mod offline;
pub mod options;
pub mod pipeline;
mod plumbing;
mod pool_tasks;
mod probe_jar;
mod sampling;
mod sampling_signal;
mod schedstat;
mod single;
mod sink;
mod startup_log;
mod thread_starts;
mod vthreads;

use std::ffi::{c_char, c_void, CStr};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use weft_trace::{header_keys as hk, Header, Record};

use crate::agent::{guard, LIVE, STARTED};
use crate::jni::{jclass, jint, jobject, JNIEnv, JavaVM, Jni, JNI_ERR, JNI_OK};
use crate::jvmti::{cap, Callbacks, Jvmti, JvmtiEnvRaw};

include!(concat!(env!("OUT_DIR"), "/probe_classes.rs"));

/// What OnLoad prepared for VMInit.
struct Pending {
    file: File,
    path: String,
    header: Header,
    options: options::Options,
    clock: clock::Calibration,
}

static PENDING: Mutex<Option<Pending>> = Mutex::new(None);
/// The class hook is turned on at VMInit (not at OnLoad): see [`hook_at_onload`].
static HOOK_AT_VMINIT: AtomicBool = AtomicBool::new(false);
static HIERARCHY: Mutex<Option<decide::Hierarchy>> = Mutex::new(None);
/// The window method of option `window=` (set at OnLoad, read by the class hook).
pub(crate) static WINDOW: std::sync::OnceLock<options::WindowMethod> = std::sync::OnceLock::new();

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates the output file exclusively and never through a symbolic link
/// (O_EXCL | O_NOFOLLOW); if it exists, `<stem>.<pid>.weft` beside it. The file is
/// locked (flock, exclusive) for as long as it is open, so that `weft record` never
/// removes a trace that is still being written (crates/cli/src/files.rs).
pub(crate) fn create_output(path: &Path) -> std::io::Result<(File, PathBuf)> {
    use std::os::unix::fs::OpenOptionsExt;
    let open = |p: &Path| {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o666)
            .open(p)
    };
    let alt = || {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "weft".into());
        path.with_file_name(format!("{stem}.{}.weft", std::process::id()))
    };
    // A `weft record` clearing an old trace holds its lock while it removes it: a
    // file created in between may be removed under us. Then create it again.
    for _ in 0..4 {
        let (file, p) = match open(path) {
            Ok(f) => (f, path.to_path_buf()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let a = alt();
                (open(&a)?, a)
            }
            Err(e) => return Err(e),
        };
        if lock_and_check(&file) {
            return Ok((file, p));
        }
    }
    Err(std::io::Error::other(
        "the trace file was removed as it was created",
    ))
}

/// Takes the trace's lock (waiting out a `weft record` that holds it for a moment);
/// false when the file was removed meanwhile.
fn lock_and_check(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    // SAFETY: flock on a descriptor this File owns.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0;
    // Without flock (some network file systems) the file is still written.
    !locked || file.metadata().is_ok_and(|m| m.nlink() > 0)
}

/// Closes our descriptor of the probe jar (the JVM keeps its own).
pub(crate) fn close_probe_jar() {
    drop(lock(&agent::PROBE_JAR).take());
}

pub(crate) fn jdk_major(jvmti: Jvmti) -> u32 {
    [
        "java.specification.version",
        "java.vm.specification.version",
    ]
    .iter()
    .filter_map(|k| jvmti.get_system_property(k))
    .filter_map(|v| v.trim_start_matches("1.").split('.').next()?.parse().ok())
    .next()
    .unwrap_or(17)
}

/// Rough cost of the native part of one task (begin + end records), ns.
fn measure_task_cost() -> f64 {
    let mut enc = weft_trace::BlockEncoder::new(0, 64 * 1024);
    let m = Mutex::new(());
    let n = 1000;
    let t0 = clock::mono_ns();
    for i in 0..n {
        let _g = lock(&m);
        enc.push(&Record::TaskBegin {
            ts: clock::now(),
            probe: 1,
            class_id: 2,
            ident: i,
            inner_class_id: 0,
            inner_ident: 0,
        });
        enc.push(&Record::TaskEnd {
            ts: clock::now(),
            probe: 1,
            ident: i,
        });
    }
    (clock::mono_ns() - t0) as f64 / n as f64
}

/// # Safety
/// Called by the JVM with a valid JavaVM and a NUL-terminated option string (or null).
#[no_mangle]
pub unsafe extern "system" fn Agent_OnLoad(
    vm: *mut JavaVM,
    opts: *const c_char,
    _reserved: *mut c_void,
) -> jint {
    std::panic::set_hook(Box::new(|_| {}));
    startup_log::onload_entry();
    let opt_str = if opts.is_null() {
        None
    } else {
        // SAFETY: the JVM passes a NUL-terminated string.
        Some(
            unsafe { CStr::from_ptr(opts) }
                .to_string_lossy()
                .into_owned(),
        )
    };
    agent::set_java_vm(vm);
    attach::LAUNCHED.store(true, Ordering::SeqCst);
    let result = std::panic::catch_unwind(|| {
        // SAFETY: vm is the JavaVM of this OnLoad call.
        let env = unsafe { jni::get_env(vm, jvmti::JVMTI_VERSION_11) };
        on_load(env, opt_str.as_deref())
    });
    startup_log::onload_exit();
    match result {
        Ok(r) => r,
        Err(_) => {
            eprintln!("weft: agent disabled: internal error at start-up");
            JNI_OK
        }
    }
}

/// Environment variable in which `weft record` gives a directly started `java` the
/// agent argument for the JVMs it starts in turn (docs/agent.md §Several JVMs).
pub const CHILD_AGENT_ENV: &str = "WEFT_CHILD_AGENT";

/// Puts the agent into `JAVA_TOOL_OPTIONS` of this process's environment, which
/// `ProcessBuilder` and `Runtime.exec` pass to the processes the program starts:
/// a child JVM then records itself (to `<stem>.<pid>.weft`, as out= exists).
fn propagate_agent_to_children() {
    let Some(arg) = std::env::var_os(CHILD_AGENT_ENV) else {
        return;
    };
    let arg = arg.to_string_lossy().into_owned();
    let current = std::env::var("JAVA_TOOL_OPTIONS").unwrap_or_default();
    if arg.is_empty() || current.contains(&arg) {
        return;
    }
    let options = if current.is_empty() {
        arg
    } else {
        format!("{current} {arg}")
    };
    // At OnLoad no Java code has run yet: the JVM reads the environment for
    // System.getenv / ProcessBuilder later, and no other thread reads it now.
    std::env::set_var("JAVA_TOOL_OPTIONS", options);
}

/// Whether the class hook must be on from OnLoad. While it is on, HotSpot reads
/// every class it takes from the CDS archive back out of the runtime image to
/// offer it to the hook, also in the primordial phase, when the hook is never
/// called (~450 classes before VMInit: ~1.5 ms of the main thread's CPU, on every
/// run). SetEventNotificationMode is refused in the start phase, so the hook goes
/// on at VMInit instead, and misses the classes of the start phase: on JDK 17, 21
/// and 25 only `java.lang.invoke` and `jdk.internal` ones, which it skips anyway,
/// unless the options run code of their own then (another agent, a custom system
/// class loader or security manager: crates/agent/src/launcher.rs).
fn hook_at_onload() -> bool {
    let env: Vec<String> = ["JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    launcher::loads_code_before_vminit(&jvm_args(), &env)
}

/// This JVM's command-line arguments (`/proc/self/cmdline`).
fn jvm_args() -> Vec<String> {
    let raw = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    raw.split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// This JVM's command line (arguments joined by spaces).
fn command_line() -> String {
    let mut line = jvm_args().join(" ");
    if line.len() > 4096 {
        let mut cut = 4096;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push('…');
    }
    line
}

/// The header keys known at start (OnLoad, or an attach session's start).
pub(crate) fn base_header(
    command: Option<&str>,
    opt_str: Option<&str>,
    options: &options::Options,
    calibration: &clock::Calibration,
) -> Header {
    let start_ticks = clock::now();
    let start_mono = clock::mono_ns();
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut header = Header::default();
    header.set(hk::PID, std::process::id().to_string());
    if let Some(main) = command.map(launcher::main_of) {
        // Tells the traces of several JVMs apart (`weft record` lists it).
        header.set(hk::JVM_MAIN, main);
    }
    header.set(hk::AGENT_VERSION, env!("CARGO_PKG_VERSION"));
    header.set(hk::AGENT_OPTIONS, opt_str.unwrap_or(""));
    header.set(hk::COMMAND_LINE, command_line());
    header.set(hk::START_WALL_NS, wall.to_string());
    header.set(hk::START_TICKS, start_ticks.to_string());
    header.set(hk::START_MONO_NS, start_mono.to_string());
    header.set(hk::CLOCK_SOURCE, calibration.source);
    // FjProbe reads the agent's clock (rdtsc through JNI, or System.nanoTime when
    // the clock is CLOCK_MONOTONIC): its records are in ticks like every other.
    header.set(hk::FORKJOIN_CLOCK, "ticks");
    header.set(
        hk::SAMPLE_INTERVAL_NS,
        options.interval.as_nanos().to_string(),
    );
    header.set(
        hk::CPUS,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .to_string(),
    );
    header.set(
        &format!("{}task", hk::PROBE_COST_PREFIX),
        format!("{:.0}", measure_task_cost()),
    );
    header.set(
        "locks.interval_ns",
        options.lock_interval.as_nanos().to_string(),
    );
    if options.lock_detail {
        header.set(monitors::HEADER_KEY, "on");
        monitors::enable();
    }
    if let Some(w) = &options.window {
        header.set(hk::WINDOW_METHOD, w.dotted());
        if options.window_each_call {
            header.set(hk::WINDOW_CALLS, "each");
        }
        let _ = WINDOW.set(w.clone());
    }
    header
}

/// The header keys known once the VM is initialized (VMInit, or an attach).
pub(crate) fn vm_header(jvmti: Jvmti, jni: Jni, header: &mut Header, ticks_per_sec: f64) {
    for (k, prop) in [
        (hk::JVM_VERSION, "java.version"),
        (hk::JVM_VENDOR, "java.vendor"),
    ] {
        if let Some(v) = jni.system_property(prop) {
            header.set(k, v);
        }
    }
    header.set(
        "jvm.vm_version",
        jvmti
            .get_system_property("java.vm.version")
            .unwrap_or_default(),
    );
    header.set("locks.park_hooked", locks::park_hooked().to_string());
    header.set("locks.unpark_hooked", locks::unpark_hooked().to_string());
    header.set(hk::TICKS_PER_SEC, format!("{ticks_per_sec:.1}"));
    sampling::header(header);
    header.set(
        "jvm.major",
        agent::JDK_MAJOR.load(Ordering::Relaxed).to_string(),
    );
}

fn on_load(env: Option<*mut c_void>, opt_str: Option<&str>) -> jint {
    let options = match options::parse(opt_str) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("weft: {e}");
            return JNI_ERR;
        }
    };
    // SAFETY: env came from GetEnv.
    let command =
        env.and_then(|e| unsafe { Jvmti::from_raw(e) }.get_system_property("sun.java.command"));
    if let Some(tool) = command.as_deref().and_then(launcher::jdk_tool) {
        if !options.quiet {
            eprintln!("weft: {tool} is a JDK tool: not recorded");
        }
        return JNI_OK;
    }
    if let Err(first) = single::claim(&options.out.display().to_string()) {
        eprintln!(
            "weft: the weft agent is already loaded in this JVM ({first}); this one (out={}) stays off",
            options.out.display()
        );
        return JNI_OK;
    }
    // The clock's first point: its sanity check at the end of OnLoad then has
    // nothing left to wait for.
    let clock = clock::begin();
    HOOK_AT_VMINIT.store(!hook_at_onload(), Ordering::Relaxed);
    propagate_agent_to_children();
    let Some(env) = env else {
        eprintln!("weft: agent disabled: no JVMTI 11 environment");
        return JNI_OK;
    };
    // SAFETY: env came from GetEnv.
    let jvmti = unsafe { Jvmti::from_raw(env) };
    let (file, path) = match create_output(&options.out) {
        Ok(x) => x,
        Err(e) => {
            eprintln!(
                "weft: cannot create trace file {}: {e}; running without recording",
                options.out.display()
            );
            return JNI_OK;
        }
    };
    if path != options.out && !options.quiet {
        eprintln!(
            "weft: {} exists; recording to {}",
            options.out.display(),
            path.display()
        );
    }
    let path_s = path.display().to_string();
    let fail = |what: String| {
        eprintln!("weft: agent disabled: {what}; running without recording");
        drop(std::fs::remove_file(&path));
        JNI_OK
    };
    let (jar, jar_path) = match probe_jar::create(&launched_probe_classes()) {
        Ok(x) => x,
        Err(e) => return fail(format!("cannot make the probe classes' jar: {e}")),
    };
    *lock(&agent::PROBE_JAR) = Some(jar);
    if let Err(e) = jvmti.add_to_bootstrap_class_loader_search(&jar_path) {
        close_probe_jar();
        return fail(format!("AddToBootstrapClassLoaderSearch failed ({e})"));
    }
    let mut caps = vec![cap::CAN_GENERATE_ALL_CLASS_HOOK_EVENTS];
    caps.extend(cap::RECORDING);
    if let Err(e) = jvmti.add_capabilities(&caps) {
        close_probe_jar();
        return fail(format!("AddCapabilities failed ({e})"));
    }
    let major = jdk_major(jvmti);
    agent::JDK_MAJOR.store(major, Ordering::Relaxed);
    // Where a pinned virtual thread entered the monitor that pins it (vthreads.rs;
    // JDK 21+ only: no virtual threads before); without it the pinned site is the
    // blocking call alone.
    if major >= 21 {
        let _ = jvmti.add_capabilities(&[cap::CAN_GET_OWNED_MONITOR_STACK_DEPTH_INFO]);
    }
    let _ = agent::JVMTI.set(jvmti);

    let calibration = clock.finish();
    sink::init(calibration.rough);
    sink::register_in_background();
    let header = base_header(command.as_deref(), opt_str, &options, &calibration);
    *lock(&PENDING) = Some(Pending {
        file,
        path: path_s,
        header,
        options,
        clock: calibration,
    });
    *lock(&HIERARCHY) = Some(decide::Hierarchy::default());
    sink::set_recording(true);

    let mut cb = Callbacks::new();
    cb.set(jvmti::EVENT_VM_INIT, on_vm_init as *const c_void);
    cb.set(jvmti::EVENT_VM_START, on_vm_start as *const c_void);
    set_common_callbacks(&mut cb);
    let lock_events = locks::setup(jvmti, &mut cb);
    sampling::setup(jvmti, &mut cb, opt_str);
    let mut events = vec![
        jvmti::EVENT_VM_INIT,
        jvmti::EVENT_VM_DEATH,
        jvmti::EVENT_VM_START,
        jvmti::EVENT_THREAD_START,
        jvmti::EVENT_THREAD_END,
        jvmti::EVENT_GC_START,
        jvmti::EVENT_GC_FINISH,
    ];
    if !HOOK_AT_VMINIT.load(Ordering::Relaxed) {
        events.push(jvmti::EVENT_CLASS_FILE_LOAD_HOOK);
    }
    let setup = jvmti
        .set_event_callbacks(&cb)
        .and_then(|_| events.iter().try_for_each(|&e| jvmti.enable_event(e)))
        .and_then(|_| lock_events.iter().try_for_each(|&e| jvmti.enable_event(e)));
    if let Err(e) = setup {
        sink::set_recording(false);
        close_probe_jar();
        return fail(format!("cannot enable JVMTI events ({e})"));
    }
    JNI_OK
}

/// The callbacks a launched agent and an attach session share.
pub(crate) fn set_common_callbacks(cb: &mut Callbacks) {
    cb.set(jvmti::EVENT_VM_DEATH, on_vm_death as *const c_void);
    cb.set(jvmti::EVENT_THREAD_START, on_thread_start as *const c_void);
    cb.set(jvmti::EVENT_THREAD_END, on_thread_end as *const c_void);
    cb.set(
        jvmti::EVENT_CLASS_FILE_LOAD_HOOK,
        on_class_file_load_hook as *const c_void,
    );
    cb.set(jvmti::EVENT_GC_START, on_gc_start as *const c_void);
    cb.set(jvmti::EVENT_GC_FINISH, on_gc_finish as *const c_void);
}

/// Adds loaded classes' supertypes (name, direct supertypes) to the hierarchy the
/// decisions use (an attach session: those classes never passed the hook).
pub(crate) fn feed_hierarchy(supers: Vec<(String, Vec<String>)>) {
    let mut h = lock(&HIERARCHY);
    let h = h.get_or_insert_with(decide::Hierarchy::default);
    for (name, sup) in supers {
        h.add_names(name, sup);
    }
}

fn jni_of(env: *mut JNIEnv) -> Option<Jni> {
    // SAFETY: JVMTI passes the current thread's JNIEnv to its callbacks.
    unsafe { Jni::from_raw(env) }
}

/// The class hook saw AbstractQueuedSynchronizer (some JDK 21 runtimes load it
/// during VM start-up, before the hook: j.u.c. lock waits are then not attributed).
static AQS_SEEN: AtomicBool = AtomicBool::new(false);
const AQS: &str = "java/util/concurrent/locks/AbstractQueuedSynchronizer";

unsafe extern "system" fn on_vm_start(_t: *mut JvmtiEnvRaw, _env: *mut JNIEnv) {
    STARTED.store(true, Ordering::SeqCst);
}

unsafe extern "system" fn on_vm_init(_t: *mut JvmtiEnvRaw, env: *mut JNIEnv, thread: jobject) {
    let t0 = startup_log::vm_init_entry();
    let jni = jni_of(env);
    guard(jni, "VMInit", || {
        let jni = jni.ok_or("no JNI env")?;
        let jvmti = agent::jvmti().ok_or("no JVMTI env")?;
        let Some(mut p) = lock(&PENDING).take() else {
            return Ok(());
        };
        // Before the first class this callback loads (see `hook_at_onload`).
        if HOOK_AT_VMINIT.load(Ordering::Relaxed) {
            jvmti
                .enable_event(jvmti::EVENT_CLASS_FILE_LOAD_HOOK)
                .map_err(|e| format!("cannot enable the class hook ({e})"))?;
        }
        sampling::log_phase("VMInit");
        let init = agent::init_refs(jvmti, jni);
        startup_log::step("VMInit: probe and fork-join classes");
        locks::init(jni);
        // Every helper class (nested ones load lazily) is loaded before our
        // descriptor of the jar they come from is closed.
        for (file, _) in launched_probe_classes() {
            if let Some(name) = file.strip_suffix(".class") {
                if let Some(c) = jni.find_class(&format!("weft/{name}")) {
                    jni.delete_local_ref(c);
                }
            }
        }
        close_probe_jar();
        startup_log::step("VMInit: lock refs and the other probe classes");
        // Loads AQS now if it is not loaded yet (through the hook); if it was
        // loaded before the hook, its slow paths are instrumented by retransformation
        // (crates/agent/src/attach.rs), and the header says whether that worked.
        // FutureTask too: a thread-per-task executor's wrappers are recorded by the
        // virtual thread's start hook only once `FutureTask.run`'s probe is defined
        // (vthreads::skipped_on_virtual), and its RunnableAdapter, made before the
        // first FutureTask, would otherwise be recorded by Probe for the whole run.
        for class in [AQS, "java/util/concurrent/FutureTask"] {
            if let Some(c) = jni.find_class(class) {
                jni.delete_local_ref(c);
            }
        }
        if !AQS_SEEN.load(Ordering::Relaxed) && attach::instrument_loaded_lock_classes(jni) {
            AQS_SEEN.store(true, Ordering::Relaxed);
        }
        // VirtualThread is loaded before any class hook: its start/end and mount
        // hooks go in by retransformation too (JDK 21+, vthreads.rs).
        // Thread too (its start hook, thread_starts.rs), in the same retransformation.
        let major = agent::JDK_MAJOR.load(Ordering::Relaxed);
        let (vt_hooks, thread_hooked) = thread_starts::during(|| {
            let mut thread_hooked = false;
            let vt_hooks = vthreads::follow(major, || {
                // LockSupport too: a virtual thread's unparks (vthreads::instrument_lock_support).
                if let Some(c) = jni.find_class(vthreads::LOCK_SUPPORT) {
                    jni.delete_local_ref(c);
                }
                let changed = attach::retransform_loaded(
                    jni,
                    &[
                        vthreads::VIRTUAL_THREAD,
                        thread_starts::THREAD,
                        vthreads::LOCK_SUPPORT,
                    ],
                );
                thread_hooked = changed.contains(thread_starts::THREAD);
                if !changed.contains(vthreads::LOCK_SUPPORT) {
                    eprintln!("weft: cannot instrument LockSupport.unpark; virtual threads' wake-ups are not recorded");
                }
                changed.contains(vthreads::VIRTUAL_THREAD)
            });
            if major < 21 {
                thread_hooked = attach::retransform_loaded(jni, &[thread_starts::THREAD])
                    .contains(thread_starts::THREAD);
            }
            (vt_hooks, thread_hooked)
        });
        thread_starts::report(thread_hooked);
        if vt_hooks {
            p.header.set(
                weft_trace::header_keys::VT_MOUNTS,
                vthreads::mounts_how(major).to_string(),
            );
        }
        startup_log::step("VMInit: lock classes");
        vm_header(jvmti, jni, &mut p.header, p.clock.ticks_per_sec());
        p.header.set(
            weft_trace::header_keys::LOCKS_AQS_INSTRUMENTED,
            AQS_SEEN.load(Ordering::Relaxed).to_string(),
        );
        if let Err(e) = p.file.write_all(&weft_trace::encode_file_header(&p.header)) {
            sink::set_recording(false);
            eprintln!(
                "weft: cannot write trace {}: {e}; running without recording",
                p.path
            );
            return Ok(());
        }
        sink::settle_fence_mode();
        sink::start_writer(sink::WriterConfig {
            file: p.file,
            path: p.path,
            interval: p.options.interval,
        })
        .map_err(|e| format!("cannot start the writer thread: {e}"))?;
        startup_log::step("VMInit: header and writer");
        init?;
        sink::emit_global(&sink::calibration());
        sink::emit_global(&sink::sample());
        record_thread_start(jvmti, jni, thread);
        LIVE.store(true, Ordering::SeqCst);
        sampling::start(jvmti, jni, env);
        if !agent::disabled() {
            agent::start_run_task_probe(jni);
            agent::set_probe_on(jni, true);
        }
        startup_log::step("VMInit: main thread and sampler");
        Ok(())
    });
    startup_log::phase_end(startup_log::Phase::VmInit, t0);
}

unsafe extern "system" fn on_vm_death(_t: *mut JvmtiEnvRaw, env: *mut JNIEnv) {
    let t0 = startup_log::start();
    let jni = jni_of(env);
    guard(jni, "VMDeath", || {
        if let Some(jni) = jni {
            agent::set_probe_on(jni, false);
            forkjoin::flush_all(jni);
        }
        sampling::log_thread_cpu();
        // The final on-CPU and run-queue totals of the threads still alive.
        schedstat::tick();
        LIVE.store(false, Ordering::SeqCst);
        sink::set_recording(false);
        if let (Some(jni), Some(jvmti)) = (jni, agent::jvmti()) {
            sampling::finish(jvmti, jni);
        }
        sink::push_global_force(&sink::calibration());
        sink::push_global_force(&Record::End { ts: clock::now() });
        sink::finish();
        close_probe_jar();
        Ok(())
    });
    startup_log::phase_end(startup_log::Phase::VmDeath, t0);
    startup_log::report();
}

/// The current thread's ThreadStart record, and its usage so far (its ThreadEnd
/// reports the usage since then).
fn record_thread_start(jvmti: Jvmti, jni: Jni, thread: jobject) {
    sink::emit(&agent::thread_start_record(jvmti, jni, thread));
    let usage = agent::thread_usage();
    sink::with_local(|l| {
        l.started = true;
        l.usage_at_start = usage;
    });
}

unsafe extern "system" fn on_thread_start(_t: *mut JvmtiEnvRaw, env: *mut JNIEnv, thread: jobject) {
    if !LIVE.load(Ordering::Relaxed) || !sink::recording() {
        return;
    }
    let t0 = startup_log::start();
    let jni = jni_of(env);
    guard(jni, "ThreadStart", || {
        let jni = jni.ok_or("no JNI env")?;
        let jvmti = agent::jvmti().ok_or("no JVMTI env")?;
        if sink::with_local(|l| std::mem::replace(&mut l.started, true)) != Some(false) {
            return Ok(()); // already recorded (the main thread at VMInit)
        }
        record_thread_start(jvmti, jni, thread);
        forkjoin::thread_start(jni);
        sampling::thread_start(env);
        Ok(())
    });
    startup_log::phase_end(startup_log::Phase::ThreadStart, t0);
}

unsafe extern "system" fn on_thread_end(_t: *mut JvmtiEnvRaw, env: *mut JNIEnv, _thread: jobject) {
    sampling::thread_end();
    if !LIVE.load(Ordering::Relaxed) {
        return;
    }
    let t0 = startup_log::start();
    let jni = jni_of(env);
    guard(jni, "ThreadEnd", || {
        if let Some(jni) = jni {
            forkjoin::thread_end(jni);
        }
        if let Some(index) = sink::current_thread_index() {
            schedstat::finish_current(index);
        }
        sink::emit_and_flush(&agent::thread_end_record());
        sink::end_local();
        Ok(())
    });
    startup_log::phase_end(startup_log::Phase::ThreadEnd, t0);
}

unsafe extern "system" fn on_gc_start(_t: *mut JvmtiEnvRaw) {
    // No JNI here: GC callbacks run at a safepoint.
    guard(None, "GarbageCollectionStart", || {
        sink::emit_global(&Record::GcStart { ts: clock::now() });
        Ok(())
    })
}

unsafe extern "system" fn on_gc_finish(_t: *mut JvmtiEnvRaw) {
    guard(None, "GarbageCollectionFinish", || {
        sink::emit_global(&Record::GcEnd { ts: clock::now() });
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "system" fn on_class_file_load_hook(
    t: *mut JvmtiEnvRaw,
    env: *mut JNIEnv,
    class_being_redefined: jclass,
    loader: jobject,
    name: *const c_char,
    _protection_domain: jobject,
    class_data_len: jint,
    class_data: *const u8,
    new_class_data_len: *mut jint,
    new_class_data: *mut *mut u8,
) {
    if !STARTED.load(Ordering::Relaxed)
        || agent::disabled()
        || name.is_null()
        || class_data.is_null()
        || class_data_len <= 0
    {
        return;
    }
    let t0 = startup_log::start();
    // Redefinitions: only our own retransformation (attach, or the lock classes at
    // VMInit) instruments; the body-only rewrite of a loaded class.
    let load = if !class_being_redefined.is_null() {
        match attach::hook_redefinition(t) {
            Some(l) => l,
            None => return,
        }
    } else if attach::stopped() {
        return;
    } else if attach::recording_session() {
        // Put back at the session's end: no fields, as for loaded classes.
        pipeline::Load::Retransform
    } else {
        pipeline::Load::First
    };
    // SAFETY: JVMTI passes a NUL-terminated class name and class_data_len bytes of class data.
    let (name, bytes) = unsafe {
        (
            CStr::from_ptr(name).to_string_lossy(),
            std::slice::from_raw_parts(class_data, class_data_len as usize),
        )
    };
    let new_bytes = if name == vthreads::VIRTUAL_THREAD {
        // JDK 21+, at VMInit only: the start/end and mount hooks (vthreads.rs).
        guard(jni_of(env), "ClassFileLoadHook", || {
            Ok(vthreads::instrument_virtual_thread(bytes))
        })
    } else if name == vthreads::LOCK_SUPPORT && vthreads::hooks_wanted() {
        // JDK 21+, at VMInit only: the hook of `unpark(Thread)` (vthreads.rs).
        guard(jni_of(env), "ClassFileLoadHook", || {
            Ok(vthreads::instrument_lock_support(bytes))
        })
    } else if name == thread_starts::THREAD {
        // At VMInit only: the hook of `Thread.start()` (thread_starts.rs).
        guard(jni_of(env), "ClassFileLoadHook", || {
            Ok(thread_starts::instrument_thread(bytes))
        })
    } else {
        if decide::skip_class(&name) {
            startup_log::hook_end(t0, false);
            return;
        }
        if class_being_redefined.is_null() {
            locks::class_loaded(!loader.is_null(), &name);
        }
        guard(jni_of(env), "ClassFileLoadHook", || {
            Ok(transform(bytes, load, !loader.is_null()))
        })
    };
    let changed = new_bytes.is_some();
    if let (Some(b), Some(jvmti)) = (new_bytes, agent::jvmti()) {
        if let Ok(p) = jvmti.allocate_copy(&b) {
            // SAFETY: out-pointers passed by JVMTI for this event.
            unsafe {
                *new_class_data_len = b.len() as jint;
                *new_class_data = p;
            }
        }
    }
    startup_log::hook_end(t0, changed);
}

/// The probe classes of a launched JVM: those only an attach session uses
/// (attach::ATTACH_ONLY) stay out of its jar and are never loaded.
fn launched_probe_classes() -> Vec<(&'static str, &'static [u8])> {
    PROBE_CLASSES
        .iter()
        .filter(|(file, _)| !attach::ATTACH_ONLY.iter().any(|p| file.starts_with(p)))
        .copied()
        .collect()
}

/// Decides and applies the instrumentation of one class at first load (the pipeline
/// shared with the offline transform); None keeps the original bytes.
fn transform(bytes: &[u8], load: pipeline::Load, has_loader: bool) -> Option<Vec<u8>> {
    let summary = weft_classfile::summarize(bytes).ok()?;
    if summary.name == AQS {
        AQS_SEEN.store(true, Ordering::Relaxed);
    }
    let major = agent::JDK_MAJOR.load(Ordering::Relaxed);
    // --lock-detail: the monitor probes first (a class they cannot rewrite keeps its
    // monitors as they were), then the task probes on the result.
    let monitored = (load == pipeline::Load::First
        && monitors::instruments(has_loader, &summary.name))
    .then(|| weft_classfile::instrument_monitors(bytes).ok().flatten())
    .flatten();
    let run = |b: &[u8]| {
        pipeline::transform(b, &summary, major, load, |s, is_plumbing| {
            let mut h = lock(&HIERARCHY);
            let h = h.get_or_insert_with(decide::Hierarchy::default);
            h.add(s);
            let mut d = decide::decide(s, h, is_plumbing);
            if let Some(w) = WINDOW.get().filter(|w| w.class == s.name) {
                let window = decide::window_wraps(s, &w.method, &d.wraps);
                d.wraps.extend(window);
            }
            d
        })
    };
    let outcome = match (&monitored, run(monitored.as_deref().unwrap_or(bytes))) {
        // The task probes refused the monitored class: they come first.
        (Some(_), pipeline::Outcome::Rejected(_)) => return changed(run(bytes), &summary),
        (_, o) => o,
    };
    match outcome {
        pipeline::Outcome::Changed(_) => changed(outcome, &summary),
        _ => monitored,
    }
}

/// The bytes of a changed class, after defining its probes in the trace.
fn changed(outcome: pipeline::Outcome, summary: &weft_classfile::ClassSummary) -> Option<Vec<u8>> {
    let pipeline::Outcome::Changed(t) = outcome else {
        return None;
    };
    if attach::retransforming() || attach::recording_session() {
        attach::note_loaded_change(&summary.name);
    }
    let class = summary.name.replace('/', ".");
    for p in t.probed {
        if p.method == "run"
            && p.descriptor == "()V"
            && matches!(
                p.kind,
                weft_trace::ProbeKind::Execution | weft_trace::ProbeKind::PlumbingExecution
            )
        {
            agent::note_run_probed(&summary.name);
        }
        vthreads::probe_defined(&class, &p.method, &p.descriptor, p.kind, p.id);
        sink::emit_global(&Record::ProbeDef {
            id: p.id as u32,
            kind: p.kind,
            class: class.as_str().into(),
            method: p.method.into(),
            descriptor: p.descriptor.into(),
        });
    }
    if let Some(id) = t.creation {
        sink::emit_global(&Record::ProbeDef {
            id: id as u32,
            kind: weft_trace::ProbeKind::Creation,
            class: class.into(),
            method: "<init>".into(),
            descriptor: "".into(),
        });
    }
    if t.fields_added {
        forkjoin::fields_added(&summary.name);
    }
    Some(t.bytes)
}
