//! Several JVMs (issue 14 item 6): `weft record` of a launcher that starts 3
//! child JVMs through ProcessBuilder records all 4, and `weft report` of the 4
//! traces gives one report whose per-JVM and total task counts are the ones the
//! launcher printed (`WEFT-MULTI`). Bad sets: a truncated trace among several is a
//! note, traces of different weft versions a one-line error.

mod common;

use std::path::PathBuf;

use common::*;
use serde_json::Value;

const WORK: &str = "weft.workloads.MultiJvm$Work";

fn report(traces: &[PathBuf]) -> Value {
    let mut args = vec!["report".to_string(), "--json".to_string()];
    args.extend(traces.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = weft_cmd(&args);
    assert_no_panic(&r, "weft report");
    assert!(r.status.success(), "{}", r.describe());
    serde_json::from_str(r.stdout.trim()).expect("one JSON object")
}

/// A minimal complete trace whose header says it was recorded by weft `version`.
fn fake_trace(path: &std::path::Path, version: &str) {
    let mut h = weft_trace::Header::default();
    h.set(weft_trace::header_keys::AGENT_VERSION, version);
    h.set(weft_trace::header_keys::PID, "1");
    let mut bytes = weft_trace::encode_file_header(&h);
    let mut enc = weft_trace::BlockEncoder::new(weft_trace::GLOBAL_THREAD, 64);
    enc.push(&weft_trace::Record::End { ts: 1 });
    bytes.extend(enc.take_block());
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn every_jvm_is_recorded_and_reported_together() {
    let _serial = serial();
    let dir = scratch().join("multi");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("m.weft");
    let rec = run_recorded(&trace, &[], "MultiJvm", &["3", "5", "10", "200"]);
    assert_no_panic(&rec, "weft record");
    assert!(rec.status.success(), "{}", rec.describe());
    assert!(
        rec.stderr.contains("weft: 4 JVMs recorded"),
        "{}",
        rec.describe()
    );
    let truth = tagged_json(&rec.stdout, "WEFT-MULTI ");
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "weft"))
        .collect();
    traces.sort();
    assert_eq!(traces.len(), 4, "{traces:?}");

    let r = report(&traces);
    let jvms = r["jvms"].as_array().expect("jvms");
    assert_eq!(jvms.len(), 4);
    let mut expected: Vec<(u64, u64)> = vec![(
        truth["parent"]["pid"].as_u64().unwrap(),
        truth["parent"]["tasks"].as_u64().unwrap(),
    )];
    for c in truth["children"].as_array().unwrap() {
        expected.push((c["pid"].as_u64().unwrap(), c["tasks"].as_u64().unwrap()));
    }
    // Every JVM is there, with its command line, trace and own report.
    for (pid, tasks) in &expected {
        let j = jvms
            .iter()
            .find(|j| j["pid"].as_u64() == Some(*pid))
            .unwrap_or_else(|| panic!("no JVM with pid {pid} in {jvms:?}"));
        assert!(
            j["command_line"]
                .as_str()
                .is_some_and(|c| c.contains("MultiJvm")),
            "{j}"
        );
        assert!(j["trace"].as_str().is_some_and(|t| t.ends_with(".weft")));
        let own = j["report"]["tasks"]["classes"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["class"] == WORK))
            .and_then(|c| c["executions"].as_u64());
        assert_eq!(own, Some(*tasks), "pid {pid}");
    }
    // The launcher started first: it is the first on the wall-clock time line.
    assert_eq!(jvms[0]["pid"].as_u64(), Some(expected[0].0));
    assert_eq!(jvms[0]["start_ns"].as_u64(), Some(0));
    assert!(jvms[1..]
        .iter()
        .all(|j| j["start_ns"].as_u64().is_some_and(|s| s > 0)));

    // Totals across JVMs: the class entry sums them and names each JVM.
    let work = r["tasks"]["classes"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["class"] == WORK))
        .expect("Work in the totals");
    let total: u64 = expected.iter().map(|e| e.1).sum();
    assert_eq!(work["executions"].as_u64(), Some(total));
    for (pid, tasks) in &expected {
        let per = work["per_jvm"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pid"].as_u64() == Some(*pid))
            .unwrap_or_else(|| panic!("pid {pid} not in {work}"));
        assert_eq!(per["executions"].as_u64(), Some(*tasks));
    }
    assert_eq!(r["totals"]["jvms"], 4);
    assert!(r["totals"]["executions"].as_u64().unwrap() >= total);

    // One trace: its usual report with a list of one JVM.
    let one = report(&traces[..1]);
    assert_eq!(one["jvms"].as_array().map(Vec::len), Some(1));
    assert!(one["tasks"]["classes"][0]["jvms"].is_array(), "{one}");

    // The text report has the JVM table and a section per JVM.
    let mut args = vec!["report".to_string()];
    args.extend(traces.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let text = weft_cmd(&args);
    assert!(text.status.success(), "{}", text.describe());
    assert!(text.stdout.starts_with("weft: 4 JVMs"), "{}", text.stdout);
    assert_eq!(text.stdout.matches("\n=== JVM pid ").count(), 4);

    // The HTML report of the 4: the JVM table, and one timeline whose lanes are
    // each JVM's threads as a group, named by their JVM.
    let html = dir.join("all.html");
    let mut args = vec![
        "report".to_string(),
        "--html".into(),
        html.display().to_string(),
    ];
    args.extend(traces.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = weft_cmd(&args);
    assert_no_panic(&r, "weft report --html");
    assert!(r.status.success(), "{}", r.describe());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("concurrency report · 4 JVMs"));
    let open = "<script type=\"application/json\" id=\"weft-data\">";
    let from = page.find(open).expect("timeline data") + open.len();
    let to = from + page[from..].find("</script>").expect("end of the data");
    let data: Value = serde_json::from_str(&page[from..to].replace("<\\/", "</")).unwrap();
    let lanes = data["lanes"].as_array().expect("lanes");
    let mut groups: Vec<u64> = lanes.iter().filter_map(|l| l["g"].as_u64()).collect();
    groups.dedup();
    assert_eq!(
        groups,
        vec![0, 1, 2, 3],
        "lanes grouped by JVM, in JVM order"
    );
    for (pid, _) in &expected {
        let label = format!("pid {pid} · ");
        assert!(
            lanes
                .iter()
                .any(|l| l["name"].as_str().is_some_and(|n| n.starts_with(&label))),
            "no lane of {label}"
        );
        assert!(
            page.contains(&format!("<h2>pid {pid}</h2>")),
            "no section of pid {pid}"
        );
    }
    // The launcher's lanes start at 0, the children's later (their own start).
    let children_start = lanes
        .iter()
        .filter(|l| l["g"].as_u64() != Some(0))
        .filter_map(|l| l["s"].as_u64())
        .min()
        .unwrap();
    assert!(children_start > 0);

    // A truncated trace among several: a note, the others are reported.
    let cut = dir.join("cut.weft");
    let bytes = std::fs::read(&traces[1]).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let r = report(&[traces[0].clone(), cut.clone()]);
    assert!(
        r["notes"].to_string().contains("truncated"),
        "{}",
        r["notes"]
    );
    assert_eq!(r["jvms"].as_array().map(Vec::len), Some(2));

    // Traces of different weft versions: one line, exit code 2.
    let other = dir.join("other.weft");
    fake_trace(&other, "0.0.1-other");
    let r = weft_cmd(&[
        "report",
        traces[0].to_str().unwrap(),
        other.to_str().unwrap(),
    ]);
    assert_no_panic(&r, "weft report");
    assert_eq!(r.status.code(), Some(2), "{}", r.describe());
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.describe());
    assert!(r.stderr.contains("different weft versions"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}
