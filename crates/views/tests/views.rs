//! The views on a small synthetic trace: JSON schema fields and types, text lines.

use serde_json::Value;
use weft_trace::{Clock, Header, LossReason, ProbeKind, Record, Trace, GLOBAL_THREAD};

fn trace() -> Trace {
    let g = GLOBAL_THREAD;
    let mut h = Header::default();
    h.set("pid", "4242");
    h.set("jvm.version", "21.0.2");
    h.set("cpus", "4");
    let mut r: Vec<(u32, Record)> = vec![
        (
            g,
            Record::ClassDef {
                id: 1,
                name: "com.example.Outer$Work".into(),
            },
        ),
        (
            g,
            Record::ClassDef {
                id: 2,
                name: "java.util.concurrent.FutureTask".into(),
            },
        ),
        (
            g,
            Record::ClassDef {
                id: 3,
                name: "java.lang.Thread".into(),
            },
        ),
        (
            g,
            Record::ClassDef {
                id: 4,
                name: "com.example.Helper".into(),
            },
        ),
        (
            g,
            Record::ProbeDef {
                id: 1,
                kind: ProbeKind::Execution,
                class: "com.example.Outer$Work".into(),
                method: "run".into(),
                descriptor: "()V".into(),
            },
        ),
        (
            g,
            Record::ProbeDef {
                id: 2,
                kind: ProbeKind::PlumbingExecution,
                class: "java.util.concurrent.FutureTask".into(),
                method: "run".into(),
                descriptor: "()V".into(),
            },
        ),
        (
            g,
            Record::ProbeDef {
                id: 3,
                kind: ProbeKind::Submission,
                class: "java.util.concurrent.AbstractExecutorService".into(),
                method: "submit".into(),
                descriptor: "(Ljava/lang/Runnable;)Ljava/util/concurrent/Future;".into(),
            },
        ),
        (
            g,
            Record::ProbeDef {
                id: 4,
                kind: ProbeKind::Execution,
                class: "com.example.Helper".into(),
                method: "run".into(),
                descriptor: "()V".into(),
            },
        ),
        (
            g,
            Record::SiteDef {
                id: 1,
                frames: vec!["com.example.Outer.make:12".into()],
            },
        ),
        (
            g,
            Record::SiteDef {
                id: 2,
                frames: vec!["com.example.Outer.go:20".into()],
            },
        ),
        (g, Record::GcStart { ts: 500 }),
        (g, Record::GcEnd { ts: 700 }),
        (
            g,
            Record::Loss {
                thread: 1,
                from_ts: 10,
                to_ts: 20,
                records: 5,
                reason: LossReason::BufferOverflow,
            },
        ),
    ];
    for (i, ts) in [0u64, 1_000, 2_000].iter().enumerate() {
        r.push((
            g,
            Record::Sample {
                ts: *ts,
                process_cpu_ns: i as u64 * 2_000,
                voluntary_cs: i as u64 * 10,
                involuntary_cs: 0,
                live_threads: 2,
                machine_idle_ns: None,
            },
        ));
    }
    // main: create and submit two Work objects; run a Helper itself (aggregated, R3).
    for id in [1u32, 2] {
        r.push((
            0,
            Record::Created {
                ts: 10 * id as u64,
                class_id: 1,
                ident: id,
                site: 1,
            },
        ));
        r.push((
            0,
            Record::Submit {
                ts: 10 * id as u64 + 1,
                probe: 3,
                executor_class_id: 0,
                task_class_id: 1,
                task_ident: id,
                inner_class_id: 0,
                inner_ident: 0,
                site: 2,
            },
        ));
    }
    r.push((
        0,
        Record::TaskBegin {
            ts: 50,
            probe: 4,
            class_id: 4,
            ident: 9,
            inner_class_id: 0,
            inner_ident: 0,
        },
    ));
    r.push((
        0,
        Record::TaskEnd {
            ts: 60,
            probe: 4,
            ident: 9,
        },
    ));
    // pool thread
    r.push((
        1,
        Record::ThreadStart {
            ts: 5,
            name: "pool-1-thread-1".into(),
            java_id: 20,
            os_tid: 99,
            daemon: false,
            class_id: 3,
            target_class_id: 0,
            target_ident: 0,
            ident: 77,
        },
    ));
    for (id, b) in [(1u32, 100u64), (2, 300)] {
        r.push((
            1,
            Record::TaskBegin {
                ts: b,
                probe: 2,
                class_id: 2,
                ident: 100 + id,
                inner_class_id: 1,
                inner_ident: id,
            },
        ));
        r.push((
            1,
            Record::TaskBegin {
                ts: b + 5,
                probe: 1,
                class_id: 1,
                ident: id,
                inner_class_id: 0,
                inner_ident: 0,
            },
        ));
        r.push((
            1,
            Record::TaskEnd {
                ts: b + 105,
                probe: 1,
                ident: id,
            },
        ));
        r.push((
            1,
            Record::TaskEnd {
                ts: b + 110,
                probe: 2,
                ident: 100 + id,
            },
        ));
    }
    r.push((
        1,
        Record::ThreadEnd {
            ts: 1_900,
            cpu_ns: 800,
            voluntary_cs: 3,
            involuntary_cs: 1,
        },
    ));
    r.push((g, Record::End { ts: 2_000 }));
    Trace {
        header: h,
        records: r,
        truncated: false,
        unknown_records: 0,
        clock: Clock::new(0, 1.0),
    }
}

fn int(v: &Value) -> bool {
    v.is_u64() || v.is_i64()
}

#[test]
fn json_has_every_schema_field_with_its_type() {
    let a = weft_analysis::analyze(&trace());
    let j = weft_views::report_json(&a);
    assert_eq!(j["weft_report_version"], 1);
    assert_eq!(j["jvm"]["pid"], 4242);
    assert_eq!(j["jvm"]["java_version"], "21.0.2");
    assert_eq!(j["duration_ns"], 2_000);
    let threads = j["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    for t in threads {
        assert!(t["name"].is_string());
        assert!(int(&t["start_ns"]));
        assert!(int(&t["end_ns"]) || t["end_ns"].is_null());
        assert!(int(&t["cpu_ns"]) || t["cpu_ns"].is_null());
    }
    let pool = threads
        .iter()
        .find(|t| t["name"] == "pool-1-thread-1")
        .unwrap();
    assert_eq!(
        (
            pool["start_ns"].as_u64(),
            pool["end_ns"].as_u64(),
            pool["cpu_ns"].as_u64()
        ),
        (Some(5), Some(1_900), Some(800))
    );
    assert_eq!(j["gc"]["pauses"], 1);
    assert_eq!(j["gc"]["total_ns"], 200);
    assert_eq!(j["trace"]["truncated"], false);
    assert_eq!(j["trace"]["losses"].as_array().unwrap().len(), 1);
    assert_eq!(j["trace"]["losses"][0]["records"], 5);
    assert!(int(&j["trace"]["unknown_records"]));
    assert!(j["cpu"]["mean_utilisation"].is_f64());
    assert!((j["cpu"]["mean_utilisation"].as_f64().unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(j["cpu"]["samples"].as_array().unwrap().len(), 2);

    let classes = j["tasks"]["classes"].as_array().unwrap();
    for c in classes {
        assert!(c["class"].is_string());
        assert!(
            ["runnable", "callable", "forkjoin", "thread"].contains(&c["kind"].as_str().unwrap())
        );
        for k in ["executions", "aggregated", "submitted"] {
            assert!(int(&c[k]), "{k}");
        }
        for k in ["total", "min", "p50", "p90", "max"] {
            assert!(int(&c["granularity_ns"][k]), "{k}");
        }
        let q = &c["queue_wait_ns"];
        assert!(q.is_null() || (int(&q["p50"]) && int(&q["p90"])));
        for s in c["sites"].as_array().unwrap() {
            assert!(s["created"].is_string() || s["created"].is_null());
            assert!(s["submitted"].is_string() || s["submitted"].is_null());
        }
    }
    let work = classes
        .iter()
        .find(|c| c["class"] == "com.example.Outer$Work")
        .unwrap();
    assert_eq!(work["kind"], "runnable");
    assert_eq!(work["executions"], 2);
    assert_eq!(work["aggregated"], 0);
    assert_eq!(work["submitted"], 2);
    assert_eq!(work["granularity_ns"]["total"], 200);
    assert_eq!(work["granularity_ns"]["p50"], 100);
    assert_eq!(work["queue_wait_ns"]["p50"], 94);
    assert_eq!(work["queue_wait_ns"]["p90"], 284);
    assert_eq!(work["sites"][0]["created"], "com.example.Outer.make:12");
    assert_eq!(work["sites"][0]["submitted"], "com.example.Outer.go:20");
    // Aggregated-only classes still appear.
    let helper = classes
        .iter()
        .find(|c| c["class"] == "com.example.Helper")
        .unwrap();
    assert_eq!(
        (helper["executions"].as_u64(), helper["aggregated"].as_u64()),
        (Some(0), Some(1))
    );
    assert!(helper["queue_wait_ns"].is_null());
    let thread = classes.iter().find(|c| c["kind"] == "thread").unwrap();
    assert_eq!(thread["class"], "java.lang.Thread");
    assert_eq!(thread["granularity_ns"]["total"], 1_895 - 200);

    let findings = j["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
        assert!(f["kind"].is_string());
        assert!(f["class"].is_string() || f["class"].is_null());
        assert!(f["message"].is_string());
    }
    assert!(findings
        .iter()
        .any(|f| f["kind"] == "losses" && f["records"] == 5));
}

#[test]
fn text_has_header_warnings_and_class_lines() {
    let a = weft_analysis::analyze(&trace());
    let t = weft_views::report_text(&a);
    println!("{t}");
    assert!(
        t.starts_with("weft: pid 4242, Java 21.0.2, 2.00 µs recorded"),
        "{t}"
    );
    assert!(t.contains("WARNING: 5 records were lost"));
    let line = t
        .lines()
        .find(|l| l.trim_start().starts_with("com.example.Outer$Work"))
        .unwrap();
    assert!(line.contains("runnable"), "{line}");
    assert!(line.contains("200 ns"), "{line}");
    assert!(
        line.contains("submitted at com.example.Outer.go:20"),
        "{line}"
    );
    let helper = t
        .lines()
        .find(|l| l.trim_start().starts_with("com.example.Helper"))
        .unwrap();
    assert!(helper.split_whitespace().any(|w| w == "1"), "{helper}");
    assert!(t.contains("pool-1-thread-1"));
    assert!(t.contains("GC: 1 pause(s), 200 ns total"));
    assert!(t.contains("CPU: mean 50% of 4 CPUs"));
    // Work executions come before the aggregated-only Helper (sorted by total self time).
    let pos = |s: &str| t.find(s).unwrap();
    assert!(pos("java.lang.Thread ") < pos("com.example.Outer$Work"));
    assert!(pos("com.example.Outer$Work") < pos("com.example.Helper"));
}

#[test]
fn empty_and_odd_traces_render() {
    let tr = Trace {
        header: Header::default(),
        records: vec![(
            0,
            Record::TaskEnd {
                ts: 5,
                probe: 1,
                ident: 1,
            },
        )],
        truncated: true,
        unknown_records: 3,
        clock: Clock::new(0, 1.0),
    };
    let a = weft_analysis::analyze(&tr);
    let j = weft_views::report_json(&a);
    assert_eq!(j["trace"]["truncated"], true);
    assert_eq!(j["jvm"]["pid"], 0);
    let t = weft_views::report_text(&a);
    assert!(t.contains("WARNING: the trace is truncated"));
    assert!(t.contains("No task executions."));
}
