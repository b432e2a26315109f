//! End-to-end: each Java workload of `java/workloads`, recorded by `weft record`,
//! must give a report that matches the ground truth the workload computed from
//! its own control flow (exact execution/aggregated/submitted counts and kinds,
//! self time p50 within 10% of the known busy-spin work, queue waits for the
//! submitted classes). See `common::compare` for every check.
//!
//! Needs `java`/`javac` (17+) on PATH and the agent library next to the weft binary.

mod common;

use common::{check_workload, compare, record_on_jdk, report_json, run_plain, serial, truth};

#[test]
fn lambdas_given_to_execute_and_run_by_a_hand_written_executor() {
    // A lambda is a hidden class with no probe of its own: before its callers' calls of
    // `Runnable.run()` were redirected, none of these executions was seen.
    let r = check_workload("ExecuteLambdas", &["100", "300", "2"]);
    // Made by Constructor.newInstance: created where the workload asked for it.
    let rows = r["tasks"]["classes"].as_array().expect("classes");
    let reflected = rows
        .iter()
        .find(|c| c["class"] == "weft.workloads.ExecuteLambdas$Reflected")
        .expect("Reflected row");
    let created = reflected["sites"][0]["created"].as_str().unwrap_or("");
    assert!(
        created.starts_with("weft.workloads.ExecuteLambdas.main:"),
        "{}",
        reflected["sites"]
    );
}

#[test]
fn async_completable_future_stages_are_their_functions() {
    check_workload("AsyncStages", &["60", "300"]);
}

#[test]
fn an_http_servers_exchanges_are_tasks() {
    // A JDK class weft skips (sun.*), run by a ThreadPoolExecutor: recorded at the
    // worker loop's call of run().
    check_workload("HttpHandlers", &["100", "300"]);
}

#[test]
fn lambdas_and_async_stages_on_jdk_21_and_25() {
    // The same counts on the later runtimes (ThreadPoolExecutor.runWorker and the
    // CompletableFuture stage classes are the same there; plumbing.rs).
    let _serial = serial();
    for (class, args) in [
        ("ExecuteLambdas", ["60", "300", "2"].as_slice()),
        ("AsyncStages", ["40", "300"].as_slice()),
    ] {
        let plain = run_plain(class, args);
        assert!(plain.status.success(), "{}", plain.describe());
        let truth = truth(&plain.stdout);
        for major in [21, 25] {
            let mut argv = vec![format!("weft.workloads.{class}")];
            argv.extend(args.iter().map(|a| a.to_string()));
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let trace = record_on_jdk(major, class, &[], &argv);
            let problems = compare(&truth, &report_json(&trace));
            assert!(problems.is_empty(), "{class} on JDK {major}: {problems:#?}");
        }
    }
}

#[test]
fn pool_tasks_execute_submit_invokeall_lambdas_reuse_throw() {
    check_workload("PoolTasks", &["100", "300", "2"]);
}

#[test]
fn nested_tasks_aggregate_unless_submitted() {
    check_workload("Nested", &["100", "400", "2"]);
}

#[test]
fn same_thread_tasks_aggregate_into_their_creating_thread() {
    check_workload("SameThread", &["100", "300", "20", "1000"]);
}

#[test]
fn threads_are_tasks_of_kind_thread() {
    check_workload("Threads", &["50"]);
}

#[test]
fn fork_join_with_one_worker() {
    check_workload("ForkJoin", &["50", "300", "16", "1000"]);
}

#[test]
fn completable_future_async_on_an_executor() {
    check_workload("AsyncTasks", &["100", "300"]);
}

#[test]
fn many_small_tasks_are_all_counted() {
    // 20,000 tasks of 20 us: exact counts at a high event rate (no self-time check below 200 us).
    check_workload("ExecutorBench", &["20000", "20", "2"]);
}

#[test]
fn executor_bench_self_time() {
    check_workload("ExecutorBench", &["1000", "300", "2"]);
}

#[test]
fn a_program_without_tasks() {
    check_workload("Hello", &[]);
}

/// The harness itself: a report built to match a truth passes `compare`, and
/// each kind of mismatch is caught. Needs neither Java nor the agent.
#[test]
fn harness_compare_accepts_a_match_and_catches_mismatches() {
    use serde_json::{json, Value};
    let truth = common::truth(
        "hello\nWEFT-TRUTH {\"workload\":\"T\",\"classes\":{\
         \"weft.workloads.T$A\":{\"kind\":\"runnable\",\"executions\":10,\"aggregated\":0,\"submitted\":10},\
         \"weft.workloads.T$B\":{\"kind\":\"callable\",\"executions\":4,\"aggregated\":4,\"submitted\":0},\
         \"weft.workloads.T$Gone\":{\"kind\":\"thread\",\"executions\":0,\"aggregated\":0,\"submitted\":0}},\
         \"self_ns\":{\"weft.workloads.T$A\":300000},\"threads\":[\"t-0\"],\"min_gc_pauses\":1}\n",
    );
    let good = json!({
        "weft_report_version": 1, "jvm": {"pid": 42, "java_version": "17"}, "duration_ns": 1000000,
        "threads": [{"name": "t-0", "start_ns": 5, "end_ns": 9, "cpu_ns": null}],
        "gc": {"pauses": 1, "total_ns": 100},
        "tasks": {"classes": [
            {"class": "weft.workloads.T$A", "kind": "runnable", "executions": 10, "aggregated": 0, "submitted": 10,
             "granularity_ns": {"total": 3010000, "min": 300500, "p50": 301000, "p90": 302000, "max": 310000},
             "queue_wait_ns": {"p50": 1000, "p90": 2000},
             "sites": [{"created": "weft.workloads.T.main:3", "submitted": "weft.workloads.T.main:4"}]},
            {"class": "weft.workloads.T$B", "kind": "callable", "executions": 0, "aggregated": 4, "submitted": 0,
             "granularity_ns": {"total": 0, "min": 0, "p50": 0, "p90": 0, "max": 0},
             "queue_wait_ns": null, "sites": []},
            {"class": "java.lang.Thread", "kind": "thread", "executions": 3, "aggregated": 0, "submitted": 0,
             "granularity_ns": {"total": 0, "min": 0, "p50": 0, "p90": 0, "max": 0},
             "queue_wait_ns": null, "sites": []}
        ]},
        "trace": {"truncated": false}, "findings": []
    });
    let ok = common::compare(&truth, &good);
    assert!(ok.is_empty(), "{ok:?}");

    let mutate = |f: &dyn Fn(&mut Value)| {
        let mut r = good.clone();
        f(&mut r);
        common::compare(&truth, &r)
    };
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "count",
            mutate(&|r| r["tasks"]["classes"][0]["executions"] = json!(9)),
        ),
        (
            "kind",
            mutate(&|r| r["tasks"]["classes"][0]["kind"] = json!("callable")),
        ),
        (
            "aggregated",
            mutate(&|r| r["tasks"]["classes"][1]["aggregated"] = json!(3)),
        ),
        (
            "self p50",
            mutate(&|r| r["tasks"]["classes"][0]["granularity_ns"]["p50"] = json!(340000)),
        ),
        (
            "queue wait",
            mutate(&|r| r["tasks"]["classes"][0]["queue_wait_ns"] = Value::Null),
        ),
        (
            "unexpected",
            mutate(&|r| {
                r["tasks"]["classes"][2]["class"] = json!("weft.workloads.T$Gone");
            }),
        ),
        (
            "extra class",
            mutate(&|r| r["tasks"]["classes"][2]["class"] = json!("weft.workloads.T$$Lambda")),
        ),
        (
            "thread",
            mutate(&|r| r["threads"][0]["end_ns"] = Value::Null),
        ),
        ("gc", mutate(&|r| r["gc"]["pauses"] = json!(0))),
        (
            "truncated",
            mutate(&|r| r["trace"]["truncated"] = json!(true)),
        ),
        (
            "missing",
            mutate(&|r| {
                r["tasks"]["classes"].as_array_mut().unwrap().remove(1);
            }),
        ),
    ];
    for (what, problems) in cases {
        assert!(!problems.is_empty(), "compare missed a wrong {what}");
    }
}

/// Happens-before edges (docs/task-model.md §Edges) in `tasks.edges` of the report.
#[test]
fn happens_before_edges() {
    use common::*;
    let edges = |class: &str, args: &[&str]| {
        let _serial = serial();
        let trace = scratch_file(&format!("edges-{class}.weft"));
        let _ = std::fs::remove_file(&trace);
        let rec = run_recorded(&trace, &[], class, args);
        assert!(rec.status.success(), "{}", rec.describe());
        let r = report_json(&trace);
        let _ = std::fs::remove_file(&trace);
        r
    };
    let n = |v: &serde_json::Value, k: &str| {
        v["tasks"]["edges"][k]
            .as_u64()
            .unwrap_or_else(|| panic!("tasks.edges.{k} in {}", v["tasks"]["edges"]))
    };
    // Every matched submission is a submit edge; Future.get returns after the task.
    let r = edges("PoolTasks", &["100", "300", "2"]);
    let submitted: u64 = r["tasks"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["submitted"].as_u64().unwrap())
        .sum();
    assert_eq!(n(&r, "submit"), submitted, "{}", r["tasks"]["edges"]);
    assert!(n(&r, "future_get") > 0, "{}", r["tasks"]["edges"]);
    assert_eq!(n(&r, "join"), n(&r, "future_get") + n(&r, "thread_join"));
    // CompletableFuture.allOf(…).join() is recorded. Whether it resolves to a completer
    // depends on timing: the JDK runs postComplete for allOf's future only if someone
    // already waits on it, so resolved + unresolved is what is deterministic.
    let r = edges("AsyncTasks", &["100", "300"]);
    assert!(
        n(&r, "future_get") + n(&r, "unresolved_joins") >= 1,
        "{}",
        r["tasks"]["edges"]
    );
    // Threads started two at a time and joined: the first join of each pair waits
    // (4 pairs); all 8 threads have their starting thread, the 2 lambdas' too (their
    // `Thread.start()` is recorded: crates/agent/src/thread_starts.rs).
    let r = edges("Threads", &["50"]);
    assert!(n(&r, "thread_join") >= 4, "{}", r["tasks"]["edges"]);
    assert!(n(&r, "thread_start") >= 8, "{}", r["tasks"]["edges"]);
}
