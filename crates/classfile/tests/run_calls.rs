//! `redirect_runnable_runs`: every `Runnable.run()` call of a class goes through
//! `weft/Probe.runTask`, in place, under `java -Xverify:all`, and the program sees what it saw.

mod common;

use common::*;
use weft_classfile::{redirect_runnable_runs, summarize};

fn run(dir: &std::path::Path) -> String {
    let cp = dir.to_str().expect("utf8 path");
    let (ok, out, err) = java(&["-Xverify:all", "-cp", cp, "t.RunCalls"]);
    assert!(ok, "java failed:\nstdout:\n{out}\nstderr:\n{err}");
    out
}

#[test]
fn runnable_run_calls_go_through_the_probe_and_the_program_is_unchanged() {
    let dir = scratch("run-calls");
    javac(
        &dir,
        &["weft/Probe.java", "t/RunCalls.java"],
        &["--release", "17"],
    );
    let plain = run(&dir);
    assert!(plain.contains("count=15 named=1"), "{plain}");
    let mut changed = Vec::new();
    for e in std::fs::read_dir(dir.join("t")).expect("classes") {
        let path = e.expect("entry").path();
        let bytes = std::fs::read(&path).expect("read class");
        if let Some(b) = redirect_runnable_runs(&bytes, None)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        {
            assert_eq!(summarize(&bytes).unwrap(), summarize(&b).unwrap());
            // Idempotent: no `Runnable.run()` call is left.
            assert!(redirect_runnable_runs(&b, None)
                .expect("second pass")
                .is_none());
            std::fs::write(&path, &b).expect("write class");
            changed.push(path.file_name().unwrap().to_string_lossy().to_string());
        }
    }
    changed.sort();
    assert_eq!(changed, ["RunCalls$Runner.class", "RunCalls.class"]);
    let out = run(&dir);
    // The program's own lines are the same: the throwing lambda's top frame, the NPE.
    let program = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("probe"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(program(&out), program(&plain));
    assert!(plain.contains("probe runTasks=0 hidden=0"), "{plain}");
    // runAll: 5 lambdas and a named class; runIt: 1 lambda; boom: 1; none: 1 (null).
    assert!(out.contains("probe runTasks=9 hidden=7"), "{out}");
}

#[test]
fn only_the_named_method_is_redirected() {
    let dir = scratch("run-calls-only");
    javac(
        &dir,
        &["weft/Probe.java", "t/RunCalls.java"],
        &["--release", "17"],
    );
    let path = dir.join("t/RunCalls.class");
    let bytes = std::fs::read(&path).expect("read class");
    let b = redirect_runnable_runs(&bytes, Some(("runAll", "(Ljava/util/List;)V")))
        .expect("redirect")
        .expect("runAll calls run()");
    // main still calls Runnable.run() itself (boom, none); runAll no longer does.
    let again = redirect_runnable_runs(&b, None).expect("second pass");
    assert!(again.is_some());
    assert!(
        redirect_runnable_runs(&b, Some(("runAll", "(Ljava/util/List;)V")))
            .expect("third pass")
            .is_none()
    );
    assert!(redirect_runnable_runs(&bytes, Some(("absent", "()V")))
        .expect("absent")
        .is_none());
}
