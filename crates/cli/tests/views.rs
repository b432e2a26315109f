//! End-to-end tests of the views (issue 5): a workload recorded by `weft record`,
//! then `weft report --html` opened in real headless Chromium, and `weft export`
//! (Perfetto protobuf decoded back by a small reader here, Chrome JSON nesting).
//!
//! Needs `java`/`javac` 17+, the agent next to weft, and `chromium` (installed by .ci/run).

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::*;
use serde_json::Value;

/// PoolTasks recorded once per test binary, with its JSON report.
fn pool_trace() -> &'static (PathBuf, Value) {
    static T: OnceLock<(PathBuf, Value)> = OnceLock::new();
    T.get_or_init(|| {
        let _serial = serial();
        let trace = scratch_file("views-pool.weft");
        let rec = run_recorded(&trace, &[], "PoolTasks", &["100", "300", "2"]);
        assert_no_panic(&rec, "weft record");
        assert!(rec.status.success(), "record failed\n{}", rec.describe());
        let report = report_json(&trace);
        (trace, report)
    })
}

fn chromium() -> &'static str {
    for c in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(c).exists() {
            return c;
        }
    }
    panic!("chromium is needed for the HTML test (apt-get install chromium; .ci/run does it)");
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let (trace, _) = pool_trace();
    let html = scratch_file("views-pool.html");
    let r = weft_cmd(&[
        "report",
        trace.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_no_panic(&r, "weft report --html");
    assert!(r.status.success(), "{}", r.describe());
    let page = std::fs::read_to_string(&html).unwrap();
    for bad in ["http://", "https://", "<link ", " src="] {
        assert!(
            !page.contains(bad),
            "the report must be self-contained: found {bad:?}"
        );
    }
    let (dom, tag) = render_in_chromium(&html);
    let attr = |name: &str| status_attr(&tag, name);
    assert!(!tag.contains("data-error"), "script error: {tag}");
    assert!(
        attr("data-timeline") > 100,
        "timeline drew too little: {tag}"
    );
    assert!(attr("data-histograms") > 5, "histograms empty: {tag}");
    assert!(attr("data-cpu") > 0, "CPU chart empty: {tag}");
    // Idle pool workers' parks: waits drawn on the timeline.
    assert!(attr("data-waits") > 0, "no waits drawn: {tag}");
    // The flame graph of the sampled stacks (the pool run is sampled by default).
    assert!(attr("data-flame") > 0, "flame graph empty: {tag}");
    // The what-if section draws the recorded run beside its replay (SVG, no script).
    assert!(
        dom.contains("<h3>Schedules</h3>") && dom.matches("<svg width=").count() >= 2,
        "what-if schedules missing"
    );
    for id in [
        "timeline",
        "granularity",
        "cpu",
        "findings",
        "locks",
        "profile",
        "whatif",
    ] {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "section {id} missing"
        );
    }
}

/// The page's DOM after its script ran in headless chromium, and its status
/// element's tag (`data-*` counts of what the script drew); fails on script errors.
fn render_in_chromium(html: &Path) -> (String, String) {
    // One profile per page: two browsers on one profile refuse to start (tests run in parallel).
    let stem = html
        .file_stem()
        .map_or("page".into(), |s| s.to_string_lossy());
    let profile = scratch_file(&format!("chromium-profile-{stem}"));
    let mut c = Command::new(chromium());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1400,1000",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg("--dump-dom")
    .arg(format!("file://{}", html.display()));
    let r = run(c);
    assert!(r.status.success(), "chromium failed\n{}", r.describe());
    for line in r.stderr.lines() {
        assert!(
            !(line.contains("CONSOLE") && (line.contains("ERROR") || line.contains("Uncaught"))),
            "console error in the report: {line}\n{}",
            r.describe()
        );
        assert!(!line.contains("Uncaught"), "script error: {line}");
    }
    let dom = r.stdout.clone();
    let at = dom
        .find("id=\"weft-status\"")
        .unwrap_or_else(|| panic!("no status element in the DOM\n{}", r.describe()));
    let tag = dom[at..at + dom[at..].find('>').unwrap()].to_string();
    (dom, tag)
}

/// A numeric `data-*` attribute of the status tag.
fn status_attr(tag: &str, name: &str) -> i64 {
    let k = format!("{name}=\"");
    let i = tag
        .find(&k)
        .unwrap_or_else(|| panic!("{name} missing in {tag}"))
        + k.len();
    tag[i..i + tag[i..].find('"').unwrap()].parse().unwrap()
}

/// Lock charts are drawn on the timeline's x axis (issue 16: they did not share
/// its width): same left edge and width, and bars drawn for a contended lock.
#[test]
fn html_lock_charts_share_the_timeline_axis() {
    let trace = scratch_file("views-locks.weft");
    let _ = std::fs::remove_file(&trace);
    let rec = run_recorded(
        &trace,
        &[],
        "locks.MonitorPingPong",
        &["threads=3", "phase2_ms=300", "cs_us=1000"],
    );
    assert_no_panic(&rec, "weft record");
    assert!(rec.status.success(), "record failed\n{}", rec.describe());
    let html = scratch_file("views-locks.html");
    let r = weft_cmd(&[
        "report",
        trace.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", r.describe());
    let (_, tag) = render_in_chromium(&html);
    assert!(!tag.contains("data-error"), "script error: {tag}");
    assert!(status_attr(&tag, "data-csp-charts") >= 1, "{tag}");
    assert!(status_attr(&tag, "data-csp") > 0, "no CSP bars: {tag}");
    assert_eq!(status_attr(&tag, "data-csp-aligned"), 1, "{tag}");
}

/// The fork-join section (parallelism over time, per-thread busy/stolen bars)
/// appears for a fork-join workload, and not for a plain pool one.
#[test]
fn html_forkjoin_section_only_with_forkjoin_data() {
    let (pool, _) = pool_trace();
    let page = |trace: &Path, name: &str| -> String {
        let html = scratch_file(name);
        let r = weft_cmd(&[
            "report",
            trace.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ]);
        assert_no_panic(&r, "weft report --html");
        assert!(r.status.success(), "{}", r.describe());
        std::fs::read_to_string(&html).unwrap()
    };
    assert!(!page(pool, "views-pool-fj.html").contains("id=\"forkjoin\""));
    let trace = scratch_file("views-fib.weft");
    {
        let _serial = serial();
        let rec = run_recorded(&trace, &[], "fj.Fibonacci", &["22", "10", "2"]);
        assert_no_panic(&rec, "weft record");
        assert!(rec.status.success(), "record failed\n{}", rec.describe());
    }
    let p = page(&trace, "views-fib.html");
    let at = p
        .find("id=\"forkjoin\"")
        .expect("fork-join section missing");
    let sec = &p[at..at + p[at..].find("</section>").unwrap()];
    assert!(sec.contains("<svg class=\"fjp\""), "no parallelism chart");
    assert!(sec.contains("<svg class=\"fjt\""), "no per-thread bars");
    assert!(sec.contains("ForkJoinPool-1-worker-"), "no worker rows");
    assert!(
        sec.contains("threads running tasks"),
        "parallelism chart empty"
    );

    // Perfetto: a flow from each fork to the run of the forked usage.
    let pf = scratch_file("views-fib.pftrace");
    let r = weft_cmd(&[
        "export",
        trace.to_str().unwrap(),
        "--perfetto",
        pf.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", r.describe());
    let (mut starts, mut ends) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    for (_, v) in fields(&std::fs::read(&pf).unwrap()) {
        let F::B(pkt) = v else { continue };
        let pkt = fields(&pkt);
        let Some(te) = get_b(&pkt, 11) else { continue };
        let te = fields(te);
        if get_b(&te, 22) != Some(b"fork") {
            continue;
        }
        for (n, v) in &te {
            match (n, v) {
                (47, F::I64(id)) => assert!(starts.insert(*id), "fork flow id reused"),
                (48, F::I64(id)) => assert!(ends.insert(*id), "fork flow id reused"),
                _ => {}
            }
        }
    }
    // Fibonacci(22) with cutoff 10 forks hundreds of tasks; each fork's flow ends at its run.
    assert!(starts.len() > 100, "fork flows: {}", starts.len());
    assert_eq!(starts, ends, "every fork flow ends at a run");
}

// ---- a minimal protobuf reader ----

#[derive(Debug, Clone)]
enum F {
    V(u64),
    B(Vec<u8>),
    I64(u64),
}

fn varint(b: &[u8], p: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut s = 0;
    loop {
        let x = b[*p];
        *p += 1;
        v |= ((x & 0x7f) as u64) << s;
        if x & 0x80 == 0 {
            return v;
        }
        s += 7;
        assert!(s < 64, "varint too long");
    }
}

fn fields(b: &[u8]) -> Vec<(u32, F)> {
    let mut out = Vec::new();
    let mut p = 0;
    while p < b.len() {
        let k = varint(b, &mut p);
        let (f, w) = ((k >> 3) as u32, k & 7);
        let v = match w {
            0 => F::V(varint(b, &mut p)),
            1 => {
                let v = u64::from_le_bytes(b[p..p + 8].try_into().unwrap());
                p += 8;
                F::I64(v)
            }
            2 => {
                let n = varint(b, &mut p) as usize;
                let v = b[p..p + n].to_vec();
                p += n;
                F::B(v)
            }
            5 => {
                p += 4;
                F::V(0)
            }
            _ => panic!("wire type {w} at {p}"),
        };
        out.push((f, v));
    }
    assert_eq!(p, b.len(), "message overruns its length");
    out
}

fn get(m: &[(u32, F)], f: u32) -> Option<&F> {
    m.iter().find(|(n, _)| *n == f).map(|(_, v)| v)
}
fn get_u(m: &[(u32, F)], f: u32) -> Option<u64> {
    match get(m, f) {
        Some(F::V(v)) => Some(*v),
        _ => None,
    }
}
fn get_b(m: &[(u32, F)], f: u32) -> Option<&[u8]> {
    match get(m, f) {
        Some(F::B(v)) => Some(v),
        _ => None,
    }
}

#[test]
fn perfetto_export_decodes_with_balanced_slices_and_flows() {
    let (trace, report) = pool_trace();
    let out = scratch_file("views-pool.pftrace");
    let r = weft_cmd(&[
        "export",
        trace.to_str().unwrap(),
        "--perfetto",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", r.describe());
    let bytes = std::fs::read(&out).unwrap();
    let mut thread_tracks: HashMap<u64, String> = HashMap::new();
    let mut depth: BTreeMap<u64, i64> = BTreeMap::new();
    let (mut slices, mut flows_out, mut flows_in, mut counters) = (0u64, 0u64, 0u64, 0u64);
    // Lock-wait and wait slices (categories "lock", "wait"), apart from executions.
    let mut wait_slices = 0u64;
    let mut flow_count = 0u64;
    // Stack samples: instants on thread tracks, each with its stack.
    let mut sample_instants = 0u64;
    let mut last_ts = 0u64;
    for (f, v) in fields(&bytes) {
        assert_eq!(f, 1, "Trace has only packets");
        let F::B(pkt) = v else {
            panic!("packet is not a message")
        };
        let pkt = fields(&pkt);
        assert_eq!(get_u(&pkt, 10), Some(1), "trusted_packet_sequence_id");
        if let Some(td) = get_b(&pkt, 60) {
            let td = fields(td);
            let uuid = get_u(&td, 1).expect("track uuid");
            if let Some(th) = get_b(&td, 4) {
                let th = fields(th);
                assert!(get_u(&th, 1).is_some() && get_u(&th, 2).is_some());
                let name = String::from_utf8(get_b(&th, 5).unwrap().to_vec()).unwrap();
                thread_tracks.insert(uuid, name);
            }
        }
        if let Some(te) = get_b(&pkt, 11) {
            let ts = get_u(&pkt, 8).expect("event timestamp");
            assert!(ts >= last_ts, "packets in time order");
            last_ts = ts;
            let te = fields(te);
            let track = get_u(&te, 11).expect("track_uuid");
            let ty = get_u(&te, 9).expect("type");
            let on_thread = thread_tracks.contains_key(&track);
            match ty {
                1 => {
                    *depth.entry(track).or_default() += 1;
                    if on_thread {
                        assert!(get_b(&te, 23).is_some(), "slice name");
                        match get_b(&te, 22) {
                            Some(b"lock") | Some(b"wait") => wait_slices += 1,
                            _ => slices += 1,
                        }
                    }
                }
                2 => {
                    let d = depth.entry(track).or_default();
                    *d -= 1;
                    assert!(*d >= 0, "SLICE_END without SLICE_BEGIN on track {track}");
                }
                3 => {
                    if matches!(get_b(&te, 22), Some(b"cpu sample") | Some(b"wall sample")) {
                        assert!(on_thread, "a sample off its thread's track");
                        assert!(get_b(&te, 23).is_some(), "sample name");
                        let has_stack = te.iter().any(|(n, v)| {
                            *n == 4
                                && matches!(v, F::B(da) if fields(da).iter().any(|(k, v)| {
                                    *k == 10 && matches!(v, F::B(s) if s.as_slice() == b"stack")
                                }))
                        });
                        assert!(has_stack, "sample without its stack annotation");
                        sample_instants += 1;
                    }
                }
                4 => counters += 1,
                t => panic!("event type {t}"),
            }
            for (n, v) in &te {
                match (n, v) {
                    (47, F::I64(id)) => flows_out ^= id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
                    (48, F::I64(id)) => flows_in ^= id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
                    _ => {}
                }
                if *n == 47 {
                    flow_count += 1;
                }
            }
        }
    }
    assert!(
        thread_tracks
            .values()
            .any(|n| n.starts_with("pool-1-thread-")),
        "pool thread tracks: {thread_tracks:?}"
    );
    assert!(depth.values().all(|&d| d == 0), "unbalanced: {depth:?}");
    let executions: u64 = report["tasks"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["executions"].as_u64().unwrap() + c["aggregated"].as_u64().unwrap())
        .sum();
    assert_eq!(slices, executions, "one slice per task execution");
    // Idle pool workers park (waits) between tasks.
    assert!(wait_slices > 0, "no wait slices");
    assert!(flow_count >= 100, "submission flows: {flow_count}");
    // The same set of flow ids starts (at submissions) and ends (at executions).
    assert_eq!(flows_out, flows_in, "every flow ends at an execution");
    assert!(counters > 0, "running-tasks counter");
    let p = &report["profile"];
    let samples = p["cpu_samples"].as_u64().unwrap() + p["wall_samples"].as_u64().unwrap();
    assert!(samples > 0, "the pool run has no stack samples");
    assert_eq!(sample_instants, samples, "one instant per stack sample");
}

#[test]
fn chrome_json_parses_and_slices_nest() {
    let (trace, report) = pool_trace();
    let out = scratch_file("views-pool.json");
    let collapsed = scratch_file("views-pool.txt");
    let svg = scratch_file("views-pool.svg");
    let r = weft_cmd(&[
        "export",
        trace.to_str().unwrap(),
        "--chrome",
        out.to_str().unwrap(),
        "--collapsed",
        collapsed.to_str().unwrap(),
        "--flamegraph",
        svg.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", r.describe());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap())
        .expect("Chrome trace is JSON");
    let evs = v["traceEvents"].as_array().expect("traceEvents");
    let mut per: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    // Executions and lock-wait / wait slices must all nest; only executions are counted.
    let mut n = 0usize;
    for e in evs.iter().filter(|e| e["ph"] == "X" && e["cat"] != "gc") {
        let ts = e["ts"].as_f64().unwrap();
        let dur = e["dur"].as_f64().unwrap();
        per.entry(e["tid"].as_u64().unwrap())
            .or_default()
            .push((ts, ts + dur));
        if e["cat"] != "lock" && e["cat"] != "wait" {
            n += 1;
        }
    }
    let executions: u64 = report["tasks"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["executions"].as_u64().unwrap() + c["aggregated"].as_u64().unwrap())
        .sum();
    assert_eq!(n as u64, executions);
    const EPS: f64 = 1e-6;
    for (tid, mut v) in per {
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut stack: Vec<f64> = Vec::new();
        for (b, e) in v {
            while stack.last().is_some_and(|&end| end <= b + EPS) {
                stack.pop();
            }
            if let Some(&end) = stack.last() {
                assert!(
                    e <= end + EPS,
                    "thread {tid}: slice [{b}, {e}] overlaps its parent ending at {end}"
                );
            }
            stack.push(e);
        }
    }
    assert!(evs.iter().any(|e| e["ph"] == "s") && evs.iter().any(|e| e["ph"] == "f"));
    let text = std::fs::read_to_string(&collapsed).unwrap();
    assert!(text.lines().count() > 5);
    for l in text.lines() {
        let (stack, val) = l.rsplit_once(' ').expect("frames value");
        assert!(
            // kind;class;site;state, and the lock's site under `blocked on …`
            val.parse::<u64>().is_ok() && (4..=5).contains(&stack.split(';').count()),
            "{l}"
        );
    }
    assert!(text.contains("weft.workloads.PoolTasks$Work"));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg.starts_with("<?xml") && svg.contains("PoolTasks") && svg.trim_end().ends_with("</svg>")
    );
}
