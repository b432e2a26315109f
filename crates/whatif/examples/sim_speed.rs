//! Simulator speed (bench/whatif/speed.sh): builds a synthetic graph of N ops
//! (fork-join trees on a pool of 2, executor tasks awaited by main, a contended
//! lock; a stall after every compute op and a hand-off on every acquisition) and
//! times one simulation. `cargo run --release -p weft-whatif --example sim_speed -- 10000000`

use std::time::Instant;

use weft_whatif::graph::{ExecGraph, Lock, Op, Pool, Runs, Strand};
use weft_whatif::sim::{simulate, Overlay, SimParams};

fn strand(runs: Runs, class: u32) -> Strand {
    Strand {
        class,
        runs,
        first: 0,
        len: 0,
        root_start_ns: None,
        observed_begin_ns: 0,
        observed_end_ns: 0,
        site: None,
        thread: 0,
    }
}

fn fj_tree(g: &mut ExecGraph, depth: u32) -> u32 {
    if depth == 0 {
        return g.push_strand(strand(Runs::Pool(0), 1), &[Op::Compute(1_000)]);
    }
    let a = fj_tree(g, depth - 1);
    let b = fj_tree(g, depth - 1);
    g.push_strand(
        strand(Runs::Pool(0), 1),
        &[
            Op::Compute(100),
            Op::Spawn(a),
            Op::Spawn(b),
            Op::Await(b),
            Op::Await(a),
        ],
    )
}

fn main() {
    let target: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let t = Instant::now();
    let mut g = ExecGraph {
        cores: 2,
        classes: vec!["main".into(), "Fj".into(), "Task".into()],
        pools: vec![
            Pool {
                id: "fj".into(),
                forkjoin: true,
                threads: 2,
                pickup_ns: 0,
            },
            Pool {
                id: "pool".into(),
                forkjoin: false,
                threads: 2,
                pickup_ns: 20_000,
            },
        ],
        locks: vec![Lock {
            id: "L@1".into(),
            class: "L".into(),
            holds_chained: 0,
            holds_assumed: 0,
            holds_recorded: 0,
            handoff_ns: 0,
            monitor: true,
            read_write: false,
            semaphore: false,
            permits: 1,
        }],
        wake_ns: 10_000,
        ..ExecGraph::default()
    };
    let mut main_ops = Vec::new();
    while g.ops.len() + main_ops.len() < target {
        // A fork-join computation of 2^10 leaves (~5,000 ops) ...
        let root = fj_tree(&mut g, 10);
        main_ops.extend([Op::Spawn(root), Op::Await(root)]);
        // ... and 100 executor tasks taking a lock (~500 ops).
        let tasks: Vec<u32> = (0..100)
            .map(|_| {
                g.push_strand(
                    strand(Runs::Pool(1), 2),
                    &[
                        Op::Compute(5_000),
                        Op::Acquire(0),
                        Op::Compute(500),
                        Op::Release(0),
                    ],
                )
            })
            .collect();
        main_ops.extend(tasks.iter().map(|&s| Op::Spawn(s)));
        main_ops.extend(tasks.iter().map(|&s| Op::Await(s)));
    }
    let mut m = strand(Runs::Thread, 0);
    m.root_start_ns = Some(0);
    g.push_strand(m, &main_ops);
    // As a recording with schedstat and --lock-detail gives them at worst: a stall
    // after every compute op and a hand-off latency on every acquisition.
    for (i, op) in g.ops.iter().enumerate() {
        match op {
            Op::Compute(_) => g.compute_stall_ns.push((i as u32, 100)),
            Op::Acquire(_) => g.acquire_handoff_ns.push((i as u32, 1_000)),
            _ => {}
        }
    }
    let built = t.elapsed();
    let t = Instant::now();
    let r = simulate(&g, &Overlay::identity(&g), SimParams::default());
    let simulated = t.elapsed();
    println!(
        "ops {} strands {} build {:.2} s simulate {:.2} s makespan {} ns deadlock {}",
        g.ops.len(),
        g.strands.len(),
        built.as_secs_f64(),
        simulated.as_secs_f64(),
        r.makespan_ns,
        r.deadlock
    );
}
