//! Whole-java.base tests: every class of the running JDK's java.base is summarized and instrumented;
//! the task-running classes are patched into java.base and exercised under `-Xverify:all`.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;
use weft_classfile::{
    instrument, instrument_monitors, summarize, ClassSummary, Instrumentation, WrapRequest,
};

/// java.base extracted once per test binary: (root of the class tree, every class file path).
fn java_base() -> &'static (PathBuf, Vec<PathBuf>) {
    static CELL: OnceLock<(PathBuf, Vec<PathBuf>)> = OnceLock::new();
    CELL.get_or_init(|| {
        let dir = scratch("jdk-modules");
        let modules = java_home().join("lib/modules");
        let st = Command::new(tool("jimage"))
            .arg("extract")
            .arg("--dir")
            .arg(&dir)
            .arg("--include")
            .arg("regex:/java.base/.*")
            .arg(&modules)
            .status()
            .expect("run jimage");
        assert!(st.success(), "jimage extract failed");
        let root = dir.join("java.base");
        let mut files = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read dir") {
                let p = e.expect("dir entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "class")
                    && p.file_name().is_some_and(|n| n != "module-info.class")
                {
                    files.push(p);
                }
            }
        }
        files.sort();
        assert!(files.len() > 5000, "only {} classes extracted", files.len());
        (root, files)
    })
}

/// The methods the agent would wrap: task-running entry points.
fn selected(name: &str, desc: &str) -> bool {
    match name {
        "run" => desc == "()V",
        "call" => desc.starts_with("()L") || desc.starts_with("()["),
        "exec" => desc == "()Z",
        "execute" => desc == "(Ljava/lang/Runnable;)V",
        "submit" => !desc.starts_with("()"),
        "invoke" => desc.starts_with("(Ljava/util/concurrent/ForkJoinTask;)"),
        _ => false,
    }
}

/// Requests for a class, probe ids numbered from `next`; the ctor probe id follows.
fn plan(s: &ClassSummary, next: &mut i32, ids: &mut BTreeMap<String, i32>) -> Instrumentation {
    let mut wraps = Vec::new();
    for m in &s.methods {
        if selected(&m.name, &m.descriptor) {
            wraps.push(WrapRequest {
                name: m.name.clone(),
                descriptor: m.descriptor.clone(),
                probe_id: *next,
                pass_arg0: true,
                pass_result: false,
                hooks: None,
            });
            ids.insert(format!("{}.{}{}", s.name, m.name, m.descriptor), *next);
            *next += 1;
        }
    }
    ids.insert(format!("{}.<init>", s.name), *next);
    let ctor = *next;
    *next += 1;
    Instrumentation {
        wraps,
        constructor_probe: Some(ctor),
    }
}

/// Errors that are expected (the class is then loaded unchanged): none so far.
const ALLOWED_ERRORS: &[&str] = &[];

/// Prints the classes the rewriter refused; fails on any not in [`ALLOWED_ERRORS`].
fn assert_only_allowed(errors: &[String]) {
    for e in errors {
        println!("  {e}");
    }
    let unexpected: Vec<_> = errors
        .iter()
        .filter(|e| !ALLOWED_ERRORS.iter().any(|a| e.contains(a)))
        .collect();
    assert!(
        unexpected.is_empty(),
        "unexpected failures: {unexpected:#?}"
    );
}

/// Compile the exercise program and the stub probe (into `patch`, see below); run it on the patched
/// java.base under `-Xverify:all`; return its stdout.
fn run_exercise(patch: &std::path::Path, app_dir: &str, args: &[String]) -> String {
    let app = scratch(app_dir);
    // The stub probe goes into the patched java.base itself: classes used while the VM initializes
    // (Thread.<init> for the main thread) call it before -Xbootclasspath/a is searched, which fails
    // with "NoClassDefFoundError: weft/Probe" during VM initialization.
    javac(patch, &["weft/Probe.java"], &[]);
    javac(
        &app,
        &["jdk/Exercise.java"],
        &["-cp", patch.to_str().expect("utf8")],
    );
    let patch_arg = format!("java.base={}", patch.display());
    let mut cmd = vec![
        "-Xshare:off",
        "-Xverify:all",
        "--patch-module",
        &patch_arg,
        "--add-exports",
        "java.base/weft=ALL-UNNAMED",
        "-cp",
        app.to_str().expect("utf8"),
        "jdk.Exercise",
    ];
    cmd.extend(args.iter().map(String::as_str));
    let (ok, out, err) = java(&cmd);
    assert!(ok, "java failed:\nstdout:\n{out}\nstderr:\n{err}");
    assert!(err.is_empty(), "stderr:\n{err}");
    out
}

const EXERCISE_OUTPUT: &str = "\
tpe=2470
fj=4999950000
fj-submit=49995000
stream=599994
common=1249975000
cf=cf!2
cf-ex=ok
ft=ft
thread=7
list=[1, 2, 3]
";

/// Every class: `summarize` succeeds, `instrument` (all constructors + the selected methods)
/// succeeds, and the result parses again. Then the whole rewritten java.base runs under
/// `-Xverify:all` (every class the program loads is verified, with all its constructors probed).
#[test]
fn every_java_base_class_round_trips() {
    let (root, files) = java_base();
    let patch = scratch("jdk-patch-all");
    let mut errors = Vec::new();
    let (mut changed, mut wrapped, mut ctors) = (0, 0, 0);
    let mut elapsed = std::time::Duration::ZERO;
    let mut bytes_in = 0;
    for f in files {
        let bytes = std::fs::read(f).expect("read class");
        bytes_in += bytes.len();
        let t0 = Instant::now();
        let s = summarize(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let mut next = 1;
        let what = plan(&s, &mut next, &mut BTreeMap::new());
        let r = instrument(&bytes, &what);
        elapsed += t0.elapsed();
        match r {
            Ok(r) => {
                // The result parses again, with the same shape (in place: same members and modifiers).
                let s2 = summarize(&r.bytes).unwrap_or_else(|e| panic!("{} after: {e}", s.name));
                assert_eq!(s2, s, "{}: the class shape changed", s.name);
                if r.changed() {
                    changed += 1;
                    wrapped += r.wrapped.len();
                    ctors += r.constructors;
                    let out = patch.join(f.strip_prefix(root).expect("under root"));
                    std::fs::create_dir_all(out.parent().expect("parent")).expect("mkdir");
                    std::fs::write(&out, &r.bytes).expect("write");
                }
            }
            Err(e) => errors.push(format!("{}: {e}", s.name)),
        }
    }
    println!(
        "{} classes ({} KiB), {changed} changed, {wrapped} methods wrapped, {ctors} constructors probed, \
         {} errors, {:.1} µs/class for summarize + instrument ({} build)",
        files.len(),
        bytes_in / 1024,
        errors.len(),
        elapsed.as_secs_f64() * 1e6 / files.len() as f64,
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
    assert_only_allowed(&errors);
    assert!(changed > 5000, "only {changed} classes changed");

    // Probe ids repeat across classes here, so only the program's own output is checked.
    let out = run_exercise(&patch, "jdk-app-all", &[]);
    assert_eq!(out, EXERCISE_OUTPUT);
}

/// The monitor probes of `--lock-detail` (which the agent applies to application classes only) on
/// every java.base class with a `synchronized` block or method: the result parses with the same
/// shape, and the whole rewritten java.base runs the exercise under `-Xverify:all` (every class the
/// program loads is verified, its monitors calling a no-op probe from the VM's first instructions).
#[test]
fn java_base_with_monitor_probes_runs_under_verify_all() {
    let (root, files) = java_base();
    let patch = scratch("jdk-patch-monitors");
    let (mut changed, mut errors) = (0, Vec::new());
    for f in files {
        let bytes = std::fs::read(f).expect("read class");
        match instrument_monitors(&bytes) {
            Ok(Some(b)) => {
                let s = summarize(&bytes).expect("summarize");
                assert_eq!(summarize(&b).expect("summarize after"), s, "{}", s.name);
                let out = patch.join(f.strip_prefix(root).expect("under root"));
                std::fs::create_dir_all(out.parent().expect("parent")).expect("mkdir");
                std::fs::write(&out, &b).expect("write");
                changed += 1;
            }
            Ok(None) => {}
            Err(e) => errors.push(format!("{}: {e}", f.display())),
        }
    }
    println!(
        "{changed} java.base classes with monitor probes, {} refused",
        errors.len()
    );
    assert_only_allowed(&errors);
    assert!(changed > 300, "only {changed} classes changed");
    let stub = java_src().join("jdkstub");
    let st = Command::new(tool("javac"))
        .arg("-d")
        .arg(&patch)
        .arg(stub.join("weft/MonitorProbe.java"))
        .status()
        .expect("run javac");
    assert!(st.success());
    let out = run_exercise(&patch, "jdk-app-monitors", &[]);
    assert_eq!(out, EXERCISE_OUTPUT);
}

/// Only the classes with a selected method are patched (as the agent would do), with distinct
/// probe ids; the exercise checks that the key probes fired.
#[test]
fn patched_java_base_runs_under_verify_all() {
    let (root, files) = java_base();
    let patch = scratch("jdk-patch");
    let mut ids = BTreeMap::new();
    let mut next = 1;
    let (mut classes, mut wrapped, mut ctors) = (0, 0, 0);
    let mut errors = Vec::new();
    for f in files {
        let bytes = std::fs::read(f).expect("read class");
        let s = summarize(&bytes).expect("summarize");
        if !s.methods.iter().any(|m| selected(&m.name, &m.descriptor)) {
            continue;
        }
        let what = plan(&s, &mut next, &mut ids);
        match instrument(&bytes, &what) {
            Ok(r) if r.changed() => {
                let out = patch.join(f.strip_prefix(root).expect("under root"));
                std::fs::create_dir_all(out.parent().expect("parent")).expect("mkdir");
                std::fs::write(&out, &r.bytes).expect("write");
                classes += 1;
                wrapped += r.wrapped.len();
                ctors += r.constructors;
            }
            Ok(_) => {}
            Err(e) => errors.push(format!("{}: {e}", s.name)),
        }
    }
    println!("patched {classes} classes: {wrapped} methods wrapped, {ctors} constructors probed");
    assert!(errors.is_empty(), "failures: {errors:#?}");
    assert!(
        next < 4096,
        "probe ids must stay below the stub's table size"
    );
    for must in [
        "java/util/concurrent/FutureTask.run()V",
        "java/lang/Thread.run()V",
        "java/util/concurrent/ForkJoinPool.invoke",
        "java/util/concurrent/RecursiveTask.exec()Z",
    ] {
        assert!(
            ids.keys().any(|k| k.starts_with(must)),
            "{must} not planned"
        );
    }

    let id = |k: &str| ids[k];
    let args = [
        format!("FutureTask.run={}", id("java/util/concurrent/FutureTask.run()V")),
        format!("Thread.run={}", id("java/lang/Thread.run()V")),
        format!(
            "ThreadPoolExecutor.execute={}",
            id("java/util/concurrent/ThreadPoolExecutor.execute(Ljava/lang/Runnable;)V")
        ),
        format!(
            "AbstractExecutorService.submit={}",
            id("java/util/concurrent/AbstractExecutorService.submit(Ljava/util/concurrent/Callable;)Ljava/util/concurrent/Future;")
        ),
        format!(
            "ForkJoinPool.invoke={}",
            id("java/util/concurrent/ForkJoinPool.invoke(Ljava/util/concurrent/ForkJoinTask;)Ljava/lang/Object;")
        ),
        format!("RecursiveTask.exec={}", id("java/util/concurrent/RecursiveTask.exec()Z")),
        format!("Thread.<init>={}", id("java/lang/Thread.<init>")),
        format!("FutureTask.<init>={}", id("java/util/concurrent/FutureTask.<init>")),
    ];
    let out = run_exercise(&patch, "jdk-app", &args);
    let expected = format!(
        "{EXERCISE_OUTPUT}\
FutureTask.run entered=true exited=true created=false
Thread.run entered=true exited=true created=false
ThreadPoolExecutor.execute entered=true exited=true created=false
AbstractExecutorService.submit entered=true exited=true created=false
ForkJoinPool.invoke entered=true exited=true created=false
RecursiveTask.exec entered=true exited=true created=false
Thread.<init> entered=false exited=false created=true
FutureTask.<init> entered=false exited=false created=true
"
    );
    assert_eq!(out, expected);
}

/// Truncated and bit-flipped JDK classes give `Err` or a result, never a panic.
#[test]
fn damaged_classes_never_panic() {
    let (root, _) = java_base();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for c in [
        "java/util/concurrent/ForkJoinTask.class",
        "java/util/concurrent/FutureTask.class",
        "java/lang/Thread.class",
        "java/util/concurrent/ThreadPoolExecutor.class",
    ] {
        let bytes = std::fs::read(root.join(c)).expect("read");
        let s = summarize(&bytes).expect("summarize");
        let mut next = 1;
        let mut what = plan(&s, &mut next, &mut BTreeMap::new());
        // Wrap everything, not only the selected methods.
        what.wraps = s
            .methods
            .iter()
            .map(|m| WrapRequest {
                name: m.name.clone(),
                descriptor: m.descriptor.clone(),
                probe_id: 7,
                pass_arg0: true,
                pass_result: false,
                hooks: None,
            })
            .collect();
        assert!(instrument(&bytes, &what).is_ok());
        let step = (bytes.len() / 300).max(1);
        for len in (0..bytes.len()).step_by(step) {
            assert!(summarize(&bytes[..len]).is_err());
            assert!(instrument(&bytes[..len], &what).is_err());
        }
        for _ in 0..1500 {
            let mut b = bytes.clone();
            for _ in 0..1 + rand() % 4 {
                let i = (rand() % b.len() as u64) as usize;
                b[i] ^= 1 << (rand() % 8);
            }
            let _ = summarize(&b);
            let _ = instrument(&b, &what);
        }
    }
}

#[test]
fn resolves_member_refs_of_a_real_class() {
    let (root, _) = java_base();
    let bytes = std::fs::read(root.join("java/util/concurrent/FutureTask.class")).expect("read");
    let (count, cp) = weft_classfile::constant_pool(&bytes).expect("cp");
    let mut found = 0;
    for i in 1..count {
        if let Ok((c, n, d)) = weft_classfile::resolve_member_ref(count, cp, i) {
            assert!(!c.is_empty() && !n.is_empty() && d.starts_with('('));
            found += 1;
        }
    }
    assert!(found > 20, "{found} member refs");
}

/// Time per transformed class (the agent's budget is tens of µs).
#[test]
fn timing_fork_join_task() {
    let (root, _) = java_base();
    for c in [
        "java/util/concurrent/ForkJoinTask.class",
        "java/util/concurrent/ThreadPoolExecutor.class",
        "java/lang/Thread.class",
    ] {
        let bytes = std::fs::read(root.join(c)).expect("read");
        let s = summarize(&bytes).expect("summarize");
        let mut what = plan(&s, &mut 1, &mut BTreeMap::new());
        for m in ["fork", "join", "doExec", "invoke"] {
            if let Some(x) = s.methods.iter().find(|x| x.name == m) {
                what.wraps.push(WrapRequest {
                    name: x.name.clone(),
                    descriptor: x.descriptor.clone(),
                    probe_id: 1,
                    pass_arg0: false,
                    pass_result: false,
                    hooks: None,
                });
            }
        }
        let n = 200;
        let t0 = Instant::now();
        let mut w = 0;
        for _ in 0..n {
            w = instrument(&bytes, &what).expect("instrument").wrapped.len();
        }
        let us = t0.elapsed().as_secs_f64() * 1e6 / n as f64;
        println!(
            "{c}: {} bytes, {w} wraps + constructors: {us:.1} µs per class ({} build)",
            bytes.len(),
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
    }
}

/// @CallerSensitive methods are never wrapped (Reflection.getCallerClass would see the wrapper).
#[test]
fn skips_caller_sensitive_methods() {
    let (root, _) = java_base();
    let bytes = std::fs::read(root.join("java/lang/Class.class")).expect("read");
    let what = Instrumentation {
        wraps: vec![
            req("forName", "(Ljava/lang/String;)Ljava/lang/Class;", 1, true),
            req("getName", "()Ljava/lang/String;", 2, false),
        ],
        constructor_probe: None,
    };
    let r = instrument(&bytes, &what).expect("instrument");
    assert_eq!(
        r.wrapped,
        vec![("getName".to_string(), "()Ljava/lang/String;".to_string())]
    );
}
