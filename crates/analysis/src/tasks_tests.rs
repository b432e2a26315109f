use super::*;
use crate::testutil::*;
use weft_trace::Record;

fn run(tb: &TB) -> (Model, TaskAnalysis) {
    let trace = tb.trace();
    let model = Model::build(&trace);
    let tasks = analyze_tasks(&model);
    (model, tasks)
}

fn class<'a>(t: &'a TaskAnalysis, name: &str, kind: TaskKind) -> &'a TaskClassStats {
    t.classes
        .iter()
        .find(|c| c.class == name && c.kind == kind)
        .unwrap_or_else(|| panic!("no class {name} {kind:?} in {:#?}", t.classes))
}

fn has_class(t: &TaskAnalysis, name: &str, kind: TaskKind) -> bool {
    t.classes.iter().any(|c| c.class == name && c.kind == kind)
}

/// A pool thread (index 1): Thread with a ThreadPoolExecutor$Worker target.
fn pool_thread(tb: &mut TB, t: u32, from: u64) {
    tb.start(t, from, C_THREAD, (C_WORKER, 2000 + t));
    tb.begin(t, from + 1, P_WORKER_RUN, C_WORKER, 2000 + t);
}

fn pool_thread_end(tb: &mut TB, t: u32, ts: u64) {
    tb.end(t, ts - 1, P_WORKER_RUN, 2000 + t);
    tb.thread_end(t, ts);
}

#[test]
fn pool_task_via_futuretask_counted_once_with_queue_wait() {
    let mut tb = TB::new();
    tb.site(1, "demo.Main.make:5").site(2, "demo.Main.go:7");
    tb.created(MAIN, 5, (C_WORK, 1), 1);
    tb.submit(MAIN, 10, (C_WORK, 1), 2);
    pool_thread(&mut tb, 1, 0);
    tb.begin_p(1, 20, P_FUTURETASK_RUN, C_FUTURETASK, 300, (C_WORK, 1));
    tb.run(1, 22, 52, P_WORK_RUN, C_WORK, 1);
    tb.end(1, 55, P_FUTURETASK_RUN, 300);
    pool_thread_end(&mut tb, 1, 100);
    tb.global(Record::End { ts: 100 });
    let (_, t) = run(&tb);

    let w = class(&t, "demo.Work", TaskKind::Runnable);
    assert_eq!(w.executions, 1);
    assert_eq!(w.aggregated, 0);
    assert_eq!(w.submitted, 1);
    assert_eq!(w.granularity_ns.total, 30);
    assert_eq!(w.granularity_ns.p50, 30);
    assert_eq!(w.queue_wait_ns.unwrap().p50, 12);
    assert_eq!(w.threads, 1);
    assert_eq!(
        w.sites,
        vec![(
            SitePair {
                created: Some("demo.Main.make:5".into()),
                submitted: Some("demo.Main.go:7".into())
            },
            1
        )]
    );
    // The thread is one execution named after its target (Thread is not subclassed);
    // FutureTask and Worker are not counted.
    let th = class(
        &t,
        "java.util.concurrent.ThreadPoolExecutor$Worker",
        TaskKind::Thread,
    );
    assert_eq!(th.executions, 1);
    assert_eq!(th.granularity_ns.total, 100 - 30);
    assert!(!has_class(
        &t,
        "java.util.concurrent.FutureTask",
        TaskKind::Runnable
    ));
    assert_eq!(t.classes.len(), 2);
    assert_eq!(t.dropped_plumbing, 1);
    assert_eq!(t.unmatched_submissions, 0);
    assert_eq!(t.incomplete, 0);
}

#[test]
fn lambda_via_plumbing_reported_under_lambda_class() {
    let mut tb = TB::new();
    tb.submit(MAIN, 10, (C_LAMBDA, 7), 0);
    tb.submit_p(MAIN, 11, P_SUBMIT_CALLABLE, (C_LAMBDA, 8), (0, 0), 0);
    pool_thread(&mut tb, 1, 0);
    tb.begin_p(1, 20, P_FUTURETASK_RUN, C_FUTURETASK, 300, (C_LAMBDA, 7));
    tb.end(1, 50, P_FUTURETASK_RUN, 300);
    tb.begin_p(1, 60, P_FUTURETASK_RUN, C_FUTURETASK, 301, (C_LAMBDA, 8));
    tb.end(1, 65, P_FUTURETASK_RUN, 301);
    pool_thread_end(&mut tb, 1, 100);
    let (_, t) = run(&tb);
    let name = "demo.Main$$Lambda[main:10]";
    let r = class(&t, name, TaskKind::Runnable);
    assert_eq!((r.executions, r.submitted), (1, 1));
    assert_eq!(r.granularity_ns.total, 30);
    assert_eq!(r.queue_wait_ns.unwrap().p50, 10);
    // submit(Callable) wrapped in a FutureTask: reported as callable.
    let c = class(&t, name, TaskKind::Callable);
    assert_eq!((c.executions, c.submitted), (1, 1));
    assert_eq!(c.granularity_ns.total, 5);
    assert_eq!(c.queue_wait_ns.unwrap().p50, 49);
    assert!(t.executions.iter().filter(|e| e.stand_in()).count() == 2);
}

#[test]
fn wrapper_inside_wrapper_of_the_same_lambda_is_one_execution() {
    // submit(lambda): FutureTask.run → Executors$RunnableAdapter.call → lambda (not wrapped).
    let mut tb = TB::new();
    tb.submit(MAIN, 10, (C_LAMBDA, 7), 0);
    pool_thread(&mut tb, 1, 0);
    tb.begin_p(1, 20, P_FUTURETASK_RUN, C_FUTURETASK, 300, (C_LAMBDA, 7));
    tb.begin_p(1, 21, P_ADAPTER_CALL, C_ADAPTER, 400, (C_LAMBDA, 7));
    tb.end(1, 49, P_ADAPTER_CALL, 400);
    tb.end(1, 50, P_FUTURETASK_RUN, 300);
    pool_thread_end(&mut tb, 1, 100);
    let (_, t) = run(&tb);
    let r = class(&t, "demo.Main$$Lambda[main:10]", TaskKind::Runnable);
    assert_eq!((r.executions, r.aggregated, r.submitted), (1, 0, 1));
    assert_eq!(r.granularity_ns.total, 30);
    assert_eq!(r.queue_wait_ns.unwrap().p50, 10);
}

#[test]
fn submission_of_plumbing_object_matches_its_stand_in_or_inner() {
    // execute(new FutureTask(work)) and CompletableFuture.runAsync(lambda): the
    // submitted object is the plumbing one.
    let mut tb = TB::new();
    tb.submit_p(
        MAIN,
        10,
        P_SUBMIT_RUNNABLE,
        (C_FUTURETASK, 300),
        (C_WORK, 1),
        0,
    );
    tb.submit_p(
        MAIN,
        12,
        P_SUBMIT_RUNNABLE,
        (C_FUTURETASK, 301),
        (C_LAMBDA, 9),
        0,
    );
    pool_thread(&mut tb, 1, 0);
    tb.begin_p(1, 20, P_FUTURETASK_RUN, C_FUTURETASK, 300, (C_WORK, 1));
    tb.run(1, 21, 31, P_WORK_RUN, C_WORK, 1);
    tb.end(1, 32, P_FUTURETASK_RUN, 300);
    tb.begin_p(1, 40, P_FUTURETASK_RUN, C_FUTURETASK, 301, (C_LAMBDA, 9));
    tb.end(1, 44, P_FUTURETASK_RUN, 301);
    pool_thread_end(&mut tb, 1, 100);
    let (_, t) = run(&tb);
    let w = class(&t, "demo.Work", TaskKind::Runnable);
    assert_eq!((w.executions, w.submitted), (1, 1));
    assert_eq!(w.queue_wait_ns.unwrap().p50, 11);
    let l = class(&t, "demo.Main$$Lambda[main:10]", TaskKind::Runnable);
    assert_eq!((l.executions, l.submitted), (1, 1));
    assert_eq!(l.queue_wait_ns.unwrap().p50, 28);
    assert_eq!(t.unmatched_submissions, 0);
}

#[test]
fn nested_never_submitted_task_is_aggregated_r1_and_its_time_stays() {
    let mut tb = TB::new();
    tb.submit(MAIN, 5, (C_OUTER, 1), 0);
    pool_thread(&mut tb, 1, 0);
    tb.begin(1, 10, P_RUN, C_OUTER, 1);
    tb.created(1, 15, (C_INNER, 2), 0);
    tb.run(1, 20, 50, P_RUN, C_INNER, 2);
    // Inner created on another thread: still R1 (nested in a task).
    tb.run(1, 60, 70, P_RUN, C_INNER, 3);
    tb.end(1, 110, P_RUN, 1);
    pool_thread_end(&mut tb, 1, 200);
    let (_, t) = run(&tb);
    let o = class(&t, "demo.Outer", TaskKind::Runnable);
    assert_eq!(o.executions, 1);
    assert_eq!(o.granularity_ns.total, 100);
    let i = class(&t, "demo.Inner", TaskKind::Runnable);
    assert_eq!((i.executions, i.aggregated), (0, 2));
    assert_eq!(i.granularity_ns.total, 0);
    let outer_idx = t
        .executions
        .iter()
        .position(|e| t.class(e) == "demo.Outer")
        .unwrap();
    for e in t.executions.iter().filter(|e| t.class(e) == "demo.Inner") {
        assert!(!e.reported());
        assert_eq!(e.aggregated_into(), Some(outer_idx));
    }
    let th = class(
        &t,
        "java.util.concurrent.ThreadPoolExecutor$Worker",
        TaskKind::Thread,
    );
    assert_eq!(th.granularity_ns.total, 200 - 100);
}

#[test]
fn submitted_task_run_nested_is_reported_and_subtracted() {
    let mut tb = TB::new();
    tb.submit(MAIN, 2, (C_OUTER, 1), 0);
    tb.submit(MAIN, 5, (C_WORK, 5), 0);
    tb.submit(MAIN, 6, (C_WORK, 6), 0);
    pool_thread(&mut tb, 1, 0);
    tb.begin(1, 10, P_RUN, C_OUTER, 1);
    tb.run(1, 20, 50, P_WORK_RUN, C_WORK, 5); // caller-runs: reported
    tb.begin(1, 60, P_RUN, C_INNER, 2); // aggregated into Outer
    tb.run(1, 70, 80, P_WORK_RUN, C_WORK, 6); // reported, inside an aggregated one
    tb.end(1, 100, P_RUN, 2);
    tb.end(1, 110, P_RUN, 1);
    pool_thread_end(&mut tb, 1, 200);
    let (_, t) = run(&tb);
    let o = class(&t, "demo.Outer", TaskKind::Runnable);
    assert_eq!(o.granularity_ns.total, 100 - 30 - 10);
    let w = class(&t, "demo.Work", TaskKind::Runnable);
    assert_eq!((w.executions, w.aggregated, w.submitted), (2, 0, 2));
    assert_eq!(w.granularity_ns.total, 40);
    assert_eq!(w.granularity_ns.min, 10);
    assert_eq!(w.granularity_ns.max, 30);
    let i = class(&t, "demo.Inner", TaskKind::Runnable);
    assert_eq!((i.executions, i.aggregated), (0, 1));
    let inner = t
        .executions
        .iter()
        .find(|e| t.class(e) == "demo.Inner")
        .unwrap();
    assert_eq!(inner.self_ns, 30);
    let th = class(
        &t,
        "java.util.concurrent.ThreadPoolExecutor$Worker",
        TaskKind::Thread,
    );
    assert_eq!(th.granularity_ns.total, 200 - 100);
}

#[test]
fn r3_on_main_and_on_a_thread() {
    let mut tb = TB::new();
    // main: created here, run here → aggregated into main.
    tb.created(MAIN, 1, (C_WORK, 1), 0);
    tb.run(MAIN, 10, 20, P_WORK_RUN, C_WORK, 1);
    // main: no creation record → taken as created here → aggregated.
    tb.run(MAIN, 21, 22, P_WORK_RUN, C_WORK, 9);
    // main: created on thread 1, run on main → reported.
    tb.run(MAIN, 30, 45, P_WORK_RUN, C_WORK, 2);
    // thread 1 (a MyThread subclass without target)
    tb.start(1, 0, C_MYTHREAD, (0, 0));
    tb.created(1, 2, (C_WORK, 2), 0);
    tb.created(1, 3, (C_WORK, 3), 0);
    tb.begin(1, 4, P_RUN, C_MYTHREAD, 1001); // MyThread.run: the thread itself
    tb.run(1, 5, 25, P_WORK_RUN, C_WORK, 3); // created here → R3 aggregated
    tb.run(1, 30, 37, P_WORK_RUN, C_WORK, 4); // created on main → R2 reported
    tb.end(1, 90, P_RUN, 1001);
    tb.thread_end(1, 100);
    tb.created(MAIN, 0, (C_WORK, 4), 0);
    let (_, t) = run(&tb);
    let w = class(&t, "demo.Work", TaskKind::Runnable);
    assert_eq!((w.executions, w.aggregated, w.submitted), (2, 3, 0));
    assert_eq!(w.granularity_ns.total, 15 + 7);
    assert_eq!(w.threads, 2);
    let th = class(&t, "demo.MyThread", TaskKind::Thread);
    assert_eq!(th.executions, 1);
    assert_eq!(th.granularity_ns.total, 100 - 7);
    let r3: Vec<_> = t
        .executions
        .iter()
        .filter(|e| !e.reported())
        .map(|e| (e.thread, e.begin_ns, e.aggregated_into()))
        .collect();
    assert_eq!(r3, vec![(0, 10, None), (0, 21, None), (1, 5, None)]);
}

#[test]
fn thread_with_target_counted_once() {
    let mut tb = TB::new();
    tb.start(1, 0, C_THREAD, (C_WORK, 1));
    tb.begin(1, 1, P_THREAD_RUN, C_THREAD, 1001);
    tb.run(1, 2, 90, P_WORK_RUN, C_WORK, 1);
    tb.end(1, 91, P_THREAD_RUN, 1001);
    tb.thread_end(1, 100);
    // A Thread subclass with a target is named after the subclass.
    tb.start(2, 0, C_MYTHREAD, (C_WORK, 2));
    tb.run(2, 2, 40, P_WORK_RUN, C_WORK, 2);
    tb.thread_end(2, 50);
    // A plain Thread without target.
    tb.start(3, 10, C_THREAD, (0, 0));
    tb.thread_end(3, 15);
    let (_, t) = run(&tb);
    let w = class(&t, "demo.Work", TaskKind::Thread);
    assert_eq!((w.executions, w.aggregated), (1, 0));
    assert_eq!(w.granularity_ns.total, 100);
    assert!(!has_class(&t, "demo.Work", TaskKind::Runnable));
    let m = class(&t, "demo.MyThread", TaskKind::Thread);
    assert_eq!(m.granularity_ns.total, 50);
    let p = class(&t, "java.lang.Thread", TaskKind::Thread);
    assert_eq!(p.granularity_ns.total, 5);
    assert_eq!(t.executions.len(), 3);
}

#[test]
fn reused_object_executed_three_times() {
    let mut tb = TB::new();
    for (s, b, e) in [(10, 15, 17), (20, 25, 28), (30, 35, 40)] {
        tb.submit(MAIN, s, (C_WORK, 1), 0);
        pool_thread(&mut tb, 1, 0);
        tb.begin_p(
            1,
            b - 1,
            P_FUTURETASK_RUN,
            C_FUTURETASK,
            300 + s as u32,
            (C_WORK, 1),
        );
        tb.run(1, b, e, P_WORK_RUN, C_WORK, 1);
        tb.end(1, e + 1, P_FUTURETASK_RUN, 300 + s as u32);
    }
    // (pool_thread was called 3 times: only the first start counts, the extra
    // Worker begins are re-entries of the thread and end unbalanced → harmless)
    tb.thread_end(1, 100);
    let (_, t) = run(&tb);
    let w = class(&t, "demo.Work", TaskKind::Runnable);
    assert_eq!((w.executions, w.submitted), (3, 3));
    let q = w.queue_wait_ns.unwrap();
    assert_eq!((q.min, q.p50, q.max), (5, 5, 5));
    assert_eq!(w.granularity_ns.total, 2 + 3 + 5);
}

#[test]
fn task_that_throws_is_still_an_execution() {
    // The agent's wrapper writes TaskEnd on the exceptional path too; the frame
    // between (a helper method) has no record, and the outer task caught it.
    let mut tb = TB::new();
    tb.submit(MAIN, 1, (C_OUTER, 1), 0);
    tb.submit(MAIN, 1, (C_WORK, 2), 0);
    pool_thread(&mut tb, 1, 0);
    tb.begin(1, 10, P_RUN, C_OUTER, 1);
    tb.run(1, 12, 13, P_WORK_RUN, C_WORK, 2); // threw after 1 ns
    tb.end(1, 30, P_RUN, 1);
    pool_thread_end(&mut tb, 1, 40);
    let (_, t) = run(&tb);
    let w = class(&t, "demo.Work", TaskKind::Runnable);
    assert_eq!(w.executions, 1);
    assert_eq!(w.granularity_ns.total, 1);
    assert_eq!(
        class(&t, "demo.Outer", TaskKind::Runnable)
            .granularity_ns
            .total,
        19
    );
    assert_eq!(t.incomplete, 0);
}

#[test]
fn recursion_and_same_object_nesting_are_one_execution() {
    let mut tb = TB::new();
    tb.submit(MAIN, 1, (C_WORK, 1), 0);
    tb.submit(MAIN, 1, (C_REC, 2), 0);
    pool_thread(&mut tb, 1, 0);
    // run() → run() (recursion / super.run())
    tb.begin(1, 10, P_WORK_RUN, C_WORK, 1);
    tb.begin(1, 12, P_WORK_RUN, C_WORK, 1);
    tb.end(1, 14, P_WORK_RUN, 1);
    tb.end(1, 20, P_WORK_RUN, 1);
    // exec() → run() on the same object
    tb.begin(1, 30, P_EXEC, C_REC, 2);
    tb.begin(1, 31, P_RUN, C_REC, 2);
    tb.end(1, 39, P_RUN, 2);
    tb.end(1, 40, P_EXEC, 2);
    pool_thread_end(&mut tb, 1, 50);
    let (_, t) = run(&tb);
    let w = class(&t, "demo.Work", TaskKind::Runnable);
    assert_eq!((w.executions, w.aggregated), (1, 0));
    assert_eq!(w.granularity_ns.total, 10);
    let r = class(&t, "demo.Rec", TaskKind::ForkJoin);
    assert_eq!((r.executions, r.aggregated), (1, 0));
    assert_eq!(r.granularity_ns.total, 10);
    assert_eq!(t.unmatched_ends, 0);
}

#[test]
fn interleaved_reentrance_is_a_nested_execution() {
    // t.run → u.run → t.run: the inner t is nested in u (aggregated).
    let mut tb = TB::new();
    tb.submit(MAIN, 1, (C_WORK, 1), 0);
    pool_thread(&mut tb, 1, 0);
    tb.begin(1, 10, P_WORK_RUN, C_WORK, 1);
    tb.begin(1, 11, P_RUN, C_INNER, 2);
    tb.run(1, 12, 15, P_WORK_RUN, C_WORK, 1);
    tb.end(1, 16, P_RUN, 2);
    tb.end(1, 20, P_WORK_RUN, 1);
    pool_thread_end(&mut tb, 1, 50);
    let (_, t) = run(&tb);
    let w = class(&t, "demo.Work", TaskKind::Runnable);
    assert_eq!((w.executions, w.aggregated), (1, 1));
    assert_eq!(w.granularity_ns.total, 10);
}

#[test]
fn unbalanced_records_are_tolerated() {
    let mut tb = TB::new();
    tb.submit(MAIN, 1, (C_OUTER, 1), 0);
    tb.submit(MAIN, 1, (C_WORK, 3), 0);
    pool_thread(&mut tb, 1, 0);
    tb.end(1, 5, P_RUN, 77); // end without begin
    tb.begin(1, 10, P_RUN, C_OUTER, 1);
    tb.begin(1, 12, P_RUN, C_INNER, 2); // never ends
    tb.end(1, 20, P_RUN, 1); // closes Inner too
    tb.begin(1, 30, P_WORK_RUN, C_WORK, 3); // open at thread end
    tb.thread_end(1, 60);
    let (_, t) = run(&tb);
    assert_eq!(t.unmatched_ends, 1);
    let inner = t
        .executions
        .iter()
        .find(|e| t.class(e) == "demo.Inner")
        .unwrap();
    assert!(inner.incomplete() && !inner.reported());
    assert_eq!(inner.end_ns, 20);
    let outer = t
        .executions
        .iter()
        .find(|e| t.class(e) == "demo.Outer")
        .unwrap();
    assert!(!outer.incomplete());
    assert_eq!(outer.self_ns, 10);
    let work = t
        .executions
        .iter()
        .find(|e| t.class(e) == "demo.Work")
        .unwrap();
    assert!(work.incomplete());
    assert_eq!((work.begin_ns, work.end_ns), (30, 60));
    assert_eq!(class(&t, "demo.Work", TaskKind::Runnable).incomplete, 1);
    // The Worker begin never ended either (closed at ThreadEnd, a re-entry: not counted).
    assert_eq!(t.incomplete, 2);
}

#[test]
fn open_at_end_of_trace_closed_at_last_timestamp() {
    let mut tb = TB::new();
    tb.run(MAIN, 0, 1, P_RUN, C_OUTER, 5);
    tb.start(1, 0, C_THREAD, (0, 0));
    tb.submit(MAIN, 2, (C_WORK, 1), 0);
    tb.begin(1, 10, P_WORK_RUN, C_WORK, 1);
    tb.created(1, 70, (C_INNER, 1), 0); // last record of thread 1
    let (m, t) = run(&tb);
    assert!(m.truncated);
    let w = t
        .executions
        .iter()
        .find(|e| t.class(e) == "demo.Work")
        .unwrap();
    assert!(w.incomplete());
    assert_eq!(w.end_ns, 70);
    let th = t
        .executions
        .iter()
        .find(|e| e.kind == TaskKind::Thread)
        .unwrap();
    assert!(th.incomplete());
    assert_eq!(th.end_ns, 70);
}

#[test]
fn forkjoin_inline_stolen_and_popped() {
    let mut tb = TB::new();
    tb.submit(MAIN, 1, (C_REC, 1), 0);
    tb.start(1, 0, C_FJWT, (0, 0));
    tb.start(2, 0, C_FJWT, (0, 0));
    tb.begin(1, 10, P_EXEC, C_REC, 1);
    tb.created(1, 11, (C_REC, 2), 0);
    tb.fork(1, 11, (C_REC, 2));
    tb.created(1, 12, (C_REC, 3), 0);
    tb.fork(1, 12, (C_REC, 3));
    tb.run(1, 13, 20, P_EXEC, C_REC, 3); // run inline in the parent's join: R1
    tb.end(1, 40, P_EXEC, 1);
    tb.run(2, 15, 35, P_EXEC, C_REC, 2); // stolen: R2
    tb.fork(1, 41, (C_REC, 4)); // forked (no constructor record) on 1, popped by 1 later: R3
    tb.run(1, 45, 50, P_EXEC, C_REC, 4);
    tb.thread_end(1, 100).thread_end(2, 100);
    let (_, t) = run(&tb);
    let r = class(&t, "demo.Rec", TaskKind::ForkJoin);
    assert_eq!((r.executions, r.aggregated, r.submitted), (2, 2, 1));
    // Rec#3 is folded into Rec#1: its 7 ns stay in Rec#1.
    assert_eq!(r.granularity_ns.total, 30 + 20);
    let w = class(
        &t,
        "java.util.concurrent.ForkJoinWorkerThread",
        TaskKind::Thread,
    );
    assert_eq!(w.executions, 2);
    assert_eq!(w.granularity_ns.total, (100 - 30) + (100 - 20));
}

#[test]
fn percentiles_nearest_rank() {
    let d = Distribution::of(&(1..=10).collect::<Vec<u64>>());
    assert_eq!(
        (d.count, d.total, d.min, d.p50, d.p90, d.max),
        (10, 55, 1, 5, 9, 10)
    );
    let d = Distribution::of(&[7]);
    assert_eq!((d.min, d.p50, d.p90, d.max), (7, 7, 7, 7));
    let d = Distribution::of(&[2, 1]);
    assert_eq!((d.p50, d.p90), (1, 2));
    assert_eq!(Distribution::of(&[]), Distribution::default());
    let v: Vec<u64> = (1..=100).collect();
    let d = Distribution::of(&v);
    assert_eq!((d.p50, d.p90), (50, 90));
    let d = Distribution::of(&[u64::MAX, u64::MAX]);
    assert_eq!(d.total, u64::MAX);
}

#[test]
fn unknown_defs_do_not_panic() {
    let mut tb = TB::new();
    tb.submit(MAIN, 1, (99, 1), 42);
    tb.run(1, 5, 9, 555, 99, 1);
    let (_, t) = run(&tb);
    let c = class(&t, "<unknown class #99>", TaskKind::Runnable);
    assert_eq!(c.executions, 1);
    assert_eq!(
        c.sites[0].0.submitted.as_deref(),
        Some("<unknown site #42>")
    );
}

#[test]
fn random_records_never_panic() {
    let mut seed: u64 = 0x1234_5678;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for _ in 0..200 {
        let mut tb = TB::new();
        for _ in 0..60 {
            let t = next(3) as u32;
            let ts = next(100);
            let c = 10 + next(6) as u32;
            let id = next(4) as u32;
            let p = 1 + next(9) as u32;
            match next(8) {
                0 => {
                    tb.begin_p(t, ts, p, c, id, (10 + next(3) as u32, next(3) as u32));
                }
                1 | 2 => {
                    tb.end(t, ts, p, id);
                }
                3 => {
                    tb.submit(t, ts, (c, id), 0);
                }
                4 => {
                    tb.start(t, ts, c, (c, id));
                }
                5 => {
                    tb.thread_end(t, ts);
                }
                6 => {
                    tb.created(t, ts, (c, id), 0);
                }
                _ => {
                    tb.begin(t, ts, p, c, id);
                }
            }
        }
        let (_, t) = run(&tb);
        for e in &t.executions {
            assert!(e.end_ns >= e.begin_ns);
            assert!(e.self_ns <= e.duration_ns());
        }
        let _ = crate::analyze(&tb.trace());
    }
}

#[test]
fn round_trip_through_trace_bytes() {
    use weft_trace::{encode_file_header, read_trace_bytes, BlockEncoder, Header};
    let mut tb = TB::new();
    tb.site(1, "demo.Main.make:5");
    tb.created(MAIN, 5, (C_WORK, 1), 1);
    tb.submit(MAIN, 10, (C_WORK, 1), 1);
    pool_thread(&mut tb, 1, 0);
    tb.begin_p(1, 20, P_FUTURETASK_RUN, C_FUTURETASK, 300, (C_WORK, 1));
    tb.run(1, 22, 52, P_WORK_RUN, C_WORK, 1);
    tb.end(1, 55, P_FUTURETASK_RUN, 300);
    pool_thread_end(&mut tb, 1, 100);
    tb.global(Record::End { ts: 100 });
    let direct = {
        let tr = tb.trace();
        crate::analyze(&tr).tasks
    };
    let mut h = Header::default();
    h.set("start.ticks", "0");
    h.set("clock.ticks_per_sec", "1000000000");
    let mut bytes = encode_file_header(&h);
    let mut by_thread: BTreeMap<u32, BlockEncoder> = BTreeMap::new();
    for (t, r) in &tb.recs {
        by_thread
            .entry(*t)
            .or_insert_with(|| BlockEncoder::new(*t, 256))
            .push(r);
    }
    for enc in by_thread.values_mut() {
        bytes.extend(enc.take_block());
    }
    let trace = read_trace_bytes(&bytes).unwrap();
    assert!(!trace.truncated);
    let read = crate::analyze(&trace).tasks;
    assert_eq!(direct, read);
    assert_eq!(
        class(&read, "demo.Work", TaskKind::Runnable)
            .queue_wait_ns
            .unwrap()
            .p50,
        12
    );
}

#[test]
fn main_thread_recorded_at_vminit_is_not_an_execution() {
    let mut tb = TB::new();
    tb.recs.push((
        MAIN,
        Record::ThreadStart {
            ts: 0,
            name: "main".into(),
            java_id: 1,
            os_tid: 1,
            daemon: false,
            class_id: C_THREAD,
            target_class_id: 0,
            target_ident: 0,
            ident: 1,
        },
    ));
    tb.run(MAIN, 10, 20, P_WORK_RUN, C_WORK, 1); // R3 on main
    tb.created(1, 0, (C_WORK, 2), 0);
    tb.run(MAIN, 30, 45, P_WORK_RUN, C_WORK, 2); // created elsewhere: reported
    let (m, t) = run(&tb);
    assert_eq!(m.threads[&MAIN].display_name(), "main");
    assert!(!has_class(&t, "java.lang.Thread", TaskKind::Thread));
    let w = class(&t, "demo.Work", TaskKind::Runnable);
    assert_eq!((w.executions, w.aggregated), (1, 1));
    assert_eq!(w.granularity_ns.total, 15);
}

#[test]
fn a_wrapped_lambda_nobody_submitted_is_reported_on_the_pool_thread() {
    // ScheduledThreadPoolExecutor.schedule*: the JDK wraps the lambda in a
    // ScheduledFutureTask (plumbing, no constructor probe) and queues it without a
    // submission probe; a periodic task runs the same wrapper again and again.
    let mut tb = TB::new();
    pool_thread(&mut tb, 1, 0);
    // (A Runnable: the wrapper holds it in a RunnableAdapter, whose call runs nested.)
    for (i, at) in [10u64, 30, 50].iter().enumerate() {
        tb.begin_p(1, *at, P_FUTURETASK_RUN, C_FUTURETASK, 77, (C_LAMBDA, 5));
        tb.begin_p(1, at + 1, P_ADAPTER_CALL, C_ADAPTER, 87, (C_LAMBDA, 5));
        tb.end(1, at + 4, P_ADAPTER_CALL, 87);
        tb.end(1, at + 5 + i as u64, P_FUTURETASK_RUN, 77);
    }
    // The same wrapper made and run on one thread (known creation): aggregated, as before.
    tb.created(1, 60, (C_FUTURETASK, 78), 0);
    tb.begin_p(1, 61, P_FUTURETASK_RUN, C_FUTURETASK, 78, (C_LAMBDA, 6));
    tb.begin_p(1, 62, P_ADAPTER_CALL, C_ADAPTER, 88, (C_LAMBDA, 6));
    tb.end(1, 63, P_ADAPTER_CALL, 88);
    tb.end(1, 64, P_FUTURETASK_RUN, 78);
    pool_thread_end(&mut tb, 1, 100);
    let (_, t) = run(&tb);
    let l = class(&t, "demo.Main$$Lambda[main:10]", TaskKind::Runnable);
    assert_eq!((l.executions, l.aggregated), (3, 1));
    assert_eq!(l.granularity_ns.total, 5 + 6 + 7);
}

#[test]
fn a_thread_whose_target_is_plumbing_is_an_execution_of_the_task_inside() {
    // CompletableFuture.runAsync when the common pool has one thread: a new Thread per
    // task, its target the AsyncRun wrapper of the lambda (here a FutureTask-like one).
    let mut tb = TB::new();
    // Submitted on main (the executor's submission of the lambda), started at 10.
    tb.submit(MAIN, 4, (C_LAMBDA, 7), 0);
    tb.start(2, 10, C_THREAD, (C_FUTURETASK, 50));
    tb.begin_p(2, 11, P_FUTURETASK_RUN, C_FUTURETASK, 50, (C_LAMBDA, 7));
    tb.end(2, 40, P_FUTURETASK_RUN, 50);
    tb.thread_end(2, 42);
    let (_, t) = run(&tb);
    let l = class(&t, "demo.Main$$Lambda[main:10]", TaskKind::Thread);
    assert_eq!((l.executions, l.submitted), (1, 1));
    assert_eq!(t.unmatched_submissions, 0);
    assert_eq!(l.queue_wait_ns.as_ref().map(|q| q.p50), Some(6));
    assert!(!has_class(
        &t,
        "java.util.concurrent.FutureTask",
        TaskKind::Thread
    ));
}

#[test]
fn a_lambda_a_future_task_holds_directly_is_a_callable() {
    // `invokeAll` (and an ExecutorCompletionService): FutureTask(callable) given to
    // `execute(Runnable)`; `submit(Runnable)`: FutureTask -> RunnableAdapter -> task.
    let mut tb = TB::new();
    pool_thread(&mut tb, 1, 0);
    tb.submit_p(MAIN, 2, P_EXECUTE, (C_FUTURETASK, 60), (C_LAMBDA, 9), 0);
    tb.begin_p(1, 10, P_FUTURETASK_RUN, C_FUTURETASK, 60, (C_LAMBDA, 9));
    tb.end(1, 20, P_FUTURETASK_RUN, 60);
    tb.submit_p(
        MAIN,
        3,
        P_SUBMIT_RUNNABLE,
        (C_FUTURETASK, 62),
        (C_INNER, 10),
        0,
    );
    tb.begin_p(1, 30, P_FUTURETASK_RUN, C_FUTURETASK, 62, (C_INNER, 10));
    tb.begin_p(1, 31, P_ADAPTER_CALL, C_ADAPTER, 61, (C_INNER, 10));
    tb.end(1, 39, P_ADAPTER_CALL, 61);
    tb.end(1, 40, P_FUTURETASK_RUN, 62);
    pool_thread_end(&mut tb, 1, 100);
    let (_, t) = run(&tb);
    assert_eq!(
        class(&t, "demo.Main$$Lambda[main:10]", TaskKind::Callable).executions,
        1
    );
    assert_eq!(class(&t, "demo.Inner", TaskKind::Runnable).executions, 1);
}

#[test]
fn jvm_service_threads_are_not_executions() {
    // The JVM's `Notification Thread` (a plain java.lang.Thread, no target) starts
    // after VMInit, so it has a ThreadStart; it never runs the program's code. A
    // program's own thread of the same class and no target is still an execution.
    let mut tb = TB::new();
    let start = |tb: &mut TB, t: u32, name: &str| {
        tb.recs.push((
            t,
            Record::ThreadStart {
                ts: 5,
                name: name.into(),
                java_id: u64::from(t) + 10,
                os_tid: t + 100,
                daemon: true,
                class_id: C_THREAD,
                target_class_id: 0,
                target_ident: 0,
                ident: 900 + t,
            },
        ));
    };
    start(&mut tb, 2, "Notification Thread");
    tb.thread_end(2, 50);
    start(&mut tb, 3, "worker-of-the-program");
    tb.thread_end(3, 40);
    let (m, t) = run(&tb);
    assert_eq!(m.threads[&2].display_name(), "Notification Thread");
    let th = class(&t, "java.lang.Thread", TaskKind::Thread);
    assert_eq!(th.executions, 1);
    assert_eq!(th.granularity_ns.total, 35);
}

#[test]
fn happens_before_edges() {
    use crate::edges::EdgeKind;
    let join = |tb: &mut TB, t: u32, from: u64, to: u64, probe: u32, target: (u32, u32)| {
        tb.recs.push((
            t,
            Record::JoinBegin {
                ts: from,
                probe,
                target_class_id: target.0,
                target_ident: target.1,
            },
        ));
        tb.recs.push((t, Record::JoinEnd { ts: to, probe }));
    };
    let mut tb = TB::new();
    // main creates and starts a MyThread (ident 1002), submits Work 1 (FutureTask
    // 300) and a lambda (FutureTask 301) to pool thread 1.
    tb.created(MAIN, 3, (C_MYTHREAD, 1002), 0);
    tb.submit_p(
        MAIN,
        10,
        P_SUBMIT_RUNNABLE,
        (C_FUTURETASK, 300),
        (C_WORK, 1),
        0,
    );
    tb.submit_p(
        MAIN,
        11,
        P_SUBMIT_RUNNABLE,
        (C_FUTURETASK, 301),
        (C_LAMBDA, 7),
        0,
    );
    pool_thread(&mut tb, 1, 0);
    tb.begin_p(1, 20, P_FUTURETASK_RUN, C_FUTURETASK, 300, (C_WORK, 1));
    tb.run(1, 22, 52, P_WORK_RUN, C_WORK, 1);
    tb.end(1, 55, P_FUTURETASK_RUN, 300);
    // The lambda's FutureTask is a stand-in: it completes the future before its end.
    tb.begin_p(1, 60, P_FUTURETASK_RUN, C_FUTURETASK, 301, (C_LAMBDA, 7));
    tb.end(1, 70, P_FUTURETASK_RUN, 301);
    // Completes the CompletableFuture (30, 500) (see below).
    tb.begin(1, 72, P_WORK_RUN, C_WORK, 2);
    join(&mut tb, 1, 75, 76, 41, (30, 500));
    tb.end(1, 78, P_WORK_RUN, 2);
    pool_thread_end(&mut tb, 1, 100);
    tb.start(2, 4, C_MYTHREAD, (0, 0));
    tb.thread_end(2, 80);
    // get(300) returns after Work ended; get(301) returns inside the stand-in;
    // a timed get(301) that returned before it began; Thread.join(MyThread).
    join(&mut tb, MAIN, 30, 58, 40, (C_FUTURETASK, 300));
    join(&mut tb, MAIN, 59, 59, 40, (C_FUTURETASK, 301));
    join(&mut tb, MAIN, 61, 69, 40, (C_FUTURETASK, 301));
    join(&mut tb, MAIN, 75, 81, 0, (C_MYTHREAD, 1002));
    // A CompletableFuture (class 30) completed (postComplete, probe 41) inside a Work
    // run on the pool thread, joined by main (probe 42); another one never completed.
    tb.global(Record::ClassDef {
        id: 30,
        name: "java.util.concurrent.CompletableFuture".into(),
    });
    for (id, method) in [(41, "postComplete"), (42, "join")] {
        tb.global(Record::ProbeDef {
            id,
            kind: weft_trace::ProbeKind::Join,
            class: "java.util.concurrent.CompletableFuture".into(),
            method: method.into(),
            descriptor: "()V".into(),
        });
    }
    join(&mut tb, MAIN, 82, 90, 42, (30, 500));
    join(&mut tb, MAIN, 91, 92, 42, (30, 501));
    tb.global(Record::End { ts: 100 });
    let (_, t) = run(&tb);
    let e = &t.edges;
    let work = t
        .executions
        .iter()
        .position(|x| t.class(x) == "demo.Work")
        .unwrap();
    let lambda = t
        .executions
        .iter()
        .position(|x| t.class(x) == "demo.Main$$Lambda[main:10]")
        .unwrap();
    let completer = t
        .executions
        .iter()
        .position(|x| t.class(x) == "demo.Work" && x.begin_ns == 72)
        .unwrap();
    let my = t
        .executions
        .iter()
        .position(|x| t.class(x) == "demo.MyThread")
        .unwrap();
    type Row = (EdgeKind, Option<usize>, u32, u64, Option<usize>, u32, u64);
    let kinds: Vec<Row> = e
        .edges
        .iter()
        .map(|e| {
            (
                e.kind,
                e.from,
                e.from_thread,
                e.from_ns,
                e.to,
                e.to_thread,
                e.to_ns,
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            (EdgeKind::Submit, None, MAIN, 10, Some(work), 1, 22),
            (EdgeKind::Submit, None, MAIN, 11, Some(lambda), 1, 60),
            (EdgeKind::ThreadStart, None, MAIN, 3, Some(my), 2, 4),
            (EdgeKind::FutureGet, Some(work), 1, 52, None, MAIN, 58),
            (EdgeKind::FutureGet, Some(lambda), 1, 69, None, MAIN, 69),
            (EdgeKind::ThreadJoin, Some(my), 2, 80, None, MAIN, 81),
            (EdgeKind::FutureGet, Some(completer), 1, 75, None, MAIN, 90),
        ]
    );
    assert_eq!(e.count(EdgeKind::Submit), 2);
    // The pool thread's start has no recorded creation; the early timed get and the
    // join of the never-completed future have no source.
    assert_eq!(e.unresolved_starts, 1);
    assert_eq!(e.unresolved_joins, 2);
}

/// Values by identity: each identity's values in key order, a FIFO per identity
/// (pops do not reach another identity's values), the count never popped.
#[test]
fn values_by_identity_are_a_queue_each() {
    let mut b: ByIdent<u64> = ByIdent::default();
    for (id, v) in [
        ((1, 7), 30),
        ((2, 1), 5),
        ((1, 7), 10),
        ((1, 8), 1),
        ((1, 7), 20),
    ] {
        b.push(id, v);
    }
    b.sort_by_key(|v| *v);
    let vals = |b: &ByIdent<u64>, id| b.get(id).map(|v| v.iter().map(|e| e.1).collect::<Vec<_>>());
    assert_eq!(vals(&b, (1, 7)), Some(vec![10, 20, 30]));
    assert_eq!(vals(&b, (9, 9)), None);
    assert_eq!(b.front((1, 7)), Some(&10));
    b.pop_front((1, 7));
    b.pop_front((1, 7));
    assert_eq!(b.front((1, 7)), Some(&30));
    b.pop_front((1, 7));
    b.pop_front((1, 7));
    assert_eq!(b.front((1, 7)), None);
    assert_eq!(b.front((1, 8)), Some(&1));
    assert_eq!(b.front((2, 1)), Some(&5));
    b.pop_front((9, 9));
    assert_eq!(b.remaining(), 2);
    // Popped values are still there for lookups by time.
    assert_eq!(vals(&b, (1, 7)), Some(vec![10, 20, 30]));
}
