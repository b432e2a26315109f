//! End-to-end tests of the fork-join model (docs/forkjoin.md, issue 3): every
//! workload of `java/workloads/src/weft/workloads/fj` (small sizes, parallelism 1
//! for determinism) runs plainly and under `weft record`; the report's `forkjoin`
//! object must equal the workload's own `WEFT-TRUTH` `forkjoin` object: tasks,
//! forks, external submissions, cancelled, reinitialized, reused, never run,
//! computations (as a multiset of root class and task count) and per-class task
//! counts; steals must be 0 with one worker; leaves of known work must report
//! their self time within 10%.

mod common;

use common::*;
use serde_json::Value;

/// Runs `fj.<class> args` plainly and recorded; returns (truth, report).
fn record(class: &str, args: &[&str]) -> (Value, Value) {
    let _serial = serial();
    let class = format!("fj.{class}");
    let plain = run_plain(&class, args);
    assert!(
        plain.status.success(),
        "plain run of {class} failed\n{}",
        plain.describe()
    );
    let truth = truth(&plain.stdout);
    let trace = scratch_file(&format!("{class}.weft"));
    let _ = std::fs::remove_file(&trace);
    let rec = run_recorded(&trace, &[], &class, args);
    assert_no_panic(&rec, "weft record");
    assert!(
        rec.status.success(),
        "weft record of {class} failed\n{}",
        rec.describe()
    );
    let tl = truth_line(&rec.stdout);
    assert_eq!(
        tl["result"], truth["result"],
        "{class}: result under weft differs"
    );
    let report = report_json(&trace);
    let _ = std::fs::remove_file(&trace);
    // Compare with the truth of the recorded run (integrate/lud may vary at p>1).
    (tl, report)
}

fn truth_line(stdout: &str) -> Value {
    truth(stdout)
}

/// Differences between the truth's `forkjoin` object and the report's.
fn compare_fj(truth: &Value, report: &Value, parallelism_one: bool) -> Vec<String> {
    let mut bad = Vec::new();
    let t = &truth["forkjoin"];
    let Some(r) = report.get("forkjoin").filter(|v| v.is_object()) else {
        return vec!["the report has no forkjoin object".into()];
    };
    for k in [
        "tasks",
        "forks",
        "external_submissions",
        "cancelled",
        "reinitialized",
        "reused",
        "never_run",
    ] {
        if let Some(want) = t.get(k).and_then(Value::as_u64) {
            let got = r.get(k).and_then(Value::as_u64);
            if got != Some(want) {
                bad.push(format!("{k}: truth {want}, report {got:?}"));
            }
        }
    }
    if parallelism_one && r["steals"].as_u64() != Some(0) {
        bad.push(format!("steals at parallelism 1: {}", r["steals"]));
    }
    if let Some(tc) = t.get("computations").and_then(Value::as_array) {
        let key = |c: &Value, with_tasks: bool| {
            format!(
                "{}:{}",
                c["root_class"].as_str().unwrap_or("?"),
                if with_tasks {
                    c["tasks"].to_string()
                } else {
                    "-".into()
                }
            )
        };
        let rc = r["computations"].as_array().cloned().unwrap_or_default();
        let with_tasks = tc.iter().all(|c| c.get("tasks").is_some());
        let mut want: Vec<String> = tc.iter().map(|c| key(c, with_tasks)).collect();
        let mut got: Vec<String> = rc.iter().map(|c| key(c, with_tasks)).collect();
        if !with_tasks {
            // Only the truth's roots are known (JDK computations may come on top).
            let classes: Vec<&str> = tc.iter().filter_map(|c| c["root_class"].as_str()).collect();
            got.retain(|g| classes.iter().any(|c| g.starts_with(&format!("{c}:"))));
        }
        want.sort();
        got.sort();
        if want != got {
            bad.push(format!("computations: truth {want:?}, report {got:?}"));
        }
    }
    if let Some(tc) = t.get("classes").and_then(Value::as_object) {
        let rc = r["classes"].as_array().cloned().unwrap_or_default();
        for (class, v) in tc {
            let want = v["tasks"].as_u64();
            let got = rc
                .iter()
                .find(|c| c["class"].as_str() == Some(class.as_str()))
                .and_then(|c| c["tasks"].as_u64());
            if got != want {
                bad.push(format!(
                    "class {class}: truth {want:?} tasks, report {got:?}"
                ));
            }
        }
    }
    bad
}

fn check(class: &str, args: &[&str]) -> (Value, Value) {
    let (truth, report) = record(class, args);
    let p1 = truth["args"]
        .as_array()
        .and_then(|a| a.get(2))
        .and_then(Value::as_u64)
        == Some(1);
    let bad = compare_fj(&truth, &report, p1);
    assert!(
        bad.is_empty(),
        "{class} {args:?}: report does not match the ground truth:\n  - {}\ntruth: {}\nreport forkjoin: {}",
        bad.join("\n  - "),
        truth["forkjoin"],
        summary(&report["forkjoin"])
    );
    (truth, report)
}

/// The report's forkjoin object without its long lists.
fn summary(f: &Value) -> String {
    let mut f = f.clone();
    if let Some(o) = f.as_object_mut() {
        o.remove("threads");
        if let Some(c) = o.get_mut("computations").and_then(Value::as_array_mut) {
            c.truncate(8);
        }
    }
    f.to_string()
}

// ---- the 12 wosp workloads, parallelism 1 ----

#[test]
fn fibonacci() {
    check("Fibonacci", &["24", "10", "1"]);
}

#[test]
fn fj_kmeans() {
    check("FjKmeans", &["20000", "1000", "1", "16", "3"]);
}

#[test]
fn fft() {
    check("Fft", &["12", "16", "1", "2"]);
}

#[test]
fn doall() {
    check("DoAll", &["200000", "1024", "1", "2"]);
}

#[test]
fn heat() {
    check("Heat", &["128", "4", "1", "10"]);
}

#[test]
fn integrate() {
    check("Integrate", &["2000", "9", "1", "8", "2"]);
}

#[test]
fn lud() {
    check("Lud", &["256", "1", "1", "32"]);
}

#[test]
fn matrixmult() {
    check("MatrixMult", &["128", "16", "1"]);
}

#[test]
fn mergesort() {
    check("MergeSort", &["200000", "8192", "1"]);
}

#[test]
fn quicksort() {
    check("QuickSort", &["200000", "2048", "1"]);
}

#[test]
fn pi() {
    check("Pi", &["1000000", "2500", "1"]);
}

#[test]
fn nbody() {
    check("NBody", &["500", "64", "1", "3"]);
}

// ---- corner cases ----

/// Leaves busy-wait 200 µs: their self time (p50 of the class) within 10%.
#[test]
fn known_work_self_time() {
    let (truth, report) = check("KnownWork", &["128", "200", "1"]);
    let kw = &truth["known_work"];
    let class = kw["class"].as_str().unwrap();
    let want = kw["self_ns"].as_f64().unwrap();
    let row = report["forkjoin"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"].as_str() == Some(class))
        .unwrap_or_else(|| panic!("no class {class} in the report"))
        .clone();
    let p50 = row["granularity_ns"]["p50"].as_f64().unwrap();
    assert!(
        (p50 - want).abs() <= SELF_TOLERANCE * want,
        "{class}: self p50 {p50} ns, expected {want} ns ± 10%"
    );
    // Work of the computation: leaves × work (+ the splits' small self time).
    let work = report["forkjoin"]["computations"][0]["work_ns"]
        .as_f64()
        .unwrap();
    let leaves = kw["tasks"].as_f64().unwrap();
    assert!(
        work >= 0.9 * leaves * want,
        "work {work} ns < 90% of {leaves} × {want}"
    );
    // Span is the critical path (not the schedule): one leaf and the splits above it,
    // whatever the number of workers; so parallelism = work / span is well above 1.
    let c = &report["forkjoin"]["computations"][0];
    let span = c["span_ns"].as_f64().unwrap();
    assert!(
        span >= 0.9 * want && span <= work,
        "span should be between one leaf and the work: {c}"
    );
    assert!(c["parallelism"].as_f64().unwrap() >= 1.0, "{c}");
}

#[test]
fn known_work_two_workers() {
    // At p=2 counts stay exact; steals happen but are not counted for the root.
    let (truth, report) = check("KnownWork", &["64", "200", "2"]);
    let f = &report["forkjoin"];
    assert!(f["steals"].as_u64().unwrap() <= truth["forkjoin"]["forks"].as_u64().unwrap());
    let c = &f["computations"][0];
    let (span, work) = (
        c["span_ns"].as_f64().unwrap(),
        c["work_ns"].as_f64().unwrap(),
    );
    assert!(span >= 180_000.0 && span <= work, "{c}");
}

#[test]
fn reuse_reinitialize() {
    check("Reuse", &["200", "16", "1", "20", "20"]);
}

#[test]
fn cancel_before_run() {
    check("CancelBeforeRun", &["50", "5", "1"]);
}

#[test]
fn try_unfork() {
    check("TryUnfork", &["100", "20", "1"]);
}

#[test]
fn try_unfork_two_workers() {
    check("TryUnfork", &["50", "20", "2"]);
}

#[test]
fn two_clients() {
    let (_, report) = check("TwoClients", &["18", "10", "1", "17"]);
    assert_eq!(
        report["forkjoin"]["computations"].as_array().unwrap().len(),
        2
    );
}

#[test]
fn invoke_all() {
    let (_, report) = check("InvokeAll", &["300000", "2000", "1"]);
    // The pool's invoke waits in the same slow path as join and invokeAll
    // (awaitDone): the submitting thread's wait for the computation is recorded.
    let threads = report["forkjoin"]["threads"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let main = threads.iter().find(|t| t["name"] == "main");
    assert!(
        main.and_then(|t| t["join_blocked_ns"].as_u64())
            .unwrap_or(0)
            > 0,
        "main's wait in pool.invoke not recorded: {threads:?}"
    );
}

#[test]
fn async_supply() {
    check("AsyncSupply", &["20", "100", "2"]);
}

#[test]
fn parallel_streams() {
    let (_, report) = record("ParallelStreams", &["200000", "20000", "-", "1"]);
    let f = &report["forkjoin"];
    assert!(f["tasks"].as_u64().unwrap_or(0) > 0, "no tasks: {f}");
    assert_eq!(f["cancelled"].as_u64(), Some(0));
}

#[test]
fn parallel_streams_in_pool() {
    check("ParallelStreamsInPool", &["200000", "-", "1", "2"]);
}
