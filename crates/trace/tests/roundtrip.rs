use weft_trace::*;

fn header() -> Header {
    let mut h = Header::default();
    h.set(header_keys::START_TICKS, "1000");
    h.set(header_keys::START_MONO_NS, "5000");
    h.set(header_keys::TICKS_PER_SEC, "2000000000"); // 2 ticks per ns
    h.set(header_keys::PID, "42");
    h
}

fn sample_file() -> (Vec<u8>, Vec<Record>) {
    let mut file = encode_file_header(&header());
    let mut g = BlockEncoder::new(GLOBAL_THREAD, 256);
    let defs = vec![
        Record::ClassDef {
            id: 1,
            name: "demo.Work".into(),
        },
        Record::ProbeDef {
            id: 7,
            kind: ProbeKind::Execution,
            class: "demo.Work".into(),
            method: "run".into(),
            descriptor: "()V".into(),
        },
        Record::SiteDef {
            id: 3,
            frames: vec!["demo.Main.main:12".into(), "x.y:0".into()],
        },
        Record::Calibration {
            ts: 2_000_001_000,
            mono_ns: 1_000_005_000,
        },
    ];
    for r in &defs {
        g.push(r);
    }
    file.extend(g.take_block());
    let mut t = BlockEncoder::new(0, 256);
    let evs = vec![
        Record::TaskBegin {
            ts: 3000,
            probe: 7,
            class_id: 1,
            ident: 99,
            inner_class_id: 0,
            inner_ident: 0,
        },
        Record::TaskEnd {
            ts: 2500,
            probe: 7,
            ident: 99,
        }, // out of order on purpose: deltas may be negative
        Record::Loss {
            thread: 0,
            from_ts: 4000,
            to_ts: 8000,
            records: 5,
            reason: LossReason::BufferOverflow,
        },
        Record::End { ts: 9000 },
    ];
    for r in &evs {
        t.push(r);
    }
    assert_eq!(t.records(), 4);
    file.extend(t.take_block());
    assert!(t.is_empty());
    (file, evs)
}

#[test]
fn round_trip_converts_ticks_to_ns() {
    let (file, _) = sample_file();
    let trace = read_trace_bytes(&file).expect("reads");
    assert!(!trace.truncated);
    assert_eq!(trace.header.get("pid"), Some("42"));
    assert_eq!(trace.records.len(), 8);
    // 2 ticks per ns, start at tick 1000.
    let begin = trace
        .records
        .iter()
        .find(|(_, r)| matches!(r, Record::TaskBegin { .. }))
        .unwrap();
    assert_eq!(begin.0, 0);
    assert_eq!(begin.1.ts(), Some(1000));
    let end = trace
        .records
        .iter()
        .find(|(_, r)| matches!(r, Record::TaskEnd { .. }))
        .unwrap();
    assert_eq!(end.1.ts(), Some(750));
    match &trace
        .records
        .iter()
        .find(|(_, r)| matches!(r, Record::Loss { .. }))
        .unwrap()
        .1
    {
        Record::Loss {
            from_ts,
            to_ts,
            records,
            reason,
            ..
        } => {
            assert_eq!(
                (*from_ts, *to_ts, *records, *reason),
                (1500, 3500, 5, LossReason::BufferOverflow)
            );
        }
        _ => unreachable!(),
    }
}

#[test]
fn truncated_file_reads_whole_blocks() {
    let (file, _) = sample_file();
    let hend = 18 + u32::from_le_bytes([file[10], file[11], file[12], file[13]]) as usize;
    for cut in 0..hend {
        assert!(
            read_trace_bytes(&file[..cut]).is_err(),
            "a cut header is an error"
        );
    }
    for cut in hend..file.len() {
        match read_trace_bytes(&file[..cut]) {
            Ok(t) => assert!(t.truncated, "cut at {cut} must be flagged truncated"),
            Err(e) => panic!("cut at {cut}: {e}"),
        }
    }
}

#[test]
fn corrupt_block_is_skipped_and_reported_and_never_panics() {
    let (file, _) = sample_file();
    assert!(matches!(
        read_trace_bytes(b"hello world, not a trace"),
        Err(TraceError::NotATrace)
    ));
    for i in 8..file.len() {
        let mut f = file.clone();
        f[i] ^= 0x5a;
        let _ = read_trace_bytes(&f); // must not panic
    }
    // Flip a byte inside the first (non-final) block's payload.
    let mut f = file.clone();
    let hlen = u32::from_le_bytes([f[10], f[11], f[12], f[13]]) as usize;
    f[18 + hlen + 10] ^= 0xff;
    let (t, warnings) = read_trace_bytes_with_warnings(&f).expect("the rest is read");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("checksum"), "{warnings:?}");
    // The global block is lost (a Loss of unknown extent stands in for it); thread
    // 0's block after it is read.
    let losses: Vec<&Record> = t
        .records
        .iter()
        .map(|(_, r)| r)
        .filter(|r| {
            matches!(
                r,
                Record::Loss {
                    reason: LossReason::Corrupt,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(losses.len(), 1, "{:?}", t.records);
    assert!(t
        .records
        .iter()
        .any(|(th, r)| *th == 0 && matches!(r, Record::TaskBegin { .. })));
}

/// A damaged block of a thread is a Loss of that thread between its records before
/// and after the damage; blocks of other threads around it are read.
#[test]
fn damaged_thread_block_is_a_loss_of_that_thread_and_time_range() {
    let mut file = encode_file_header(&identity_clock());
    let mut blocks = Vec::new();
    for (i, ts) in [(0u64, 1_000u64), (1, 2_000), (2, 3_000)] {
        let mut t = BlockEncoder::new(7, 64);
        t.push(&Record::GcStart { ts });
        t.push(&Record::GcEnd { ts: ts + 10 });
        blocks.push(t.take_block());
        let mut o = BlockEncoder::new(8, 64);
        o.push(&Record::GcStart { ts: ts + i });
        blocks.push(o.take_block());
    }
    let mut g = BlockEncoder::new(GLOBAL_THREAD, 64);
    g.push(&Record::End { ts: 4_000 });
    blocks.push(g.take_block());
    // Damage the middle block of thread 7: a payload byte after its thread index.
    let damaged = 2;
    for (i, b) in blocks.iter().enumerate() {
        let mut b = b.clone();
        if i == damaged {
            let n = b.len();
            b[n - 1] ^= 0x40;
        }
        file.extend(b);
    }
    let (t, warnings) = read_trace_bytes_with_warnings(&file).expect("reads");
    assert!(!t.truncated, "the End record was read");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("thread #7"), "{warnings:?}");
    let loss = t
        .records
        .iter()
        .find_map(|(_, r)| match r {
            Record::Loss {
                thread,
                from_ts,
                to_ts,
                reason: LossReason::Corrupt,
                ..
            } => Some((*thread, *from_ts, *to_ts)),
            _ => None,
        })
        .expect("a Loss record");
    assert_eq!(loss, (7, 1_010, 3_000));
    // Every other block was read: 2 of thread 7's, 3 of thread 8's.
    let count = |th: u32| t.records.iter().filter(|(x, _)| *x == th).count();
    assert_eq!((count(7), count(8)), (4, 3));
}

/// A CRC-valid trace with an absurd clock rate and no calibration record is a clear
/// error; with calibration records the rate is replaced (and said so); a timestamp
/// far past the recording's end is clamped (and said so).
#[test]
fn absurd_clock_values_are_an_error_or_clamped() {
    let mut h = identity_clock();
    h.set(header_keys::TICKS_PER_SEC, "1");
    let mut file = encode_file_header(&h);
    let mut t = BlockEncoder::new(0, 64);
    t.push(&Record::GcStart { ts: 5 });
    file.extend(t.take_block());
    match read_trace_bytes(&file) {
        Err(TraceError::Corrupt { what, .. }) => assert!(what.contains("ticks_per_sec"), "{what}"),
        other => panic!("expected an error, got {other:?}"),
    }
    let mut g = BlockEncoder::new(GLOBAL_THREAD, 64);
    g.push(&Record::Calibration {
        ts: 2_000_000_000,
        mono_ns: 2_000_000_000,
    });
    g.push(&Record::GcEnd { ts: 1 << 63 });
    file.extend(g.take_block());
    let (t, warnings) = read_trace_bytes_with_warnings(&file).expect("reads");
    assert_eq!(t.clock.ns_per_tick(), 1.0);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let end = t.records.iter().filter_map(|(_, r)| r.ts()).max().unwrap();
    assert!(end <= 2 * 2_000_000_000 + 60_000_000_000, "clamped: {end}");
}

#[test]
fn unknown_record_kinds_are_skipped_without_breaking_time_deltas() {
    // Thread 0: an unknown timed record (tag 77, unassigned), then GcStart.
    let t = hand_made_block(
        &header(),
        &[
            &[77 | 0x80, 40, 2, 0xaa, 0xbb], // ts delta zigzag(20)=40, len 2
            &[40 | 0x80, 4, 0],              // GcStart, delta zigzag(2)=4
        ],
    );
    assert_eq!(t.unknown_records, 1);
    assert_eq!(t.records.len(), 1);
    // tick 22 is before start tick 1000: clamps to 0.
    assert_eq!(t.records[0].1, Record::GcStart { ts: 0 });
}

/// An `Unpark` of an earlier agent (target only, no duration) reads with `ns` 0,
/// and the record after it keeps its time.
#[test]
fn unpark_without_duration_reads_as_not_measured() {
    // Thread 0: Unpark (tag 100) at tick 20 with its target (7) only, then GcStart.
    let t = hand_made_block(
        &identity_clock(),
        &[
            &[100 | 0x80, 40, 1, 7], // ts delta zigzag(20)=40, len 1, target 7
            &[40 | 0x80, 4, 0],      // GcStart, delta zigzag(2)=4
        ],
    );
    assert_eq!(t.unknown_records, 0);
    let got: Vec<Record> = t.records.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(
        got,
        vec![
            Record::Unpark {
                ts: 20,
                target: 7,
                ns: 0
            },
            Record::GcStart { ts: 22 }
        ]
    );
}

/// Reads a file of one hand-made block of thread 0 holding `records` (encoded bytes).
fn hand_made_block(h: &Header, records: &[&[u8]]) -> Trace {
    let mut file = encode_file_header(h);
    let mut payload = vec![0u8];
    for r in records {
        payload.extend(*r);
    }
    let sum = crc32fast::hash(&payload);
    file.extend((payload.len() as u32).to_le_bytes());
    file.extend(sum.to_le_bytes());
    file.extend(&payload);
    read_trace_bytes(&file).unwrap()
}

/// Encodes `recs` on thread 3 (definitions on the global block) and reads them back.
fn round_trip(h: &Header, global: &[Record], recs: &[Record]) -> Trace {
    let mut file = encode_file_header(h);
    let mut g = BlockEncoder::new(GLOBAL_THREAD, 256);
    for r in global {
        g.push(r);
    }
    file.extend(g.take_block());
    let mut t = BlockEncoder::new(3, 256);
    for r in recs {
        t.push(r);
    }
    file.extend(t.take_block());
    read_trace_bytes(&file).expect("reads")
}

fn identity_clock() -> Header {
    let mut h = Header::default();
    h.set(header_keys::START_TICKS, "0");
    h.set(header_keys::START_MONO_NS, "0");
    h.set(header_keys::TICKS_PER_SEC, "1000000000");
    h
}

/// The lock records (docs/locks.md, tags 60–65), `WaitDetail` (110), the join records (25–26) and
/// `ThreadSched` (50) keep every field; their times are clock ticks converted to ns.
#[test]
fn lock_and_join_records_round_trip() {
    let global = vec![
        Record::LockDef {
            id: 1,
            kind: lock_kind::MONITOR,
            class: "demo.Shared".into(),
            ident: 0x7fff_ffff,
            fair: false,
        },
        Record::LockDef {
            id: 300,
            kind: lock_kind::OTHER_AQS,
            class: "java.util.concurrent.ThreadPoolExecutor$Worker".into(),
            ident: 0,
            fair: false,
        },
        Record::AppStart { ts: 5 },
        Record::ThreadSched {
            ts: 6,
            thread: 3,
            on_cpu_ns: 1 << 40,
            runq_ns: 0,
            timeslices: 12_345,
        },
    ];
    let recs = vec![
        Record::LockBlock {
            ts: 1_000,
            lock: 1,
            flags: lock_flags::SHARED | lock_flags::REACQUIRE,
            owner: u64::MAX >> 1,
            site: 9,
        },
        Record::LockAcquired {
            ts: 50_000_000_000,
            lock: 1,
            parked: true,
        },
        Record::LockBlock {
            ts: 999, // earlier than the previous record: negative delta
            lock: 300,
            flags: 0,
            owner: 0,
            site: 0,
        },
        Record::LockAcquired {
            ts: 2_000,
            lock: 300,
            parked: false,
        },
        Record::WaitDetail {
            class_id: 4,
            site: 70_000,
        },
        Record::WaitBegin {
            ts: 2_001,
            kind: wait_kind::OBJECT_WAIT,
            lock: 0,
        },
        Record::WaitEnd {
            ts: 3_000,
            timed_out: false,
        },
        Record::WaitDetail {
            class_id: 0,
            site: 0,
        },
        Record::WaitBegin {
            ts: 3_001,
            kind: wait_kind::LATCH,
            lock: 300,
        },
        Record::WaitEnd {
            ts: 3_002,
            timed_out: false,
        },
        Record::JoinBegin {
            ts: 3_003,
            probe: 0,
            target_class_id: 4,
            target_ident: 0xdead_beef,
        },
        Record::JoinEnd {
            ts: 3_004,
            probe: 0,
        },
        Record::JoinBegin {
            ts: 3_005,
            probe: (6 << 24) | 17,
            target_class_id: u32::MAX,
            target_ident: 1,
        },
        Record::JoinEnd {
            ts: 3_006,
            probe: (6 << 24) | 17,
        },
    ];
    let t = round_trip(&identity_clock(), &global, &recs);
    assert_eq!(t.unknown_records, 0);
    let got: Vec<Record> = t.records.iter().map(|(_, r)| r.clone()).collect();
    let mut want = global.clone();
    want.extend(recs.iter().cloned());
    assert_eq!(got, want);
    assert!(t.records[global.len()..].iter().all(|(th, _)| *th == 3));

    // Ticks are converted (2 ticks per ns from tick 1000, header()).
    let t = round_trip(&header(), &[], &recs[..2]);
    assert_eq!(t.records[0].1.ts(), Some(0));
    assert_eq!(t.records[1].1.ts(), Some((50_000_000_000 - 1000) / 2));
}

/// The window records (tags 46–47) keep their times.
#[test]
fn window_records_round_trip() {
    let recs = vec![
        Record::WindowEnter { ts: 10 },
        Record::WindowEnter { ts: 20 },
        Record::WindowExit { ts: 30 },
        Record::WindowExit { ts: 40 },
    ];
    let t = round_trip(&identity_clock(), &[], &recs);
    assert_eq!(t.unknown_records, 0);
    let got: Vec<Record> = t.records.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(got, recs);
}

/// The what-if records (tags 100–109): `Unpark` keeps its target (a Java thread
/// id, up to 64 bits, 0 unknown) and its time, also when it goes backwards; the
/// `--lock-detail` monitor records keep their lock and times.
#[test]
fn whatif_records_round_trip() {
    let recs = vec![
        Record::WaitBegin {
            ts: 10,
            kind: wait_kind::PARK,
            lock: 0,
        },
        Record::Unpark {
            ts: 20,
            target: 1,
            ns: 14_000,
        },
        Record::Unpark {
            ts: 15,
            target: 0,
            ns: 0,
        },
        Record::Unpark {
            ts: 40,
            target: u64::MAX,
            ns: u64::MAX,
        },
        Record::WaitEnd {
            ts: 50,
            timed_out: false,
        },
        // A pinned park: with the frame that entered the monitor it holds (a
        // trailing field, absent when 0), and without.
        Record::VtPinned {
            ts: 51,
            site: 7,
            monitor_site: 9,
        },
        Record::VtPinned {
            ts: 51,
            site: 7,
            monitor_site: 0,
        },
        // An `Object.wait(timeout)` that ran out (a trailing byte; absent: not).
        Record::WaitBegin {
            ts: 52,
            kind: wait_kind::OBJECT_WAIT,
            lock: 0,
        },
        Record::WaitEnd {
            ts: 55,
            timed_out: true,
        },
        // A fair lock (a trailing byte; absent: not).
        Record::LockDef {
            id: 77,
            kind: lock_kind::REENTRANT_LOCK,
            class: "java.util.concurrent.locks.ReentrantLock".into(),
            ident: 0xfeed,
            fair: true,
        },
        // A sampler tick with the machine's idle time (trailing), and one without.
        Record::Sample {
            ts: 56,
            process_cpu_ns: 1_000,
            voluntary_cs: 3,
            involuntary_cs: 1,
            live_threads: 7,
            machine_idle_ns: Some(123_456_789),
        },
        Record::Sample {
            ts: 57,
            process_cpu_ns: 2_000,
            voluntary_cs: 4,
            involuntary_cs: 1,
            live_threads: 7,
            machine_idle_ns: None,
        },
        // --lock-detail: enter, entered (spun), nested enter (no entered: at once), exits.
        Record::MonitorEnter { ts: 60, lock: 1 },
        Record::MonitorEntered { ts: 75 },
        Record::MonitorEnter {
            ts: 80,
            lock: u32::MAX,
        },
        Record::MonitorExit { ts: 90 },
        Record::MonitorExit { ts: 90 },
        // --lock-detail: notify and notifyAll of a monitor.
        Record::MonitorNotify {
            ts: 95,
            lock: 1,
            all: false,
        },
        Record::MonitorNotify {
            ts: 96,
            lock: u32::MAX,
            all: true,
        },
    ];
    let t = round_trip(&identity_clock(), &[], &recs);
    assert_eq!(t.unknown_records, 0);
    let got: Vec<Record> = t.records.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(got, recs);
    assert!(t.records.iter().all(|(th, _)| *th == 3));
}

/// The fork-join records (docs/forkjoin.md, tags 27–39) keep every field; their
/// times are CLOCK_MONOTONIC ns, converted with `start.mono_ns`.
#[test]
fn fork_join_records_round_trip() {
    let recs = vec![
        Record::FjWorker {
            pool: 77,
            class_id: 5,
            parallelism: 64,
        },
        Record::FjPush {
            ts: 10_000,
            usage: 1,
            prev: 0,
            class_id: 6,
            external: true,
            ident: 0xffff_ffff,
            pool: 77,
        },
        Record::FjPush {
            ts: 10_001,
            usage: u64::MAX >> 2,
            prev: 1,
            class_id: 6,
            external: false,
            ident: 0,
            pool: 0,
        },
        Record::FjSite {
            usage: u64::MAX >> 2,
            site: 12,
        },
        Record::FjRunBegin {
            ts: 10_002,
            usage: 1,
            class_id: 6,
        },
        Record::FjJoinBegin {
            ts: 10_003,
            usage: u64::MAX >> 2,
        },
        Record::FjJoinEnd { ts: 10_004 },
        Record::FjRunEnd { ts: 10_005 },
        Record::FjRunBegin {
            ts: 10_006,
            usage: 0,
            class_id: 7,
        },
        Record::FjRunEnd { ts: 10_007 },
        Record::FjCancel {
            ts: 10_008,
            usage: u64::MAX >> 2,
        },
        Record::FjReinit {
            ts: 10_009,
            usage: 0,
        },
    ];
    let t = round_trip(&identity_clock(), &[], &recs);
    assert_eq!(t.unknown_records, 0);
    let got: Vec<Record> = t.records.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(got, recs);
    // Monotonic ns: time zero is `start.mono_ns` (5000 in header()), not tick 1000.
    let t = round_trip(&header(), &[], &recs[1..2]);
    assert_eq!(t.records[0].1.ts(), Some(10_000 - 5_000));
    // With `forkjoin.clock = ticks` (agents that read the TSC in FjProbe), they are
    // ticks like every other record: 2 ticks per ns from tick 1000.
    let mut h = header();
    h.set(header_keys::FORKJOIN_CLOCK, "ticks");
    let t = round_trip(&h, &[], &recs[1..2]);
    assert_eq!(t.records[0].1.ts(), Some((10_000 - 1_000) / 2));
}

fn words(ev: &[u64]) -> Vec<u8> {
    ev.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A fork-join event batch (tag 36, the agent's FjProbe buffer as it is) decodes
/// into the records 27–35; usage ids are counted per buffer across its batches.
#[test]
fn fork_join_event_batches_decode_into_records() {
    use weft_trace::fjevents::kind::*;
    let index = 3u32;
    let id = |n: u64| (index as u64) << 40 | n;
    // Batch 1: a worker, an external submission, its run with a fork inside (no ts
    // of its own: the run's), a site, a join that waits, the run's end.
    let b1 = [
        WORKER | 5 << 8,
        77,
        2,
        EXTERNAL | 6 << 8,
        0,
        10_000,
        0xffff_ffff | 77 << 32,
        RUN_BEGIN | 6 << 8,
        id(1),
        10_002,
        PUSH | 6 << 8,
        SITE | 12 << 8,
        id(2),
        JOIN_BEGIN,
        id(2),
        10_003,
        10_004 << 4 | JOIN_END,
        10_005 << 4 | RUN_END,
    ];
    // Batch 2: a fork outside any run (own ts) of a reused object (prev), a direct
    // execution, a cancel and a reinitialize.
    let b2 = [
        PUSH | F_PREV | F_TS | 6 << 8,
        id(2),
        10_006,
        RUN_BEGIN | 7 << 8,
        0,
        10_007,
        10_008 << 4 | RUN_END,
        CANCEL,
        id(3),
        10_009,
        REINIT,
        0,
        10_010,
    ];
    let mut file = encode_file_header(&identity_clock());
    let mut t = BlockEncoder::new(4, 256);
    t.push_fj_events(index, &words(&b1));
    file.extend(t.take_block());
    t.push_fj_events(index, &words(&b2));
    file.extend(t.take_block());
    let trace = read_trace_bytes(&file).expect("reads");
    let got: Vec<Record> = trace.records.iter().map(|(_, r)| r.clone()).collect();
    let push = |ts, usage, prev, external, ident, pool| Record::FjPush {
        ts,
        usage,
        prev,
        class_id: 6,
        external,
        ident,
        pool,
    };
    let want = vec![
        Record::FjWorker {
            pool: 77,
            class_id: 5,
            parallelism: 2,
        },
        push(10_000, id(1), 0, true, 0xffff_ffff, 77),
        Record::FjRunBegin {
            ts: 10_002,
            usage: id(1),
            class_id: 6,
        },
        push(10_002, id(2), 0, false, 0, 0),
        Record::FjSite {
            usage: id(2),
            site: 12,
        },
        Record::FjJoinBegin {
            ts: 10_003,
            usage: id(2),
        },
        Record::FjJoinEnd { ts: 10_004 },
        Record::FjRunEnd { ts: 10_005 },
        push(10_006, id(3), id(2), false, 0, 0),
        Record::FjRunBegin {
            ts: 10_007,
            usage: 0,
            class_id: 7,
        },
        Record::FjRunEnd { ts: 10_008 },
        Record::FjCancel {
            ts: 10_009,
            usage: id(3),
        },
        Record::FjReinit {
            ts: 10_010,
            usage: 0,
        },
    ];
    assert_eq!(got, want);
    assert!(trace.records.iter().all(|(th, _)| *th == 4));

    // Malformed batches are corruption, never a panic: an unknown kind, an event
    // cut short, bytes that are not whole words.
    for bad in [
        words(&[13]),
        words(&[RUN_BEGIN, 1]),
        words(&[5 << 4 | RUN]),
        vec![1u8, 0, 0],
    ] {
        let mut file = encode_file_header(&identity_clock());
        let mut t = BlockEncoder::new(4, 256);
        t.push_fj_events(index, &bad);
        file.extend(t.take_block());
        t.push(&Record::End { ts: 1 });
        file.extend(t.take_block());
        let (t, warnings) = read_trace_bytes_with_warnings(&file).expect("the rest is read");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(t.records.iter().any(|(_, r)| matches!(
            r,
            Record::Loss {
                reason: LossReason::Corrupt,
                ..
            }
        )));
        assert!(t
            .records
            .iter()
            .any(|(_, r)| matches!(r, Record::End { .. })));
    }
}

/// The two-word run and join events (kinds 11 and 12): a run takes its class from its
/// push, also when the push is in a block later in the file (a task stolen by the
/// thread whose block comes first); a run whose push is not in the trace gets class 0.
#[test]
fn fork_join_runs_take_their_push_class() {
    use weft_trace::fjevents::kind::*;
    let id = |index: u64, n: u64| index << 40 | n;
    // Buffer 3 (thread 4): forks usage 3:1 (class 6), joins it, runs it inline; then
    // runs 5:1 (stolen from buffer 5, written later) and 9:1 (never pushed).
    let b3 = [
        PUSH | F_TS | 6 << 8,
        100,
        110 << 4 | JOIN,
        id(3, 1),
        120 << 4 | RUN,
        id(3, 1),
        130 << 4 | RUN_END,
        140 << 4 | RUN,
        id(5, 1),
        150 << 4 | RUN_END,
        160 << 4 | RUN,
        id(9, 1),
        170 << 4 | RUN_END,
    ];
    // Buffer 5 (thread 6): the push of 5:1 (class 8).
    let b5 = [PUSH | F_TS | 8 << 8, 90];
    let mut file = encode_file_header(&identity_clock());
    for (thread, index, batch) in [(4, 3, &b3[..]), (6, 5, &b5[..])] {
        let mut t = BlockEncoder::new(thread, 256);
        t.push_fj_events(index, &words(batch));
        file.extend(t.take_block());
    }
    let trace = read_trace_bytes(&file).expect("reads");
    let runs: Vec<(u64, u64, u32)> = trace
        .records
        .iter()
        .filter_map(|(_, r)| match r {
            Record::FjRunBegin {
                ts,
                usage,
                class_id,
            } => Some((*ts, *usage, *class_id)),
            _ => None,
        })
        .collect();
    assert_eq!(
        runs,
        [(120, id(3, 1), 6), (140, id(5, 1), 8), (160, id(9, 1), 0)]
    );
    assert!(trace.records.iter().any(|(_, r)| *r
        == Record::FjJoinBegin {
            ts: 110,
            usage: id(3, 1)
        }));
}

/// The sampled-stack records (tags 80–82, docs/sampling.md) keep every field;
/// a sample's time is converted like any other.
#[test]
fn sampled_stack_records_round_trip() {
    use weft_trace::{frame_kind, sample_mode, thread_state};
    let global = vec![
        Record::FrameDef {
            id: 1,
            kind: frame_kind::JAVA,
            line: 42,
            class: "demo.Work$$Lambda/0x1".into(),
            method: "run".into(),
        },
        Record::FrameDef {
            id: 2,
            kind: frame_kind::BROKEN,
            line: -1,
            class: "".into(),
            method: "gc_active".into(),
        },
        Record::StackDef {
            id: 7,
            frames: vec![1, 1, 300_000],
        },
        Record::StackDef {
            id: 8,
            frames: vec![],
        },
        Record::StackSample {
            ts: 2_000,
            thread: 3,
            stack: 7,
            mode_state: sample_mode::CPU | thread_state::RUNNING << 4,
        },
        Record::StackSample {
            ts: 1_500,
            thread: 0,
            stack: 8,
            mode_state: sample_mode::WALL | thread_state::SLEEPING << 4,
        },
        Record::ThreadSeen {
            ts: 2_500,
            name: "Finalizer".into(),
            java_id: 3,
            os_tid: 4_000_001,
            daemon: true,
        },
    ];
    let t = round_trip(&identity_clock(), &global, &[]);
    let got: Vec<Record> = t.records.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(got, global);
}

/// A file read while it grows: each poll returns the records of the blocks
/// completed since the last one, never a block still being written.
#[test]
fn tail_reads_only_what_was_appended() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("weft-tail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.weft");
    let mut f = std::fs::File::create(&path).unwrap();
    let mut tail = TraceTail::open(&path).unwrap();
    let head = encode_file_header(&identity_clock());
    f.write_all(&head[..10]).unwrap();
    assert!(tail.poll().unwrap().is_empty());
    assert!(tail.header().is_none());
    f.write_all(&head[10..]).unwrap();
    assert!(tail.poll().unwrap().is_empty());
    assert!(tail.header().is_some());
    let block = |ts: u64| {
        let mut e = BlockEncoder::new(1, 64);
        e.push(&Record::WaitBegin {
            ts,
            kind: wait_kind::PARK,
            lock: 0,
        });
        e.push(&Record::WaitEnd {
            ts: ts + 1,
            timed_out: false,
        });
        e.take_block()
    };
    let b1 = block(100);
    f.write_all(&b1[..5]).unwrap();
    assert!(
        tail.poll().unwrap().is_empty(),
        "a partial block is not read"
    );
    f.write_all(&b1[5..]).unwrap();
    f.write_all(&block(200)).unwrap();
    let got = tail.poll().unwrap();
    let ts: Vec<u64> = got.iter().filter_map(|(_, r)| r.ts()).collect();
    assert_eq!(ts, vec![100, 101, 200, 201]);
    assert!(got.iter().all(|(t, _)| *t == 1));
    f.write_all(&block(300)).unwrap();
    let ts: Vec<u64> = tail
        .poll()
        .unwrap()
        .iter()
        .filter_map(|(_, r)| r.ts())
        .collect();
    assert_eq!(ts, vec![300, 301], "only the new block");
    assert_eq!(tail.bytes_read, std::fs::metadata(&path).unwrap().len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Collects what a stream hands on.
struct Collect(Vec<(ThreadIndex, Record)>);

impl RecordSink for Collect {
    fn record(&mut self, thread: ThreadIndex, record: &Record) {
        self.0.push((thread, record.clone()));
    }
}

/// The streaming reader hands on the records `read_trace` returns, in the same
/// order, with the same outcome (truncation, errors), for whole and cut files;
/// a run stolen before its push gets its class from `fj_usage_class`.
#[test]
fn streaming_reads_what_read_trace_reads() {
    let dir = std::env::temp_dir().join(format!("weft-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("t.weft");
    let stream = |bytes: &[u8]| {
        std::fs::write(&path, bytes).expect("write");
        stream_trace(&path, |_| Collect(Vec::new()))
    };
    let (file, _) = sample_file();
    let hend = 18 + u32::from_le_bytes([file[10], file[11], file[12], file[13]]) as usize;
    for cut in 0..=file.len() {
        let bytes = &file[..cut];
        match (read_trace_bytes(bytes), stream(bytes)) {
            (Ok(t), Ok((c, end))) => {
                assert_eq!(c.0, t.records, "cut at {cut}");
                assert_eq!(end.truncated, t.truncated, "cut at {cut}");
                assert_eq!(end.unknown_records, t.unknown_records);
                assert_eq!(end.header, t.header);
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "cut at {cut}"),
            (a, b) => panic!(
                "cut at {cut} (header ends at {hend}): read_trace {:?}, stream {:?}",
                a.map(|_| ()),
                b.map(|_| ())
            ),
        }
    }
    // A corrupt block in the middle is skipped the same way: the same records (its
    // Loss last) and the same warnings.
    let mut bad = file.clone();
    bad[hend + 10] ^= 0xff;
    bad.extend_from_slice(&file[hend..]);
    let (t, warnings) = read_trace_bytes_with_warnings(&bad).expect("reads around it");
    let (c, end) = stream(&bad).expect("streams around it");
    assert_eq!(c.0, t.records);
    assert_eq!(end.warnings, warnings);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(matches!(
        t.records.last(),
        Some((
            _,
            Record::Loss {
                reason: LossReason::Corrupt,
                ..
            }
        ))
    ));
    // A steal decoded before its push: class 0 in the stream, resolved by the end.
    use weft_trace::fjevents::kind::*;
    let id = |index: u64, n: u64| index << 40 | n;
    let b3 = [140 << 4 | RUN, id(5, 1), 150 << 4 | RUN_END];
    let b5 = [PUSH | F_TS | 8 << 8, 90];
    let mut fj = encode_file_header(&identity_clock());
    for (thread, index, batch) in [(4, 3, &b3[..]), (6, 5, &b5[..])] {
        let mut t = BlockEncoder::new(thread, 256);
        t.push_fj_events(index, &words(batch));
        fj.extend(t.take_block());
    }
    let (c, end) = stream(&fj).expect("streams");
    assert!(c.0.iter().any(|(_, r)| *r
        == Record::FjRunBegin {
            ts: 140,
            usage: id(5, 1),
            class_id: 0
        }));
    assert_eq!(end.fj_usage_class(id(5, 1)), Some(8));
    assert_eq!(end.fj_usage_class(id(9, 1)), None);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `AttachEnd` (tag 120, docs/attach.md) keeps every field; its time is converted.
#[test]
fn attach_end_round_trips() {
    let end = Record::AttachEnd {
        ts: 7_000,
        classes: 13,
        probed_during: 35,
        probed_after: 0,
        shape_before: u64::MAX - 1,
        shape_after: 0x0123_4567_89ab_cdef,
    };
    let t = round_trip(
        &identity_clock(),
        &[end.clone(), Record::End { ts: 7_001 }],
        &[],
    );
    assert!(t.records.iter().any(|(_, r)| *r == end), "{:?}", t.records);
}
