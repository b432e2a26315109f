//! Advice a user can trust (issue 16): the findings come from every analysis and
//! are ranked by cost, idle loops are not called coarse-grained, thousands of lock
//! instances at one site are one row, and the exports add up to the report.
//! Workloads: `java/workloads/src/weft/workloads/advice` and the lock workloads.
//! No timing assertions: every check is on what the program did, not how fast.

mod common;

use std::collections::BTreeMap;

use common::*;
use serde_json::Value;

/// Records `weft.workloads.<class> args`; returns (trace path, JSON report, text report).
fn record(class: &str, args: &[&str]) -> (std::path::PathBuf, Value, String) {
    let trace = scratch_file(&format!("{}.weft", class.replace('.', "_")));
    let _ = std::fs::remove_file(&trace);
    let rec = run_recorded(&trace, &[], class, args);
    assert_no_panic(&rec, "weft record");
    assert!(
        rec.status.success(),
        "weft record of {class} failed\n{}",
        rec.describe()
    );
    let json = report_json(&trace);
    let text = weft_cmd(&["report", &trace.display().to_string()]);
    assert!(text.status.success(), "{}", text.describe());
    (trace, json, text.stdout)
}

/// The report's first finding of `kind` (and of `class`, when given); a failure lists
/// the findings.
fn finding<'a>(report: &'a Value, kind: &str, class: Option<&str>) -> &'a Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind && class.is_none_or(|c| f["class"] == c))
        .unwrap_or_else(|| {
            panic!(
                "no {kind} finding{}: {:#?}",
                class.map_or(String::new(), |c| format!(" on {c}")),
                report["findings"]
            )
        })
}

/// Whether the report has a finding of `kind`.
fn has_finding(report: &Value, kind: &str) -> bool {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["kind"] == kind)
}

fn class<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tasks"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == name)
        .unwrap_or_else(|| panic!("no class {name} in {}", report["tasks"]["classes"]))
}

/// The collapsed-stack export and the flame graph count every nanosecond of
/// self time once: per (kind, class) the export's lines add up to the class's
/// total self time in the report, and the flame graph's root to their sum.
fn check_exports_add_up(trace: &std::path::Path, report: &Value) {
    let out = scratch_file("stacks.txt");
    let svg = scratch_file("stacks.svg");
    let r = weft_cmd(&[
        "export",
        &trace.display().to_string(),
        "--collapsed",
        &out.display().to_string(),
        "--flamegraph",
        &svg.display().to_string(),
    ]);
    assert!(r.status.success(), "{}", r.describe());
    let text = std::fs::read_to_string(&out).unwrap();
    let mut by: BTreeMap<(String, String), u64> = BTreeMap::new();
    for line in text.lines() {
        let (stack, v) = line.rsplit_once(' ').expect("`stack value`");
        let frames: Vec<&str> = stack.split(';').collect();
        assert!(frames.len() >= 4, "kind;class;site;state…: {line}");
        *by.entry((frames[0].into(), frames[1].into())).or_default() += v.parse::<u64>().unwrap();
    }
    let mut total = 0u64;
    for c in report["tasks"]["classes"].as_array().unwrap() {
        let key = (
            c["kind"].as_str().unwrap().to_string(),
            c["class"].as_str().unwrap().to_string(),
        );
        let want = c["granularity_ns"]["total"].as_u64().unwrap_or(0);
        total += want;
        let got = by.remove(&key).unwrap_or(0);
        assert_eq!(got, want, "export of {key:?}: {got} ns, report {want} ns");
    }
    assert!(by.is_empty(), "export classes not in the report: {by:?}");
    let lifetimes: u64 = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let end = t["end_ns"]
                .as_u64()
                .unwrap_or(report["duration_ns"].as_u64().unwrap());
            end.saturating_sub(t["start_ns"].as_u64().unwrap())
        })
        .sum();
    assert!(
        total <= lifetimes,
        "export total {total} ns > thread lifetimes {lifetimes} ns"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    if total > 0 {
        assert!(svg.contains("<title>all — "), "flame graph root missing");
    }
}

#[test]
fn a_blocking_loop_is_not_called_coarse_grained() {
    let _serial = serial();
    let (trace, r, text) = record("advice.BlockingLoop", &["1200", "12"]);
    let acceptor = class(&r, "weft.workloads.advice.BlockingLoop$Acceptor");
    let crunch = class(&r, "weft.workloads.advice.BlockingLoop$Crunch");
    let (a, c) = (&acceptor["time_split"], &crunch["time_split"]);
    // Same wall length, opposite activity.
    assert_eq!(a["activity"], "off_cpu", "acceptor: {a}");
    assert!(
        a["what"].as_str().unwrap_or("").contains("blocking loop"),
        "{a}"
    );
    assert_eq!(c["activity"], "running", "crunch: {c}");
    for f in r["findings"].as_array().unwrap() {
        assert!(
            !(f["kind"] == "coarse_grained" && f["class"] == acceptor["class"]),
            "the acceptor was called coarse-grained: {f}"
        );
    }
    // The text report says what the acceptor is, and ranks the busy task above it.
    let line = |name: &str| text.lines().position(|l| l.contains(name)).unwrap();
    assert!(
        line("BlockingLoop$Crunch") < line("BlockingLoop$Acceptor"),
        "{text}"
    );
    assert!(text.contains("blocking loop"), "{text}");
    check_exports_add_up(&trace, &r);
}

#[test]
fn a_lock_bound_program_gets_the_lock_as_top_finding() {
    let _serial = serial();
    let (trace, r, text) = record(
        "locks.MonitorPingPong",
        &["threads=4", "phase2_ms=1000", "cs_us=1000"],
    );
    let findings: Vec<&Value> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            !["losses", "truncated", "unknown_records", "unbalanced"]
                .contains(&f["kind"].as_str().unwrap())
        })
        .collect();
    let top = findings.first().expect("a finding");
    assert_eq!(top["kind"], "lock_contention", "{}", r["findings"]);
    assert_eq!(top["class"], "weft.workloads.locks.MonitorPingPong$Shared");
    assert!(top["cost_ns"].as_u64().unwrap() > 0);
    // The same site in the finding, the lock table (JSON groups) and the text.
    let group = &r["locks"]["groups"][0];
    assert_eq!(group["class"], top["class"]);
    assert_eq!(top["site"], group["site"], "finding vs table site");
    let site = top["site"].as_str().expect("a sampled site");
    assert!(site.starts_with("weft.workloads.locks."), "{site}");
    // The whole stack through the site, on demand.
    let stack = top["stack"].as_array().expect("findings[].stack");
    assert!(stack.iter().any(|f| f == site), "{site} not in {stack:?}");
    let msg = top["message"].as_str().unwrap();
    assert!(
        msg.contains(site) && msg.contains("Shorten the critical section"),
        "{msg}"
    );
    let first = text
        .lines()
        .skip_while(|l| !l.starts_with("Findings"))
        .nth(1)
        .unwrap();
    assert!(first.contains("[lock contention"), "{text}");
    // Ranked by cost.
    let costs: Vec<u64> = findings
        .iter()
        .map(|f| f["cost_ns"].as_u64().unwrap())
        .collect();
    assert!(costs.windows(2).all(|w| w[0] >= w[1]), "{costs:?}");
    check_exports_add_up(&trace, &r);
}

#[test]
fn thousands_of_lock_instances_at_one_site_are_one_row() {
    let _serial = serial();
    let (trace, r, text) = record("advice.ManyLocks", &["2000"]);
    let entry = "weft.workloads.advice.ManyLocks$Entry";
    let instances = r["locks"]["locks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["class"] == entry)
        .count();
    // Each entry is contended once; a few may have resolved by spinning.
    assert!(instances >= 1900, "{instances} instances of {entry}");
    let groups: Vec<&Value> = r["locks"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["class"] == entry)
        .collect();
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(groups[0]["instances"].as_array().unwrap().len(), instances);
    assert!(groups[0]["site"]
        .as_str()
        .unwrap()
        .starts_with("weft.workloads.advice.ManyLocks.update:"));
    // The text report: one row for the group, no per-instance rows.
    let rows = text
        .lines()
        .skip_while(|l| !l.starts_with("Locks"))
        .skip(1)
        .take_while(|l| !l.is_empty()) // the lock section ends at a blank line
        .filter(|l| l.contains("ManyLocks$Entry"))
        .count();
    assert_eq!(rows, 1, "{text}");
    assert!(
        text.contains(&format!("ManyLocks$Entry ({instances} instances)")),
        "{text}"
    );
    check_exports_add_up(&trace, &r);
}

#[test]
fn exports_add_up_on_a_pool_workload() {
    let _serial = serial();
    let (trace, r, _) = record("PoolTasks", &["100", "300", "2"]);
    check_exports_add_up(&trace, &r);
}

/// Waits are broken down by what they wait on (issue 16: Derby's row-lock waits on
/// `ActiveLock` were one line "Object.wait 27742 x 99.3 s"): KnownWaits's workers
/// wait in `Object.wait` on a `Row` and park on a `Gate`, 3 × 20 times each, each
/// wait certain to happen (the main thread releases a worker only once it waits).
#[test]
fn waits_are_grouped_by_object_class_and_site() {
    let _serial = serial();
    let (_trace, r, text) = record("advice.KnownWaits", &["3", "20"]);
    let groups = r["locks"]["wait_groups"]
        .as_array()
        .expect("locks.wait_groups");
    let of = |kind: &str, class: &str| -> Vec<&Value> {
        groups
            .iter()
            .filter(|g| g["kind"] == kind && g["class"] == class)
            .collect()
    };
    let p = "weft.workloads.advice.KnownWaits";
    for (kind, class, site) in [
        (
            "Object.wait",
            format!("{p}$Row"),
            format!("{p}$Row.lockRow:"),
        ),
        ("park", format!("{p}$Gate"), format!("{p}$Gate.pass:")),
    ] {
        let g = of(kind, &class);
        assert_eq!(g.len(), 1, "one group for {kind} on {class}: {groups:#?}");
        let g = g[0];
        // Spurious wake-ups may add waits, never remove them.
        assert!(g["count"].as_u64().unwrap() >= 60, "{g}");
        assert_eq!(g["threads"].as_array().unwrap().len(), 3, "{g}");
        let s = g["site"].as_str().unwrap_or_else(|| panic!("no site: {g}"));
        assert!(s.starts_with(&site), "{s} vs {site}");
        let stack = g["stack"].as_array().unwrap();
        assert!(
            stack.iter().any(|f| f.as_str().unwrap().starts_with(&site)),
            "{g}"
        );
        // A finding about it, at the same site as the table.
        let f = finding(&r, "wait_contention", Some(&class));
        assert_eq!(f["site"], g["site"]);
        assert_eq!(f["stack"], g["stack"]);
        assert!(f["cost_ns"].as_u64().unwrap() >= g["count"].as_u64().unwrap() * 2_000_000);
        // The text names the group the same way.
        let line = format!("{kind} on {class} at {s}");
        assert!(text.contains(&line), "{line} not in\n{text}");
    }
    // A Condition.await names the lock the condition belongs to, not the
    // ConditionObject (a JDK class: in the table, no finding of its own).
    let g = of(
        "Condition.await",
        "java.util.concurrent.locks.ReentrantLock",
    );
    assert_eq!(g.len(), 1, "one Condition.await group: {groups:#?}");
    assert!(g[0]["count"].as_u64().unwrap() >= 60, "{}", g[0]);
    let s = g[0]["site"].as_str().unwrap_or_default();
    assert!(s.starts_with(&format!("{p}$Mailbox.take:")), "{}", g[0]);
    assert!(
        !groups.iter().any(|g| g["class"]
            .as_str()
            .unwrap_or_default()
            .ends_with("$ConditionObject")),
        "{groups:#?}"
    );
    // Joins wait on a Thread: a JDK class, not an application object.
    for f in r["findings"].as_array().unwrap() {
        if f["kind"] == "wait_contention" {
            assert!(f["class"].as_str().unwrap().starts_with(p), "{f}");
        }
    }
}

/// A library the analysis knows nothing about (`org.example.minipool`, outside the
/// main class's package root `weft`): its locks get a library's advice, not "split
/// your lock". The one reached from the application within the recorded frames
/// names the application's call; the one seven library frames deep says that no
/// recorded frame is the application's. Contention is certain: 4 threads take the
/// same lock for 1.5 ms of busy work 60 times each, with no work in between.
#[test]
fn a_librarys_locks_get_a_librarys_advice() {
    let _serial = serial();
    let (_trace, r, text) = record("advice.LibraryCalls", &["4", "60", "1500"]);
    let findings = r["findings"].as_array().unwrap();
    let lock_at = |site: &str| {
        findings
            .iter()
            .find(|f| {
                f["kind"] == "lock_contention"
                    && f["site"].as_str().unwrap_or_default().starts_with(site)
            })
            .unwrap_or_else(|| panic!("no lock finding at {site}: {text}"))
    };
    let borrow = lock_at("org.example.minipool.MiniPool.borrow:");
    let m = borrow["message"].as_str().unwrap();
    assert!(
        m.contains("inside the library `org.example.minipool`, which the application calls at weft.workloads.advice.LibraryCalls.handle:"),
        "{m}"
    );
    assert!(!m.contains("split the lock"), "{m}");
    let count = lock_at("org.example.minipool.MiniPool.count:");
    let m = count["message"].as_str().unwrap();
    assert!(
        m.contains(
            "none of the 6 innermost frames recorded for its acquisition is the application's"
        ),
        "{m}"
    );
    assert!(!m.contains("split the lock"), "{m}");
}

/// Two threads taking turns through `Object.wait`/`notify` (WaitPingPong): no
/// "too coarse-grained" on either side of a hand-off (the SynchronousQueue
/// consumer waits for its producer; splitting it changes nothing).
#[test]
fn no_coarse_advice_on_a_hand_off() {
    let _serial = serial();
    let (_trace, r, text) = record("advice.WaitPingPong", &["50000"]);
    for f in r["findings"].as_array().unwrap() {
        assert_ne!(f["kind"], "coarse_grained", "{text}");
    }
}

/// Waits in the JDK's synchronizers and monitors from the application's own code
/// (`advice.Barriers`): parties waiting at a `CyclicBarrier` for the slow one are a
/// barrier imbalance, and threads taking turns through `Object.wait` on a plain
/// `new Object()` are the application's hand-offs, though `Object` is the JDK's.
#[test]
fn waits_at_a_barrier_and_on_a_plain_object_are_findings() {
    let _serial = serial();
    let (_trace, r, text) = record("advice.Barriers", &["40", "3000"]);
    let findings = r["findings"].as_array().unwrap();
    let p = "weft.workloads.advice.Barriers";
    let barrier = finding(&r, "barrier_imbalance", None);
    assert_eq!(barrier["barrier"], "CyclicBarrier.await", "{barrier}");
    let site = barrier["site"].as_str().unwrap_or_default();
    assert!(
        site.starts_with(&format!("{p}.lambda$main$0:")),
        "{barrier}"
    );
    // The slow party (4 ms a round against 1 ms) is the one the others wait for.
    let waited = &r["locks"]["wait_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["site"] == barrier["site"])
        .unwrap_or_else(|| panic!("no wait group at {site}"))["threads"];
    assert_ne!(waited[0]["thread"], "slow", "{waited}");
    assert!(text.contains("[barrier imbalance,"), "{text}");
    let handoff = finding(&r, "wait_contention", Some("java.lang.Object"));
    let site = handoff["site"].as_str().unwrap_or_default();
    assert!(
        site.starts_with(&format!("{p}.lambda$main$1:")),
        "{handoff}"
    );
    // The pacers' `wait(5)`s ran out (JVMTI's MonitorWaited `timed_out`): no finding.
    let pacers = r["locks"]["wait_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| {
            g["site"]
                .as_str()
                .is_some_and(|s| s.starts_with(&format!("{p}.lambda$main$2:")))
        })
        .unwrap_or_else(|| panic!("no wait group of the pacers: {}", r["locks"]["wait_groups"]));
    assert_eq!(pacers["count"], 80, "{pacers}");
    assert!(pacers["timed_out"].as_u64().unwrap_or(0) >= 75, "{pacers}");
    assert!(
        !findings.iter().any(|f| f["site"]
            .as_str()
            .is_some_and(|s| s.contains("lambda$main$2"))),
        "{findings:#?}"
    );
}

/// A pool whose two threads run tasks that wait for tasks queued behind them on
/// the same pool (`advice.PoolDeadlock`; a watchdog ends the JVM, status 3): a
/// pool deadlock finding naming the pool, its threads and the wait, and the exit
/// status kept.
#[test]
fn a_thread_starvation_deadlock_is_found() {
    let _serial = serial();
    let trace = scratch_file("advice_PoolDeadlock.weft");
    let _ = std::fs::remove_file(&trace);
    let rec = run_recorded(&trace, &[], "advice.PoolDeadlock", &["6", "800"]);
    assert_no_panic(&rec, "weft record");
    assert_eq!(rec.status.code(), Some(3), "{}", rec.describe());
    let r = report_json(&trace);
    let findings = r["findings"].as_array().unwrap();
    let d = finding(&r, "pool_starvation", None);
    assert_eq!(d["threads"], 2, "{d}");
    assert!(
        d["pool"].as_str().unwrap_or_default().starts_with("pool-"),
        "{d}"
    );
    // The 4 outer tasks queued and the 2 inner ones the running tasks wait for.
    assert_eq!(d["never_started"], 6, "{d}");
    let site = d["site"].as_str().unwrap_or_default();
    assert!(
        site.starts_with("weft.workloads.advice.PoolDeadlock.lambda$main$"),
        "{d}"
    );
    // The blocked tasks ran until the JVM ended: no "unbalanced" records.
    assert_eq!(findings[0]["kind"], "pool_starvation", "{findings:#?}");
}

/// A pool behind a short queue with `CallerRunsPolicy` (`advice.CallerRuns`): the
/// tasks `main` ran itself, while the pool's threads waited for work, are a
/// `caller_runs` finding at the submission; with a queue that holds them all, none.
#[test]
fn tasks_a_saturated_pool_hands_back_to_the_submitter_are_a_finding() {
    let _serial = serial();
    let (_trace, r, text) = record("advice.CallerRuns", &["600", "4"]);
    let f = finding(&r, "caller_runs", None);
    assert_eq!(f["class"], "weft.workloads.advice.CallerRuns$Fetch", "{f}");
    assert_eq!(f["tasks"], 600, "{f}");
    let in_caller = f["in_caller"].as_u64().unwrap_or(0);
    assert!((60..600).contains(&in_caller), "{f}");
    let site = f["site"].as_str().unwrap_or_default();
    assert!(
        site.starts_with("weft.workloads.advice.CallerRuns.main:"),
        "{f}"
    );
    assert!(text.contains("[tasks run by their submitter,"), "{text}");
    let (_trace, r, _) = record("advice.CallerRuns", &["600", "1000"]);
    assert!(!has_finding(&r, "caller_runs"), "{:#?}", r["findings"]);
}

/// Tasks that sleep 10 ms per 0.2 ms of CPU on a pool of 2 threads (`WhatIfBench pool`
/// with `sleep_us`): queued for a thread while the CPUs idle, a `pool_too_small`
/// finding naming the pool and a size; the same tasks without the sleep (CPU-bound),
/// none on 2 threads (the machine's CPUs), and on 1 thread a `pool_too_small` for the
/// CPUs it leaves idle (a `ThreadPoolExecutor` that never grows past its core size).
#[test]
fn blocking_tasks_on_a_small_pool_are_a_finding() {
    let _serial = serial();
    let (_trace, r, text) = record(
        "whatif.WhatIfBench",
        &[
            "pool",
            "tasks=100",
            "work=200000",
            "sleep_us=10000",
            "pool=2",
        ],
    );
    let f = finding(&r, "pool_too_small", None);
    assert_eq!(f["class"], "weft.workloads.whatif.WhatIfBench$Chunk", "{f}");
    assert_eq!(f["pool"], "pool-1", "{f}");
    assert_eq!(f["threads"], 2, "{f}");
    let n = f["suggested_threads"].as_u64().unwrap_or(0);
    assert!((8..=100).contains(&n), "{f}");
    assert_eq!(f["reason"], "blocking", "{f}");
    assert!(text.contains("[pool too small,"), "{text}");
    assert!(
        f["message"]
            .as_str()
            .unwrap_or("")
            .contains("too small for blocking work"),
        "{f}"
    );
    let (_trace, r, _) = record(
        "whatif.WhatIfBench",
        &["pool", "tasks=100", "work=2000000", "pool=2"],
    );
    assert!(!has_finding(&r, "pool_too_small"), "{:#?}", r["findings"]);
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return; // one CPU: a pool of 1 thread is as wide as the machine
    }
    let (_trace, r, text) = record(
        "whatif.WhatIfBench",
        &["pool", "tasks=100", "work=2000000", "pool=1"],
    );
    let f = finding(&r, "pool_too_small", None);
    assert_eq!(f["reason"], "cpus", "{f}");
    assert_eq!(f["threads"], 1, "{f}");
    assert_eq!(f["suggested_threads"], 2, "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap_or("")
            .contains("smaller than the machine"),
        "{f}"
    );
    assert!(text.contains("[pool too small,"), "{text}");
}

/// A cheap producer and one slow consumer behind a bounded queue (`advice.SlowConsumer`):
/// `main` waits in `put` for room all along, woken by the consumer, busy all along: a
/// `consumer_bottleneck` naming it (not a producer bottleneck).
#[test]
fn a_producer_waiting_for_room_names_the_busy_consumer() {
    let _serial = serial();
    let (_trace, r, text) = record("advice.SlowConsumer", &[]);
    let f = finding(&r, "consumer_bottleneck", None);
    assert_eq!(f["consumer"], "consumer-0", "{f}");
    assert_eq!(f["producers"], 1, "{f}");
    assert!(
        f["site"]
            .as_str()
            .unwrap_or("")
            .starts_with("weft.workloads.advice.SlowConsumer.main:"),
        "{f}"
    );
    assert!(
        !has_finding(&r, "producer_bottleneck"),
        "{:#?}",
        r["findings"]
    );
    assert!(text.contains("[consumer bottleneck,"), "{text}");
    // The consumer working while the producer waits is no serial phase of its own.
    assert!(!has_finding(&r, "serial_phase"), "{:#?}", r["findings"]);
    // Hand-offs with no buffer (a `LinkedTransferQueue.transfer`, a `SynchronousQueue`'s
    // `put`): the producer and the consumer wait in the same inner methods; only the
    // call tells the producer waiting for a consumer ("producer bottleneck" with the
    // roles swapped before).
    for capacity in ["0", "-1"] {
        let (_trace, r, _) = record("advice.SlowConsumer", &["3000", "1", capacity]);
        let f = finding(&r, "consumer_bottleneck", None);
        assert_eq!(f["consumer"], "consumer-0", "{capacity}: {f}");
        assert!(
            f["message"].as_str().unwrap_or("").contains("a hand-off"),
            "{capacity}: {f}"
        );
        assert!(
            !has_finding(&r, "producer_bottleneck"),
            "{capacity}: {:#?}",
            r["findings"]
        );
    }
}

/// CPU-bound tasks on a pool of 64 threads for 2 CPUs (`advice.CrowdedPool`): the lock
/// its workers block on is the pool's task-queue lock, held by preempted workers; the
/// finding says so and how to size the pool, and its cost is the CPUs' idle time, not
/// the blocked threads' time.
#[test]
fn a_crowded_pool_s_queue_lock_is_said_as_such() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 8 {
        return; // 64 threads are not crowded on a large machine
    }
    let _serial = serial();
    // Whether the workers get preempted holding the queue's lock is the scheduler's
    // choice: most runs block for 5-20 s on it, about one in six (more on a loaded
    // machine) for ~0.2 s, no finding. The wording is what is tested: up to 3 runs.
    // The pool's other lock (`mainLock`, contended when 64 workers exit at shutdown) can
    // be a finding of its own: the queue's lock is the one whose site is the queue's.
    let is_queue_lock = |f: &Value| {
        f["kind"] == "lock_contention"
            && f["class"] == "java.util.concurrent.locks.ReentrantLock"
            && f["site"]
                .as_str()
                .is_some_and(|s| s.starts_with("java.util.concurrent.LinkedBlockingQueue."))
    };
    let f = (0..3)
        .find_map(|_| {
            let r = record("advice.CrowdedPool", &[]).1;
            r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| is_queue_lock(f))
                .cloned()
        })
        .expect("3 runs of advice.CrowdedPool without contention on the queue's lock");
    let m = f["message"].as_str().unwrap_or("");
    assert!(m.contains("task queue's lock of `pool-1`"), "{f}");
    assert!(m.contains("64 threads"), "{f}");
    assert!(
        f["cost_ns"].as_u64().unwrap_or(u64::MAX) < f["blocked_ns"].as_u64().unwrap_or(0),
        "{f}"
    );
}

/// A parallel stream whose elements sleep (`advice.BlockingStream`): fork-join tasks that
/// block while the CPUs idle, a `pool_too_small` finding (`reason: forkjoin`) on the
/// common pool.
#[test]
fn blocking_in_a_parallel_stream_is_a_finding() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.BlockingStream", &["60", "20"]);
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "pool_too_small" && f["reason"] == "forkjoin")
        .unwrap_or_else(|| panic!("{:#?}", r["findings"]));
    assert!(
        f["pool"].as_str().unwrap_or("").starts_with("ForkJoinPool"),
        "{f}"
    );
    assert!(f["off_cpu_share"].as_f64().unwrap_or(0.0) > 0.5, "{f}");
}

/// Pool tasks and threads each waited for before the next was started
/// (`advice.AwaitEach`: `submit(task).get()`, `t.start(); t.join()` in a loop): an
/// `awaited_at_once` finding on their class (not a serial phase); started all first
/// (`all=true`), none.
#[test]
fn tasks_each_awaited_at_once_are_a_finding() {
    let _serial = serial();
    for mode in ["tasks", "threads"] {
        let (_trace, r, _) = record("advice.AwaitEach", &[mode, "false", "16", "4000000"]);
        let f = finding(&r, "awaited_at_once", None);
        assert!(
            f["class"]
                .as_str()
                .unwrap_or("")
                .starts_with("weft.workloads.advice.AwaitEach$$Lambda"),
            "{f}"
        );
        assert!(f["awaited_at_once"].as_u64().unwrap_or(0) >= 12, "{f}");
        assert!(!has_finding(&r, "serial_phase"), "{:#?}", r["findings"]);
        let (_trace, r, _) = record("advice.AwaitEach", &[mode, "true", "16", "4000000"]);
        assert!(!has_finding(&r, "awaited_at_once"), "{:#?}", r["findings"]);
    }
}

/// A fork joined at once (`advice.ForkThenJoin`: `left.fork(); left.join();
/// right.compute()` on the common pool, which `main` helps run): a low-parallelism
/// finding on the task class that names the cause and the fork site, not a serial
/// phase ("split that work over threads" for work already forked); forked, computed,
/// then joined (`order=right`), none.
#[test]
fn a_fork_joined_at_once_is_said_as_such() {
    let _serial = serial();
    let (_trace, r, text) = record("advice.ForkThenJoin", &["wrong", "12"]);
    let f = finding(&r, "fj_low_parallelism", None);
    assert_eq!(f["class"], "weft.workloads.advice.ForkThenJoin$Sum", "{f}");
    assert!(f["run_at_once_share"].as_f64().unwrap_or(0.0) >= 0.9, "{f}");
    assert!(f["parallelism"].as_f64().unwrap_or(9.0) < 1.5, "{f}");
    assert!(
        f["site"]
            .as_str()
            .unwrap_or("")
            .contains("ForkThenJoin$Sum.compute"),
        "{f}"
    );
    assert!(!has_finding(&r, "serial_phase"), "{:#?}", r["findings"]);
    assert!(text.contains("joined at once"), "{text}");
    let classes = r["forkjoin"]["classes"].as_array().unwrap();
    assert!(classes
        .iter()
        .any(|c| c["run_at_once"].as_u64().unwrap_or(0) > 1000));
    let (_trace, r, _) = record("advice.ForkThenJoin", &["right", "12"]);
    assert!(
        !has_finding(&r, "fj_low_parallelism"),
        "{:#?}",
        r["findings"]
    );
    let classes = r["forkjoin"]["classes"].as_array().unwrap();
    assert!(
        classes.iter().all(|c| c["run_at_once"].as_u64().unwrap_or(0) * 10
            < c["tasks"].as_u64().unwrap_or(0)),
        "{classes:?}"
    );
}

/// Fork-join work on a `new ForkJoinPool(1)` on the 2-CPU machine
/// (`advice.ForkThenJoin right ... 1`): a `pool_too_small` finding with reason
/// `parallelism` naming the pool and the edit that estimates it, not a serial phase;
/// on `new ForkJoinPool(2)`, none.
#[test]
fn a_fork_join_pool_smaller_than_the_machine_is_a_finding() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.ForkThenJoin", &["right", "12", "4000000", "1"]);
    let f = finding(&r, "pool_too_small", None);
    assert_eq!(f["reason"], "parallelism", "{f}");
    assert_eq!(f["pool"], "ForkJoinPool-1", "{f}");
    assert_eq!(f["threads"], 1, "{f}");
    assert!(f["parallelism"].as_f64().unwrap_or(0.0) >= 4.0, "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap_or("")
            .contains("--edit pool:ForkJoinPool-1=2"),
        "{f}"
    );
    assert!(!has_finding(&r, "serial_phase"), "{:#?}", r["findings"]);
    let (_trace, r, _) = record("advice.ForkThenJoin", &["right", "12", "4000000", "2"]);
    assert!(!has_finding(&r, "pool_too_small"), "{:#?}", r["findings"]);
}

/// A producer swapping buffers through an `Exchanger` with a consumer 40 times slower
/// (`advice.ExchangerPair`): a `consumer_bottleneck` finding (`exchanger: true`) naming
/// the consumer; with the work the other way round, the consumer waits and the producer
/// is named.
#[test]
fn the_slow_side_of_an_exchanger_is_named() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.ExchangerPair", &["40", "100000", "4000000"]);
    let f = finding(&r, "consumer_bottleneck", None);
    assert_eq!(f["exchanger"], true, "{f}");
    assert_eq!(f["consumer"], "consumer", "{f}");
    let (_trace, r, _) = record("advice.ExchangerPair", &["40", "4000000", "100000"]);
    let f = finding(&r, "consumer_bottleneck", None);
    assert_eq!(f["consumer"], "producer", "{f}");
}

/// 100 threads each handing one CPU job to a fixed pool of 1 and waiting for it
/// (`advice.OneJobEach`; the same with 2,000 virtual threads read "each task awaited at
/// once"): the pool is too small, and no thread ran its jobs one at a time (one each),
/// so neither `awaited_at_once` nor a `serial_phase` beside the pool finding.
#[test]
fn one_job_per_thread_is_not_awaited_one_at_a_time() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.OneJobEach", &["100", "1", "1000000"]);
    let f = finding(&r, "pool_too_small", None);
    assert_eq!(f["reason"], "cpus", "{f}");
    assert!(!has_finding(&r, "awaited_at_once"), "{:#?}", r["findings"]);
    assert!(!has_finding(&r, "serial_phase"), "{:#?}", r["findings"]);
}

/// Three long CPU jobs on a single-thread executor, submitted or scheduled
/// (`advice.SingleThreadJobs`; the scheduled ones have no submission record): the
/// pool is too small, not the tasks too coarse ("only 3 tasks for 2 CPUs ... split
/// tasks" before); on 2 threads, none.
#[test]
fn a_few_long_jobs_on_a_single_thread_executor_are_a_small_pool() {
    let _serial = serial();
    for scheduled in ["false", "true"] {
        let (_trace, r, _) = record(
            "advice.SingleThreadJobs",
            &["3", "40000000", scheduled, "1"],
        );
        let f = finding(&r, "pool_too_small", None);
        assert_eq!(f["reason"], "cpus", "{f}");
        assert_eq!(f["threads"], 1, "{f}");
        assert!(!has_finding(&r, "coarse_grained"), "{:#?}", r["findings"]);
        let (_trace, r, _) = record(
            "advice.SingleThreadJobs",
            &["3", "40000000", scheduled, "2"],
        );
        assert!(!has_finding(&r, "pool_too_small"), "{:#?}", r["findings"]);
    }
}

/// Threads each given a fixed block of a loop whose cost grows with the index
/// (`speedups.StaticImbalance`): a `load_imbalance` finding (both the closed form and
/// the simulator say ≥ ×1.15) in the text and JSON reports; with the indices dealt
/// cyclically (`partition=cyclic`), none.
#[test]
fn threads_that_do_not_finish_together_are_a_finding() {
    let _serial = serial();
    let (_trace, r, text) = record("speedups.StaticImbalance", &[]);
    let f = finding(&r, "load_imbalance", None);
    assert!(
        f["simulated_speedup"].as_f64().unwrap_or(0.0) >= 1.15,
        "{f}"
    );
    assert!(f["load_balance"].as_f64().unwrap_or(1.0) < 0.9, "{f}");
    assert!(text.contains("[load imbalance,"), "{text}");
    let (_trace, r, _) = record("speedups.StaticImbalance", &["partition=cyclic"]);
    assert!(!has_finding(&r, "load_imbalance"), "{:#?}", r["findings"]);
}

/// `main` putting into a full queue that 3 busy consumer threads take from
/// (`advice.SlowConsumers`), none of which wakes it 80% of the time: a
/// `consumer_bottleneck` naming the group (`consumer`, 3 threads).
#[test]
fn several_busy_consumers_are_a_bottleneck_together() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.SlowConsumers", &["3", "600", "300000"]);
    let f = finding(&r, "consumer_bottleneck", None);
    assert_eq!(f["consumer"], "consumer", "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap_or("")
            .contains("the 3 `consumer` threads"),
        "{f}"
    );
}

/// Tasks queueing for items other tasks give back (`advice.ResourcePool`: 8 pool
/// threads sharing 2 "connections" in an `ArrayBlockingQueue`): a `waiting` finding
/// that says it is a pool of resources smaller than its users, not idle consumers
/// waiting for work (which is no finding); with as many items as threads, none.
#[test]
fn tasks_queueing_for_a_small_resource_pool_are_a_finding() {
    let _serial = serial();
    let (_trace, r, text) = record("advice.ResourcePool", &["2", "8", "200", "5"]);
    let f = finding(&r, "waiting", None);
    assert!(
        f["class"]
            .as_str()
            .unwrap_or("")
            .starts_with("weft.workloads.advice.ResourcePool$$Lambda"),
        "{f}"
    );
    assert_eq!(f["resource_pool"], true, "{f}");
    assert!(text.contains("`ArrayBlockingQueue.take`"), "{text}");
    let (_trace, r, _) = record("advice.ResourcePool", &["8", "8", "200", "5"]);
    assert!(!has_finding(&r, "waiting"), "{:#?}", r["findings"]);
}

/// A serial prologue on `main` before each round of pool tasks (`speedups.SerialPrologue`
/// with as much serial as parallel work): a `serial_phase` finding naming `main` and the
/// method; with the serial part split into the tasks (`split=true`), none.
#[test]
fn a_serial_phase_in_the_application_is_a_finding() {
    let _serial = serial();
    let args = ["serial=400000", "parallel=400000"];
    let (_trace, r, text) = record("speedups.SerialPrologue", &args);
    let f = finding(&r, "serial_phase", None);
    assert!(
        f["method"]
            .as_str()
            .unwrap_or("")
            .starts_with("weft.workloads.speedups."),
        "{f}"
    );
    assert!(f["possible_speedup"].as_f64().unwrap_or(0.0) >= 1.15, "{f}");
    // `main` first (most of the serial phase's CPU samples); a pool thread starting
    // or finishing a round can have a few there too (one clean-clone run in ~4 after
    // threads got their first CPU sample from their start, session 20).
    assert!(
        f["message"]
            .as_str()
            .unwrap_or("")
            .contains("worked (`main`"),
        "{f}"
    );
    assert!(text.contains("[serial phase,"), "{text}");
    let (_trace, r, _) = record(
        "speedups.SerialPrologue",
        &["serial=400000", "parallel=400000", "split=true"],
    );
    assert!(!has_finding(&r, "serial_phase"), "{:#?}", r["findings"]);
}

/// 4 pool threads on 2 CPUs contending `ConcurrentHashMap` bins (`advice.ComputeInMap`):
/// the lock finding says the CPUs were busy meanwhile (a blocked thread would mostly have
/// waited for a CPU anyway). A lock-bound run where one thread works at a time
/// (`whatif.WhatIfBench lock`) says nothing of the kind.
#[test]
fn a_lock_contended_while_the_cpus_were_busy_is_said_to_cost_little() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.ComputeInMap", &[]);
    let f = finding(&r, "lock_contention", None);
    assert!(
        f["lock_class"]
            .as_str()
            .unwrap_or("")
            .starts_with("java.util.concurrent.ConcurrentHashMap$"),
        "{f}"
    );
    let busy = f["cpus_busy_while_blocked"].as_f64().unwrap_or(0.0);
    assert!(busy >= 0.9, "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap_or("")
            .contains("busy while threads blocked here"),
        "{f}"
    );
    let (_trace, r, _) = record(
        "whatif.WhatIfBench",
        &[
            "lock",
            "threads=4",
            "iters=300",
            "inside=200000",
            "outside=20000",
        ],
    );
    let f = finding(&r, "lock_contention", None);
    assert!(f.get("cpus_busy_while_blocked").is_none(), "{f}");
}

/// A consumer looping on `Thread.yield()` until `main` hands it the next item
/// (`advice.YieldSpin`): a `busy_wait` finding naming the thread, the spin method and
/// the loop's line, costed by the CPU it spun.
#[test]
fn a_thread_spinning_on_yield_is_said_to_busy_wait() {
    let _serial = serial();
    let (_trace, r, text) = record("advice.YieldSpin", &[]);
    let f = finding(&r, "busy_wait", None);
    assert_eq!(f["thread"], "consumer", "{f}");
    assert_eq!(f["spin_method"], "java.lang.Thread.yield", "{f}");
    assert!(f["spin_share"].as_f64().unwrap_or(0.0) >= 0.2, "{f}");
    assert!(
        f["site"]
            .as_str()
            .unwrap_or("")
            .starts_with("weft.workloads.advice.YieldSpin.lambda$main$"),
        "{f}"
    );
    assert!(text.contains("[busy-waiting,"), "{text}");
}

/// A program that mostly waits for its schedule (`advice.ScheduledTicks`: a
/// `ScheduledThreadPoolExecutor` ticking every 50 ms, one-shots at spread delays, then
/// `main` sleeping 300 ms): one thread at most works at a time, but nobody works most of
/// the time. No serial phase ("split that work over threads" read there before, 1.07 s
/// of it at 5% of the CPUs), and every scheduled run counted: the periodic task's runs
/// as the program counted them, the one-shots' 10 and 1; and the what-if replays it.
#[test]
fn a_program_waiting_for_its_schedule_has_no_serial_phase() {
    let _serial = serial();
    let trace = scratch_file("advice_ScheduledTicks.weft");
    let _ = std::fs::remove_file(&trace);
    let rec = run_recorded(&trace, &[], "advice.ScheduledTicks", &[]);
    assert_no_panic(&rec, "weft record");
    assert!(rec.status.success(), "{}", rec.describe());
    let periodic: u64 = rec
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("ticks "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `ticks` line\n{}", rec.describe()));
    let r = report_json(&trace);
    assert!(!has_finding(&r, "serial_phase"), "{:#?}", r["findings"]);
    assert!(!has_finding(&r, "busy_wait"), "{:#?}", r["findings"]);
    let mut runs: Vec<(String, u64)> = r["tasks"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["class"]
                .as_str()
                .unwrap_or("")
                .starts_with("weft.workloads.advice.ScheduledTicks$$Lambda")
        })
        .map(|c| {
            (
                c["kind"].as_str().unwrap_or("").to_string(),
                c["executions"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    runs.sort();
    let mut want = vec![
        ("callable".to_string(), 1),
        ("runnable".to_string(), 10),
        ("runnable".to_string(), periodic),
    ];
    want.sort();
    assert_eq!(runs, want, "{}", r["tasks"]["classes"]);
    // The what-if replays it: `main`'s `get()` of the last one-shot awaits that task's
    // end (its park, unparked by the task's completion), not the worker's whole life
    // (+22% before, docs/whatif.md § Joins of a task with no strand of its own).
    let w = weft_cmd(&["whatif", &trace.display().to_string(), "--json"]);
    assert!(w.status.success(), "{}", w.describe());
    let j: Value = serde_json::from_str(&w.stdout).expect("whatif JSON");
    let error = j["whatif"]["calibration"]["error"].as_f64().unwrap_or(1.0);
    assert!(error.abs() < 0.05, "{}", j["whatif"]["calibration"]);
}

/// A lock-bound program on a fair `ReentrantLock` (`advice.FairLock`): the lock finding
/// says the lock is fair and what that costs (the agent reads the lock's `FairSync`); on
/// the default unfair lock it does not.
#[test]
fn a_fair_lock_is_said_to_be_fair() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.FairLock", &["true", "4", "5000"]);
    let f = finding(
        &r,
        "lock_contention",
        Some("java.util.concurrent.locks.ReentrantLock"),
    );
    assert_eq!(f["fair"], true, "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap_or("")
            .contains("The lock is fair (`new ReentrantLock(true)`)"),
        "{f}"
    );
    let (_trace, r, _) = record("advice.FairLock", &["false", "4", "5000"]);
    let f = finding(
        &r,
        "lock_contention",
        Some("java.util.concurrent.locks.ReentrantLock"),
    );
    assert!(f.get("fair").is_none(), "{f}");
}

/// Threads that sleep 5 ms inside `synchronized` (`advice.LockAcrossSleep`): the lock
/// finding says the holder was off the CPU while others waited, and in what
/// (`Thread.sleep`), from the holder's wall samples in its holds; a lock whose holders
/// compute (`WhatIfBench lock`) does not say so.
#[test]
fn a_lock_held_across_a_sleep_says_the_holder_blocks() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.LockAcrossSleep", &[]);
    let f = finding(&r, "lock_contention", Some("java.lang.Object"));
    let off = f["holder_off_cpu_share"].as_f64().unwrap_or(0.0);
    assert!(off >= 0.8, "{f}");
    assert!(
        f["holder_off_cpu_frame"]
            .as_str()
            .unwrap_or("")
            .starts_with("java.lang.Thread.sleep"),
        "{f}"
    );
    assert!(
        f["message"].as_str().unwrap_or("").contains("off the CPU"),
        "{f}"
    );
    let (_trace, r, _) = record("whatif.WhatIfBench", &["lock", "iters=1000"]);
    let f = finding(&r, "lock_contention", None);
    assert!(f.get("holder_off_cpu_share").is_none(), "{f}");
}

/// Threads that wait for a pool's result while holding a lock (`advice.LockAcrossGet`):
/// the lock's finding says its holder waits inside the critical section, on what and
/// where ("shorten the critical section" alone before); a holder computing under the
/// lock (`whatif.WhatIfBench lock`) is not said to wait.
#[test]
fn a_lock_held_while_waiting_for_a_future_says_the_holder_waits() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.LockAcrossGet", &["4", "40", "2"]);
    let f = finding(
        &r,
        "lock_contention",
        Some("java.util.concurrent.locks.ReentrantLock"),
    );
    let share = f["holder_waiting_share"].as_f64().unwrap_or(0.0);
    assert!(share >= 0.8, "{f}");
    let on = f["holder_waiting_on"].as_str().unwrap_or("");
    assert!(on.contains("`FutureTask`"), "{f}");
    assert!(on.contains("LockAcrossGet"), "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap_or("")
            .contains("Wait outside the lock"),
        "{f}"
    );
    let (_trace, r, _) = record("whatif.WhatIfBench", &["lock", "iters=1000"]);
    let f = finding(&r, "lock_contention", None);
    assert!(f.get("holder_waiting_share").is_none(), "{f}");
}

/// Pool tasks adding to one shared `CopyOnWriteArrayList` (`advice.CowWrites`): the
/// lock is the list's, and the advice says each write copies the array under it
/// ("shorten the critical section" at the `add` before).
#[test]
fn writes_to_a_shared_copy_on_write_list_are_said_as_such() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.CowWrites", &["4", "8000"]);
    let f = finding(&r, "lock_contention", None);
    let m = f["message"].as_str().unwrap_or("");
    assert!(
        m.contains("shared `CopyOnWriteArrayList`: each `add` copies"),
        "{f}"
    );
    assert!(!m.contains("Shorten the critical section"), "{f}");
}

/// Pool tasks drawing from one `SecureRandom` (`advice.SharedSecureRandom`): the
/// monitors are `NativePRNG`'s, inside `nextBytes`, and shared by every instance,
/// so the advice names it and its fix (a DRBG per thread), not "shorten the
/// critical section" at the application's call, which has none.
#[test]
fn threads_drawing_from_native_prng_are_told_its_lock_is_jvm_wide() {
    let _serial = serial();
    let (trace, r, _) = record("advice.SharedSecureRandom", &["4", "200000"]);
    let f = finding(&r, "lock_contention", None);
    let m = f["message"].as_str().unwrap_or("");
    assert!(m.contains("`NativePRNG`"), "{f}");
    assert!(m.contains("getInstance(\"DRBG\")"), "{f}");
    assert!(!m.contains("Shorten the critical section"), "{f}");
    // Its two monitors' holds, inferred from hand-offs, nested crosswise in the
    // replay, which deadlocked ("cannot be replayed: no estimate"): the model
    // now replays it (the holds cut at each thread's next acquisition elsewhere).
    let w = weft_cmd(&["whatif", &trace.display().to_string(), "--json"]);
    assert!(w.status.success(), "{}", w.describe());
    let j: Value = serde_json::from_str(&w.stdout).expect("whatif JSON");
    let simulated = j["whatif"]["calibration"]["simulated_ns"].as_u64();
    assert!(simulated.unwrap_or(0) > 0, "{}", j["whatif"]["calibration"]);
}

/// A thread that holds a monitor for long stretches while others wait for it
/// (`advice.LongHolder`): the idle CPU is the lock's, said by its finding, not "too
/// coarse-grained: split tasks" on the holder's one long task.
#[test]
fn a_long_holder_of_a_contended_lock_is_not_called_coarse() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.LongHolder", &[]);
    let f = finding(&r, "lock_contention", None);
    assert!(
        f["message"].as_str().unwrap_or("").contains("`holder`"),
        "{f}"
    );
    assert!(!has_finding(&r, "coarse_grained"), "{:#?}", r["findings"]);
}

/// Tasks of one pool waiting on tasks of a 1-thread pool (`advice.NestedPools`): the
/// `waiting` finding names what they wait for and that pool, busy nearly all its time.
#[test]
fn a_waiting_class_names_the_busy_pool_it_waits_for() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.NestedPools", &["300"]);
    let f = finding(
        &r,
        "waiting",
        Some("weft.workloads.advice.NestedPools$Outer"),
    );
    assert_eq!(
        f["awaited_class"], "weft.workloads.advice.NestedPools$Sub",
        "{f}"
    );
    assert_eq!(f["awaited_pool"], "inner", "{f}");
    assert_eq!(f["awaited_pool_threads"], 1, "{f}");
    let message = f["message"].as_str().unwrap_or_default();
    assert!(message.contains("that pool is the bottleneck"), "{message}");
}

/// `invokeAny` in a loop on a busy pool of 2 (`advice.AnyOfPool`): `main` waits in
/// the completion queue for its own tasks' results, woken by the pool threads
/// running them. That is no producer bottleneck ("make producing cheaper, or split
/// it over several producers" before).
#[test]
fn waiting_for_the_results_of_one_s_own_tasks_is_no_producer_bottleneck() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.AnyOfPool", &["60", "3000000"]);
    assert!(
        !has_finding(&r, "producer_bottleneck"),
        "{:#?}",
        r["findings"]
    );
}

/// 200,000 tiny Runnables `execute`d one by one on a `ForkJoinPool`
/// (`advice.ExecuteOnForkJoin`): too fine-grained, said of the Runnable's class
/// where it is submitted; not of the pool's wrapper
/// (`ForkJoinTask$RunnableExecuteAction`) with "raise the sequential cutoff".
#[test]
fn tiny_runnables_executed_on_a_fork_join_pool_are_said_once() {
    let _serial = serial();
    let (_trace, r, text) = record("advice.ExecuteOnForkJoin", &["200000"]);
    let f = finding(&r, "fine_grained", None);
    assert!(
        f["class"]
            .as_str()
            .is_some_and(|c| c.starts_with("weft.workloads.advice.ExecuteOnForkJoin$$Lambda")),
        "{f}"
    );
    assert!(!has_finding(&r, "fj_fine_grained"), "{:#?}", r["findings"]);
    assert!(!text.contains("sequential cutoff"), "{text}");
    let wrapper = r["forkjoin"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == "java.util.concurrent.ForkJoinTask$RunnableExecuteAction")
        .unwrap_or_else(|| panic!("{}", r["forkjoin"]["classes"]));
    assert_eq!(wrapper["external"], wrapper["tasks"], "{wrapper}");
}

/// `invokeAll` batches of 7 short jobs and a long one (`advice.InvokeAllBatches`):
/// `main` waits for each batch's long job last, but the short ones ran beside it,
/// so that class was not awaited one at a time ("each task awaited at once" before).
/// The batches' real issue is the long job at their tail, one worker idle beside
/// it: a load imbalance naming that job (the replay evened out the workers'
/// shares, which the pool undid: ×1.12 against ×1.43 by the closed form, and no
/// finding, before).
#[test]
fn the_last_job_of_each_invoke_all_is_its_batch_s_imbalance() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.InvokeAllBatches", &["10", "2000000"]);
    assert!(!has_finding(&r, "awaited_at_once"), "{:#?}", r["findings"]);
    let f = finding(&r, "load_imbalance", None);
    let tail = f["tail_class"].as_str().unwrap_or_default();
    // The long job is the lambda on line 28 of the workload, the short ones on 26.
    assert!(tail.ends_with("InvokeAllBatches$$Lambda[main:28]"), "{f:#}");
    assert!(f["tail_sections"].as_u64().unwrap_or(0) >= 5, "{f:#}");
    assert!(
        f["simulated_speedup"].as_f64().unwrap_or(0.0) >= 1.2,
        "{f:#}"
    );
    let message = f["message"].as_str().unwrap_or_default();
    assert!(message.contains("start the long tasks first"), "{message}");
}

/// A three-stage pipeline whose middle stage binds (`advice.Pipeline`): the
/// bottleneck is named from both sides (the first stage waits for room, the last
/// for work), and not again as a load imbalance ("give the threads smaller pieces")
/// or as the middle thread's task being too coarse ("split tasks").
#[test]
fn a_pipeline_s_busy_stage_is_named_once_per_side() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.Pipeline", &["400", "50000"]);
    assert_eq!(
        finding(&r, "producer_bottleneck", None)["producer"],
        "transform"
    );
    assert_eq!(
        finding(&r, "consumer_bottleneck", None)["consumer"],
        "transform"
    );
    assert!(!has_finding(&r, "load_imbalance"), "{:#?}", r["findings"]);
    assert!(!has_finding(&r, "coarse_grained"), "{:#?}", r["findings"]);
}

/// A parallel stream whose heavy work is in `forEachOrdered` (`advice.OrderedStream`):
/// its computation has a parallelism of ~1, and the advice is about the ordered
/// action, not the stream's split ("fork earlier and join later" before).
#[test]
fn heavy_work_in_for_each_ordered_is_said_to_run_in_order() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.OrderedStream", &["2000", "100000"]);
    let f = finding(&r, "fj_low_parallelism", None);
    let m = f["message"].as_str().unwrap_or_default();
    assert!(m.contains("`forEachOrdered`"), "{m}");
    assert!(!m.contains("Fork earlier"), "{m}");
}

/// Clients of a slow backend (`advice.SlowBackend`: 4 tasks on 4 threads, each call
/// blocking 5 ms as a remote call would): nothing else explains the run, which waits
/// on that blocking while the CPUs idle: `io_bound`, naming where the tasks block
/// ("no problem found" before; 8 HTTP clients of a server on JDK 21 were such a run).
#[test]
fn a_run_that_waits_on_i_o_says_so() {
    let _serial = serial();
    let (_trace, r, _) = record("advice.SlowBackend", &["4", "100", "5"]);
    let f = finding(&r, "io_bound", None);
    assert_eq!(f["tasks_blocked_frame"], "java.lang.Thread.sleep", "{f}");
    assert!(f["utilisation"].as_f64().unwrap_or(1.0) < 0.5, "{f}");
}
