//! Possible speedups (issue 18, docs/speedups.md) end to end: a validation
//! workload's efficiencies against the truth it measures from its own threads'
//! CPU times, and bad input (one thread, a missing trace) stated clearly.
//!
//! The machine is shared and has 2 cores: tolerances are wide enough for the
//! test to be deterministic there (the accuracy bars are in ACCURACY.md,
//! measured by bench/speedups/run.py), and no gain is asserted.

mod common;

use common::*;
use serde_json::Value;

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} is not a number in {v}"))
}

#[test]
fn serial_prologue_efficiencies_match_the_truth() {
    let _serial = serial();
    let trace = scratch_file("serial-prologue.weft");
    let rec = run_recorded(
        &trace,
        &["--interval", "10ms"],
        "speedups.SerialPrologue",
        &["serial=60000", "parallel=240000", "rounds=2", "tasks=16"],
    );
    assert_no_panic(&rec, "weft record");
    assert!(rec.status.success(), "{}", rec.describe());
    let truth = truth(&rec.stdout);
    let r = report_json(&trace);
    let s = &r["speedups"];
    assert_eq!(s["status"], "ok", "{s}");
    let e = &s["efficiencies"];
    // The serial prologue is ~20% of the work; with 10% either way the test
    // separates "serial part seen" from "not seen" on any machine load.
    let (pf, pf_truth) = (f(e, "parallel_fraction"), f(&truth, "parallel_fraction"));
    assert!(
        (pf - pf_truth).abs() <= 0.10,
        "parallel fraction {pf} vs truth {pf_truth}"
    );
    let (lb, lb_truth) = (f(e, "load_balance"), f(&truth, "load_balance"));
    assert!(
        (lb - lb_truth).abs() <= 0.15,
        "load balance {lb} vs truth {lb_truth}"
    );
    assert!(f(e, "lock_contention") >= 0.9, "{e}");
    assert!(e["serial_overhead"].is_null() && e["parallel_overhead"].is_null());
    let c = f(e, "cores");
    assert!(c > 0.0 && c <= 1.0 + 1e-9, "cores {c}");
    // Every limitation has a line; the overhead one needs a baseline.
    let lines = s["lines"].as_array().expect("lines");
    let names: Vec<&str> = lines.iter().filter_map(|l| l["remove"].as_str()).collect();
    assert_eq!(
        names,
        [
            "serial",
            "imbalance",
            "locks",
            "overhead",
            "oversubscription",
            "gc"
        ]
    );
    // Simulated gains (the execution graph with the limitation removed): for
    // every line but GC and overhead (no baseline), unless the simulator does not
    // reproduce the run, which a note then says.
    let simulated = !s["notes"].as_array().expect("notes").iter().any(|n| {
        n.as_str()
            .unwrap_or("")
            .starts_with("simulated gains: none")
    });
    for l in lines {
        if l["remove"] == "overhead" {
            assert!(l["closed_form_gain"].is_null());
        } else {
            assert!(f(l, "closed_form_gain") > 0.0, "{l}");
        }
        if l["remove"] == "gc" || l["remove"] == "overhead" || !simulated {
            assert!(l["simulated_gain"].is_null(), "{l}");
        } else {
            assert!(f(l, "simulated_gain") > 0.0, "{l}");
        }
        // No lock in this workload: removing none changes nothing in the graph.
        if l["remove"] == "locks" && simulated {
            assert_eq!(f(l, "simulated_gain"), 1.0, "{l}");
        }
    }
    // Calculated vs observed, and the sections.
    let (calc, obs) = (f(s, "calculated_ns"), f(s, "observed_ns"));
    assert!(calc > 0.0 && obs > 0.0);
    assert!(f(s, "residual").abs() < 0.5, "{s}");
    assert!(!s["sections"].as_array().expect("sections").is_empty());

    // The text report and `weft speedups` say it is an upper bound.
    let t = weft_cmd(&["report", &trace.display().to_string()]);
    assert!(t.stdout.contains("Possible speedups"), "{}", t.stdout);
    assert!(t.stdout.contains("upper bound"), "{}", t.stdout);
    let sp = weft_cmd(&["speedups", &trace.display().to_string()]);
    assert!(sp.status.success(), "{}", sp.describe());
    assert!(
        sp.stdout.contains("if removed (upper bounds)"),
        "{}",
        sp.stdout
    );
    // A baseline (here: the same trace) fills in the overhead terms.
    let b = weft_cmd(&[
        "speedups",
        &trace.display().to_string(),
        "--baseline",
        &trace.display().to_string(),
        "--json",
    ]);
    assert!(b.status.success(), "{}", b.describe());
    let bj: Value = serde_json::from_str(&b.stdout).expect("json");
    assert!(bj["efficiencies"]["parallel_overhead"].is_number(), "{bj}");
    assert!(bj["lines"][3]["closed_form_gain"].is_number(), "{bj}");
    // A window of the recording: the analysis covers it, named so.
    let w = weft_cmd(&[
        "speedups",
        &trace.display().to_string(),
        "--to",
        "100ms",
        "--json",
    ]);
    assert!(w.status.success(), "{}", w.describe());
    let wj: Value = serde_json::from_str(&w.stdout).expect("json");
    assert_eq!(wj["window"]["end_ns"], 100_000_000, "{wj}");
    assert!(
        wj["window"]["source"]
            .as_str()
            .unwrap_or("")
            .ends_with("to 100 ms of the recording"),
        "{wj}"
    );
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn one_thread_is_a_statement_not_a_nan() {
    let _serial = serial();
    let trace = scratch_file("hello.weft");
    let rec = run_recorded(&trace, &[], "Hello", &[]);
    assert!(rec.status.success(), "{}", rec.describe());
    let r = report_json(&trace);
    let s = &r["speedups"];
    assert_eq!(s["status"], "one_thread", "{s}");
    assert!(s["notes"][0]
        .as_str()
        .unwrap_or("")
        .contains("only one application thread"));
    assert!(s["efficiencies"]["load_balance"].is_null());
    assert!(s["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .all(|l| l["closed_form_gain"].is_null()));
    let sp = weft_cmd(&["speedups", &trace.display().to_string()]);
    assert!(sp.status.success(), "{}", sp.describe());
    assert!(
        sp.stdout.contains("only one application thread"),
        "{}",
        sp.stdout
    );
    assert!(
        !sp.stdout.contains("NaN") && !sp.stdout.contains("inf"),
        "{}",
        sp.stdout
    );
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn missing_trace_and_baseline_are_clear_errors() {
    let r = weft_cmd(&["speedups", "/nonexistent/x.weft"]);
    assert_no_panic(&r, "weft speedups");
    assert_eq!(r.status.code(), Some(2), "{}", r.describe());
    assert!(r.stderr.contains("does not exist"), "{}", r.stderr);
}
