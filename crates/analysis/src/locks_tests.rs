//! The lock analysis on models built by hand (no trace): blocked periods, the
//! shared side, open blocks and waits at a thread's end, which threads count, the
//! ranking of locks, dominant phases with their site and owner, the interval.

use std::collections::BTreeMap;

use weft_trace::{lock_flags, lock_kind, wait_kind};

use super::*;
use crate::events::{Event, EventKind, ThreadEvents};
use crate::model::{LockDef, Model, ThreadInfo};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// A model of `threads` (index, name, start, end) and their events, `duration` long.
fn model(
    threads: &[(u32, &str, u64, Option<u64>)],
    events: &[(u32, Event)],
    duration: u64,
) -> Model {
    let mut m = Model {
        duration_ns: duration,
        end_ns: Some(duration),
        ..Model::default()
    };
    for &(index, name, start, end) in threads {
        m.threads.insert(
            index,
            ThreadInfo {
                index,
                name: Some(name.to_string()),
                start_ns: Some(start),
                end_ns: end,
                first_ns: start,
                last_ns: end.unwrap_or(duration),
                java_id: Some(100 + index as u64),
                ..ThreadInfo::default()
            },
        );
    }
    let mut per: BTreeMap<u32, ThreadEvents> = BTreeMap::new();
    for &(t, e) in events {
        per.entry(t).or_insert_with(|| ThreadEvents::new(t)).push(e);
    }
    m.events = per.into_values().collect();
    m
}

fn lock(m: &mut Model, id: u32, kind: u8, class: &str) {
    m.lock_defs.insert(
        id,
        LockDef {
            kind,
            class: class.to_string(),
            ident: id,
            fair: false,
        },
    );
}

fn block(ts: u64, lock: u32, owner_thread: u32, site: u32, flags: u8) -> Event {
    Event {
        a: 100 + owner_thread as u64,
        b: lock,
        c: site,
        flag: flags,
        ..Event::at(EventKind::LockBlock, ts)
    }
}

fn acquired(ts: u64, lock: u32, parked: bool) -> Event {
    Event {
        b: lock,
        flag: u8::from(parked),
        ..Event::at(EventKind::LockAcquired, ts)
    }
}

fn wait(kind: EventKind, ts: u64, wk: u8) -> Event {
    Event {
        flag: wk,
        ..Event::at(kind, ts)
    }
}

/// Read side of a read-write lock: shared blocked time; a slow path that did not
/// park is a slow acquisition but not a contention.
#[test]
fn shared_side_and_slow_paths_without_parking() {
    let mut m = model(
        &[(1, "a", 0, Some(S)), (2, "b", 0, Some(S))],
        &[
            (1, block(100 * MS, 1, 2, 0, lock_flags::SHARED)),
            (1, acquired(300 * MS, 1, true)),
            (2, block(400 * MS, 1, 1, 0, 0)),
            (2, acquired(450 * MS, 1, false)),
        ],
        S,
    );
    lock(
        &mut m,
        1,
        lock_kind::READ_WRITE_LOCK,
        "java.util.concurrent.locks.ReentrantReadWriteLock",
    );
    let a = analyze_locks_with(&m, S);
    let l = &a.locks[0];
    assert_eq!(l.kind, "read_write_lock");
    assert_eq!((l.slow_acquisitions, l.contended), (2, 1));
    assert_eq!((l.blocked_ns, l.shared_blocked_ns), (250 * MS, 200 * MS));
    assert_eq!(l.max_blocked_ns, 200 * MS);
    assert_eq!(a.running_ns, 2 * S);
    assert!((l.csp - 0.125).abs() < 1e-12);
    assert_eq!(l.csp_per_interval, vec![0.125]);
    assert!(a.blocked[0].shared && a.blocked[0].parked);
    assert!(!a.blocked[1].shared && !a.blocked[1].parked);
    assert_eq!(
        l.blocked_per_thread,
        vec![("a".to_string(), 200 * MS), ("b".to_string(), 50 * MS)]
    );
}

/// A monitor's contended enter always parks; a block still open when its thread
/// ends lasts to that end; a second block before the first was acquired closes
/// the first (not parked).
#[test]
fn open_and_superseded_blocks() {
    let mut m = model(
        &[(1, "a", 0, Some(S)), (2, "b", 0, Some(2 * S))],
        &[
            (1, block(100 * MS, 1, 2, 0, 0)),
            (1, block(200 * MS, 2, 2, 0, 0)),
            (1, acquired(300 * MS, 2, false)),
            (1, block(900 * MS, 1, 2, 0, 0)),
        ],
        2 * S,
    );
    lock(&mut m, 1, lock_kind::MONITOR, "A");
    lock(&mut m, 2, lock_kind::MONITOR, "B");
    let a = analyze_locks_with(&m, S);
    let by = |class: &str| a.locks.iter().find(|l| l.class == class).unwrap();
    // Lock 1: 100..200 superseded (not parked), 900..1000 open at the end (parked).
    assert_eq!((by("A").blocked_ns, by("A").contended), (200 * MS, 1));
    assert_eq!(by("A").slow_acquisitions, 2);
    // Lock 2: a monitor, so parked although the record says not.
    assert_eq!((by("B").blocked_ns, by("B").contended), (100 * MS, 1));
    assert_eq!(a.blocked_ns, 300 * MS);
    // Ranked by CSP: A (200 ms) before B (100 ms); phase indices follow the ranking.
    assert_eq!(a.locks[0].class, "A");
    assert_eq!(a.blocked.len(), 3);
    assert!(a.blocked.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
    assert_eq!(a.locks[a.blocked[1].lock].class, "B");
}

/// A timed `tryLock` that ran out (`LockGaveUp`) is blocked time, not an
/// acquisition; a monitor contended inside its slow path (a class's initialization)
/// nests in it and does not end it.
#[test]
fn a_timed_try_that_ran_out_with_a_monitor_nested_in_it() {
    let mut m = model(
        &[(1, "a", 0, Some(S))],
        &[
            (1, block(100 * MS, 1, 2, 0, 0)),
            (1, block(150 * MS, 2, 2, 0, 0)),
            (1, acquired(160 * MS, 2, true)),
            (
                1,
                Event {
                    b: 1,
                    flag: 1 | crate::events::LOCK_GAVE_UP,
                    ..Event::at(EventKind::LockAcquired, 300 * MS)
                },
            ),
        ],
        S,
    );
    lock(&mut m, 1, lock_kind::STAMPED_LOCK, "S");
    lock(&mut m, 2, lock_kind::MONITOR, "(class initialization)");
    let a = analyze_locks_with(&m, S);
    let by = |class: &str| a.locks.iter().find(|l| l.class == class).unwrap();
    let s = by("S");
    assert_eq!(
        (s.blocked_ns, s.gave_up, s.slow_acquisitions, s.contended),
        (200 * MS, 1, 0, 0)
    );
    let c = by("(class initialization)");
    assert_eq!((c.blocked_ns, c.slow_acquisitions), (10 * MS, 1));
    let gave_up: Vec<bool> = a.blocked.iter().map(|b| b.gave_up).collect();
    assert_eq!(gave_up, vec![true, false]);
}

/// Waits are not running time; a wait still open at the thread's end lasts to it.
/// JVM threads and threads whose start was not seen are not counted; main counts
/// from the application's start.
#[test]
fn running_time_counts_program_threads_minus_waits() {
    let mut m = model(
        &[
            (0, "main", 0, Some(S)),
            (1, "w", 0, Some(S)),
            (2, "Signal Dispatcher", 0, Some(S)),
        ],
        &[
            (
                1,
                wait(EventKind::WaitBegin, 200 * MS, wait_kind::OBJECT_WAIT),
            ),
            (1, wait(EventKind::WaitEnd, 300 * MS, 0)),
            (1, wait(EventKind::WaitBegin, 600 * MS, wait_kind::PARK)),
        ],
        S,
    );
    m.app_start_ns = Some(100 * MS);
    m.threads.insert(
        3,
        ThreadInfo {
            index: 3,
            name: Some("unstarted".into()),
            start_ns: None,
            ..ThreadInfo::default()
        },
    );
    let a = analyze_locks_with(&m, S);
    // main 100 ms..1 s = 900 ms; w 1 s - 100 ms - 400 ms = 500 ms.
    assert_eq!(a.running_ns, 1400 * MS);
    assert_eq!(a.counted_threads, vec!["main".to_string(), "w".to_string()]);
    assert_eq!(
        a.excluded_threads,
        vec!["Signal Dispatcher".to_string(), "unstarted".to_string()]
    );
    let kinds: Vec<(&str, u64, u64)> = a
        .waits
        .iter()
        .map(|w| (w.kind, w.count, w.total_ns))
        .collect();
    assert_eq!(
        kinds,
        vec![("Object.wait", 1, 100 * MS), ("park", 1, 400 * MS)]
    );
    assert_eq!(a.wait_intervals.len(), 2);
    assert_eq!(a.wait_intervals[1].end_ns, S);
    assert_eq!(a.total_csp(), 0.0);
}

/// Dominant phases: consecutive intervals at >= 10% CSP make one phase, with the
/// commonest site and owner of the contentions inside it; the dense series has
/// one value per interval, 0 where nobody blocked.
#[test]
fn dominant_phases_and_the_dense_series() {
    let mut m = model(
        &[(1, "a", 0, Some(4 * S)), (2, "b", 0, Some(4 * S))],
        &[
            // Interval 0: 500 ms blocked (CSP 25%), interval 1: 300 ms (15%),
            // interval 2: nothing, interval 3: 100 ms (5%).
            (1, block(500 * MS, 1, 2, 7, 0)),
            (1, acquired(S, 1, true)),
            (1, block(S, 1, 2, 7, 0)),
            (1, acquired(S + 300 * MS, 1, true)),
            (2, block(3 * S, 1, 1, 8, 0)),
            (2, acquired(3 * S + 100 * MS, 1, true)),
        ],
        4 * S,
    );
    lock(&mut m, 1, lock_kind::REENTRANT_LOCK, "L");
    m.sites.insert(7, vec!["app.Main.work:12".into()]);
    m.sites.insert(8, vec!["app.Main.other:20".into()]);
    let a = analyze_locks_with(&m, S);
    let l = &a.locks[0];
    assert_eq!(l.csp_per_interval, vec![0.25, 0.15, 0.0, 0.05]);
    assert_eq!(l.phases, vec![(0, 0.25), (S, 0.15), (3 * S, 0.05)]);
    assert_eq!((l.max_phase_start_ns, l.max_phase_csp), (0, 0.25));
    assert_eq!(a.phases.len(), 1);
    let p = &a.phases[0];
    assert_eq!((p.start_ns, p.end_ns), (0, 2 * S));
    assert!((p.csp - 0.2).abs() < 1e-12);
    assert_eq!(p.site.as_deref(), Some("app.Main.work:12"));
    assert_eq!(p.owner.as_deref(), Some("b"));
    assert_eq!(
        l.sites,
        vec![
            ("app.Main.work:12".to_string(), 2),
            ("app.Main.other:20".to_string(), 1)
        ]
    );
    assert_eq!(l.owners, vec![("b".to_string(), 2), ("a".to_string(), 1)]);
    assert_eq!(
        a.blocked_by_site(),
        vec![
            (0, Some("app.Main.work:12".to_string()), 800 * MS),
            (0, Some("app.Main.other:20".to_string()), 100 * MS)
        ]
    );
}

/// The interval chosen at record time is used when it is at least 1 ms; a lock
/// blocked on but never defined still gets a row.
#[test]
fn interval_from_the_model_and_undefined_locks() {
    let mut m = model(
        &[(1, "a", 0, Some(S))],
        &[(1, block(0, 9, 1, 0, 0)), (1, acquired(10 * MS, 9, true))],
        S,
    );
    m.lock_interval_ns = Some(250 * MS);
    let a = analyze_locks(&m);
    assert_eq!(a.interval_ns, 250 * MS);
    assert_eq!(a.running_per_interval.len(), 4);
    assert_eq!(a.locks[0].id, "<lock #9>@0");
    m.lock_interval_ns = Some(1000);
    assert_eq!(analyze_locks(&m).interval_ns, DEFAULT_INTERVAL_NS);
    m.lock_interval_ns = None;
    assert_eq!(analyze_locks(&m).interval_ns, DEFAULT_INTERVAL_NS);
}

/// A burst of contention split by an interval boundary: each aligned interval sees
/// half of it (under the 10% threshold), the sliding window sees all of it; waits
/// are not running time in the window either (issue 16: Clojure's `locking`).
#[test]
fn sliding_peak_counts_a_burst_split_by_a_boundary() {
    let mut m = model(
        &[(1, "a", 0, Some(3 * S)), (2, "b", 0, Some(3 * S))],
        &[
            (1, block(900 * MS, 1, 2, 0, 0)),
            (1, acquired(1100 * MS, 1, true)),
            // Thread b waits 400 ms in the same window: 1.6 s running there.
            (
                2,
                wait(EventKind::WaitBegin, 1200 * MS, wait_kind::OBJECT_WAIT),
            ),
            (
                2,
                wait(EventKind::WaitEnd, 1600 * MS, wait_kind::OBJECT_WAIT),
            ),
        ],
        3 * S,
    );
    lock(&mut m, 1, lock_kind::MONITOR, "L");
    let a = analyze_locks_with(&m, S);
    let l = &a.locks[0];
    // Aligned: 100 ms of 2 s in interval 0, 100 ms of 1.6 s in interval 1.
    assert!(
        (l.max_phase_csp - 0.0625).abs() < 1e-9,
        "{}",
        l.max_phase_csp
    );
    // Sliding: the window from 900 ms holds the whole 200 ms, of 1.6 s running.
    assert!((l.peak_csp - 0.125).abs() < 1e-9, "{}", l.peak_csp);
    assert_eq!(l.peak_start_ns, 900 * MS);
    assert_eq!(a.peak_csp(&[0]), (900 * MS, l.peak_csp));
    // The running time over any span is the per-interval series' sum.
    assert_eq!(a.running_over.between(0, S), a.running_per_interval[0]);
    assert_eq!(a.running_over.between(S, 2 * S), a.running_per_interval[1]);
}

/// Threads of one name (a pool's that came and went, H2's `H2-save`) are one row, their
/// times summed, in the per-thread blocked times and waits: collected by name into a
/// map they overwrote each other, and which survived depended on the hash order.
#[test]
fn threads_of_one_name_are_summed() {
    let mut m = model(
        &[
            (1, "saver", 0, Some(S)),
            (2, "saver", 0, Some(S)),
            (3, "b", 0, Some(S)),
        ],
        &[
            (1, block(100 * MS, 1, 3, 0, 0)),
            (1, acquired(200 * MS, 1, true)),
            (2, block(300 * MS, 1, 3, 0, 0)),
            (2, acquired(350 * MS, 1, true)),
            (1, wait(EventKind::WaitBegin, 400 * MS, wait_kind::PARK)),
            (1, wait(EventKind::WaitEnd, 500 * MS, 0)),
            (2, wait(EventKind::WaitBegin, 600 * MS, wait_kind::PARK)),
            (2, wait(EventKind::WaitEnd, 620 * MS, 0)),
        ],
        S,
    );
    lock(&mut m, 1, lock_kind::MONITOR, "java.lang.Object");
    let a = analyze_locks_with(&m, S);
    assert_eq!(
        a.locks[0].blocked_per_thread,
        vec![("saver".to_string(), 150 * MS)]
    );
    let park = a
        .waits
        .iter()
        .find(|w| w.kind == "park")
        .expect("park waits");
    assert_eq!(park.threads, vec![("saver".to_string(), 120 * MS)]);
}

/// The holders' own waits while they held a lock others waited for: between two
/// contended acquisitions the first one's thread holds it; its park in that hold
/// counts, an `Object.wait` (which releases a monitor) and a condition's `await`
/// (which releases its lock) do not, and nor does time when no one waited.
#[test]
fn holders_waiting_inside_their_holds() {
    let mut m = model(
        &[
            (1, "a", 0, Some(S)),
            (2, "b", 0, Some(S)),
            (3, "c", 0, Some(S)),
        ],
        &[
            (1, block(0, 1, 9, 0, 0)),
            (1, acquired(100 * MS, 1, true)),
            (1, wait(EventKind::WaitBegin, 120 * MS, wait_kind::PARK)),
            (1, wait(EventKind::WaitEnd, 280 * MS, 0)),
            (2, block(50 * MS, 1, 1, 0, 0)),
            (2, acquired(300 * MS, 1, true)),
            (
                2,
                wait(EventKind::WaitBegin, 320 * MS, wait_kind::OBJECT_WAIT),
            ),
            (2, wait(EventKind::WaitEnd, 400 * MS, 0)),
            // A park whose blocker is the lock's AQS: a `Condition.await`.
            (
                2,
                Event {
                    a: 77,
                    ..wait(EventKind::WaitBegin, 420 * MS, wait_kind::PARK)
                },
            ),
            (2, wait(EventKind::WaitEnd, 460 * MS, 0)),
            (3, block(120 * MS, 1, 2, 0, 0)),
            (3, acquired(500 * MS, 1, true)),
            // After the last contended acquisition: no known hold.
            (3, wait(EventKind::WaitBegin, 600 * MS, wait_kind::PARK)),
            (3, wait(EventKind::WaitEnd, 700 * MS, 0)),
        ],
        S,
    );
    lock(
        &mut m,
        1,
        lock_kind::REENTRANT_LOCK,
        "java.util.concurrent.locks.ReentrantLock",
    );
    m.classes.insert(
        77,
        "java.util.concurrent.locks.ReentrantLock$NonfairSync".to_string(),
    );
    let a = analyze_locks_with(&m, S);
    assert!(a.wait_groups.iter().any(|g| g.kind == "Condition.await"));
    let h = &a.locks[0].holder_waits;
    assert_eq!((h.held_ns, h.waiting_ns), (400 * MS, 160 * MS));
    assert_eq!(h.groups.len(), 1);
    assert_eq!(a.wait_groups[h.groups[0].0].kind, "park");
    assert!((h.share() - 0.4).abs() < 1e-12);
}
