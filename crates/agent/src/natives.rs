//! The native methods of `weft.Probe`, linked by their exported
//! `Java_weft_Probe_*` names. Each body runs under [`agent::guard`].

use weft_trace::Record;

use crate::agent::{self, SiteKind};
use crate::clock;
use crate::jni::{jboolean, jclass, jint, jobject, jstring, JNIEnv, Jni};
use crate::sink;

fn env(env: *mut JNIEnv) -> Option<Jni> {
    // SAFETY: the JVM passes the current thread's JNIEnv to every native method.
    unsafe { Jni::from_raw(env) }
}

#[no_mangle]
pub extern "system" fn Java_weft_Probe_nBegin(
    e: *mut JNIEnv,
    _c: jclass,
    probe: jint,
    cls: jint,
    ident: jint,
    inner_cls: jint,
    inner_ident: jint,
) {
    let ts = clock::now();
    agent::guard(env(e), "nBegin", || {
        sink::emit(&Record::TaskBegin {
            ts,
            probe: probe as u32,
            class_id: cls as u32,
            ident: ident as u32,
            inner_class_id: inner_cls as u32,
            inner_ident: inner_ident as u32,
        });
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_weft_Probe_nEnd(e: *mut JNIEnv, _c: jclass, probe: jint, ident: jint) {
    let ts = clock::now();
    agent::guard(env(e), "nEnd", || {
        sink::emit(&Record::TaskEnd {
            ts,
            probe: probe as u32,
            ident: ident as u32,
        });
        Ok(())
    })
}

/// Whether objects of class `class_id` are plumbing that wraps a task (so that
/// the unwrap in Java is worth it).
#[no_mangle]
pub extern "system" fn Java_weft_Probe_nWrapsTask(
    e: *mut JNIEnv,
    _c: jclass,
    class_id: jint,
) -> jboolean {
    agent::guard(env(e), "nWrapsTask", || {
        Ok(agent::wraps_task(class_id as u32) as jboolean)
    })
}

/// Whether the `run()` objects of class `cls` run has an execution probe of its own
/// (agent::run_probed): `Probe.runTask` records the others.
#[no_mangle]
pub extern "system" fn Java_weft_Probe_nRunProbed(
    e: *mut JNIEnv,
    _c: jclass,
    cls: jclass,
) -> jboolean {
    let Some(jni) = env(e) else { return 1 };
    agent::guard(Some(jni), "nRunProbed", || {
        Ok(agent::run_probed(jni, cls) as jboolean)
    })
}

/// One step of the unwrap of plumbing probe `probe`'s object (agent::first_step).
#[no_mangle]
pub extern "system" fn Java_weft_Probe_nFirst(
    e: *mut JNIEnv,
    _c: jclass,
    probe: jint,
    self_: jobject,
) -> jobject {
    object_native(e, "nFirst", |jni| agent::first_step(jni, probe, self_))
}

/// One step of the unwrap of a plumbing object of class `cls` (agent::step).
#[no_mangle]
pub extern "system" fn Java_weft_Probe_nStep(
    e: *mut JNIEnv,
    _c: jclass,
    o: jobject,
    cls: jint,
) -> jobject {
    object_native(e, "nStep", |jni| agent::step(jni, o, cls as u32))
}

/// The body of a native that returns an object (null when the agent fails).
fn object_native(e: *mut JNIEnv, what: &str, f: impl FnOnce(Jni) -> jobject) -> jobject {
    let Some(jni) = env(e) else {
        return std::ptr::null_mut();
    };
    agent::guard(Some(jni), what, || Ok(Ptr(f(jni)))).0
}

struct Ptr(jobject);
impl Default for Ptr {
    fn default() -> Self {
        Ptr(std::ptr::null_mut())
    }
}

#[no_mangle]
pub extern "system" fn Java_weft_Probe_nSubmitBegin(
    e: *mut JNIEnv,
    _c: jclass,
    probe: jint,
    executor_cls: jint,
    task_cls: jint,
    task_ident: jint,
    inner_cls: jint,
    inner_ident: jint,
) {
    let ts = clock::now();
    let Some(jni) = env(e) else { return };
    agent::guard(Some(jni), "nSubmitBegin", || {
        // Probe.java calls this for the outermost submission of a thread only.
        if task_cls == 0 || !sink::recording() {
            return Ok(());
        }
        // Sample sites per user task class: every runAsync submits an AsyncRun.
        let sampled_cls = if inner_cls != 0 { inner_cls } else { task_cls };
        let site = agent::capture_site(
            jni,
            SiteKind::Submit,
            sampled_cls as u32,
            std::ptr::null_mut(),
        );
        sink::emit(&Record::Submit {
            ts,
            probe: probe as u32,
            executor_class_id: executor_cls as u32,
            task_class_id: task_cls as u32,
            task_ident: task_ident as u32,
            inner_class_id: inner_cls as u32,
            inner_ident: inner_ident as u32,
            site,
        });
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_weft_Probe_nCreated(
    e: *mut JNIEnv,
    _c: jclass,
    self_: jobject,
    cls: jint,
    ident: jint,
) {
    let ts = clock::now();
    let Some(jni) = env(e) else { return };
    agent::guard(Some(jni), "nCreated", || {
        // Each constructor of a class hierarchy probes the same object: the first only.
        let key = (cls as u32, ident as u32);
        let dup = sink::with_local(|l| std::mem::replace(&mut l.last_created, key) == key);
        if dup == Some(false) {
            emit_created(jni, ts, SiteKind::Created, (cls, ident), self_);
        }
        Ok(())
    })
}

/// `Thread.start()` of `thread` (Probe.threadStart): recorded as the Thread object's
/// creation by the starting thread, its site the caller of `start` (thread_starts.rs).
#[no_mangle]
pub extern "system" fn Java_weft_Probe_nThreadStart(
    e: *mut JNIEnv,
    _c: jclass,
    thread: jobject,
    cls: jint,
    ident: jint,
) {
    let ts = clock::now();
    let Some(jni) = env(e) else { return };
    agent::guard(Some(jni), "nThreadStart", || {
        emit_created(jni, ts, SiteKind::ThreadStart, (cls, ident), thread);
        Ok(())
    })
}

/// A `Created` record of `obj` (class id, identity), its site sampled as `kind`.
fn emit_created(jni: Jni, ts: u64, kind: SiteKind, (cls, ident): (jint, jint), obj: jobject) {
    if !sink::recording() {
        return;
    }
    let site = agent::capture_site(jni, kind, cls as u32, obj);
    sink::emit(&Record::Created {
        ts,
        class_id: cls as u32,
        ident: ident as u32,
        site,
    });
}

/// What the probes of class `class_id` leave out on a virtual thread
/// (vthreads::skipped_on_virtual).
#[no_mangle]
pub extern "system" fn Java_weft_Probe_nSkippedOnVirtual(
    e: *mut JNIEnv,
    _c: jclass,
    class_id: jint,
) -> jint {
    agent::guard(env(e), "nSkippedOnVirtual", || {
        Ok(crate::vthreads::skipped_on_virtual(class_id as u32) as jint)
    })
}

#[no_mangle]
pub extern "system" fn Java_weft_Probe_nRegisterClass(
    e: *mut JNIEnv,
    _c: jclass,
    class: jclass,
    name: jstring,
    hidden: jboolean,
    nest_host: jclass,
) -> jint {
    let Some(jni) = env(e) else { return 0 };
    agent::guard(Some(jni), "nRegisterClass", || {
        let name = jni.string(name).unwrap_or_default();
        Ok(agent::register_class(jni, class, &name, hidden != 0, nest_host) as jint)
    })
}

#[no_mangle]
pub extern "system" fn Java_weft_Probe_nDisabled(e: *mut JNIEnv, _c: jclass, reason: jstring) {
    let Some(jni) = env(e) else { return };
    let r = std::panic::catch_unwind(|| jni.string(reason).unwrap_or_default()).unwrap_or_default();
    agent::disable(Some(jni), &format!("exception in probe: {r}"));
}

/// `weft.WindowProbe`: this thread entered the window method.
#[no_mangle]
pub extern "system" fn Java_weft_WindowProbe_nEnter(e: *mut JNIEnv, _c: jclass) {
    let ts = clock::now();
    agent::guard(env(e), "WindowProbe.nEnter", || {
        sink::emit(&Record::WindowEnter { ts });
        Ok(())
    })
}

/// `weft.WindowProbe`: this thread left the window method.
#[no_mangle]
pub extern "system" fn Java_weft_WindowProbe_nExit(e: *mut JNIEnv, _c: jclass) {
    let ts = clock::now();
    agent::guard(env(e), "WindowProbe.nExit", || {
        sink::emit(&Record::WindowExit { ts });
        Ok(())
    })
}

/// One native method: (name, JNI signature, function).
pub type Native = (&'static str, &'static str, *mut std::ffi::c_void);

/// Every native of the probe classes, by class: (name, JNI signature, function).
/// An attach session binds them with RegisterNatives (crates/agent/src/attach.rs).
pub fn table() -> Vec<(&'static str, Vec<Native>)> {
    use crate::{forkjoin as fj, joins, locks, vthreads};
    macro_rules! f {
        ($p:path) => {
            $p as *const () as *mut std::ffi::c_void
        };
    }
    vec![
        (
            "weft/Probe",
            vec![
                ("nBegin", "(IIIII)V", f!(Java_weft_Probe_nBegin)),
                ("nEnd", "(II)V", f!(Java_weft_Probe_nEnd)),
                (
                    "nFirst",
                    "(ILjava/lang/Object;)Ljava/lang/Object;",
                    f!(Java_weft_Probe_nFirst),
                ),
                (
                    "nStep",
                    "(Ljava/lang/Object;I)Ljava/lang/Object;",
                    f!(Java_weft_Probe_nStep),
                ),
                ("nWrapsTask", "(I)Z", f!(Java_weft_Probe_nWrapsTask)),
                (
                    "nRunProbed",
                    "(Ljava/lang/Class;)Z",
                    f!(Java_weft_Probe_nRunProbed),
                ),
                (
                    "nSkippedOnVirtual",
                    "(I)I",
                    f!(Java_weft_Probe_nSkippedOnVirtual),
                ),
                (
                    "nSubmitBegin",
                    "(IIIIII)V",
                    f!(Java_weft_Probe_nSubmitBegin),
                ),
                (
                    "nCreated",
                    "(Ljava/lang/Object;II)V",
                    f!(Java_weft_Probe_nCreated),
                ),
                (
                    "nThreadStart",
                    "(Ljava/lang/Object;II)V",
                    f!(Java_weft_Probe_nThreadStart),
                ),
                (
                    "nRegisterClass",
                    "(Ljava/lang/Class;Ljava/lang/String;ZLjava/lang/Class;)I",
                    f!(Java_weft_Probe_nRegisterClass),
                ),
                (
                    "nDisabled",
                    "(Ljava/lang/String;)V",
                    f!(Java_weft_Probe_nDisabled),
                ),
                (
                    "nJoinBegin",
                    "(III)V",
                    f!(joins::Java_weft_Probe_nJoinBegin),
                ),
                ("nJoinEnd", "(I)V", f!(joins::Java_weft_Probe_nJoinEnd)),
                (
                    "nLockBegin",
                    "(ILjava/lang/Object;Ljava/lang/Object;)V",
                    f!(locks::Java_weft_Probe_nLockBegin),
                ),
                ("nLockEnd", "(I)V", f!(locks::Java_weft_Probe_nLockEnd)),
                (
                    "nLockGaveUp",
                    "(I)V",
                    f!(locks::Java_weft_Probe_nLockGaveUp),
                ),
            ],
        ),
        (
            "weft/FjLateProbe",
            vec![("nAttach", "(I)J", f!(fj::Java_weft_FjLateProbe_nAttach))],
        ),
        (
            "weft/ParkProbe",
            vec![
                (
                    "nBegin",
                    "(Ljava/lang/Object;)V",
                    f!(locks::Java_weft_ParkProbe_nBegin),
                ),
                ("nEnd", "()V", f!(locks::Java_weft_ParkProbe_nEnd)),
            ],
        ),
        (
            "weft/VtProbe",
            vec![
                (
                    "nStart",
                    "(JLjava/lang/Object;II)Ljava/lang/Object;",
                    f!(vthreads::Java_weft_VtProbe_nStart),
                ),
                ("nEnd", "(JIJ)V", f!(vthreads::Java_weft_VtProbe_nEnd)),
                ("nUnmount", "(J)V", f!(vthreads::Java_weft_VtProbe_nUnmount)),
                ("nMount", "(J)V", f!(vthreads::Java_weft_VtProbe_nMount)),
                ("nUnpark", "(J)V", f!(vthreads::Java_weft_VtProbe_nUnpark)),
                (
                    "nParkBegin",
                    "(JLjava/lang/Object;)V",
                    f!(vthreads::Java_weft_VtProbe_nParkBegin),
                ),
                ("nParkEnd", "(J)V", f!(vthreads::Java_weft_VtProbe_nParkEnd)),
            ],
        ),
        (
            "weft/WindowProbe",
            vec![
                ("nEnter", "()V", f!(Java_weft_WindowProbe_nEnter)),
                ("nExit", "()V", f!(Java_weft_WindowProbe_nExit)),
            ],
        ),
        (
            "weft/FjProbe",
            vec![
                (
                    "nFieldsAdded",
                    "()Z",
                    f!(fj::Java_weft_FjProbe_nFieldsAdded),
                ),
                (
                    "nTicksAreTsc",
                    "()Z",
                    f!(fj::Java_weft_FjProbe_nTicksAreTsc),
                ),
                ("nTicks", "()J", f!(fj::Java_weft_FjProbe_nTicks)),
                ("nAttach", "(I)J", f!(fj::Java_weft_FjProbe_nAttach)),
                ("nFlush", "(J[JI)V", f!(fj::Java_weft_FjProbe_nFlush)),
                (
                    "nSite",
                    "(Ljava/lang/Object;I)I",
                    f!(fj::Java_weft_FjProbe_nSite),
                ),
            ],
        ),
    ]
}
