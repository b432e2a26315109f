//! Fork-join probes (docs/forkjoin.md): what to wrap in `ForkJoinTask` /
//! `ForkJoinPool`, the fields added to `ForkJoinTask` and `ForkJoinWorkerThread`,
//! and the natives of `weft.FjProbe`, whose per-thread `long[]` event buffers are
//! decoded here into trace records (tags 27–35) in batches.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use weft_classfile::{ClassSummary, FieldRequest};
use weft_trace::{ProbeKind, Record};

use crate::agent::{self, SiteKind};
use crate::decide::Wrap;
use crate::jni::{jclass, jint, jlong, jmethodID, jobject, JNIEnv, Jni};
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
    if std::env::var_os("WEFT_FJ_OFF").is_some() {
        return Vec::new();
    }
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

static FLUSH_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
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

/// Returns a handle to this thread's trace buffer (a leaked `Arc`, one per thread).
#[no_mangle]
pub extern "system" fn Java_weft_FjProbe_nAttach(e: *mut JNIEnv, _c: jclass) -> jlong {
    agent::guard(env(e), "FjProbe.nAttach", || {
        Ok(sink::local_buf().map_or(0, |b| Arc::into_raw(b) as jlong))
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

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<i64>> = const { std::cell::RefCell::new(Vec::new()) };
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
        // SAFETY: `handle` came from nAttach (Arc::into_raw, never released).
        let buf: &Mutex<Buf> = unsafe { &*(handle as *const Mutex<Buf>) };
        if std::env::var_os("WEFT_FJ_NOFLUSH").is_some() {
            return Ok(());
        }
        let t0 = crate::clock::mono_ns();
        SCRATCH.with(|s| {
            let mut v = s.borrow_mut();
            v.clear();
            v.resize(n as usize, 0);
            if jni.get_long_array_region(ev, &mut v) {
                sink::push_batch(buf, Decoder { ev: &v, i: 0 });
            }
        });
        let dt = crate::clock::mono_ns() - t0;
        let tot = FLUSH_NS.fetch_add(dt, Ordering::Relaxed) + dt;
        if std::env::var_os("WEFT_FJ_DEBUG").is_some() {
            eprintln!("weft-fj: flush {n} longs in {dt} ns (total {tot} ns)");
        }
        Ok(())
    })
}

/// Event buffer layout: see java/agent/weft/FjProbe.java.
struct Decoder<'a> {
    ev: &'a [i64],
    i: usize,
}

impl Iterator for Decoder<'_> {
    type Item = Record;
    fn next(&mut self) -> Option<Record> {
        {
            let ev = self.ev;
            let i = self.i;
            let h = *ev.get(i)? as u64;
            let g = |k: usize| ev.get(i + k).map_or(0, |&x| x as u64);
            let hi = (h >> 8) as u32;
            let (len, r) = match h & 0xFF {
                1 => (
                    4,
                    Record::FjPush {
                        ts: g(3),
                        usage: g(1),
                        prev: g(2),
                        class_id: hi,
                        external: false,
                        ident: 0,
                        pool: 0,
                    },
                ),
                2 => (
                    5,
                    Record::FjPush {
                        ts: g(3),
                        usage: g(1),
                        prev: g(2),
                        class_id: hi,
                        external: true,
                        ident: g(4) as u32,
                        pool: (g(4) >> 32) as u32,
                    },
                ),
                3 => (
                    3,
                    Record::FjRunBegin {
                        ts: g(2),
                        usage: g(1),
                        class_id: hi,
                    },
                ),
                4 => (2, Record::FjRunEnd { ts: g(1) }),
                5 => (
                    3,
                    Record::FjCancel {
                        ts: g(2),
                        usage: g(1),
                    },
                ),
                6 => (
                    3,
                    Record::FjReinit {
                        ts: g(2),
                        usage: g(1),
                    },
                ),
                7 => (
                    3,
                    Record::FjJoinBegin {
                        ts: g(2),
                        usage: g(1),
                    },
                ),
                8 => (2, Record::FjJoinEnd { ts: g(1) }),
                9 => (
                    2,
                    Record::FjSite {
                        usage: g(1),
                        site: hi,
                    },
                ),
                10 => (
                    3,
                    Record::FjWorker {
                        pool: g(1) as u32,
                        class_id: hi,
                        parallelism: g(2) as u32,
                    },
                ),
                _ => {
                    // Unknown: the buffer is corrupt; stop here.
                    self.i = ev.len();
                    return None;
                }
            };
            self.i = i + len;
            if self.i > ev.len() {
                return None;
            }
            Some(r)
        }
    }
}
