//! End-to-end tests: real JVMs (`java` on PATH, JDK 17+) run small programs
//! with the agent and the traces are read back with `weft_trace::read_trace`.
//!
//! The agent library is found from the test executable's path: integration
//! tests live in `<target>/<profile>/deps/`, and cargo builds the package's
//! cdylib (a crate type of its lib target) into that same `deps/` folder
//! before running them. `<target>/<profile>/libweft_agent.so` (the copy
//! `cargo build` makes) is only a fallback: `cargo test` does not always
//! refresh it. Java sources in `tests/java/` are compiled once per run into
//! `CARGO_TARGET_TMPDIR`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use weft_trace::{read_trace, ProbeKind, Record, Trace};

fn agent_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    for dir in [deps, deps.parent().unwrap()] {
        let lib = dir.join("libweft_agent.so");
        if lib.exists() {
            return lib;
        }
    }
    panic!("libweft_agent.so not found next to {}", exe.display());
}

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("weft-agent-tests")
}

fn classes() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = tmp().join("classes");
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/demo");
        let mut cmd = Command::new("javac");
        cmd.args(["--release", "17", "-g", "-d"]).arg(&out);
        for e in std::fs::read_dir(&src).unwrap() {
            cmd.arg(e.unwrap().path());
        }
        let st = cmd.status().expect("javac");
        assert!(st.success());
        out
    })
}

fn out_path(name: &str) -> PathBuf {
    let dir = tmp();
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.weft"));
    let _ = std::fs::remove_file(&p);
    p
}

/// `java` on PATH, or `$WEFT_TEST_JAVA` (e.g. a JDK 21 or 25 runtime).
fn java(agent_opts: Option<&str>, main: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::var_os("WEFT_TEST_JAVA").unwrap_or_else(|| "java".into()));
    cmd.arg("-Xverify:all");
    if let Some(o) = agent_opts {
        cmd.arg(format!("-agentpath:{}={o}", agent_lib().display()));
    }
    cmd.arg("-cp").arg(classes()).arg(main).args(args);
    cmd.env_remove("JAVA_TOOL_OPTIONS");
    cmd
}

fn run(agent_opts: Option<&str>, main: &str, args: &[&str]) -> Output {
    java(agent_opts, main, args).output().expect("java")
}

/// Runs with and without the agent; asserts identical output and exit code; returns the trace.
fn run_traced(name: &str, main: &str, args: &[&str]) -> (Output, Trace) {
    let out = out_path(name);
    let opts = format!("out={}", out.display());
    let traced = run(Some(&opts), main, args);
    let plain = run(None, main, args);
    assert_eq!(
        traced.status.code(),
        plain.status.code(),
        "exit code changed"
    );
    assert_eq!(
        String::from_utf8_lossy(&traced.stdout),
        String::from_utf8_lossy(&plain.stdout),
        "stdout changed"
    );
    let strip = |s: &[u8]| -> String {
        // Exception stack traces print no addresses; compare verbatim.
        String::from_utf8_lossy(s).into_owned()
    };
    assert_eq!(
        strip(&traced.stderr),
        strip(&plain.stderr),
        "stderr changed"
    );
    let trace = read_trace(&out).expect("trace readable");
    (traced, trace)
}

struct Index<'a> {
    t: &'a Trace,
    classes: HashMap<u32, String>,
    sites: HashMap<u32, Vec<String>>,
    probes: HashMap<u32, ProbeKind>,
}

impl<'a> Index<'a> {
    fn new(t: &'a Trace) -> Index<'a> {
        let mut classes = HashMap::new();
        let mut sites = HashMap::new();
        let mut probes = HashMap::new();
        for (_, r) in &t.records {
            match r {
                Record::ClassDef { id, name } => {
                    classes.insert(*id, name.clone());
                }
                Record::SiteDef { id, frames } => {
                    sites.insert(*id, frames.clone());
                }
                Record::ProbeDef { id, kind, .. } => {
                    probes.insert(*id, *kind);
                }
                _ => {}
            }
        }
        Index {
            t,
            classes,
            sites,
            probes,
        }
    }

    fn class(&self, id: u32) -> &str {
        self.classes.get(&id).map(String::as_str).unwrap_or("?")
    }

    fn count(&self, f: impl Fn(&Record) -> bool) -> usize {
        self.t.records.iter().filter(|(_, r)| f(r)).count()
    }

    /// TaskBegin records of executions (not plumbing) of class `name`.
    fn begins_of(&self, name: &str) -> usize {
        self.count(|r| matches!(r, Record::TaskBegin { class_id, probe, .. }
            if self.class(*class_id) == name && self.probes.get(probe) == Some(&ProbeKind::Execution)))
    }

    fn ended(&self) -> bool {
        !self.t.truncated && self.count(|r| matches!(r, Record::End { .. })) == 1
    }

    /// Begin/end balance per thread.
    fn assert_balanced(&self) {
        let mut depth: HashMap<u32, i64> = HashMap::new();
        for (th, r) in &self.t.records {
            match r {
                Record::TaskBegin { .. } => *depth.entry(*th).or_default() += 1,
                Record::TaskEnd { .. } => *depth.entry(*th).or_default() -= 1,
                _ => {}
            }
        }
        for (th, d) in depth {
            assert_eq!(d, 0, "unbalanced task begin/end on thread {th}");
        }
    }
}

fn weft_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with("weft:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn executor_tasks_submissions_threads_gc() {
    let (out, t) = run_traced("sample", "demo.Sample", &[]);
    assert!(out.status.success());
    let ix = Index::new(&t);
    assert!(ix.ended(), "trace must end with End");
    ix.assert_balanced();

    // Threads: main once, the pool's two workers, and worker-t with its Runnable target.
    let starts: Vec<(&str, u32)> = t
        .records
        .iter()
        .filter_map(|(_, r)| match r {
            Record::ThreadStart {
                name,
                target_class_id,
                ..
            } => Some((&**name, *target_class_id)),
            _ => None,
        })
        .collect();
    assert_eq!(starts.iter().filter(|s| s.0 == "main").count(), 1);
    assert_eq!(
        starts
            .iter()
            .filter(|s| s.0.starts_with("pool-1-thread-"))
            .count(),
        2
    );
    let wt = starts
        .iter()
        .find(|s| s.0 == "worker-t")
        .expect("worker-t started");
    assert_eq!(ix.class(wt.1), "demo.Sample$Work");
    assert!(ix.count(|r| matches!(r, Record::ThreadEnd { .. })) >= 4);

    // Tasks: 5 Work through the pool + 1 as a thread target, 3 Calc, 1 lambda (through plumbing).
    assert_eq!(ix.begins_of("demo.Sample$Work"), 6);
    assert_eq!(ix.begins_of("demo.Sample$Calc"), 3);
    let lambda_inner = ix.count(|r| {
        matches!(r, Record::TaskBegin { inner_class_id, .. }
        if ix.class(*inner_class_id) == "demo.Sample$$Lambda[main:20]")
    });
    assert!(
        lambda_inner >= 1,
        "lambda resolved through FutureTask plumbing with its readable name"
    );

    // Submissions: outermost only, with sites.
    let submits: Vec<(u32, u32)> = t
        .records
        .iter()
        .filter_map(|(_, r)| match r {
            Record::Submit {
                task_class_id,
                site,
                ..
            } => Some((*task_class_id, *site)),
            _ => None,
        })
        .collect();
    assert_eq!(submits.len(), 9);
    assert_eq!(
        submits
            .iter()
            .filter(|s| ix.class(s.0) == "demo.Sample$Work")
            .count(),
        5
    );
    assert_eq!(
        submits
            .iter()
            .filter(|s| ix.class(s.0) == "demo.Sample$Calc")
            .count(),
        3
    );
    for (c, s) in &submits {
        let frames = ix
            .sites
            .get(s)
            .unwrap_or_else(|| panic!("site of {}", ix.class(*c)));
        assert!(frames[0].starts_with("demo.Sample.main:"), "{frames:?}");
    }
    assert_eq!(
        ix.sites.get(&submits[0].1).unwrap()[0],
        "demo.Sample.main:18"
    );

    // Creations: 6 Work, 3 Calc (super-constructor chains deduplicated), with sites.
    let created = |n: &str| {
        ix.count(|r| matches!(r, Record::Created { class_id, site, .. } if ix.class(*class_id) == n && *site != 0))
    };
    assert_eq!(created("demo.Sample$Work"), 6);
    assert_eq!(created("demo.Sample$Calc"), 3);

    // GC, sampler, calibration.
    assert!(ix.count(|r| matches!(r, Record::GcStart { .. })) >= 1);
    assert!(ix.count(|r| matches!(r, Record::GcEnd { .. })) >= 1);
    assert!(ix.count(|r| matches!(r, Record::Sample { .. })) >= 1);
    // The machine's idle time (/proc/stat), which tells other processes' load apart.
    assert!(
        ix.count(|r| matches!(
            r,
            Record::Sample {
                machine_idle_ns: Some(_),
                ..
            }
        )) >= 1
    );
    assert!(ix.count(|r| matches!(r, Record::Calibration { .. })) >= 2);
    // Scheduler statistics: every thread that ended read its own at its end, and
    // the live ones were read at VMDeath.
    let sched_threads: std::collections::HashSet<u32> = t
        .records
        .iter()
        .filter_map(|(_, r)| match r {
            Record::ThreadSched { thread, .. } => Some(*thread),
            _ => None,
        })
        .collect();
    for (thread, r) in &t.records {
        if matches!(r, Record::ThreadEnd { .. }) {
            assert!(
                sched_threads.contains(thread),
                "no ThreadSched for {thread}"
            );
        }
    }
    assert!(t.records.iter().any(|(_, r)| matches!(r,
        Record::ThreadSched { on_cpu_ns, .. } if *on_cpu_ns > 0)));
    assert!(t.header.get("jvm.version").is_some_and(|v| !v.is_empty()));
    assert!(t.header.get("clock.source").is_some());
}

#[test]
fn fork_join_completable_future_method_ref() {
    let (out, t) = run_traced("pools", "demo.Pools", &[]);
    assert!(out.status.success());
    let ix = Index::new(&t);
    assert!(ix.ended());
    ix.assert_balanced();
    // Fib(10): 88 forks (one per non-leaf call); runs = forked usages + the root
    // (`new Fib(n - 2).compute()` is a plain call, not a run). Fork-join tasks are
    // recorded by the Java-side fork-join probes (FjPush/FjRunBegin, docs/forkjoin.md).
    let fib = |c: &u32| ix.class(*c) == "demo.Pools$Fib";
    let runs = ix.count(
        |r| matches!(r, Record::FjRunBegin { usage, class_id, .. } if *usage != 0 && fib(class_id)),
    );
    assert_eq!(runs, 89);
    let forks = ix
        .count(|r| matches!(r, Record::FjPush { class_id, external: false, .. } if fib(class_id)));
    assert_eq!(forks, 88);
    let fork_site = t.records.iter().find_map(|(_, r)| match r {
        Record::FjSite { site, .. } => Some(*site),
        _ => None,
    });
    assert_eq!(
        ix.sites.get(&fork_site.unwrap()).unwrap()[0],
        "demo.Pools$Fib.compute:13"
    );
    // pool.invoke(new Fib(10)) is a submission.
    assert_eq!(
        ix.count(|r| matches!(r, Record::Submit { task_class_id, .. } if ix.class(*task_class_id) == "demo.Pools$Fib")),
        1
    );
    // runAsync(lambda): a submission of CompletableFuture$AsyncRun whose inner task is the lambda.
    assert!(
        ix.count(
            |r| matches!(r, Record::Submit { task_class_id, inner_class_id, .. }
        if ix.class(*task_class_id) == "java.util.concurrent.CompletableFuture$AsyncRun"
            && ix.class(*inner_class_id) == "demo.Pools$$Lambda[main:25]")
        ) == 1
    );
    // A method reference executed by a user Executor.
    assert!(
        ix.count(|r| matches!(r, Record::Submit { task_class_id, .. }
        if ix.class(*task_class_id) == "demo.Pools$$Lambda[demo.Pools::hello]"))
            == 1
    );
}

#[test]
fn exit_code_and_uncaught_exception_keep_behaviour_and_end_the_trace() {
    let (out, t) = run_traced("exit3", "demo.Boom", &["exit3"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(Index::new(&t).ended());

    let (out, t) = run_traced("throw", "demo.Boom", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("IllegalStateException: boom"));
    let ix = Index::new(&t);
    assert!(ix.ended());
    // The thread's target is a lambda: the thread stands for it (Thread.run is not wrapped).
    assert_eq!(
        ix.count(|r| matches!(r, Record::ThreadStart { target_class_id, .. }
            if ix.class(*target_class_id) == "demo.Boom$$Lambda[main:5]")),
        1
    );
}

#[test]
fn sigkill_leaves_a_readable_truncated_trace() {
    use std::io::{BufRead, BufReader};
    let out = out_path("killed");
    /// Kills the JVM however the test ends: a failed assertion must not leave it running.
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = KillOnDrop(
        java(Some(&format!("out={}", out.display())), "demo.Busy", &[])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    // Longer than the writer's stale-buffer period (200 ms).
    std::thread::sleep(Duration::from_millis(500));
    drop(child);
    let t = read_trace(&out).expect("truncated trace is readable");
    assert!(t.truncated);
    let ix = Index::new(&t);
    assert_eq!(ix.count(|r| matches!(r, Record::End { .. })), 0);
    assert!(ix.count(|r| matches!(r, Record::TaskBegin { .. })) >= 2000);
    assert!(ix.count(|r| matches!(r, Record::Submit { .. })) >= 2000);
}

#[test]
fn bad_option_refuses_to_start_with_one_line() {
    let out = run(Some("out=/tmp/x.weft,bogus=1"), "demo.Boom", &["exit3"]);
    assert!(!out.status.success());
    let lines = weft_lines(&out.stderr);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("bogus=1"));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("in thread"));
}

#[test]
fn unwritable_output_runs_the_program_without_recording() {
    let out = run(
        Some("out=/nonexistent-dir/x/t.weft"),
        "demo.Boom",
        &["exit3"],
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "in thread\nout\n");
    let lines = weft_lines(&out.stderr);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("/nonexistent-dir/x/t.weft"));
}

#[test]
fn existing_output_gets_a_pid_suffix() {
    let out = out_path("exists");
    std::fs::write(&out, b"not mine").unwrap();
    let r = run(
        Some(&format!("out={},quiet", out.display())),
        "demo.Boom",
        &["exit3"],
    );
    assert_eq!(r.status.code(), Some(3));
    assert!(weft_lines(&r.stderr).is_empty());
    assert_eq!(std::fs::read(&out).unwrap(), b"not mine");
    let dir = out.parent().unwrap();
    let alt: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("exists.") && n != "exists.weft"
        })
        .collect();
    assert_eq!(alt.len(), 1, "{alt:?}");
    let t = read_trace(&alt[0]).unwrap();
    assert!(Index::new(&t).ended());
    std::fs::remove_file(&alt[0]).unwrap();
}

/// `WEFT_STARTUP_LOG=1`: one line of the agent's start-up and exit parts at the end, the
/// class hook (turned on at VMInit) saw classes and rewrote the fork-join ones, and the
/// program's output is the same as without the agent.
#[test]
fn startup_log_names_the_parts_and_the_hook_rewrites_from_vminit() {
    let out = out_path("startup-log");
    let plain = run(None, "demo.Pools", &[]);
    let traced = java(
        Some(&format!("out={},nosample", out.display())),
        "demo.Pools",
        &[],
    )
    .env("WEFT_STARTUP_LOG", "1")
    .output()
    .expect("java");
    assert!(traced.status.success());
    assert_eq!(plain.stdout, traced.stdout);
    let stderr = String::from_utf8_lossy(&traced.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("weft-startup: onload="))
        .unwrap_or_else(|| panic!("no startup line in {stderr}"));
    for part in [
        "vminit=",
        "hook=",
        "threads=",
        "thread_ends=",
        "vmdeath=",
        "process_cpu=",
    ] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    // hook=<calls>/<rewritten>/<ms>
    let hook: Vec<u64> = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("hook="))
        .unwrap()
        .split('/')
        .take(2)
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(hook[0] > 20 && hook[1] >= 2, "{line}");
    let t = read_trace(&out).unwrap();
    assert!(t
        .records
        .iter()
        .any(|(_, r)| matches!(r, Record::FjPush { .. })));
}
