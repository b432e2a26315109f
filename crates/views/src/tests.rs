//! The views on a small analysis made in the test: main submits one task that a
//! worker runs, and the worker blocks on a monitor main holds. Each view shows the
//! analysis's numbers as they are (no view computes its own).

use serde_json::Value;
use weft_analysis::Analysis;
use weft_trace::{lock_kind, Clock, Header, ProbeKind, Record, Trace, GLOBAL_THREAD};

const MS: u64 = 1_000_000;

fn start(name: &str, ts: u64, java_id: u64) -> Record {
    Record::ThreadStart {
        ts,
        name: name.into(),
        java_id,
        os_tid: 1,
        daemon: false,
        class_id: 0,
        target_class_id: 0,
        target_ident: 0,
        ident: 0,
    }
}

fn end(ts: u64) -> Record {
    Record::ThreadEnd {
        ts,
        cpu_ns: 0,
        voluntary_cs: 0,
        involuntary_cs: 0,
    }
}

fn analysis() -> Analysis {
    let g = GLOBAL_THREAD;
    let records = vec![
        (
            g,
            Record::ClassDef {
                id: 1,
                name: "demo.Work".into(),
            },
        ),
        (
            g,
            Record::ProbeDef {
                id: 1,
                kind: ProbeKind::Execution,
                class: "demo.Work".into(),
                method: "run".into(),
                descriptor: "()V".into(),
            },
        ),
        (
            g,
            Record::ProbeDef {
                id: 2,
                kind: ProbeKind::Submission,
                class: "java.util.concurrent.ThreadPoolExecutor".into(),
                method: "execute".into(),
                descriptor: "(Ljava/lang/Runnable;)V".into(),
            },
        ),
        (
            g,
            Record::SiteDef {
                id: 5,
                frames: vec!["demo.Main.main:12".into()],
            },
        ),
        (
            g,
            Record::LockDef {
                id: 1,
                kind: lock_kind::MONITOR,
                class: "demo.L".into(),
                ident: 0xab,
                fair: false,
            },
        ),
        (0, start("main", 0, 1)),
        (1, start("pool-1-thread-1", 0, 2)),
        (
            0,
            Record::Submit {
                ts: 10 * MS,
                probe: 2,
                executor_class_id: 0,
                task_class_id: 1,
                task_ident: 77,
                inner_class_id: 0,
                inner_ident: 0,
                site: 5,
            },
        ),
        (
            1,
            Record::TaskBegin {
                ts: 20 * MS,
                probe: 1,
                class_id: 1,
                ident: 77,
                inner_class_id: 0,
                inner_ident: 0,
            },
        ),
        (
            1,
            Record::LockBlock {
                ts: 30 * MS,
                lock: 1,
                flags: 0,
                owner: 1,
                site: 0,
            },
        ),
        (
            1,
            Record::LockAcquired {
                ts: 130 * MS,
                lock: 1,
                parked: true,
            },
        ),
        (
            1,
            Record::TaskEnd {
                ts: 220 * MS,
                probe: 1,
                ident: 77,
            },
        ),
        (1, end(400 * MS)),
        (0, end(400 * MS)),
        (g, Record::End { ts: 400 * MS }),
    ];
    let trace = Trace {
        header: Header::default(),
        records,
        truncated: false,
        unknown_records: 0,
        clock: Clock::new(0, 1.0),
    };
    weft_analysis::analyze(&trace)
}

#[test]
fn json_shows_the_analysis_numbers() {
    let a = analysis();
    let j = crate::report_json(&a);
    let work = j["tasks"]["classes"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["class"] == "demo.Work"))
        .expect("demo.Work row");
    assert_eq!(work["executions"], 1);
    assert_eq!(work["submitted"], 1);
    assert_eq!(work["granularity_ns"]["total"], 200 * MS);
    assert_eq!(work["queue_wait_ns"]["p50"], 10 * MS);
    assert_eq!(j["tasks"]["edges"]["submit"], 1);
    let lock = &j["locks"]["locks"][0];
    assert_eq!(lock["class"], "demo.L");
    assert_eq!(lock["blocked_ns"], 100 * MS);
    let csp = lock["csp"].as_f64().expect("csp");
    assert!((csp - a.locks.locks[0].csp).abs() < 1e-12);
    assert!(
        (csp - 0.125).abs() < 1e-12,
        "100 ms blocked of 800 ms running"
    );
    assert_eq!(j["forkjoin"]["tasks"], 0);
}

#[test]
fn text_report_names_the_task_class_and_the_lock() {
    let t = crate::report_text(&analysis());
    assert!(t.contains("demo.Work"), "{t}");
    assert!(t.contains("demo.L"), "{t}");
    assert!(t.contains("demo.Main.main:12"), "the submission site: {t}");
}

#[test]
fn collapsed_stacks_are_self_time_and_blocked_time() {
    // Each ns once (docs/views.md): the task's 200 ms of self time, of which 100 ms
    // blocked on the lock, under the task's own stack.
    let s = crate::collapsed_stacks(&analysis());
    let lines: Vec<&str> = s.lines().collect();
    assert!(
        lines.contains(
            &"runnable;demo.Work;submitted at demo.Main.main:12;blocked on demo.L (monitor);site not sampled 100000000"
        ),
        "{s}"
    );
    let work: u64 = lines
        .iter()
        .filter(|l| l.starts_with("runnable;demo.Work;"))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(work, 200_000_000, "{s}");
}

#[test]
fn chrome_trace_draws_the_submission_flow_and_the_csp_series() {
    let a = analysis();
    let doc: Value = serde_json::from_str(&crate::chrome_trace(&a)).expect("valid JSON");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    // The flow starts on the submitting thread (main, thread 0) at the submission.
    let flow = events
        .iter()
        .find(|e| e["ph"] == "s")
        .expect("a submission flow");
    assert_eq!(flow["tid"], 0);
    assert_eq!(flow["ts"].as_f64(), Some(10_000.0));
    // One CSP counter value per lock interval, from the analysis's dense series.
    let csp: Vec<f64> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"].as_str().is_some_and(|n| n.starts_with("CSP")))
        .map(|e| e["args"]["csp"].as_f64().expect("csp value"))
        .collect();
    assert_eq!(csp.len(), a.locks.running_per_interval.len());
    assert_eq!(csp.len(), a.locks.locks[0].csp_per_interval.len());
    assert!((csp[0] - 0.125).abs() < 1e-4);
}

#[test]
fn perfetto_and_html_carry_the_execution() {
    let a = analysis();
    let pf = crate::perfetto_trace(&a);
    let has = |needle: &[u8]| pf.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"demo.Work"));
    assert!(has(b"submit demo.Work"), "the submission flow's instant");
    let html = crate::report_html(&a, "t.weft");
    assert!(html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"));
    assert!(html.contains("demo.Work"));
    let svg = crate::flamegraph_svg(&a, "t");
    assert!(svg.contains("demo.Work"));
}
