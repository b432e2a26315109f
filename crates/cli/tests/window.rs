//! The measured window (issue 14 item 5, docs/views.md §Window): `weft record
//! --window weft.workloads.Phases.solve` on a workload with a warm-up and a
//! tear-down around its measured phase; the report must cover the phase only:
//! its task class with its exact count (none of the other phases'), its lock
//! (none of the others'), and the phase's process CPU time as the JVM measured it.

mod common;

use common::*;
use serde_json::Value;

const WINDOW: &str = "weft.workloads.Phases.solve";

fn class_executions(report: &Value, suffix: &str) -> Option<u64> {
    report["tasks"]["classes"]
        .as_array()?
        .iter()
        .find(|c| c["class"].as_str().is_some_and(|n| n.ends_with(suffix)))
        .and_then(|c| c["executions"].as_u64())
}

fn lock_blocked_ns(report: &Value, suffix: &str) -> u64 {
    report["locks"]["locks"]
        .as_array()
        .map(|ls| {
            ls.iter()
                .filter(|l| l["class"].as_str().is_some_and(|n| n.ends_with(suffix)))
                .filter_map(|l| l["blocked_ns"].as_u64())
                .sum()
        })
        .unwrap_or(0)
}

/// Process CPU time in the report's CPU samples (utilisation × time × CPUs).
fn report_cpu_ns(report: &Value) -> f64 {
    let cpus = report["cpu"]["cpus"].as_f64().unwrap_or(1.0);
    report["cpu"]["samples"]
        .as_array()
        .map(|s| {
            s.iter()
                .map(|p| {
                    let dt =
                        p["end_ns"].as_f64().unwrap_or(0.0) - p["start_ns"].as_f64().unwrap_or(0.0);
                    p["utilisation"].as_f64().unwrap_or(0.0) * dt * cpus
                })
                .sum()
        })
        .unwrap_or(0.0)
}

#[test]
fn the_report_covers_the_window_method_only() {
    let _serial = serial();
    let trace = scratch_file("phases.weft");
    let _ = std::fs::remove_file(&trace);
    let rec = run_recorded(
        &trace,
        &["--window", WINDOW, "--interval", "10ms"],
        "Phases",
        &["60", "40", "50", "2000"],
    );
    assert_no_panic(&rec, "weft record");
    assert!(rec.status.success(), "{}", rec.describe());
    let phase = tagged_json(&rec.stdout, "WEFT-PHASE ");
    let report = report_json(&trace);

    let w = &report["window"];
    assert_eq!(w["method"], WINDOW, "{w}");
    assert_eq!(w["calls"], 1, "{w}");
    assert!(w["notes"].as_array().is_some_and(|n| n.is_empty()), "{w}");
    let covered = w["covered_ns"].as_u64().unwrap();
    let wall = phase["wall_ns"].as_u64().unwrap();
    // The window is the solve() call: the wall time the JVM measured around it
    // (two clocks: the agent's ticks and System.nanoTime), and the report's
    // duration is the window's.
    assert!(
        (covered as f64 - wall as f64).abs() <= 0.05 * wall as f64 + 5e6,
        "window {covered} ns vs phase {wall} ns"
    );
    assert_eq!(report["duration_ns"].as_u64(), Some(covered));

    // Tasks: the phase's class with its exact count, none of the others.
    assert_eq!(
        class_executions(&report, "Phases$Inside"),
        Some(40),
        "{}",
        report["tasks"]
    );
    assert_eq!(class_executions(&report, "Phases$Before"), None);
    assert_eq!(class_executions(&report, "Phases$After"), None);

    // Locks: the phase's lock is contended (2 workers, half of each task inside
    // it); the other phases' locks are not in the window.
    assert!(
        lock_blocked_ns(&report, "Phases$LockInside") > 0,
        "{}",
        report["locks"]
    );
    assert_eq!(lock_blocked_ns(&report, "Phases$LockBefore"), 0);
    assert_eq!(lock_blocked_ns(&report, "Phases$LockAfter"), 0);
    let csp = report["locks"]["locks"]
        .as_array()
        .and_then(|ls| {
            ls.iter().find(|l| {
                l["class"]
                    .as_str()
                    .is_some_and(|n| n.ends_with("Phases$LockInside"))
            })
        })
        .and_then(|l| l["csp"].as_f64())
        .unwrap_or(0.0);
    assert!(csp > 0.0 && csp <= 1.0, "csp {csp}");

    // CPU: the process CPU time inside the window is the phase's, as the JVM
    // measured it (both read the same process counters; the samples every 10 ms
    // are interpolated at the window's ends).
    let truth_cpu = phase["cpu_ns"].as_f64().unwrap();
    let got = report_cpu_ns(&report);
    assert!(
        (got - truth_cpu).abs() <= 0.25 * truth_cpu + 30e6,
        "window CPU {got:.0} ns vs phase CPU {truth_cpu:.0} ns"
    );

    // The text report says which window it used.
    let text = weft_cmd(&["report", &trace.display().to_string()]);
    assert!(text.status.success(), "{}", text.describe());
    assert!(
        text.stdout
            .contains(&format!("Window: {WINDOW}, from its first entry")),
        "{}",
        text.stdout
    );

    // --from/--to outside the trace: one line, exit code 2.
    for bad in [
        &["--from", "999s"][..],
        &["--to", "999s"],
        &["--from", "2s", "--to", "1s"],
    ] {
        let mut args = vec!["report", trace.to_str().unwrap()];
        args.extend_from_slice(bad);
        let r = weft_cmd(&args);
        assert_no_panic(&r, "weft report --from/--to");
        assert_eq!(r.status.code(), Some(2), "{bad:?}: {}", r.describe());
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.describe());
        assert!(r.stderr.starts_with("weft: "), "{}", r.stderr);
    }
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn a_window_method_that_never_runs_is_said() {
    let _serial = serial();
    let trace = scratch_file("phases-never.weft");
    let _ = std::fs::remove_file(&trace);
    let rec = run_recorded(
        &trace,
        &["--window", "weft.workloads.Phases.noSuchMethod"],
        "Phases",
        &["4", "4", "4", "200"],
    );
    assert!(rec.status.success(), "{}", rec.describe());
    let report = report_json(&trace);
    let notes = report["window"]["notes"].to_string();
    assert!(notes.contains("never ran"), "{}", report["window"]);
    // The whole recording is then reported.
    assert_eq!(class_executions(&report, "Phases$Before"), Some(4));
    let text = weft_cmd(&["report", &trace.display().to_string()]);
    assert!(
        text.stdout.contains("NOTE: the window method"),
        "{}",
        text.stdout
    );
    let _ = std::fs::remove_file(&trace);
}
