//! Size and time of the HTML report (and exports) for a synthetic trace of
//! 1,000,000 task executions: 16 pool threads running tasks of three classes
//! submitted from main, with CPU samples and GC pauses.
//!
//! `cargo run --release -p weft-views --example html_1m [-- executions out_dir]`

use std::time::Instant;

use weft_trace::{
    encode_file_header, header_keys, BlockEncoder, Header, ProbeKind, Record, GLOBAL_THREAD,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let total: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let dir = std::path::PathBuf::from(args.get(2).cloned().unwrap_or_else(|| "/tmp".into()));
    let threads: u32 = 16;
    let mut h = Header::default();
    h.set(header_keys::START_TICKS, "0");
    h.set(header_keys::START_MONO_NS, "0");
    h.set(header_keys::TICKS_PER_SEC, "1000000000");
    h.set(header_keys::PID, "4242");
    h.set(header_keys::CPUS, "8");
    h.set(header_keys::JVM_VERSION, "17.0.15");
    let mut file = encode_file_header(&h);
    let flush = |enc: &mut BlockEncoder, file: &mut Vec<u8>, force: bool| {
        if !enc.is_empty() && (force || enc.len() > 1 << 20) {
            file.extend(enc.take_block());
        }
    };
    let mut g = BlockEncoder::new(GLOBAL_THREAD, 1 << 21);
    let classes = ["demo.Parse", "demo.Render", "demo.Store"];
    g.push(&Record::ClassDef {
        id: 1,
        name: "java.lang.Thread".into(),
    });
    for (i, c) in classes.iter().enumerate() {
        g.push(&Record::ClassDef {
            id: 10 + i as u32,
            name: (*c).into(),
        });
        g.push(&Record::ProbeDef {
            id: 10 + i as u32,
            kind: ProbeKind::Execution,
            class: (*c).into(),
            method: "run".into(),
            descriptor: "()V".into(),
        });
        g.push(&Record::SiteDef {
            id: 10 + i as u32,
            frames: vec![format!("demo.Main.submit{}:{}", c, 40 + i)],
        });
    }
    g.push(&Record::ProbeDef {
        id: 1,
        kind: ProbeKind::Submission,
        class: "java.util.concurrent.ThreadPoolExecutor".into(),
        method: "execute".into(),
        descriptor: "(Ljava/lang/Runnable;)V".into(),
    });
    // Two contended monitors: every 10th execution first blocks on one (1–41 µs).
    for (id, class) in [(1, "demo.Cache"), (2, "demo.Registry")] {
        g.push(&Record::LockDef {
            id,
            kind: weft_trace::lock_kind::MONITOR,
            class: class.into(),
            ident: 0x1234 + id,
            fair: false,
        });
    }
    // Durations: a deterministic pseudo-random mix per class (5 µs .. 2 ms).
    let mut rng = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let per = total / threads as u64;
    let mut end_all = 0u64;
    let mut submits: Vec<(u64, u32, u32)> = Vec::with_capacity(total as usize);
    for t in 1..=threads {
        let mut e = BlockEncoder::new(t, 1 << 21);
        let mut ts = 1_000_000u64 + t as u64 * 1000;
        e.push(&Record::ThreadStart {
            ts,
            name: format!("pool-1-thread-{t}").into(),
            java_id: 20 + t as u64,
            os_tid: 1000 + t,
            daemon: false,
            class_id: 1,
            target_class_id: 0,
            target_ident: 0,
            ident: 5000 + t,
        });
        for k in 0..per {
            let r = next();
            let c = (r % 3) as u32;
            let dur = match c {
                0 => 5_000 + r % 20_000,
                1 => 20_000 + r % 200_000,
                _ => 50_000 + (r >> 8) % 2_000_000 * ((r >> 40) % 8 == 0) as u64,
            };
            let ident = (t * 1_000_000 + k as u32) & 0x7fff_ffff;
            ts += 2_000 + (r >> 20) % 10_000; // idle gap
            if k % 10 == 0 {
                let lock = 1 + (k / 10 % 2) as u32;
                e.push(&Record::LockBlock {
                    ts,
                    lock,
                    flags: 0,
                    owner: 20 + (t % threads + 1) as u64,
                    site: 0,
                });
                ts += 1_000 + (r >> 12) % 40_000;
                e.push(&Record::LockAcquired {
                    ts,
                    lock,
                    parked: true,
                });
            }
            submits.push((
                ts.saturating_sub(1_000 + (r >> 30) % 500_000),
                10 + c,
                ident,
            ));
            e.push(&Record::TaskBegin {
                ts,
                probe: 10 + c,
                class_id: 10 + c,
                ident,
                inner_class_id: 0,
                inner_ident: 0,
            });
            ts += dur;
            e.push(&Record::TaskEnd {
                ts,
                probe: 10 + c,
                ident,
            });
            flush(&mut e, &mut file, false);
        }
        ts += 1000;
        e.push(&Record::ThreadEnd {
            ts,
            cpu_ns: ts / 2,
            voluntary_cs: per,
            involuntary_cs: per / 10,
        });
        end_all = end_all.max(ts);
        flush(&mut e, &mut file, true);
    }
    // main (thread 0): the submissions, in time order.
    submits.sort_unstable();
    let mut m = BlockEncoder::new(0, 1 << 21);
    m.push(&Record::ThreadStart {
        ts: 0,
        name: "main".into(),
        java_id: 1,
        os_tid: 999,
        daemon: false,
        class_id: 1,
        target_class_id: 0,
        target_ident: 0,
        ident: 1,
    });
    for (ts, c, ident) in &submits {
        m.push(&Record::Submit {
            ts: *ts,
            probe: 1,
            executor_class_id: 1,
            task_class_id: *c,
            task_ident: *ident,
            inner_class_id: 0,
            inner_ident: 0,
            site: *c,
        });
        flush(&mut m, &mut file, false);
    }
    flush(&mut m, &mut file, true);
    // Samples every 100 ms, a GC pause every 700 ms.
    let mut cpu = 0u64;
    let mut t = 0u64;
    while t <= end_all {
        g.push(&Record::Sample {
            ts: t,
            process_cpu_ns: cpu,
            voluntary_cs: t / 10_000,
            involuntary_cs: t / 100_000,
            live_threads: threads + 1,
            machine_idle_ns: None,
        });
        cpu += 100_000_000 * (5 + (t / 100_000_000) % 3);
        if t.is_multiple_of(700_000_000) && t > 0 {
            g.push(&Record::GcStart { ts: t + 1_000_000 });
            g.push(&Record::GcEnd { ts: t + 9_000_000 });
        }
        t += 100_000_000;
    }
    g.push(&Record::End { ts: end_all + 1 });
    flush(&mut g, &mut file, true);
    let trace_path = dir.join("synthetic-1m.weft");
    std::fs::write(&trace_path, &file).unwrap();
    println!(
        "trace: {} executions, {} threads, {:.1} MB",
        per * threads as u64,
        threads,
        file.len() as f64 / 1e6
    );

    let t0 = Instant::now();
    let trace = weft_trace::read_trace(&trace_path).unwrap();
    let t1 = Instant::now();
    let a = weft_analysis::analyze(&trace);
    let t2 = Instant::now();
    let html = weft_views::report_html(&a, "synthetic-1m.weft");
    let t3 = Instant::now();
    let pf = weft_views::perfetto_trace(&a);
    let t4 = Instant::now();
    let chrome = weft_views::chrome_trace(&a);
    let t5 = Instant::now();
    let svg = weft_views::flamegraph_svg(&a, "synthetic");
    let t6 = Instant::now();
    std::fs::write(dir.join("synthetic-1m.html"), &html).unwrap();
    std::fs::write(dir.join("synthetic-1m.pftrace"), &pf).unwrap();
    println!("executions in analysis: {}", a.tasks.executions.len());
    println!(
        "lock blocked periods: {}, waits: {}",
        a.locks.blocked.len(),
        a.locks.wait_intervals.len()
    );
    println!("read trace:    {:>8.2} s", (t1 - t0).as_secs_f64());
    println!("analyze:       {:>8.2} s", (t2 - t1).as_secs_f64());
    println!(
        "HTML report:   {:>8.2} s, {:.2} MB",
        (t3 - t2).as_secs_f64(),
        html.len() as f64 / 1e6
    );
    println!(
        "Perfetto:      {:>8.2} s, {:.1} MB",
        (t4 - t3).as_secs_f64(),
        pf.len() as f64 / 1e6
    );
    println!(
        "Chrome JSON:   {:>8.2} s, {:.1} MB",
        (t5 - t4).as_secs_f64(),
        chrome.len() as f64 / 1e6
    );
    println!(
        "flame graph:   {:>8.2} s, {:.1} KB",
        (t6 - t5).as_secs_f64(),
        svg.len() as f64 / 1e3
    );
}
