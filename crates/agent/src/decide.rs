//! What to instrument in a class, decided from its summary (names and
//! descriptors only) and a cache of the supertypes of classes seen so far.

use std::collections::HashMap;

use weft_classfile::ClassSummary;
use weft_trace::ProbeKind;

const ACC_STATIC: u16 = 0x0008;
const ACC_BRIDGE: u16 = 0x0040;
const ACC_NATIVE: u16 = 0x0100;
const ACC_INTERFACE: u16 = 0x0200;
const ACC_ABSTRACT: u16 = 0x0400;

/// A class of the JDK (internal name): not the program's code.
pub fn is_jdk_class(name: &str) -> bool {
    const JDK: &[&str] = &["java/", "javax/", "jdk/", "sun/", "com/sun/"];
    JDK.iter().any(|p| name.starts_with(p))
}

/// Classes the agent never transforms.
pub fn skip_class(name: &str) -> bool {
    // The agent's own helper classes live directly in package `weft`
    // (subpackages such as weft/workloads are ordinary user code).
    if let Some(rest) = name.strip_prefix("weft/") {
        if !rest.contains('/') {
            return true;
        }
    }
    const PREFIXES: &[&str] = &[
        "java/lang/invoke/",
        "jdk/internal/",
        "sun/",
        "java/lang/ref/",
        "java/lang/Thread",
        // A virtual thread's continuation wrapper (`VThreadContinuation$1.run`)
        // begins before the thread's VirtualThreadStart and ends after its
        // VirtualThreadEnd: the thread itself is the execution (vthreads.rs).
        "java/lang/VirtualThread",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Types whose subclasses and implementors are tasks.
const TASK_ROOTS: &[&str] = &[
    "java/lang/Runnable",
    "java/util/concurrent/Callable",
    "java/util/concurrent/ForkJoinTask",
    "java/lang/Thread",
    "java/util/concurrent/RecursiveTask",
    "java/util/concurrent/RecursiveAction",
    "java/util/concurrent/CountedCompleter",
    "java/util/concurrent/FutureTask",
    "java/util/TimerTask",
    "java/util/concurrent/RunnableFuture",
    "java/util/concurrent/RunnableScheduledFuture",
];

/// Parallel-loop libraries whose loop body is a method called once per chunk of
/// iterations: each call is a task execution (its granularity is the schedule's
/// chunk size). (ancestor, method, descriptor)
const LOOP_BODIES: &[(&str, &str, &str)] = &[
    // Parallel Java (edu.rit.pj): `run(first, last)` of a ParallelForLoop.
    ("edu/rit/pj/IntegerForLoop", "run", "(II)V"),
    ("edu/rit/pj/IntegerStrideForLoop", "run", "(III)V"),
    ("edu/rit/pj/LongForLoop", "run", "(JJ)V"),
    ("edu/rit/pj/LongStrideForLoop", "run", "(JJJ)V"),
];

/// Whether `class.method desc` is a parallel-loop body (see [`LOOP_BODIES`]).
fn is_loop_body(hierarchy: &Hierarchy, class: &str, method: &str, desc: &str) -> bool {
    LOOP_BODIES
        .iter()
        .any(|(a, m, d)| method == *m && desc == *d && hierarchy.has_ancestor(class, a))
}

/// Direct supertypes of every class seen by the hook (a name cache: the hook
/// runs before supertypes are resolved).
#[derive(Default)]
pub struct Hierarchy {
    supers: HashMap<String, Vec<String>>,
}

impl Hierarchy {
    /// A class known by name and direct supertypes (a class loaded before an attach).
    pub fn add_names(&mut self, name: String, supers: Vec<String>) {
        self.supers.entry(name).or_insert(supers);
    }

    pub fn add(&mut self, s: &ClassSummary) {
        let mut v: Vec<String> = s.super_name.iter().cloned().collect();
        v.extend(s.interfaces.iter().cloned());
        self.supers.insert(s.name.clone(), v);
    }

    /// Whether `ancestor` is `name` or one of its known ancestors.
    pub fn has_ancestor(&self, name: &str, ancestor: &str) -> bool {
        let mut stack = vec![name];
        let mut seen = 0;
        while let Some(n) = stack.pop() {
            if n == ancestor {
                return true;
            }
            seen += 1;
            if seen > 256 {
                return false;
            }
            if let Some(s) = self.supers.get(n) {
                stack.extend(s.iter().map(String::as_str));
            }
        }
        false
    }

    /// Whether `name` is known to be a task type (by its ancestors seen so far).
    pub fn is_task(&self, name: &str) -> bool {
        let mut stack = vec![name];
        let mut seen = 0;
        while let Some(n) = stack.pop() {
            if TASK_ROOTS.contains(&n) {
                return true;
            }
            seen += 1;
            if seen > 256 {
                return false;
            }
            if let Some(s) = self.supers.get(n) {
                stack.extend(s.iter().map(String::as_str));
            }
        }
        false
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Wrap {
    pub name: String,
    pub descriptor: String,
    pub kind: ProbeKind,
    pub pass_arg0: bool,
    /// A parallel-loop body ([`LOOP_BODIES`]): an Execution recorded whatever the
    /// class implements (its probe gets `agent::LOOP_BODY_CODE`).
    pub loop_body: bool,
    /// A call of the window method (`window=`): hooks into `weft/WindowProbe`.
    pub window: bool,
    /// A wrap of a late agent (attach) with hooks of its own: fork-join's are
    /// `weft/FjLateProbe`'s (no added fields; pipeline::late_fork_join), and the pool's
    /// `beforeExecute`/`afterExecute` hooks (pool_tasks.rs).
    pub late: bool,
}

#[derive(Debug, Default, PartialEq)]
pub struct Decision {
    pub wraps: Vec<Wrap>,
    pub creation: bool,
}

/// Submission methods by name and parameter list; the return type is free
/// (ForkJoinPool.submit(Runnable) returns a ForkJoinTask, not a Future).
const SUBMISSIONS: &[(&str, &str)] = &[
    ("execute", "(Ljava/lang/Runnable;)"),
    ("submit", "(Ljava/lang/Runnable;)"),
    ("submit", "(Ljava/lang/Runnable;Ljava/lang/Object;)"),
    ("submit", "(Ljava/util/concurrent/Callable;)"),
    ("execute", "(Ljava/util/concurrent/ForkJoinTask;)"),
    ("submit", "(Ljava/util/concurrent/ForkJoinTask;)"),
    ("invoke", "(Ljava/util/concurrent/ForkJoinTask;)"),
];

fn is_submission(name: &str, desc: &str) -> bool {
    let params = desc.find(')').map_or(desc, |i| &desc[..=i]);
    SUBMISSIONS.contains(&(name, params))
}

/// Decides the probes of one class. `is_plumbing` says whether the class is in
/// the plumbing table of the running JDK.
pub fn decide(s: &ClassSummary, hierarchy: &Hierarchy, is_plumbing: bool) -> Decision {
    let mut d = Decision::default();
    let exec_kind = if is_plumbing {
        ProbeKind::PlumbingExecution
    } else {
        ProbeKind::Execution
    };
    let candidates = s
        .methods
        .iter()
        .filter(|m| m.access & (ACC_STATIC | ACC_ABSTRACT | ACC_NATIVE) == 0);
    let has_nonbridge_call = s
        .methods
        .iter()
        .any(|m| m.name == "call" && m.descriptor.starts_with("()") && m.access & ACC_BRIDGE == 0);
    for m in candidates {
        let bridge = m.access & ACC_BRIDGE != 0;
        let (n, desc) = (m.name.as_str(), m.descriptor.as_str());
        let loop_body = !bridge && is_loop_body(hierarchy, &s.name, n, desc);
        let exec = match n {
            "run" => !bridge && (desc == "()V" || loop_body),
            // ForkJoinTask executions are recorded by the fork-join probe on doExec
            // (crates/agent/src/forkjoin.rs); only plumbing adapters keep an exec probe.
            "exec" => desc == "()Z" && !bridge && is_plumbing,
            "call" => {
                let returns_object = desc.starts_with("()L") || desc.starts_with("()[");
                // A lone bridge `call()Ljava/lang/Object;` is not a bridge to anything here.
                returns_object
                    && (!bridge || (!has_nonbridge_call && desc == "()Ljava/lang/Object;"))
            }
            _ => false,
        };
        if exec {
            d.wraps.push(Wrap {
                name: n.into(),
                descriptor: desc.into(),
                kind: exec_kind,
                pass_arg0: false,
                loop_body,
                window: false,
                late: false,
            });
            continue;
        }
        if bridge {
            continue;
        }
        if is_submission(n, desc) {
            d.wraps.push(Wrap {
                name: n.into(),
                descriptor: desc.into(),
                kind: ProbeKind::Submission,
                pass_arg0: true,
                loop_body: false,
                window: false,
                late: false,
            });
        }
    }
    d.wraps.extend(crate::locks::lock_wraps(s));
    d.wraps.extend(crate::joins::wraps(s));
    d.wraps.extend(crate::forkjoin::wraps(s));
    let is_interface = s.access & ACC_INTERFACE != 0;
    // A thread-per-task executor's wrappers (ThreadBoundFuture, TaskRunner) are
    // created once per task, right after it: the task's own creation and its
    // submission say where; a creation probe there cost a record and a JNI call
    // per virtual thread for nothing the analysis reads.
    let per_task_wrapper = s
        .name
        .starts_with("java/util/concurrent/ThreadPerTaskExecutor$");
    if !is_interface
        && !is_plumbing
        && !per_task_wrapper
        && hierarchy.is_task(&s.name)
        && !crate::forkjoin::is_fj_task(hierarchy, &s.name)
    {
        d.creation = s.methods.iter().any(|m| m.name == "<init>");
    }
    d
}

/// Wrappers of the window method `method` of this class (every overload with a
/// body), skipping any overload another probe already wraps (a method is wrapped
/// once; `weft record` says when the window then cannot be measured).
pub fn window_wraps(s: &ClassSummary, method: &str, taken: &[Wrap]) -> Vec<Wrap> {
    s.methods
        .iter()
        .filter(|m| m.name == method && m.access & (ACC_ABSTRACT | ACC_NATIVE | ACC_BRIDGE) == 0)
        .filter(|m| {
            !taken
                .iter()
                .any(|w| w.name == m.name && w.descriptor == m.descriptor)
        })
        .map(|m| Wrap {
            name: m.name.clone(),
            descriptor: m.descriptor.clone(),
            kind: ProbeKind::Other(0),
            pass_arg0: false,
            loop_body: false,
            window: true,
            late: false,
        })
        .collect()
}

/// The hooks of a window wrapper (java/agent/weft/WindowProbe.java).
pub fn window_hooks() -> weft_classfile::Hooks {
    const O: &str = "(Ljava/lang/Object;)V";
    weft_classfile::Hooks {
        class: "weft/WindowProbe".into(),
        enter: Some(("enter".into(), O.into())),
        exit: Some(("exit".into(), O.into())),
        last_ref_arg: false,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use weft_classfile::MethodSummary;

    /// A class summary for tests (also used by the fork-join wrap tests).
    pub(crate) fn class(
        name: &str,
        sup: &str,
        ifs: &[&str],
        methods: &[(&str, &str, u16)],
    ) -> ClassSummary {
        ClassSummary {
            name: name.into(),
            super_name: Some(sup.into()),
            interfaces: ifs.iter().map(|s| s.to_string()).collect(),
            access: 0x0021,
            major: 61,
            methods: methods
                .iter()
                .map(|(n, d, a)| MethodSummary {
                    name: n.to_string(),
                    descriptor: d.to_string(),
                    access: *a,
                })
                .collect(),
        }
    }

    #[test]
    fn runnable_and_callable() {
        let mut h = Hierarchy::default();
        let c = class(
            "demo/Work",
            "java/lang/Object",
            &["java/util/concurrent/Callable"],
            &[
                ("<init>", "()V", 1),
                ("call", "()Ljava/lang/Integer;", 1),
                ("call", "()Ljava/lang/Object;", 0x1041),
                ("helper", "()V", 1),
            ],
        );
        h.add(&c);
        let d = decide(&c, &h, false);
        assert_eq!(d.wraps.len(), 1);
        assert_eq!(d.wraps[0].descriptor, "()Ljava/lang/Integer;");
        assert!(d.creation);
    }

    #[test]
    fn lone_bridge_call_and_hierarchy() {
        let mut h = Hierarchy::default();
        h.add(&class(
            "demo/Base",
            "java/lang/Object",
            &["java/lang/Runnable"],
            &[],
        ));
        let c = class(
            "demo/Sub",
            "demo/Base",
            &[],
            &[
                ("<init>", "()V", 1),
                ("call", "()Ljava/lang/Object;", 0x1041),
                ("run", "()V", 1),
            ],
        );
        h.add(&c);
        let d = decide(&c, &h, false);
        assert_eq!(d.wraps.len(), 2);
        assert!(d.creation);
        let e = class(
            "demo/Exec",
            "java/lang/Object",
            &[],
            &[("execute", "(Ljava/lang/Runnable;)V", 1)],
        );
        let d = decide(&e, &h, false);
        assert_eq!(d.wraps[0].kind, ProbeKind::Submission);
        assert!(d.wraps[0].pass_arg0);
        assert!(!d.creation);
    }

    #[test]
    fn plumbing_and_skips() {
        let h = Hierarchy::default();
        let c = class(
            "java/util/concurrent/FutureTask",
            "java/lang/Object",
            &["java/util/concurrent/RunnableFuture"],
            &[
                ("<init>", "()V", 1),
                ("run", "()V", 1),
                ("run", "(I)V", 1),
                ("go", "()V", 0x0401),
            ],
        );
        let d = decide(&c, &h, true);
        assert_eq!(d.wraps.len(), 1);
        assert_eq!(d.wraps[0].kind, ProbeKind::PlumbingExecution);
        assert!(!d.creation);
        assert!(skip_class("java/lang/Thread$Builder"));
        assert!(skip_class("weft/Probe"));
        assert!(!skip_class("java/util/concurrent/FutureTask"));
    }

    #[test]
    fn parallel_java_loop_bodies_are_tasks() {
        let mut h = Hierarchy::default();
        let base = class(
            "edu/rit/pj/IntegerForLoop",
            "edu/rit/pj/ParallelForLoop",
            &[],
            &[("run", "(II)V", ACC_ABSTRACT | 1)],
        );
        h.add(&base);
        let body = class(
            "app/Mandel$1$1",
            "edu/rit/pj/IntegerForLoop",
            &[],
            &[
                ("<init>", "()V", 0),
                ("run", "(II)V", 1),
                ("run", "(I)V", 1),
            ],
        );
        h.add(&body);
        let d = decide(&body, &h, false);
        let runs: Vec<_> = d.wraps.iter().filter(|w| w.name == "run").collect();
        assert_eq!(
            runs.len(),
            1,
            "{:?}",
            d.wraps.iter().map(|w| &w.descriptor).collect::<Vec<_>>()
        );
        assert_eq!(runs[0].descriptor, "(II)V");
        assert_eq!(runs[0].kind, ProbeKind::Execution);
        assert!(runs[0].loop_body);
        // The same method elsewhere is not a loop body.
        let other = class("app/Other", "java/lang/Object", &[], &[("run", "(II)V", 1)]);
        h.add(&other);
        assert!(decide(&other, &h, false).wraps.is_empty());
    }

    #[test]
    fn window_method_overloads_are_wrapped_once() {
        let c = class(
            "app/Main",
            "java/lang/Object",
            &[],
            &[
                ("solve", "()V", ACC_STATIC | 1),
                ("solve", "(I)J", 1),
                ("solve", "()I", ACC_ABSTRACT | 1),
                ("other", "()V", 1),
            ],
        );
        let w = window_wraps(&c, "solve", &[]);
        assert_eq!(w.len(), 2);
        assert!(w.iter().all(|w| w.window && !w.pass_arg0));
        let taken = window_wraps(&c, "solve", &w[..1]);
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].descriptor, "(I)J");
    }
}
