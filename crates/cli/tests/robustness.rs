//! End-to-end robustness of the CLI: exit codes passed through, bad options
//! and commands, unwritable output, missing/truncated/corrupt traces, a JVM
//! killed with SIGKILL, the text report and `weft demo`. Errors must be one
//! clear line on stderr with a non-zero exit, never a panic.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::*;

/// Asserts a clean failure: non-zero exit, no panic, exactly one error line on stderr
/// (when `one_line`), nothing on stdout, and the line mentions each of `mentions`.
fn assert_clean_error(r: &Run, what: &str, one_line: bool, mentions: &[&str]) {
    assert_no_panic(r, what);
    assert!(
        !r.status.success(),
        "{what}: expected a non-zero exit\n{}",
        r.describe()
    );
    let lines = r.stderr_lines();
    assert!(
        !lines.is_empty(),
        "{what}: expected an error message on stderr\n{}",
        r.describe()
    );
    if one_line {
        assert_eq!(
            lines.len(),
            1,
            "{what}: expected one error line on stderr\n{}",
            r.describe()
        );
        assert!(
            r.stdout.trim().is_empty(),
            "{what}: expected nothing on stdout\n{}",
            r.describe()
        );
    }
    let all = r.stderr.to_lowercase();
    for m in mentions {
        assert!(
            all.contains(&m.to_lowercase()),
            "{what}: error should mention {m:?}\n{}",
            r.describe()
        );
    }
}

/// A real trace of a small workload, recorded once per test binary.
fn small_trace() -> &'static Path {
    static T: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let _serial = serial();
        let trace = scratch_file("small.weft");
        let r = run_recorded(&trace, &[], "PoolTasks", &["50", "200", "2"]);
        assert_no_panic(&r, "weft record");
        assert!(r.status.success(), "weft record failed\n{}", r.describe());
        let len = std::fs::metadata(&trace).map(|m| m.len()).unwrap_or(0);
        assert!(len > 1000, "trace suspiciously small: {len} bytes");
        trace
    })
}

#[test]
fn exit_code_of_the_program_is_passed_through() {
    let _serial = serial();
    let trace = scratch_file("exit.weft");
    let r = run_recorded(&trace, &[], "Exit", &["3"]);
    assert_no_panic(&r, "weft record");
    assert_eq!(r.status.code(), Some(3), "{}", r.describe());
    assert_eq!(r.stdout, "exiting with 3\n");
    // The trace of a program that called System.exit is complete and readable.
    let report = report_json(&trace);
    assert_eq!(
        report.pointer("/trace/truncated"),
        Some(&serde_json::Value::Bool(false)),
        "{report}"
    );
}

#[test]
fn unknown_option_is_a_clean_error() {
    let out = scratch_file("unknown-option.weft");
    let r = weft_cmd(&[
        "record",
        "--no-such-option",
        "-o",
        out.to_str().unwrap(),
        "--",
        "java",
        "-version",
    ]);
    assert_clean_error(&r, "record --no-such-option", false, &["--no-such-option"]);
    assert!(!out.exists(), "no trace should be written");

    let r = weft_cmd(&["report", "--no-such-option", "x.weft"]);
    assert_clean_error(&r, "report --no-such-option", false, &["--no-such-option"]);

    let r = weft_cmd(&["no-such-subcommand"]);
    assert_clean_error(&r, "unknown subcommand", false, &["no-such-subcommand"]);
}

#[test]
fn record_without_a_command_is_a_clean_error() {
    let out = scratch_file("no-command.weft");
    let r = weft_cmd(&["record", "-o", out.to_str().unwrap()]);
    assert_clean_error(&r, "record without command", false, &[]);
}

#[test]
fn command_not_found_is_a_clean_error() {
    let out = scratch_file("not-found.weft");
    let r = weft_cmd(&[
        "record",
        "-o",
        out.to_str().unwrap(),
        "--",
        "weft-no-such-program-xyz",
        "arg",
    ]);
    assert_clean_error(&r, "command not found", true, &["weft-no-such-program-xyz"]);
}

#[test]
fn unwritable_output_is_a_clean_error() {
    let argv = java_argv("Hello", &[]);
    let mut args = vec!["record", "-o", "/nonexistent/dir/x.weft", "--"];
    args.extend(argv.iter().map(String::as_str));
    let r = {
        let _serial = serial();
        weft_cmd(&args)
    };
    assert_clean_error(&r, "unwritable output", false, &["/nonexistent/dir"]);
    assert!(!Path::new("/nonexistent/dir/x.weft").exists());
}

/// `-o` naming a device or FIFO is refused before anything is opened (it is never
/// truncated or removed: `-o /dev/null` as root must not delete the device node).
#[test]
fn output_that_is_not_a_regular_file_is_refused() {
    let fifo = scratch_file("a-fifo.weft");
    let _ = std::fs::remove_file(&fifo);
    let made = command("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let argv = java_argv("Hello", &[]);
    let mut args = vec!["record", "-o", fifo.to_str().unwrap(), "--"];
    args.extend(argv.iter().map(String::as_str));
    let r = weft_cmd(&args);
    assert_clean_error(&r, "fifo output", true, &["not a regular file"]);
    let ft = std::fs::symlink_metadata(&fifo)
        .expect("the FIFO is still there")
        .file_type();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&ft));
    let _ = std::fs::remove_file(&fifo);
}

#[test]
fn missing_trace_is_a_clean_error() {
    let p = scratch_file("does-not-exist.weft");
    for json in [false, true] {
        let mut args = vec!["report", p.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let r = weft_cmd(&args);
        assert_clean_error(&r, "missing trace", true, &["does-not-exist.weft"]);
    }
}

#[test]
fn not_a_trace_is_a_clean_error() {
    let p = scratch_file("not-a-trace.weft");
    std::fs::write(&p, "this is a text file, not a weft trace\n".repeat(20)).unwrap();
    let r = weft_cmd(&["report", p.to_str().unwrap(), "--json"]);
    assert_clean_error(&r, "not a trace", true, &[]);

    let e = scratch_file("empty.weft");
    std::fs::write(&e, b"").unwrap();
    let r = weft_cmd(&["report", e.to_str().unwrap()]);
    assert_clean_error(&r, "empty file", true, &["empty"]);
}

/// A JVM that dies after loading the agent but before VMInit (here: a module that
/// does not exist, as Spark on a trimmed JDK runtime) leaves no empty trace behind
/// and weft says why there is none; the JVM's exit code is passed through.
#[test]
fn jvm_that_exits_before_vminit_leaves_no_empty_trace() {
    let out = scratch_file("early-exit.weft");
    let argv = java_argv("Hello", &[]);
    let mut args = vec!["record", "-o", out.to_str().unwrap(), "--"];
    args.push(argv[0].as_str());
    args.extend(["--add-modules", "weft.no.such.module"]);
    args.extend(argv[1..].iter().map(String::as_str));
    let r = {
        let _serial = serial();
        weft_cmd(&args)
    };
    assert_no_panic(&r, "early exit");
    assert!(
        !r.status.success(),
        "expected the JVM's failure\n{}",
        r.describe()
    );
    assert!(
        r.stdout.contains("weft.no.such.module") || r.stderr.contains("weft.no.such.module"),
        "the JVM's own error is shown\n{}",
        r.describe()
    );
    assert!(
        r.stderr.contains("exited before recording started"),
        "weft says why there is no trace\n{}",
        r.describe()
    );
    assert!(!out.exists(), "no empty trace is left\n{}", r.describe());
}

#[test]
fn text_report_names_the_task_classes() {
    let trace = small_trace();
    let r = weft_cmd(&["report", trace.to_str().unwrap()]);
    assert_no_panic(&r, "weft report");
    assert!(r.status.success(), "{}", r.describe());
    assert!(
        r.stdout.contains("PoolTasks$"),
        "text report should list the PoolTasks task classes\n{}",
        r.describe()
    );
}

#[test]
fn truncated_trace_is_read_and_flagged() {
    let bytes = std::fs::read(small_trace()).unwrap();
    let cut = scratch_file("truncated.weft");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let report = report_json(&cut);
    assert_eq!(
        report.pointer("/trace/truncated"),
        Some(&serde_json::Value::Bool(true)),
        "a trace cut in half must be flagged truncated: {}",
        report["trace"]
    );
    let r = weft_cmd(&["report", cut.to_str().unwrap()]);
    assert_no_panic(&r, "weft report (text) of a truncated trace");
    assert!(r.status.success(), "{}", r.describe());
    assert!(
        (r.stdout.clone() + &r.stderr)
            .to_lowercase()
            .contains("truncated"),
        "the text report should say the trace is truncated\n{}",
        r.describe()
    );
}

/// Offsets of the blocks of a trace file (docs/trace-format.md: an 18-byte
/// preamble with the header length at 10..14, the header, then blocks of
/// `len: u32 LE, checksum: u32 LE, payload[len]`).
fn block_offsets(bytes: &[u8]) -> Vec<(usize, usize)> {
    let hlen = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
    let mut pos = 18 + hlen;
    let mut blocks = Vec::new();
    while pos + 8 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        if pos + 8 + len > bytes.len() {
            break;
        }
        blocks.push((pos + 8, len));
        pos += 8 + len;
    }
    blocks
}

#[test]
fn corrupt_trace_is_a_clean_error() {
    let mut bytes = std::fs::read(small_trace()).unwrap();
    let blocks = block_offsets(&bytes);
    assert!(
        blocks.len() >= 2,
        "expected several blocks in a real trace, found {}",
        blocks.len()
    );
    // Flip bytes inside the payload of the block that holds the middle of the
    // file (not the last block: a bad last block reads as a torn write).
    let mid = bytes.len() / 2;
    let &(start, len) = blocks[..blocks.len() - 1]
        .iter()
        .find(|(s, l)| mid < s + l)
        .unwrap_or(&blocks[0]);
    let at = start + len / 2;
    for b in &mut bytes[at..(at + 4).min(start + len)] {
        *b ^= 0xA5;
    }
    let p = scratch_file("corrupt.weft");
    std::fs::write(&p, &bytes).unwrap();
    for json in [true, false] {
        let mut args = vec!["report", p.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let r = weft_cmd(&args);
        assert_clean_error(&r, "corrupt trace", true, &["corrupt"]);
    }
}

#[test]
fn sigkilled_jvm_leaves_a_readable_truncated_trace() {
    let _serial = serial();
    let trace = scratch_file("killed.weft");
    let _ = std::fs::remove_file(&trace);
    let mut c = command(weft());
    c.arg("record")
        .arg("-o")
        .arg(&trace)
        .arg("--interval")
        .arg("100ms")
        .arg("--")
        .args(java_argv("Endless", &["60000"]));
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("start weft record");
    // The workload's first line is the JVM's own pid: kill the JVM, not weft.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read PID line");
    let pid: u32 = match line
        .trim()
        .strip_prefix("PID ")
        .and_then(|s| s.parse().ok())
    {
        Some(p) => p,
        None => {
            let _ = child.kill();
            panic!("expected a PID line from Endless, got {line:?}");
        }
    };
    std::thread::sleep(Duration::from_millis(1200));
    sigkill(pid);
    child.stdout = Some(stdout.into_inner());
    let r = wait_with_timeout(
        child,
        "weft record of a killed JVM",
        Duration::from_secs(60),
    );
    assert_no_panic(&r, "weft record");
    assert!(
        !r.status.success(),
        "weft record should fail when its JVM is killed\n{}",
        r.describe()
    );

    let report = report_json(&trace);
    assert_eq!(
        report.pointer("/trace/truncated"),
        Some(&serde_json::Value::Bool(true)),
        "trace of a killed JVM must be flagged truncated: {}",
        report["trace"]
    );
    let ticks = report
        .pointer("/tasks/classes")
        .and_then(|v| v.as_array())
        .and_then(|rows| {
            rows.iter()
                .find(|r| r["class"] == "weft.workloads.Endless$Tick")
        })
        .and_then(|r| r["executions"].as_u64())
        .unwrap_or(0);
    assert!(
        ticks > 0,
        "a second of 100 us tasks should be in the trace\n{}",
        workload_rows(&report)
    );

    let t = weft_cmd(&["report", trace.to_str().unwrap()]);
    assert_no_panic(&t, "weft report (text)");
    assert!(t.status.success(), "{}", t.describe());
    assert!(
        (t.stdout.clone() + &t.stderr)
            .to_lowercase()
            .contains("truncated"),
        "the text report should say the trace is truncated\n{}",
        t.describe()
    );
}

#[test]
fn demo_records_the_sample() {
    let _serial = serial();
    let r = weft_cmd(&["demo"]);
    assert_no_panic(&r, "weft demo");
    assert!(r.status.success(), "weft demo failed\n{}", r.describe());
    for class in ["weft.sample.Sample$Checksum", "weft.sample.Sample$Render"] {
        assert!(
            r.stdout.contains(class),
            "demo report should list {class}\n{}",
            r.describe()
        );
    }
}

/// A thread's CPU time is its own since its recorded start: `main` boots the JVM
/// before the agent's VMInit (tens of ms that are not in its lifetime), and
/// `DestroyJavaVM` re-attaches main's OS thread.
#[test]
fn thread_cpu_time_never_exceeds_its_lifetime() {
    let trace = scratch_file("hello-cpu.weft");
    let r = {
        let _serial = serial();
        run_recorded(&trace, &[], "Hello", &[])
    };
    assert!(r.status.success(), "weft record failed\n{}", r.describe());
    let j = report_json(&trace);
    let threads = j["threads"].as_array().expect("threads");
    let mut checked = 0;
    for t in threads {
        let (Some(cpu), Some(s), Some(e)) = (
            t["cpu_ns"].as_u64(),
            t["start_ns"].as_u64(),
            t["end_ns"].as_u64(),
        ) else {
            continue;
        };
        // 1 ms of slack: thread CPU clock and the trace clock are read apart.
        assert!(
            cpu <= e.saturating_sub(s) + 1_000_000,
            "thread {} used {cpu} ns of CPU in a lifetime of {} ns",
            t["name"],
            e.saturating_sub(s)
        );
        checked += 1;
    }
    assert!(checked >= 1, "no thread with a CPU time: {threads:?}");
}

/// A full disk (here: the file-size limit, `ulimit -f`, so that the trace's writes
/// fail with EFBIG) stops the recording with one message; the program runs to its
/// end unchanged, and the trace is readable up to the last whole block.
#[test]
fn full_disk_stops_recording_and_the_program_goes_on() {
    let trace = scratch_file("full-disk.weft");
    let argv = java_argv("fj.Fibonacci", &["32", "10", "2"]);
    // 64 KiB: a few blocks fit, the fork-join batches of 46,368 tasks do not.
    let script = format!(
        "ulimit -f 64; exec \"$0\" record -o {} -- {}",
        trace.display(),
        argv.join(" ")
    );
    let mut c = command("sh");
    c.arg("-c").arg(&script).arg(weft());
    let r = {
        let _serial = serial();
        run(c)
    };
    assert_no_panic(&r, "full disk");
    assert!(
        r.status.success(),
        "the program must finish\n{}",
        r.describe()
    );
    let t = truth(&r.stdout);
    assert_eq!(
        t["forkjoin"]["tasks"],
        46368,
        "the program's own result\n{}",
        r.describe()
    );
    let stops: Vec<&str> = r
        .stderr_lines()
        .into_iter()
        .filter(|l| l.contains("recording stopped"))
        .collect();
    assert_eq!(stops.len(), 1, "one message\n{}", r.describe());
    assert!(stops[0].contains("cannot write trace"), "{}", r.describe());
    let j = report_json(&trace);
    assert_eq!(
        j["trace"]["truncated"], true,
        "flagged truncated: {}",
        j["trace"]
    );
}
