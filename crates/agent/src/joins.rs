//! Join probes (happens-before edges, docs/task-model.md §Edges): `FutureTask.get`,
//! `CompletableFuture.get` / `join`, each with the future as its target, and
//! `CompletableFuture.postComplete` (the completion of a `CompletableFuture`, on the
//! completing thread: `complete*`, async tasks, and dependents that have waiters).
//! `Thread.join` cannot be wrapped (Thread loads before the class hook); it is seen
//! as an `Object.wait` on the Thread object (crates/agent/src/locks.rs).

use weft_classfile::ClassSummary;
use weft_trace::{ProbeKind, Record};

use crate::agent;
use crate::clock;
use crate::decide::Wrap;
use crate::jni::{jclass, jint, JNIEnv, Jni};
use crate::sink;

const GET: &str = "()Ljava/lang/Object;";
const GET_TIMED: &str = "(JLjava/util/concurrent/TimeUnit;)Ljava/lang/Object;";
/// The method whose Join probe marks a completion, not a join (the analysis tells
/// them apart by the ProbeDef's method name).
pub const COMPLETION: (&str, &str) = ("postComplete", "()V");

/// The join probes of a class (by exact class name: the JDK's two futures).
pub fn wraps(s: &ClassSummary) -> Vec<Wrap> {
    let targets: &[(&str, &str)] = match s.name.as_str() {
        "java/util/concurrent/FutureTask" => &[("get", GET), ("get", GET_TIMED)],
        "java/util/concurrent/CompletableFuture" => {
            &[("get", GET), ("get", GET_TIMED), ("join", GET), COMPLETION]
        }
        _ => return Vec::new(),
    };
    targets
        .iter()
        .filter(|(n, d)| s.methods.iter().any(|m| m.name == *n && m.descriptor == *d))
        .map(|(n, d)| Wrap {
            name: n.to_string(),
            descriptor: d.to_string(),
            kind: ProbeKind::Join,
            pass_arg0: false,
            loop_body: false,
            window: false,
            late: false,
        })
        .collect()
}

fn env(env: *mut JNIEnv) -> Option<Jni> {
    // SAFETY: the JVM passes the current thread's JNIEnv to every native method.
    unsafe { Jni::from_raw(env) }
}

#[no_mangle]
pub extern "system" fn Java_weft_Probe_nJoinBegin(
    e: *mut JNIEnv,
    _c: jclass,
    probe: jint,
    cls: jint,
    ident: jint,
) {
    let ts = clock::now();
    agent::guard(env(e), "nJoinBegin", || {
        sink::emit(&Record::JoinBegin {
            ts,
            probe: probe as u32,
            target_class_id: cls as u32,
            target_ident: ident as u32,
        });
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_weft_Probe_nJoinEnd(e: *mut JNIEnv, _c: jclass, probe: jint) {
    let ts = clock::now();
    agent::guard(env(e), "nJoinEnd", || {
        sink::emit(&Record::JoinEnd {
            ts,
            probe: probe as u32,
        });
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_classfile::MethodSummary;

    #[test]
    fn future_methods() {
        let c = ClassSummary {
            name: "java/util/concurrent/CompletableFuture".into(),
            super_name: Some("java/lang/Object".into()),
            interfaces: vec![],
            access: 0x0021,
            major: 61,
            methods: [
                ("get", GET),
                ("get", GET_TIMED),
                ("join", GET),
                ("getNow", "(Ljava/lang/Object;)Ljava/lang/Object;"),
                COMPLETION,
            ]
            .iter()
            .map(|(n, d)| MethodSummary {
                name: n.to_string(),
                descriptor: d.to_string(),
                access: 1,
            })
            .collect(),
        };
        let w = wraps(&c);
        assert_eq!(w.len(), 4);
        assert!(w.iter().all(|w| w.kind == ProbeKind::Join && !w.pass_arg0));
    }
}
