//! Fork-join probes (docs/forkjoin.md): what to wrap in `ForkJoinTask` /
//! `ForkJoinPool`, the fields added to `ForkJoinTask` and `ForkJoinWorkerThread`,
//! and the natives of `weft.FjProbe`, whose per-thread `long[]` event buffers are
//! decoded here into trace records (tags 27–35) in batches.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use weft_classfile::{ClassSummary, FieldRequest, Hooks};
use weft_trace::ProbeKind;

use crate::agent::{self, SiteKind};
use crate::decide::Wrap;
use crate::jni::{jboolean, jclass, jint, jlong, jmethodID, jobject, JNIEnv, Jni};
use crate::jvmti::Jvmti;
use crate::sink::{self, ThreadBuf};

/// Probe kind code of fork-join probes (bits 24..27); the sub-kind is in bits 20..23.
pub const KIND_CODE: u8 = 11;
pub const KIND: ProbeKind = ProbeKind::Other(KIND_CODE);

const FORK: i32 = 1;
const EXEC: i32 = 2;
const CANCEL: i32 = 3;
const REINIT: i32 = 4;
const JOIN: i32 = 5;
const SUBMIT: i32 = 6;

const FJ_TASK: &str = "java/util/concurrent/ForkJoinTask";
const FJ_POOL: &str = "java/util/concurrent/ForkJoinPool";
const FJ_WORKER: &str = "java/util/concurrent/ForkJoinWorkerThread";

const ACC_PUBLIC: u16 = 0x0001;
const ACC_STATIC: u16 = 0x0008;
const ACC_TRANSIENT: u16 = 0x0080;

fn sub_kind(method: &str) -> Option<i32> {
    Some(match method {
        "fork" => FORK,
        "doExec" => EXEC,
        "cancel" => CANCEL,
        "reinitialize" => REINIT,
        "awaitDone" | "join" | "get" | "quietlyJoin" => JOIN,
        "externalSubmit" | "poolSubmit" => SUBMIT,
        _ => return None,
    })
}

/// The slow path of every wait for a task (`join`, `get`, `quietlyJoin`, `invoke`,
/// `invokeAll`, the pool's `invoke`), entered only while the task is not done:
/// 17 `awaitDone(ForkJoinPool, boolean, boolean, boolean, long)`, 21
/// `awaitDone(int, long)`, 25 `awaitDone(boolean, long)` (25's other overload is
/// the blocking part, called by this one).
const AWAIT_DONE: &[&str] = &[
    "(Ljava/util/concurrent/ForkJoinPool;ZZZJ)I",
    "(IJ)I",
    "(ZJ)I",
];

/// The public waits, wrapped instead on a JDK whose `awaitDone` is none of the above.
const PUBLIC_WAITS: &[(&str, &str)] = &[
    ("join", "()"),
    ("get", "()"),
    ("get", "(JLjava/util/concurrent/TimeUnit;)"),
    ("quietlyJoin", "()V"),
];

/// The fork-join wraps of a class (ForkJoinTask and ForkJoinPool only).
pub fn wraps(s: &ClassSummary) -> Vec<Wrap> {
    let await_done = s.methods.iter().any(|m| {
        m.name == "awaitDone"
            && m.access & ACC_STATIC == 0
            && AWAIT_DONE.contains(&m.descriptor.as_str())
    });
    let mut wanted: Vec<(&str, &str)> = match s.name.as_str() {
        // doExec is ()I on 17/21 and ()V on 25: matched by name (prefix "()").
        FJ_TASK => vec![
            ("fork", "()"),
            ("doExec", "()"),
            ("cancel", "(Z)Z"),
            ("reinitialize", "()V"),
        ],
        // The funnel of every external submission: 17 externalSubmit(ForkJoinTask),
        // 21/25 poolSubmit(boolean, ForkJoinTask) (the first reference argument is passed).
        FJ_POOL => vec![
            ("externalSubmit", "(Ljava/util/concurrent/ForkJoinTask;)"),
            ("poolSubmit", "(ZLjava/util/concurrent/ForkJoinTask;)"),
        ],
        _ => return Vec::new(),
    };
    if s.name == FJ_TASK {
        if await_done {
            wanted.extend(AWAIT_DONE.iter().map(|d| ("awaitDone", *d)));
        } else {
            wanted.extend_from_slice(PUBLIC_WAITS);
        }
    }
    let mut out = Vec::new();
    for m in &s.methods {
        if m.access & ACC_STATIC != 0 {
            continue;
        }
        if wanted
            .iter()
            .any(|(n, d)| m.name == *n && m.descriptor.starts_with(d))
        {
            out.push(Wrap {
                name: m.name.clone(),
                descriptor: m.descriptor.clone(),
                kind: KIND,
                pass_arg0: s.name == FJ_POOL,
                loop_body: false,
                window: false,
                late: false,
            });
        }
    }
    out
}

/// The FjProbe hooks a fork-join wrap calls (None for other wraps): each probe point
/// has its own small static method, called directly by the wrapper.
pub fn hooks(w: &Wrap) -> Option<Hooks> {
    if w.kind != KIND {
        return None;
    }
    const O: &str = "(Ljava/lang/Object;)V";
    const OO: &str = "(Ljava/lang/Object;Ljava/lang/Object;)V";
    let (enter, exit) = match sub_kind(&w.name)? {
        FORK => (Some(("fork", O)), None),
        EXEC => (Some(("exec", O)), Some(("execEnd", O))),
        CANCEL => (None, Some(("cancelEnd", O))),
        REINIT => (Some(("reinit", O)), None),
        JOIN => (Some(("join", O)), Some(("joinEnd", O))),
        SUBMIT => (Some(("submit", OO)), None),
        _ => return None,
    };
    let own = |x: Option<(&str, &str)>| x.map(|(n, d)| (n.to_string(), d.to_string()));
    // The same hooks, by name and descriptor, in both classes.
    let class = if w.late {
        "weft/FjLateProbe"
    } else {
        "weft/FjProbe"
    };
    Some(Hooks {
        class: class.into(),
        enter: own(enter),
        exit: own(exit),
        last_ref_arg: false,
    })
}

/// Fields added at first load.
pub fn fields(class: &str) -> Vec<FieldRequest> {
    let (name, desc) = match class {
        FJ_TASK => ("weft$u", "J"),
        FJ_WORKER => ("weft$b", "Ljava/lang/Object;"),
        _ => return Vec::new(),
    };
    vec![FieldRequest {
        access: ACC_PUBLIC | ACC_TRANSIENT,
        name: name.into(),
        descriptor: desc.into(),
    }]
}

/// Which of ForkJoinTask (bit 0) and ForkJoinWorkerThread (bit 1) got their field.
static FIELDS_ADDED: AtomicU32 = AtomicU32::new(0);

/// Remembers that a class got the fields of [`fields`] (the pipeline added them).
pub fn fields_added(class: &str) {
    let bit = match class {
        FJ_TASK => 1,
        FJ_WORKER => 2,
        _ => 0,
    };
    FIELDS_ADDED.fetch_or(bit, Ordering::Relaxed);
}

/// Whether both fork-join classes have their fields (FjProbe.H, once: it loads
/// both classes first, through the class hook).
#[no_mangle]
pub extern "system" fn Java_weft_FjProbe_nFieldsAdded(_e: *mut JNIEnv, _c: jclass) -> jboolean {
    (FIELDS_ADDED.load(Ordering::Relaxed) == 3) as jboolean
}

/// Whether FjProbe's timestamps come from [`Java_weft_FjProbe_nTicks`] (the TSC)
/// rather than System.nanoTime (then the agent's ticks are CLOCK_MONOTONIC ns too).
#[no_mangle]
pub extern "system" fn Java_weft_FjProbe_nTicksAreTsc(_e: *mut JNIEnv, _c: jclass) -> jboolean {
    crate::clock::uses_tsc() as jboolean
}

/// The agent's clock for FjProbe's timestamps, which calls it only when the clock is
/// the TSC: a plain (unordered) `rdtsc`.
#[no_mangle]
pub extern "system" fn Java_weft_FjProbe_nTicks(_e: *mut JNIEnv, _c: jclass) -> jlong {
    crate::clock::tsc() as jlong
}

/// Whether a class is (by its known ancestors) a ForkJoinTask: its constructors
/// get no creation probe (a JNI call per task; the push record stands for it).
pub fn is_fj_task(h: &crate::decide::Hierarchy, name: &str) -> bool {
    [
        FJ_TASK,
        "java/util/concurrent/RecursiveTask",
        "java/util/concurrent/RecursiveAction",
        "java/util/concurrent/CountedCompleter",
    ]
    .iter()
    .any(|a| h.has_ancestor(name, a))
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A probe id for a fork-join wrap of `method`.
pub fn new_probe(method: &str) -> Option<i32> {
    let sub = sub_kind(method)?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    if n >= 1 << 20 {
        return None;
    }
    Some(((KIND_CODE as i32) << 24) | (sub << 20) | n as i32)
}

/// FjProbe's methods (skipped when a site is captured).
pub fn probe_methods(jvmti: Jvmti, jni: Jni) -> Vec<usize> {
    // Nested classes are loaded now: the probe class directory is removed after VMInit.
    let Some((c, mut v)) = probe_class(jvmti, jni, "weft/FjProbe", &["H", "Buf"]) else {
        return Vec::new();
    };
    let g = jni.new_global_ref(c) as usize;
    let thread_end = jni
        .get_static_method_id(c, "threadEnd", "()V")
        .map(|m| m as usize);
    let flush_all = jni
        .get_static_method_id(c, "flushAll", "()V")
        .map(|m| m as usize);
    let thread_start = jni
        .get_static_method_id(c, "threadStart", "()V")
        .map(|m| m as usize);
    jni.check_clear();
    if !crate::attach::LAUNCHED.load(Ordering::Relaxed) {
        v.extend(late_probe(jvmti, jni));
    }
    if let (Some(t), Some(f), Some(s)) = (thread_end, flush_all, thread_start) {
        let _ = REFS.set(FjRefs {
            class: g,
            thread_end: t,
            flush_all: f,
            thread_start: s,
        });
    }
    v
}

/// FjProbe (a global ref) and its static methods the agent calls.
struct FjRefs {
    class: usize,
    thread_end: usize,
    flush_all: usize,
    thread_start: usize,
}

static REFS: OnceLock<FjRefs> = OnceLock::new();

/// A probe class (a local ref) and its methods, after loading its `nested` classes.
fn probe_class(
    jvmti: Jvmti,
    jni: Jni,
    class: &str,
    nested: &[&str],
) -> Option<(jclass, Vec<usize>)> {
    for n in nested {
        if let Some(c) = jni.find_class(&format!("{class}${n}")) {
            jni.delete_local_ref(c);
        }
        jni.check_clear();
    }
    let Some(c) = jni.find_class(class) else {
        jni.check_clear();
        return None;
    };
    let methods = jvmti
        .get_class_methods(c)
        .map(|v| v.into_iter().map(|m| m as usize).collect())
        .unwrap_or_default();
    Some((c, methods))
}

/// FjLateProbe (a global ref) and its static methods the agent calls.
struct LateRefs {
    class: usize,
    begin: usize,
    end: usize,
    thread_end: usize,
}

static LATE: OnceLock<LateRefs> = OnceLock::new();

/// FjLateProbe's methods (an attach session: its hooks, its session calls).
fn late_probe(jvmti: Jvmti, jni: Jni) -> Vec<usize> {
    let Some((c, v)) = probe_class(jvmti, jni, "weft/FjLateProbe", &["Session", "Table"]) else {
        return Vec::new();
    };
    let m = |name: &str| jni.get_static_method_id(c, name, "()V").map(|m| m as usize);
    let (begin, end, thread_end) = (m("begin"), m("end"), m("threadEnd"));
    jni.check_clear();
    if let (Some(begin), Some(end), Some(thread_end)) = (begin, end, thread_end) {
        let _ = LATE.set(LateRefs {
            class: jni.new_global_ref(c) as usize,
            begin,
            end,
            thread_end,
        });
    }
    jni.delete_local_ref(c);
    v
}

/// An attach session starts: FjLateProbe's state for it (before the probes go on).
pub fn late_begin(jni: Jni) {
    if let Some(r) = LATE.get() {
        jni.call_static_void_method0(r.class as jclass, r.begin as jmethodID);
    }
}

/// Gives a starting pool worker its buffer (ThreadStart), so that the hooks never
/// see a worker without one: a worker that starts after the hooks are compiled
/// would otherwise take a branch C2 left out, and deoptimize the hook.
pub fn thread_start(jni: Jni) {
    if let Some(r) = REFS.get() {
        jni.call_static_void_method0(r.class as jclass, r.thread_start as jmethodID);
    }
}

/// Flushes the ending thread's fork-join buffer (ThreadEnd, before its last block).
pub fn thread_end(jni: Jni) {
    if let Some(r) = REFS.get() {
        jni.call_static_void_method0(r.class as jclass, r.thread_end as jmethodID);
    }
    if let Some(r) = LATE.get() {
        jni.call_static_void_method0(r.class as jclass, r.thread_end as jmethodID);
    }
}

/// Flushes every fork-join buffer (VMDeath or the end of an attach session, probes
/// already off); an attach session's side tables are dropped.
pub fn flush_all(jni: Jni) {
    if let Some(r) = REFS.get() {
        jni.call_static_void_method0(r.class as jclass, r.flush_all as jmethodID);
    }
    if let Some(r) = LATE.get() {
        jni.call_static_void_method0(r.class as jclass, r.end as jmethodID);
    }
}

fn env(e: *mut JNIEnv) -> Option<Jni> {
    // SAFETY: the JVM passes the current thread's JNIEnv to every native method.
    unsafe { Jni::from_raw(e) }
}

/// Per FjProbe buffer: the trace buffer of its thread and the buffer's index
/// (usage ids are `index << 40 | n`; the reader counts the pushes).
struct Handle {
    buf: Arc<ThreadBuf>,
    index: u32,
}

/// Returns a handle for buffer number `index` of this thread (leaked, one per thread).
#[no_mangle]
pub extern "system" fn Java_weft_FjProbe_nAttach(e: *mut JNIEnv, _c: jclass, index: jint) -> jlong {
    buffer_handle(e, index)
}

/// The same for FjLateProbe's buffers (one per thread and attach session).
#[no_mangle]
pub extern "system" fn Java_weft_FjLateProbe_nAttach(
    e: *mut JNIEnv,
    _c: jclass,
    index: jint,
) -> jlong {
    buffer_handle(e, index)
}

fn buffer_handle(e: *mut JNIEnv, index: jint) -> jlong {
    agent::guard(env(e), "FjProbe.nAttach", || {
        Ok(sink::local_buf().map_or(0, |buf| {
            Box::into_raw(Box::new(Handle {
                buf,
                index: index as u32,
            })) as jlong
        }))
    })
}

#[no_mangle]
pub extern "system" fn Java_weft_FjProbe_nSite(
    e: *mut JNIEnv,
    _c: jclass,
    task: jobject,
    cls: jint,
) -> jint {
    let Some(jni) = env(e) else { return 0 };
    agent::guard(Some(jni), "FjProbe.nSite", || {
        if !sink::recording() {
            return Ok(0);
        }
        Ok(agent::capture_site(jni, SiteKind::Fork, cls as u32, task) as jint)
    })
}

/// Copies the first `n` events of a buffer into its thread's trace block as one
/// batch record, as they are (no decoding here: the reader does it).
#[no_mangle]
pub extern "system" fn Java_weft_FjProbe_nFlush(
    e: *mut JNIEnv,
    _c: jclass,
    handle: jlong,
    ev: jobject,
    n: jint,
) {
    let Some(jni) = env(e) else { return };
    agent::guard(Some(jni), "FjProbe.nFlush", || {
        if handle == 0 || n <= 0 {
            return Ok(());
        }
        // SAFETY: `handle` came from nAttach (Box::into_raw, never released).
        let h: &Handle = unsafe { &*(handle as *const Handle) };
        // Inside the critical region: no JNI, and the buffer lock is only ever held
        // briefly by threads that do not wait for Java.
        jni.with_long_array_bytes(ev, n as usize, |words| {
            sink::with_encoder(&h.buf, |enc| {
                enc.push_fj_events(h.index, words);
                false
            })
        })
        .ok_or("cannot read the fork-join event buffer")?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    fn task_class(methods: &[(&str, &str, u16)]) -> ClassSummary {
        crate::decide::tests::class(FJ_TASK, "java/lang/Object", &[], methods)
    }

    fn names(w: &[Wrap]) -> Vec<String> {
        w.iter()
            .map(|w| format!("{}{}", w.name, w.descriptor))
            .collect()
    }

    const COMMON: [(&str, &str, u16); 4] = [
        ("fork", "()Ljava/util/concurrent/ForkJoinTask;", ACC_PUBLIC),
        ("doExec", "()I", 0),
        ("join", "()Ljava/lang/Object;", ACC_PUBLIC),
        ("get", "()Ljava/lang/Object;", ACC_PUBLIC),
    ];

    /// With a known awaitDone (here 25's pair of overloads), the wait hooks go on the
    /// entry overload only, not on join/get.
    #[test]
    fn waits_are_hooked_on_await_done_when_known() {
        let mut m = COMMON.to_vec();
        m.push(("awaitDone", "(ZJ)I", 0x0002));
        m.push((
            "awaitDone",
            "(Ljava/util/concurrent/ForkJoinPool;IZJ)I",
            0x0002,
        ));
        let w = wraps(&task_class(&m));
        assert_eq!(
            names(&w),
            [
                "fork()Ljava/util/concurrent/ForkJoinTask;",
                "doExec()I",
                "awaitDone(ZJ)I"
            ]
        );
        let await_hooks = hooks(&w[2]).unwrap();
        assert_eq!(await_hooks.enter.unwrap().0, "join");
        assert_eq!(await_hooks.exit.unwrap().0, "joinEnd");
    }

    /// A JDK whose awaitDone has another shape: the public waits are hooked instead.
    #[test]
    fn waits_fall_back_to_join_and_get() {
        let mut m = COMMON.to_vec();
        m.push(("awaitDone", "(Ljava/lang/Object;)I", 0x0002));
        let w = wraps(&task_class(&m));
        assert_eq!(
            names(&w),
            [
                "fork()Ljava/util/concurrent/ForkJoinTask;",
                "doExec()I",
                "join()Ljava/lang/Object;",
                "get()Ljava/lang/Object;"
            ]
        );
        assert!(w.iter().all(|w| hooks(w).is_some()));
    }
}
