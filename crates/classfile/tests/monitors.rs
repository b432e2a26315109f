//! The monitor probes of `--lock-detail` (`instrument_monitors`) on synchronized blocks and
//! methods, run under `java -Xverify:all`: the program's output is the same as without them
//! (exceptions inside a monitor, recursion, wait/notify, break/continue out of a block) and every
//! acquisition and release reaches the probe, in order.

mod common;

use common::*;
use weft_classfile::{instrument_monitors, summarize};

fn run(dir: &std::path::Path) -> String {
    let cp = dir.to_str().expect("utf8 path");
    let (ok, out, err) = java(&["-Xverify:all", "-cp", cp, "t.Monitors"]);
    assert!(ok, "java failed:\nstdout:\n{out}\nstderr:\n{err}");
    out
}

fn check(release: &str) {
    let dir = scratch(&format!("monitors-{release}"));
    javac(
        &dir,
        &["weft/MonitorProbe.java", "t/Monitors.java"],
        &["--release", release],
    );
    let plain = run(&dir);
    let program = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("probe"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        plain.contains("probe enter=0 entered=0 exit=0 notify=0 out_of_order=0"),
        "{plain}"
    );

    let mut changed = 0;
    for e in std::fs::read_dir(dir.join("t")).expect("classes") {
        let path = e.expect("entry").path();
        let bytes = std::fs::read(&path).expect("read class");
        if let Some(b) =
            instrument_monitors(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        {
            // In place: same members, names, descriptors and modifiers.
            assert_eq!(summarize(&bytes).unwrap(), summarize(&b).unwrap());
            // Idempotent: an instrumented class is left alone.
            assert!(instrument_monitors(&b).expect("second pass").is_none());
            std::fs::write(&path, &b).expect("write class");
            changed += 1;
        }
    }
    assert_eq!(changed, 1, "only t/Monitors has monitors");
    let out = run(&dir);
    assert_eq!(program(&out), program(&plain));
    // Blocks: blocks(10) enters 8 times (i = 0..7), nested() 3, throwing() 1, pingPong() 10 on
    // each of 2 threads: 32 `monitorenter`s, each with its `entered`. Methods: recurse(5) 6 calls,
    // bump() 3, boom() 1: 10 enters without `entered`. Every enter is released once. pingPong()
    // calls notifyAll() 10 times on each thread, inside the monitor.
    assert!(
        out.contains("probe enter=42 entered=32 exit=42 notify=20 out_of_order=0"),
        "{out}"
    );
    // HotSpot's JIT compilers take every instrumented method: a probe call with the
    // monitor held outside javac's catch-any range, or in its self-covering handler
    // range, made them refuse the method ("cannot parse method", "exception handler
    // covers itself") and it ran interpreted (a loop in `synchronized` 4.5× slower).
    let cp = dir.to_str().expect("utf8 path");
    let (ok, out, err) = java(&[
        "-Xcomp",
        "-XX:CompileCommand=quiet",
        "-XX:CompileCommand=compileonly,t.Monitors::*",
        "-XX:+PrintCompilation",
        "-cp",
        cp,
        "t.Monitors",
    ]);
    assert!(ok, "java -Xcomp failed:\nstdout:\n{out}\nstderr:\n{err}");
    assert!(
        out.contains("t.Monitors::"),
        "no compilation printed:\n{out}"
    );
    let skipped: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("t.Monitors::") && l.contains("COMPILE SKIPPED"))
        .collect();
    assert!(skipped.is_empty(), "{}", skipped.join("\n"));
}

#[test]
fn monitor_probes_keep_the_program_and_see_every_acquisition() {
    check("17");
}

#[test]
fn monitor_probes_on_class_version_52() {
    check("8");
}
