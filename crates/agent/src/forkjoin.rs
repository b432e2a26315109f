//! Fork-join probes (docs/forkjoin.md): what to wrap in `ForkJoinTask` /
//! `ForkJoinPool`, the fields added to `ForkJoinTask` and `ForkJoinWorkerThread`,
//! and the natives of `weft.FjProbe`, whose per-thread `long[]` event buffers are
//! decoded here into trace records (tags 27–35) in batches.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use weft_classfile::{ClassSummary, FieldRequest, Hooks};
use weft_trace::{BlockEncoder, ProbeKind};

use crate::agent::{self, SiteKind};
use crate::decide::Wrap;
use crate::jni::{jboolean, jclass, jint, jlong, jmethodID, jobject, JNIEnv, Jni};
use crate::jvmti::Jvmti;
use crate::sink::{self, Buf};

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
        "join" | "get" | "quietlyJoin" => JOIN,
        "externalSubmit" | "poolSubmit" => SUBMIT,
        _ => return None,
    })
}

/// The fork-join wraps of a class (ForkJoinTask and ForkJoinPool only).
pub fn wraps(s: &ClassSummary) -> Vec<Wrap> {
    let wanted: &[(&str, &str)] = match s.name.as_str() {
        // doExec is ()I on 17/21 and ()V on 25: matched by name (prefix "()").
        FJ_TASK => &[
            ("fork", "()"),
            ("doExec", "()"),
            ("cancel", "(Z)Z"),
            ("reinitialize", "()V"),
            ("join", "()"),
            ("get", "()"),
            ("get", "(JLjava/util/concurrent/TimeUnit;)"),
            ("quietlyJoin", "()V"),
        ],
        // The funnel of every external submission: 17 externalSubmit(ForkJoinTask),
        // 21/25 poolSubmit(boolean, ForkJoinTask) (the first reference argument is passed).
        FJ_POOL => &[
            ("externalSubmit", "(Ljava/util/concurrent/ForkJoinTask;)"),
            ("poolSubmit", "(ZLjava/util/concurrent/ForkJoinTask;)"),
        ],
        _ => return Vec::new(),
    };
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
    Some(Hooks {
        class: "weft/FjProbe".into(),
        enter: own(enter),
        exit: own(exit),
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

/// Adds the fields of [`fields`] to a class and remembers that it has them.
pub fn add_fields(class: &str, bytes: &[u8], fields: &[FieldRequest]) -> Option<Vec<u8>> {
    let (b, _) = weft_classfile::add_fields(bytes, fields).ok()?;
    let bit = match class {
        FJ_TASK => 1,
        FJ_WORKER => 2,
        _ => 0,
    };
    FIELDS_ADDED.fetch_or(bit, Ordering::Relaxed);
    Some(b)
}

/// Whether both fork-join classes have their fields (FjProbe.H, once: it loads
/// both classes first, through the class hook).
#[no_mangle]
pub extern "system" fn Java_weft_FjProbe_nFieldsAdded(_e: *mut JNIEnv, _c: jclass) -> jboolean {
    (FIELDS_ADDED.load(Ordering::Relaxed) == 3) as jboolean
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
    for nested in ["weft/FjProbe$H", "weft/FjProbe$Buf"] {
        if let Some(n) = jni.find_class(nested) {
            jni.delete_local_ref(n);
        }
        jni.check_clear();
    }
    let Some(c) = jni.find_class("weft/FjProbe") else {
        jni.check_clear();
        return Vec::new();
    };
    let v = jvmti
        .get_class_methods(c)
        .map(|v| v.into_iter().map(|m| m as usize).collect())
        .unwrap_or_default();
    let g = jni.new_global_ref(c) as usize;
    let thread_end = jni
        .get_static_method_id(c, "threadEnd", "()V")
        .map(|m| m as usize);
    let flush_all = jni
        .get_static_method_id(c, "flushAll", "()V")
        .map(|m| m as usize);
    jni.check_clear();
    if let (Some(t), Some(f)) = (thread_end, flush_all) {
        let _ = REFS.set((g, t, f));
    }
    v
}

/// (FjProbe global ref, threadEnd, flushAll)
static REFS: OnceLock<(usize, usize, usize)> = OnceLock::new();

/// Flushes the ending thread's fork-join buffer (ThreadEnd, before its last block).
pub fn thread_end(jni: Jni) {
    if let Some(&(c, t, _)) = REFS.get() {
        jni.call_static_void_method0(c as jclass, t as jmethodID);
    }
}

/// Flushes every fork-join buffer (VMDeath, probes already off).
pub fn flush_all(jni: Jni) {
    if let Some(&(c, _, f)) = REFS.get() {
        jni.call_static_void_method0(c as jclass, f as jmethodID);
    }
}

fn env(e: *mut JNIEnv) -> Option<Jni> {
    // SAFETY: the JVM passes the current thread's JNIEnv to every native method.
    unsafe { Jni::from_raw(e) }
}

/// Per FjProbe buffer: the thread's trace buffer, its usage-id base and counter
/// (a push does not store its id: the decoder counts pushes), a scratch copy.
struct Handle {
    buf: Arc<Mutex<Buf>>,
    base: u64,
    state: Mutex<State>,
}

struct State {
    ev: Vec<i64>,
    counter: u64,
    /// The last timestamp decoded (a push inside a run has none of its own).
    last_ts: u64,
}

/// Returns a handle for buffer number `index` of this thread (leaked, one per thread).
#[no_mangle]
pub extern "system" fn Java_weft_FjProbe_nAttach(e: *mut JNIEnv, _c: jclass, index: jint) -> jlong {
    agent::guard(env(e), "FjProbe.nAttach", || {
        Ok(sink::local_buf().map_or(0, |buf| {
            Box::into_raw(Box::new(Handle {
                buf,
                base: (index as u32 as u64) << 40,
                state: Mutex::new(State {
                    ev: Vec::new(),
                    counter: 0,
                    last_ts: 0,
                }),
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
        let mut st = lock(&h.state);
        let State {
            ev: v,
            counter,
            last_ts,
        } = &mut *st;
        v.clear();
        v.resize(n as usize, 0);
        if jni.get_long_array_region(ev, v) {
            let mut d = Decoder {
                ev: v,
                i: 0,
                base: h.base,
                counter,
                last_ts,
            };
            sink::with_encoder(&h.buf, |enc| d.encode(enc, 512));
        }
        Ok(())
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Trace tags of the fork-join records (docs/trace-format.md).
mod tag {
    pub const PUSH: u8 = 27;
    pub const RUN_BEGIN: u8 = 28;
    pub const RUN_END: u8 = 29;
    pub const CANCEL: u8 = 30;
    pub const REINIT: u8 = 31;
    pub const JOIN_BEGIN: u8 = 32;
    pub const JOIN_END: u8 = 33;
    pub const SITE: u8 = 34;
    pub const WORKER: u8 = 35;
}

/// Decodes FjProbe's event buffer (layout: java/agent/weft/FjProbe.java) straight
/// into trace records (no `Record` values).
struct Decoder<'a> {
    ev: &'a [i64],
    i: usize,
    base: u64,
    counter: &'a mut u64,
    last_ts: &'a mut u64,
}

impl Decoder<'_> {
    /// Encodes up to `max` events; false when the buffer is done.
    fn encode(&mut self, enc: &mut BlockEncoder, max: usize) -> bool {
        let ev = self.ev;
        for _ in 0..max {
            let i = self.i;
            let Some(&h) = ev.get(i) else { return false };
            let h = h as u64;
            let g = |k: usize| ev.get(i + k).map_or(0, |&x| x as u64);
            let hi = h >> 8;
            let len = match h & 0xF {
                1 => {
                    *self.counter += 1;
                    let usage = self.base | *self.counter;
                    let mut k = 1;
                    let mut prev = 0;
                    if h & 16 != 0 {
                        prev = g(k);
                        k += 1;
                    }
                    // A push inside a run takes the last timestamp of the thread.
                    let ts = if h & 32 != 0 {
                        let t = g(k);
                        k += 1;
                        Some(t)
                    } else {
                        None
                    };
                    let ts = ts.unwrap_or(*self.last_ts);
                    enc.push_varints(tag::PUSH, Some(ts), &[usage, prev, hi, 0, 0, 0]);
                    k
                }
                2 => {
                    *self.counter += 1;
                    let usage = self.base | *self.counter;
                    let x = g(3);
                    enc.push_varints(
                        tag::PUSH,
                        Some(g(2)),
                        &[usage, g(1), hi, 1, x & 0xFFFF_FFFF, x >> 32],
                    );
                    4
                }
                3 => {
                    enc.push_varints(tag::RUN_BEGIN, Some(g(2)), &[g(1), hi]);
                    3
                }
                4 => {
                    enc.push_varints(tag::RUN_END, Some(h >> 4), &[]);
                    1
                }
                5 => {
                    enc.push_varints(tag::CANCEL, Some(g(2)), &[g(1)]);
                    3
                }
                6 => {
                    enc.push_varints(tag::REINIT, Some(g(2)), &[g(1)]);
                    3
                }
                7 => {
                    enc.push_varints(tag::JOIN_BEGIN, Some(g(2)), &[g(1)]);
                    3
                }
                8 => {
                    enc.push_varints(tag::JOIN_END, Some(h >> 4), &[]);
                    1
                }
                9 => {
                    enc.push_varints(tag::SITE, None, &[g(1), hi]);
                    2
                }
                10 => {
                    enc.push_varints(tag::WORKER, None, &[g(1), hi, g(2)]);
                    3
                }
                _ => {
                    // Unknown: the buffer is corrupt; stop here.
                    self.i = ev.len();
                    return false;
                }
            };
            if let Some(t) = enc.time_range().map(|r| r.1) {
                *self.last_ts = t;
            }
            self.i = i + len;
            if self.i >= ev.len() {
                return false;
            }
        }
        true
    }
}
