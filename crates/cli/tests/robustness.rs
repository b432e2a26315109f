//! End-to-end robustness of the CLI: exit codes passed through, bad options
//! and commands, unwritable output, missing/truncated/corrupt traces, a JVM
//! killed with SIGKILL, the text report and `weft demo`. Errors must be one
//! clear line on stderr with a non-zero exit, never a panic.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
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

/// A corrupt block in the middle of a trace is skipped and reported (which thread,
/// how much, which time range), and the rest of the trace is read.
#[test]
fn corrupt_block_is_skipped_reported_and_the_rest_read() {
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
    let r = weft_cmd(&["report", p.to_str().unwrap(), "--json"]);
    assert_no_panic(&r, "corrupt trace");
    assert!(r.status.success(), "the rest is read\n{}", r.describe());
    let warning = r.stderr_lines().join("\n");
    assert!(
        warning.contains("skipped") && warning.contains(&format!("at byte {}", start - 8)),
        "one warning names the damage\n{}",
        r.describe()
    );
    let j: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    let loss = j["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|x| x["kind"] == "losses"))
        .unwrap_or_else(|| panic!("a losses finding: {}", j["findings"]));
    assert!(
        loss["message"]
            .as_str()
            .unwrap_or("")
            .contains("corrupt_block"),
        "{loss}"
    );
    let classes = j.pointer("/tasks/classes").and_then(|c| c.as_array());
    assert!(
        classes.is_some_and(|c| c.iter().any(|x| x["class"]
            .as_str()
            .unwrap_or("")
            .starts_with("weft.workloads.PoolTasks"))),
        "the rest of the trace is reported\n{}",
        workload_rows(&j)
    );
}

/// A file that is not a trace is refused after its first bytes: `/dev/zero` and a
/// 4 GB (sparse) file fail at once, under a 200 MB memory limit.
#[test]
fn non_trace_files_are_refused_without_reading_them_whole() {
    let big = scratch_file("big-not-a-trace.weft");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(4 << 30).unwrap();
    drop(f);
    for p in [Path::new("/dev/zero"), big.as_path()] {
        let mut c = command("sh");
        c.arg("-c")
            .arg("ulimit -v 200000; exec \"$0\" \"$@\"")
            .arg(weft())
            .arg("report")
            .arg(p);
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let r = wait_with_timeout(
            c.spawn().unwrap(),
            "report of a non-trace",
            Duration::from_secs(30),
        );
        assert_clean_error(&r, "non-trace file", true, &["not a weft trace"]);
    }
    let _ = std::fs::remove_file(&big);
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
    // 128 blocks of 512 bytes (dash; 1 KiB with bash): the in-memory probe jar
    // (~35 KB, also under this limit: at 64 blocks it no longer fit) and a few blocks
    // of the trace fit, the fork-join batches of 46,368 tasks (~1.5 MB) do not.
    let script = format!(
        "ulimit -f 128; exec \"$0\" record -o {} -- {}",
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

// ------------------------------------------------------------------ trace fuzzing

/// splitmix64: a small deterministic generator (the fuzz cases of a seed are the
/// same on every run of the same trace).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let x = *b.get(*pos)?;
        *pos += 1;
        v |= ((x & 0x7f) as u64) << shift;
        if x & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Values that break naive arithmetic and allocation.
const EXTREMES: [u64; 9] = [
    0,
    1,
    0x7fff_ffff,
    0xffff_ffff,
    1 << 32,
    1 << 40,
    1 << 62,
    1 << 63,
    u64::MAX,
];

/// One mutated trace and what was done to it.
struct Case {
    what: String,
    bytes: Vec<u8>,
}

fn framed(payload: &[u8]) -> Vec<u8> {
    let mut b = (payload.len() as u32).to_le_bytes().to_vec();
    b.extend(crc32fast::hash(payload).to_le_bytes());
    b.extend(payload);
    b
}

/// The header payload's (key, value) pairs, and where the blocks start.
fn header_entries(bytes: &[u8]) -> (Vec<(String, String)>, usize) {
    let hlen = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
    let h = &bytes[18..18 + hlen];
    let mut p = 0;
    let n = get_varint(h, &mut p).unwrap();
    let mut out = Vec::new();
    for _ in 0..n {
        let mut s = || {
            let l = get_varint(h, &mut p).unwrap() as usize;
            let v = String::from_utf8_lossy(&h[p..p + l]).into_owned();
            p += l;
            v
        };
        let k = s();
        let v = s();
        out.push((k, v));
    }
    (out, 18 + hlen)
}

fn with_header(bytes: &[u8], entries: &[(String, String)]) -> Vec<u8> {
    let (_, hend) = header_entries(bytes);
    let mut h = Vec::new();
    put_varint(&mut h, entries.len() as u64);
    for (k, v) in entries {
        put_varint(&mut h, k.len() as u64);
        h.extend(k.as_bytes());
        put_varint(&mut h, v.len() as u64);
        h.extend(v.as_bytes());
    }
    let mut out = bytes[..10].to_vec();
    out.extend((h.len() as u32).to_le_bytes());
    out.extend(crc32fast::hash(&h).to_le_bytes());
    out.extend(h);
    out.extend(&bytes[hend..]);
    out
}

/// Records of a block payload: (offset of the tag, offset of the payload, payload length).
fn records_of(payload: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut p = 0;
    let mut out = Vec::new();
    if get_varint(payload, &mut p).is_none() {
        return out;
    }
    while p < payload.len() {
        let at = p;
        let tag = payload[p];
        p += 1;
        if tag & 0x80 != 0 && get_varint(payload, &mut p).is_none() {
            break;
        }
        let Some(len) = get_varint(payload, &mut p) else {
            break;
        };
        let len = len as usize;
        if p + len > payload.len() {
            break;
        }
        out.push((at, p, len));
        p += len;
    }
    out
}

/// A CRC-valid mutation of one record of one block: a varint field (or the
/// timestamp delta) replaced by an extreme value, the record re-framed and the
/// block's checksum recomputed.
fn mutate_record(bytes: &[u8], rng: &mut Rng) -> Option<Case> {
    let blocks = block_offsets(bytes);
    let &(start, len) = blocks.get(rng.below(blocks.len()))?;
    let payload = &bytes[start..start + len];
    let recs = records_of(payload);
    let &(at, body, blen) = recs.get(rng.below(recs.len()))?;
    let tag = payload[at];
    let value = EXTREMES[rng.below(EXTREMES.len())];
    let mut rec = vec![tag];
    let mut p = at + 1;
    let what = if tag & 0x80 != 0 && rng.below(3) == 0 {
        // The timestamp delta.
        get_varint(payload, &mut p)?;
        put_varint(&mut rec, value);
        put_varint(&mut rec, blen as u64);
        rec.extend(&payload[body..body + blen]);
        format!("record tag {} at {at}: ts delta = {value:#x}", tag & 0x7f)
    } else {
        if tag & 0x80 != 0 {
            let d = get_varint(payload, &mut p)?;
            put_varint(&mut rec, d);
        }
        // The n-th varint of the body.
        let b = &payload[body..body + blen];
        let mut fields = Vec::new();
        let mut q = 0;
        while q < b.len() {
            let s = q;
            if get_varint(b, &mut q).is_none() {
                break;
            }
            fields.push((s, q));
        }
        let &(fs, fe) = fields.get(rng.below(fields.len()))?;
        let mut nb = b[..fs].to_vec();
        put_varint(&mut nb, value);
        nb.extend(&b[fe..]);
        put_varint(&mut rec, nb.len() as u64);
        rec.extend(&nb);
        format!(
            "record tag {} at {at}: field at {fs} = {value:#x}",
            tag & 0x7f
        )
    };
    let mut np = payload[..at].to_vec();
    np.extend(rec);
    np.extend(&payload[body + blen..]);
    let mut out = bytes[..start - 8].to_vec();
    out.extend(framed(&np));
    out.extend(&bytes[start + len..]);
    Some(Case {
        what: format!("block at {}: {what}", start - 8),
        bytes: out,
    })
}

/// Header values that no agent writes.
fn mutate_header(bytes: &[u8], rng: &mut Rng) -> Case {
    let (mut entries, _) = header_entries(bytes);
    let i = rng.below(entries.len());
    let values = [
        "0",
        "1",
        "-1",
        "NaN",
        "inf",
        "1e300",
        "9223372036854775808",
        "18446744073709551615",
        "",
        "x",
    ];
    let v = values[rng.below(values.len())];
    entries[i].1 = v.to_string();
    Case {
        what: format!("header {} = {v:?}", entries[i].0),
        bytes: with_header(bytes, &entries),
    }
}

/// `n` mutated copies of `trace`: truncations, bit flips, block reorderings
/// (swap, drop, duplicate), CRC-valid record mutations and header mutations.
fn fuzz_cases(trace: &[u8], seed: u64, n: usize) -> Vec<Case> {
    let mut rng = Rng(seed);
    let blocks = block_offsets(trace);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let k = out.len() % 5;
        let case = match k {
            0 => {
                let cut = rng.below(trace.len());
                Some(Case {
                    what: format!("cut at {cut}"),
                    bytes: trace[..cut].to_vec(),
                })
            }
            1 => {
                let mut b = trace.to_vec();
                let flips = 1 + rng.below(8);
                let mut at = Vec::new();
                for _ in 0..flips {
                    let i = 8 + rng.below(b.len() - 8);
                    b[i] ^= 1 << rng.below(8);
                    at.push(i);
                }
                Some(Case {
                    what: format!("bits flipped at {at:?}"),
                    bytes: b,
                })
            }
            2 => {
                let (_, hend) = header_entries(trace);
                let mut order: Vec<usize> = (0..blocks.len()).collect();
                let (i, j) = (rng.below(order.len()), rng.below(order.len()));
                let op = rng.below(3);
                match op {
                    0 => order.swap(i, j),
                    1 => {
                        order.remove(i);
                    }
                    _ => order.insert(j, i),
                }
                let mut b = trace[..hend].to_vec();
                for o in &order {
                    let (s, l) = blocks[*o];
                    b.extend(&trace[s - 8..s + l]);
                }
                Some(Case {
                    what: format!(
                        "blocks {} ({i}, {j})",
                        ["swapped", "dropped", "duplicated"][op]
                    ),
                    bytes: b,
                })
            }
            3 => mutate_record(trace, &mut rng),
            _ => Some(mutate_header(trace, &mut rng)),
        };
        if let Some(c) = case {
            out.push(c);
        }
    }
    out
}

/// What one fuzz case did: a clean exit (0, or 2 with one `weft:` line), never a
/// signal (abort, memory limit), a panic or a hang.
fn run_fuzz_case(dir: &Path, i: usize, case: &Case, export: bool) -> Result<bool, String> {
    let f = dir.join(format!("case-{i}.weft"));
    std::fs::write(&f, &case.bytes).unwrap();
    // 1 GB of address space and 60 s (the machine is shared): the reader must
    // bound what it allocates by what the file holds.
    let mut script = String::from("ulimit -v 1000000; exec \"$0\" \"$@\"");
    let mut args: Vec<String> = vec![weft().into()];
    if export {
        let o = dir.join(format!("case-{i}"));
        args.extend([
            "export".into(),
            f.display().to_string(),
            "--chrome".into(),
            format!("{}.json", o.display()),
            "--perfetto".into(),
            format!("{}.pftrace", o.display()),
            "--html".into(),
            format!("{}.html", o.display()),
            "--flamegraph".into(),
            format!("{}.svg", o.display()),
        ]);
        script = script.replace("1000000", "2000000");
    } else {
        args.extend(["report".into(), f.display().to_string(), "--json".into()]);
    }
    let mut c = command("sh");
    c.arg("-c").arg(&script).args(&args);
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().map_err(|e| format!("spawn: {e}"))?;
    let desc = format!("fuzz case {i} ({})", case.what);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_with_timeout(child, &desc, Duration::from_secs(60))
    }))
    .map_err(|_| format!("{desc}: hung (over 60 s)"))?;
    let verdict = if r.stderr.contains("panicked") {
        Err("panicked")
    } else if r.status.code().is_none() {
        Err("killed by a signal (abort or memory limit)")
    } else if r.status.code() == Some(0) {
        Ok(true)
    } else if r.status.code() == Some(2) && r.stderr_lines().iter().any(|l| l.starts_with("weft: "))
    {
        Ok(false)
    } else {
        Err("unexpected exit")
    };
    if verdict == Ok(false) && std::env::var_os("WEFT_FUZZ_VERBOSE").is_some() {
        eprintln!("refused: {desc}: {}", r.stderr_lines().join(" | "));
    }
    match verdict {
        Ok(read) => {
            let _ = std::fs::remove_file(&f);
            Ok(read)
        }
        Err(why) => Err(format!(
            "{desc}: {why}; input kept at {}\n{}",
            f.display(),
            r.describe()
        )),
    }
}

/// Runs `n` fuzz cases of the small trace on 2 threads; returns (read, refused, and
/// read/refused per kind of damage).
fn fuzz(n: usize, seed: u64) -> (usize, usize, String) {
    let trace = std::fs::read(small_trace()).unwrap();
    let cases = fuzz_cases(&trace, seed, n);
    let dir = scratch_file(&format!("fuzz-{seed}"));
    let _ = std::fs::create_dir_all(&dir);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, Result<bool, String>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(c) = cases.get(i) else { break };
                        // Every tenth case also writes every export format.
                        mine.push((i, run_fuzz_case(&dir, i, c, i % 10 == 9)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    let results: Vec<Result<bool, String>> = results.into_iter().map(|(_, r)| r).collect();
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {n} fuzz cases failed (seed {seed:#x}); first:\n{}",
        failures.len(),
        failures[0]
    );
    // Case i is of kind i % 5 (fuzz_cases): count what was read per kind.
    let mut by_kind = [(0usize, 0usize); 5];
    for (i, r) in results.iter().enumerate() {
        let k = &mut by_kind[i % 5];
        if matches!(r, Ok(true)) {
            k.0 += 1;
        } else {
            k.1 += 1;
        }
    }
    let kinds = ["cut", "bitflip", "reorder", "field", "header"]
        .iter()
        .zip(by_kind)
        .map(|(name, (read, refused))| format!("{name}={read}/{refused}"))
        .collect::<Vec<_>>()
        .join(" ");
    let read = by_kind.iter().map(|k| k.0).sum();
    (read, n - read, kinds)
}

/// Hundreds of damaged copies of a real trace (truncations, bit flips, block
/// reorderings, CRC-valid field mutations, header mutations), each read by `weft
/// report --json` (every tenth also exported to every format) under a memory and
/// time limit: each one is read or refused with one line, never a panic, an abort
/// or a hang. `WEFT_FUZZ_CASES` and `WEFT_FUZZ_SEED` make a longer run
/// (bench/fuzz.sh).
#[test]
fn fuzzed_traces_are_read_or_refused_cleanly() {
    let n = std::env::var("WEFT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let seed = std::env::var("WEFT_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed);
    let started = std::time::Instant::now();
    let (read, refused, kinds) = fuzz(n, seed);
    // bench/fuzz.sh reads this line.
    eprintln!(
        "WEFT-FUZZ cases={n} read={read} refused={refused} {kinds} seed={seed:#x} seconds={:.1}",
        started.elapsed().as_secs_f64()
    );
    assert!(
        read > n / 4,
        "most damage is skipped, not refused: {read} of {n} read"
    );
}

// ------------------------------------------------------------------ files a user owns

/// `-o` naming a symbolic link (to a file, or dangling) is refused: the link's
/// target is neither truncated nor created.
#[test]
fn record_never_writes_through_a_symlink() {
    let target = scratch_file("link-target.txt");
    std::fs::write(&target, "precious\n").unwrap();
    let link = scratch_file("link.weft");
    let dangling_target = scratch_file("dangling-target.txt");
    let dangling = scratch_file("dangling.weft");
    for (l, t) in [(&link, &target), (&dangling, &dangling_target)] {
        let _ = std::fs::remove_file(l);
        std::os::unix::fs::symlink(t, l).unwrap();
    }
    for l in [&link, &dangling] {
        let argv = java_argv("Hello", &[]);
        let mut args = vec!["record", "-o", l.to_str().unwrap(), "--"];
        args.extend(argv.iter().map(String::as_str));
        let r = weft_cmd(&args);
        assert_clean_error(&r, "record -o symlink", true, &["symbolic link"]);
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
    assert!(
        !dangling_target.exists(),
        "a dangling link's target is not created"
    );
}

/// HTML and exports are never written through a link, never over their own input
/// trace (also through another name), and never half-written: the output is a new
/// file renamed into place.
#[test]
fn exports_never_overwrite_the_input_or_follow_links() {
    let trace = scratch_file("input.weft");
    std::fs::copy(small_trace(), &trace).unwrap();
    let original = std::fs::read(&trace).unwrap();
    let t = trace.to_str().unwrap();
    let hard = scratch_file("input-hardlink.weft");
    let _ = std::fs::remove_file(&hard);
    std::fs::hard_link(&trace, &hard).unwrap();
    let h = hard.to_str().unwrap();
    for args in [
        vec!["report", t, "--html", t],
        vec!["export", t, "--chrome", t],
        vec!["export", t, "--perfetto", h],
        vec!["export", t, "--collapsed", "x.txt", "--html", t],
    ] {
        let r = weft_cmd(&args);
        assert_clean_error(&r, &format!("{args:?}"), true, &["over the trace"]);
    }
    assert_eq!(
        std::fs::read(&trace).unwrap(),
        original,
        "the trace is intact"
    );

    let target = scratch_file("export-target.txt");
    std::fs::write(&target, "precious\n").unwrap();
    let link = scratch_file("export-link.html");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let r = weft_cmd(&["report", t, "--html", link.to_str().unwrap()]);
    assert_clean_error(&r, "report --html symlink", true, &["symbolic link"]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");

    let a = scratch_file("same-output.out");
    let r = weft_cmd(&[
        "export",
        t,
        "--chrome",
        a.to_str().unwrap(),
        "--html",
        a.to_str().unwrap(),
    ]);
    assert_clean_error(&r, "two exports to one file", true, &["two exports"]);

    // A plain export replaces an old file, and leaves no temporary file beside it.
    let out = scratch_file("exports/report.html");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::write(&out, "old").unwrap();
    let r = weft_cmd(&["report", t, "--html", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", r.describe());
    assert!(std::fs::read_to_string(&out).unwrap().contains("<html"));
    let names: Vec<String> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["report.html".to_string()]);
}

/// A write error on stdout (`> /dev/full`) is an error with a non-zero exit; a
/// closed pipe (`| head`) is not.
#[test]
fn report_to_a_full_device_is_an_error() {
    let trace = small_trace();
    let mut c = command(weft());
    c.arg("report").arg(trace);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    c.stdin(Stdio::null()).stdout(full).stderr(Stdio::piped());
    let r = wait_with_timeout(c.spawn().unwrap(), "report > /dev/full", TIMEOUT);
    assert_clean_error(&r, "report > /dev/full", true, &["standard output"]);

    let mut c = command("bash");
    c.arg("-c")
        .arg("\"$0\" report \"$1\" | head -c 10 >/dev/null; exit ${PIPESTATUS[0]}")
        .arg(weft())
        .arg(trace);
    let r = run(c);
    assert!(r.status.success(), "{}", r.describe());
    assert!(r.stderr.trim().is_empty(), "{}", r.describe());
}

/// Starts `weft record -o trace -- java … Sleep max_ms` and returns it once the
/// JVM has printed its PID (its trace exists then).
fn start_sleeper(
    trace: &Path,
    max_ms: &str,
) -> (
    std::process::Child,
    u32,
    BufReader<std::process::ChildStdout>,
) {
    let mut c = command(weft());
    c.arg("record")
        .arg("-o")
        .arg(trace)
        .arg("--")
        .args(java_argv("Sleep", &[max_ms]));
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("start weft record");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read PID line");
    let pid = line
        .trim()
        .strip_prefix("PID ")
        .and_then(|s| s.parse().ok());
    let Some(pid) = pid else {
        let _ = child.kill();
        panic!("expected a PID line from Sleep, got {line:?}");
    };
    (child, pid, stdout)
}

/// Two `weft record` with the same `-o`: the second refuses while the first runs
/// (it must not remove the first's live trace); the first's trace is complete.
#[test]
fn a_second_recording_never_destroys_a_running_ones_trace() {
    let _serial = serial();
    let trace = scratch_file("shared-output.weft");
    let _ = std::fs::remove_file(&trace);
    let (mut first, _, stdout) = start_sleeper(&trace, "4000");
    let argv = java_argv("Hello", &[]);
    let mut args = vec!["record", "-o", trace.to_str().unwrap(), "--"];
    args.extend(argv.iter().map(String::as_str));
    let second = weft_cmd(&args);
    first.stdout = Some(stdout.into_inner());
    let first = wait_with_timeout(first, "first weft record", TIMEOUT);
    assert_clean_error(&second, "second record, same -o", true, &["still running"]);
    assert!(first.status.success(), "{}", first.describe());
    let j = report_json(&trace);
    assert_eq!(j["trace"]["truncated"], false, "{}", j["trace"]);
    // Once the first has finished, the same -o records again (the old trace replaced).
    let again = weft_cmd(&args);
    assert!(again.status.success(), "{}", again.describe());
    assert!(
        again.stderr.contains("trace written to"),
        "{}",
        again.describe()
    );
}

/// `weft demo` works in a fresh private directory and leaves nothing in the temp dir.
#[test]
fn demo_uses_a_private_directory_and_leaves_nothing() {
    let _serial = serial();
    let tmp = scratch_file("demo-tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let out = scratch_file("demo.weft");
    let mut c = command(weft());
    c.arg("demo").arg("-o").arg(&out).env("TMPDIR", &tmp);
    let r = run(c);
    assert!(r.status.success(), "{}", r.describe());
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

// ------------------------------------------------------------------ signals

fn send_signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(st.success(), "kill -{sig} {pid} failed");
}

/// Whether this process was started with SIGHUP ignored (`nohup`): its children,
/// weft among them, inherit that.
fn sighup_ignored() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        })
        .is_some_and(|mask| mask & 1 != 0)
}

fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
}

/// SIGTERM or SIGHUP sent to `weft record` reaches the recorded JVM (its shutdown
/// hooks run, its trace is complete), weft waits for it and exits with its status;
/// nothing is left running.
#[test]
fn signals_to_weft_record_are_forwarded_to_the_jvm() {
    let _serial = serial();
    for sig in ["TERM", "HUP", "INT"] {
        if sig == "HUP" && sighup_ignored() {
            // Started under nohup: weft keeps SIGHUP ignored, as the JVM would without
            // it (child.rs), so there is nothing to forward.
            continue;
        }
        let trace = scratch_file(&format!("signal-{sig}.weft"));
        let _ = std::fs::remove_file(&trace);
        let (mut child, jvm, stdout) = start_sleeper(&trace, "60000");
        send_signal(child.id(), sig);
        child.stdout = Some(stdout.into_inner());
        let r = wait_with_timeout(child, &format!("weft record after SIG{sig}"), TIMEOUT);
        assert_no_panic(&r, "signal");
        assert!(
            r.stdout.contains("shutdown hook ran"),
            "SIG{sig}\n{}",
            r.describe()
        );
        let want = match sig {
            "TERM" => 143,
            "HUP" => 129,
            _ => 130,
        };
        assert_eq!(
            r.status.code(),
            Some(want),
            "SIG{sig}: the JVM's status\n{}",
            r.describe()
        );
        assert!(
            !process_exists(jvm),
            "SIG{sig}: the JVM {jvm} is still running"
        );
        let j = report_json(&trace);
        assert_eq!(j["trace"]["truncated"], false, "SIG{sig}: {}", j["trace"]);
    }
}

/// A second signal kills the recorded process group when the first one did not end
/// it (a shutdown hook that never returns).
#[test]
fn a_second_signal_kills_the_recorded_jvm() {
    let _serial = serial();
    let trace = scratch_file("signal-twice.weft");
    let _ = std::fs::remove_file(&trace);
    let mut c = command(weft());
    c.arg("record")
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .args(java_argv("Sleep", &["60000", "stubborn"]));
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("start weft record");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let jvm: u32 = line
        .trim()
        .strip_prefix("PID ")
        .and_then(|s| s.parse().ok())
        .expect("PID line");
    send_signal(child.id(), "TERM");
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "shutdown hook ran");
    send_signal(child.id(), "TERM");
    child.stdout = Some(stdout.into_inner());
    let r = wait_with_timeout(child, "weft record after two signals", TIMEOUT);
    assert_no_panic(&r, "two signals");
    assert_eq!(r.status.code(), Some(137), "killed\n{}", r.describe());
    assert!(!process_exists(jvm), "the JVM {jvm} is still running");
    let j = report_json(&trace);
    assert_eq!(j["trace"]["truncated"], true, "{}", j["trace"]);
}

/// A JVM that dies before VMInit (`-Xmx1k`) leaves no file of the agent's behind:
/// the probe classes come from a jar in memory, not from a temporary directory.
#[test]
fn agent_leaves_no_files_when_the_jvm_dies_early() {
    let tmp = scratch_file("early-death-tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let out = scratch_file("early-death.weft");
    let argv = java_argv("Hello", &[]);
    let mut c = command(weft());
    c.arg("record")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&argv[0])
        .arg("-Xmx1k")
        .args(&argv[1..])
        .env("TMPDIR", &tmp);
    let r = {
        let _serial = serial();
        run(c)
    };
    assert_no_panic(&r, "-Xmx1k");
    assert!(
        !r.status.success(),
        "the JVM cannot start\n{}",
        r.describe()
    );
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(
        left.is_empty(),
        "left in TMPDIR: {left:?}\n{}",
        r.describe()
    );
    assert!(!out.exists(), "no empty trace\n{}", r.describe());
}

/// The agent given twice (`weft record -- weft record -- java …`, or two
/// `-agentpath` options naming two copies of the library): the first records
/// normally, the second says it is already loaded and stays off.
#[test]
fn a_second_agent_in_one_jvm_stays_off() {
    let _serial = serial();
    let outer = scratch_file("outer.weft");
    let inner = scratch_file("inner.weft");
    let _ = std::fs::remove_file(&outer);
    let _ = std::fs::remove_file(&inner);
    let mut c = command(weft());
    c.arg("record")
        .arg("-o")
        .arg(&outer)
        .arg("--")
        .arg(weft())
        .arg("record")
        .arg("-o")
        .arg(&inner)
        .arg("--")
        .args(java_argv("PoolTasks", &["20", "100", "1"]));
    let r = run(c);
    assert_no_panic(&r, "nested weft record");
    assert!(r.status.success(), "{}", r.describe());
    assert!(r.stderr.contains("already loaded"), "{}", r.describe());
    assert!(!inner.exists(), "the second agent writes nothing");
    let j = report_json(&outer);
    assert!(
        workload_rows(&j).contains("PoolTasks$Work"),
        "the first agent records normally\n{}",
        workload_rows(&j)
    );

    // Two copies of the library (two paths): the first records.
    let dir = Path::new(weft()).parent().unwrap();
    let lib = [
        dir.join("libweft_agent.so"),
        dir.join("deps/libweft_agent.so"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .expect("libweft_agent.so next to weft");
    let copy = scratch_file("libweft_agent_copy.so");
    std::fs::copy(&lib, &copy).unwrap();
    let (a, b) = (scratch_file("copy-a.weft"), scratch_file("copy-b.weft"));
    let _ = std::fs::remove_file(&a);
    let _ = std::fs::remove_file(&b);
    let argv = java_argv("Hello", &[]);
    let mut c = command(&argv[0]);
    c.arg(format!("-agentpath:{}=out={}", lib.display(), a.display()))
        .arg(format!("-agentpath:{}=out={}", copy.display(), b.display()))
        .args(&argv[1..]);
    let r = run(c);
    assert!(r.status.success(), "{}", r.describe());
    assert!(r.stderr.contains("already loaded"), "{}", r.describe());
    assert!(a.exists() && !b.exists(), "{}", r.describe());
    report_json(&a);
}

/// A script under `weft record` (the agent through `JAVA_TOOL_OPTIONS`) that runs
/// javac and jar before the application: the JDK tools are not recorded (the
/// application's JVM gets the trace's name), and several application JVMs are
/// listed with their main classes.
#[test]
fn jdk_tools_in_a_script_are_not_recorded() {
    let _serial = serial();
    let dir = scratch_file("jdk-tools");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = repo_root().join("java/workloads/src/weft/workloads");
    let script = dir.join("build.sh");
    std::fs::write(
        &script,
        format!(
            "set -e\ncd '{d}'\njavac -d out '{s}/Hello.java' '{s}/Exit.java' '{s}/Truth.java'\njar cf app.jar -C out .\njava -cp app.jar weft.workloads.Hello\njava -cp app.jar weft.workloads.Exit 0\n",
            d = dir.display(),
            s = src.display()
        ),
    )
    .unwrap();
    let trace = dir.join("app.weft");
    let mut c = command(weft());
    c.arg("record")
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg("sh")
        .arg(&script);
    let r = run(c);
    assert_no_panic(&r, "script with JDK tools");
    assert!(r.status.success(), "{}", r.describe());
    for tool in ["javac.Main", "jar.Main"] {
        assert!(
            r.stderr
                .lines()
                .any(|l| l.contains(tool) && l.contains("is a JDK tool: not recorded")),
            "{tool}\n{}",
            r.describe()
        );
    }
    let header = weft_trace::read_header(&trace).expect("the first application JVM's trace");
    assert_eq!(header.get("jvm.main"), Some("weft.workloads.Hello"));
    let listing = r
        .stderr
        .lines()
        .find(|l| l.contains("2 JVMs recorded"))
        .unwrap_or_else(|| panic!("two JVMs listed\n{}", r.describe()));
    assert!(
        listing.contains("app.weft (weft.workloads.Hello)")
            && listing.contains(".weft (weft.workloads.Exit)"),
        "{listing}"
    );
}

/// Signals weft was started ignoring (`nohup weft record …`) stay ignored for the
/// command, as without weft: a SIGHUP does not end the JVM.
#[test]
fn ignored_signals_stay_ignored_under_nohup() {
    let _serial = serial();
    let trace = scratch_file("nohup.weft");
    let _ = std::fs::remove_file(&trace);
    let mut c = command("nohup");
    c.arg(weft())
        .arg("record")
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .args(java_argv("Sleep", &["3000"]));
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("start nohup weft record");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with("PID "), "{line:?}");
    send_signal(child.id(), "HUP");
    child.stdout = Some(stdout.into_inner());
    let r = wait_with_timeout(child, "nohup weft record", TIMEOUT);
    assert!(r.status.success(), "SIGHUP was ignored\n{}", r.describe());
    assert!(r.stdout.contains("slept 3000 ms"), "{}", r.describe());
}
