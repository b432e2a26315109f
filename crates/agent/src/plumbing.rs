//! JDK executor plumbing per major JDK version (docs/task-model.md §Plumbing):
//! the classes whose executions stand for the user task they wrap, and the
//! private field path to that task. Field names checked with `javap -p` on
//! each JDK's `java.base`.

/// One field step: (name, JNI type signature).
pub type Field = (&'static str, &'static str);

pub struct PlumbingClass {
    /// Internal name.
    pub class: &'static str,
    /// Field path to the inner task; empty: no inner task (a thread-level loop).
    pub inner: &'static [Field],
}

/// A CompletableFuture stage class whose function is its field `fn` of type `$sig`.
macro_rules! stage {
    ($name:literal, $sig:literal) => {
        PlumbingClass {
            class: concat!("java/util/concurrent/CompletableFuture$", $name),
            inner: &[("fn", $sig)],
        }
    };
}

const CALLABLE: Field = ("callable", "Ljava/util/concurrent/Callable;");
const RUNNABLE: Field = ("runnable", "Ljava/lang/Runnable;");

const COMMON: &[PlumbingClass] = &[
    PlumbingClass {
        class: "java/util/concurrent/FutureTask",
        inner: &[CALLABLE],
    },
    PlumbingClass {
        class: "java/util/concurrent/ScheduledThreadPoolExecutor$ScheduledFutureTask",
        inner: &[CALLABLE],
    },
    PlumbingClass {
        class: "java/util/concurrent/Executors$RunnableAdapter",
        inner: &[("task", "Ljava/lang/Runnable;")],
    },
    PlumbingClass {
        class: "java/util/concurrent/ThreadPoolExecutor$Worker",
        inner: &[],
    },
    PlumbingClass {
        class: "java/util/concurrent/ForkJoinTask$AdaptedRunnable",
        inner: &[RUNNABLE],
    },
    PlumbingClass {
        class: "java/util/concurrent/ForkJoinTask$AdaptedRunnableAction",
        inner: &[RUNNABLE],
    },
    PlumbingClass {
        class: "java/util/concurrent/ForkJoinTask$RunnableExecuteAction",
        inner: &[RUNNABLE],
    },
    PlumbingClass {
        class: "java/util/concurrent/ForkJoinTask$AdaptedCallable",
        inner: &[CALLABLE],
    },
    PlumbingClass {
        class: "java/util/concurrent/ForkJoinTask$AdaptedInterruptibleCallable",
        inner: &[CALLABLE],
    },
    PlumbingClass {
        class: "java/util/concurrent/CompletableFuture$AsyncRun",
        inner: &[("fn", "Ljava/lang/Runnable;")],
    },
    PlumbingClass {
        class: "java/util/concurrent/CompletableFuture$AsyncSupply",
        inner: &[("fn", "Ljava/util/function/Supplier;")],
    },
    // An async stage (`thenApplyAsync(fn, executor)`, ...): the executor runs a
    // Completion, whose final run()/exec() fire it; the probes go on the abstract
    // Completion (unwrapped by the runtime class, as JDK 25's InterruptibleTask), and
    // each stage class names its function, field `fn` (the same on 17, 21 and 25).
    PlumbingClass {
        class: "java/util/concurrent/CompletableFuture$Completion",
        inner: &[],
    },
    stage!("UniApply", "Ljava/util/function/Function;"),
    stage!("UniAccept", "Ljava/util/function/Consumer;"),
    stage!("UniRun", "Ljava/lang/Runnable;"),
    stage!("UniWhenComplete", "Ljava/util/function/BiConsumer;"),
    stage!("UniHandle", "Ljava/util/function/BiFunction;"),
    stage!("UniExceptionally", "Ljava/util/function/Function;"),
    stage!("UniComposeExceptionally", "Ljava/util/function/Function;"),
    stage!("UniCompose", "Ljava/util/function/Function;"),
    stage!("BiApply", "Ljava/util/function/BiFunction;"),
    stage!("BiAccept", "Ljava/util/function/BiConsumer;"),
    stage!("BiRun", "Ljava/lang/Runnable;"),
    stage!("OrApply", "Ljava/util/function/Function;"),
    stage!("OrAccept", "Ljava/util/function/Consumer;"),
    stage!("OrRun", "Ljava/lang/Runnable;"),
];

const SINCE_21: &[PlumbingClass] = &[PlumbingClass {
    class: "java/util/concurrent/ThreadPerTaskExecutor$TaskRunner",
    inner: &[("task", "Ljava/lang/Runnable;")],
}];

/// JDK 25 (since 22): `ForkJoinPool.submit/execute(Runnable|Callable)` of a
/// non-common pool wraps the task in a subclass of the abstract (also
/// `RunnableExecuteAction` and `AdaptedInterruptibleCallable`, in COMMON)
/// `ForkJoinTask$InterruptibleTask`, whose final `exec()`/`run()` run it: the
/// probes go on InterruptibleTask (no inner field of its own: `agent::inner_with_class`
/// then unwraps by the runtime class), and the subclasses, which have no
/// exec/run of their own, name their inner task here.
const SINCE_25: &[PlumbingClass] = &[
    PlumbingClass {
        class: "java/util/concurrent/ForkJoinTask$InterruptibleTask",
        inner: &[],
    },
    PlumbingClass {
        class: "java/util/concurrent/ForkJoinTask$AdaptedInterruptibleRunnable",
        inner: &[RUNNABLE],
    },
    PlumbingClass {
        class: "java/util/concurrent/ForkJoinTask$CallableWithTimeout",
        inner: &[CALLABLE],
    },
];

/// The plumbing classes of JDK `major` (17, 21, 25; others use the nearest lower table).
pub fn table(major: u32) -> Vec<&'static PlumbingClass> {
    let mut v: Vec<&'static PlumbingClass> = COMMON.iter().collect();
    if major >= 21 {
        v.extend(SINCE_21.iter());
    }
    if major >= 25 {
        v.extend(SINCE_25.iter());
    }
    v
}

/// Field path from a `java.lang.Thread` to its Runnable target.
pub fn thread_target(major: u32) -> &'static [Field] {
    if major >= 21 {
        &[
            ("holder", "Ljava/lang/Thread$FieldHolder;"),
            ("task", "Ljava/lang/Runnable;"),
        ]
    } else {
        &[("target", "Ljava/lang/Runnable;")]
    }
}

pub fn find(major: u32, class: &str) -> Option<&'static PlumbingClass> {
    table(major).into_iter().find(|p| p.class == class)
}

/// Same as [`find`] for a binary name with dots (`java.util.concurrent.FutureTask`).
pub fn find_dotted(major: u32, class: &str) -> Option<&'static PlumbingClass> {
    table(major).into_iter().find(|p| {
        p.class.len() == class.len()
            && p.class
                .bytes()
                .zip(class.bytes())
                .all(|(a, b)| a == b || (a == b'/' && b == b'.'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables() {
        assert!(find(17, "java/util/concurrent/FutureTask").is_some());
        assert!(find(17, "java/util/concurrent/ThreadPerTaskExecutor$TaskRunner").is_none());
        assert!(find(21, "java/util/concurrent/ThreadPerTaskExecutor$TaskRunner").is_some());
        assert_eq!(thread_target(17)[0].0, "target");
        assert!(find_dotted(17, "java.util.concurrent.Executors$RunnableAdapter").is_some());
        assert!(find_dotted(17, "java.util.concurrent.Executors").is_none());
        assert_eq!(thread_target(25).len(), 2);
        assert!(find(21, "java/util/concurrent/ForkJoinTask$InterruptibleTask").is_none());
        assert!(find(25, "java/util/concurrent/ForkJoinTask$InterruptibleTask").is_some());
        assert!(find_dotted(
            25,
            "java.util.concurrent.ForkJoinTask$AdaptedInterruptibleRunnable"
        )
        .is_some());
    }
}
