//! Mode S on small constructed graphs with hand-computed schedules (WHATIF.md §2.8).

use crate::graph::{ExecGraph, Lock, Op, Pool, Runs, Strand};
use crate::sim::{simulate, LockMode, Overlay, SimParams};

pub(crate) fn strand(runs: Runs, root: Option<u64>, class: u32) -> Strand {
    Strand {
        class,
        runs,
        first: 0,
        len: 0,
        root_start_ns: root,
        observed_begin_ns: 0,
        observed_end_ns: 0,
        site: None,
        thread: 0,
    }
}

/// `g` with `n` threads of `w` ns of compute, started and awaited by main.
pub(crate) fn threads_of(mut g: ExecGraph, n: usize, w: u64) -> ExecGraph {
    let kids: Vec<u32> = (0..n)
        .map(|_| g.push_strand(strand(Runs::Thread, None, 1), &[Op::Compute(w)]))
        .collect();
    let mut ops: Vec<Op> = kids.iter().map(|&k| Op::Spawn(k)).collect();
    ops.extend(kids.iter().map(|&k| Op::Await(k)));
    g.push_strand(strand(Runs::Thread, Some(0), 0), &ops);
    g
}

fn graph(cores: u32) -> ExecGraph {
    ExecGraph {
        cores,
        classes: vec!["main".into(), "Task".into(), "Other".into()],
        ..ExecGraph::default()
    }
}

fn add_pool(g: &mut ExecGraph, forkjoin: bool, threads: u32) {
    g.pools.push(Pool {
        id: "p".into(),
        forkjoin,
        threads,
        pickup_ns: 0,
    });
}

fn run(g: &ExecGraph) -> u64 {
    simulate(g, &Overlay::identity(g), SimParams::default()).makespan_ns
}

/// 2 threads of 1000 ns on 2 cores of which the JVM's own threads (a JIT) took 1:
/// 2000, the JIT's 2000 CPU-ns beside them. Halving the threads' work leaves the
/// JIT's work as it was: the run is not 1000 (the JIT's share kept) but 1500 (all
/// 3000 CPU-ns on the 2 cores; the program gets 2/3 of a core, 1000 CPU-ns in 1500).
/// A slowdown the other way: doubled, 3000 (6000 CPU-ns over 2 cores) not 4000.
#[test]
fn the_jvm_s_own_threads_work_is_fixed_under_an_edit() {
    use crate::sim::with_jvm_work;
    let mut g = threads_of(graph(2), 2, 1000);
    g.cores_effective = 1.0;
    g.cores_jvm_threads = 1.0;
    let p = SimParams::default();
    let base = run(&g);
    assert_eq!(base, 2000);
    let scaled = |f: f64| {
        let mut ov = Overlay::identity(&g);
        ov.class_factor[1] = f;
        let r = simulate(&g, &ov, p);
        (
            r.makespan_ns,
            with_jvm_work(&g, &ov, p, base, r).makespan_ns,
        )
    };
    assert_eq!(scaled(0.5), (1000, 1500));
    assert_eq!(scaled(2.0), (4000, 3000));
    // The unedited run is its own fixed point.
    let id = Overlay::identity(&g);
    assert_eq!(
        with_jvm_work(&g, &id, p, base, simulate(&g, &id, p)).makespan_ns,
        2000
    );
    // Other processes' load is not the JVM's work: as simulated.
    g.cores_other_processes = 1.0;
    let mut ov = Overlay::identity(&g);
    ov.class_factor[1] = 0.5;
    let r = simulate(&g, &ov, p);
    assert_eq!(with_jvm_work(&g, &ov, p, base, r).makespan_ns, 1000);
}

#[test]
fn a_chain_of_computes_takes_their_sum() {
    let mut g = graph(2);
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[Op::Compute(100), Op::Delay(50), Op::Compute(30)],
    );
    assert_eq!(run(&g), 180);
}

#[test]
fn k_threads_on_p_cores_share_them() {
    // 4 threads of 1000 ns on 2 cores under processor sharing: 2000 ns.
    let g = threads_of(graph(2), 4, 1000);
    assert_eq!(run(&g), 2000);
    // On one core: 4000; on 8 cores: 1000.
    let mut ov = Overlay::identity(&g);
    ov.cores = Some(1.0);
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 4000);
    ov.cores = Some(8.0);
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 1000);
}

#[test]
fn fewer_cores_take_the_jvm_s_own_threads_share_with_them() {
    // 4 threads of 1000 ns recorded on 2 cores of which the program got 1: 4000.
    let mut g = threads_of(graph(2), 4, 1000);
    g.cores_effective = 1.0;
    let on = |g: &ExecGraph, cores: f64| {
        let mut ov = Overlay::identity(g);
        ov.cores = Some(cores);
        simulate(g, &ov, SimParams::default()).makespan_ns
    };
    // Other processes held the other CPU: on 1 core the program still gets the 1
    // it got (its share does not shrink with the cores it is given).
    g.cores_other_processes = 1.0;
    assert_eq!(run(&g), 4000);
    assert_eq!(on(&g, 1.0), 4000);
    // The JVM's own threads (a JIT compiler) held it: they share 1 core with the
    // program as they shared 2, half each: 8000.
    g.cores_other_processes = 0.0;
    g.cores_jvm_threads = 1.0;
    assert_eq!(run(&g), 4000);
    assert_eq!(on(&g, 1.0), 8000);
    // Other processes took part of it too: their session's share, as above.
    g.cores_other_processes = 0.5;
    g.cores_jvm_threads = 0.5;
    assert_eq!(on(&g, 1.0), 4000);
}

fn pool_graph(workers: u32, tasks: usize, w: u64) -> ExecGraph {
    let mut g = graph(8);
    add_pool(&mut g, false, workers);
    let kids: Vec<u32> = (0..tasks)
        .map(|_| g.push_strand(strand(Runs::Pool(0), None, 1), &[Op::Compute(w)]))
        .collect();
    let mut ops: Vec<Op> = kids.iter().map(|&k| Op::Spawn(k)).collect();
    ops.extend(kids.iter().map(|&k| Op::Await(k)));
    g.push_strand(strand(Runs::Thread, Some(0), 0), &ops);
    g
}

#[test]
fn a_pool_of_k_runs_n_tasks_in_rounds() {
    // ceil(10 / 3) * 100 = 400 with 3 workers, 8 cores.
    let g = pool_graph(3, 10, 100);
    let r = simulate(&g, &Overlay::identity(&g), SimParams::default());
    assert_eq!(r.makespan_ns, 400);
    assert_eq!(r.peak_busy, vec![3]);
    let mut ov = Overlay::identity(&g);
    ov.pool_threads[0] = Some(5);
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 200);
}

#[test]
fn inline_runs_a_task_on_the_submitter() {
    // main: compute 10, submit t (50), compute 20, await t. Pool of 1.
    // As recorded: t runs in parallel: 10 + max(20, 50) = 60. Inline: 10 + 50 + 20 = 80.
    let mut g = graph(2);
    add_pool(&mut g, false, 1);
    let t = g.push_strand(strand(Runs::Pool(0), None, 1), &[Op::Compute(50)]);
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[Op::Compute(10), Op::Spawn(t), Op::Compute(20), Op::Await(t)],
    );
    assert_eq!(run(&g), 60);
    let mut ov = Overlay::identity(&g);
    ov.inline[t as usize] = true;
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 80);
}

/// K threads × n iterations of (o outside, h inside one lock), P ≥ K.
fn lock_graph(k: usize, n: usize, o: u64, h: u64) -> ExecGraph {
    let mut g = graph(k as u32);
    g.locks.push(Lock {
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
    });
    let mut body = Vec::new();
    for _ in 0..n {
        body.extend([
            Op::Compute(o),
            Op::Acquire(0),
            Op::Compute(h),
            Op::Release(0),
        ]);
    }
    let kids: Vec<u32> = (0..k)
        .map(|_| g.push_strand(strand(Runs::Thread, None, 1), &body))
        .collect();
    let mut ops: Vec<Op> = kids.iter().map(|&t| Op::Spawn(t)).collect();
    ops.extend(kids.iter().map(|&t| Op::Await(t)));
    g.push_strand(strand(Runs::Thread, Some(0), 0), &ops);
    g
}

#[test]
fn a_lock_bound_loop_is_serialised_and_removing_the_lock_frees_it() {
    // 4 threads × 10 × (o 10, h 30): lock-bound, T = K·n·h + o = 1210 (the first
    // section waits for its own o); without the lock n(o+h) = 400.
    let g = lock_graph(4, 10, 10, 30);
    assert_eq!(run(&g), 4 * 10 * 30 + 10);
    let mut ov = Overlay::identity(&g);
    ov.lock_mode[0] = LockMode::Removed;
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 400);
    // Shorter sections by 50%: K·n·h/2 + o = 610.
    ov.lock_mode[0] = LockMode::Shorten(0.5);
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 610);
}

#[test]
fn a_cpu_bound_lock_costs_little() {
    // 2 threads × 10 × (o 100, h 5): T = n(o+h) + h = 1055 at most; removing gives 1050.
    let g = lock_graph(2, 10, 100, 5);
    let base = run(&g);
    assert!((1050..=1060).contains(&base), "{base}");
    let mut ov = Overlay::identity(&g);
    ov.lock_mode[0] = LockMode::Removed;
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 1050);
}

#[test]
fn a_split_lock_is_between_removed_and_one_lock() {
    let g = lock_graph(4, 10, 10, 30);
    let mut ov = Overlay::identity(&g);
    ov.lock_mode[0] = LockMode::Split(4);
    let t = simulate(&g, &ov, SimParams::default()).makespan_ns;
    assert!((400..1210).contains(&t), "{t}");
}

#[test]
fn a_waiter_handed_a_lock_runs_after_its_recorded_hand_off() {
    // 2 threads × 2 × (o 10, h 30) on 2 cores; ops 0..7 are A's, 8..15 B's. Recorded
    // hand-offs (release of the holder to acquisition): B's first acquisition (op 9)
    // 7, A's second (op 5) 4; B's second (op 13) found the lock free when recorded:
    // no hand-off latency, even where it waits here. The lock's median is 6.
    let mut g = lock_graph(2, 2, 10, 30);
    g.acquire_handoff_ns = vec![(5, 4), (9, 7)];
    g.locks[0].handoff_ns = 6;
    // A holds 10..40; B handed it at 40, runs at 47, holds to 77; A (asked at 50)
    // runs at 81, holds to 111; B (asked at 87) takes it at once: 111..141.
    assert_eq!(run(&g), 141);
    // Without hand-off latencies: 130 (A 10..40, B 40..70, A 70..100, B 100..130).
    let mut plain = g.clone();
    plain.acquire_handoff_ns.clear();
    assert_eq!(run(&plain), 130);
    // Removing the lock removes the hand-offs too: 2 × (10 + 30) = 80.
    let mut ov = Overlay::identity(&g);
    ov.lock_mode[0] = LockMode::Removed;
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 80);
    // Recorded on a loaded machine (3 CPUs of which it got 2): the recorded
    // hand-offs take the lock's median (6), op 13 still none: 130 + 6 + 6 = 142.
    g.cores = 3;
    g.cores_effective = 2.0;
    assert_eq!(run(&g), 142);
}

#[test]
fn a_stall_after_a_compute_op_holds_no_core_and_gives_no_wake_up_preference() {
    // On 1 core: A computes 100, is off the CPU 50 (its recorded stall), computes
    // 100; B (if any) computes `b`. Returns (A's end, makespan).
    let run_ab = |b: Option<u64>, ov: Option<f64>| {
        let mut g = graph(1);
        let a = g.push_strand(
            strand(Runs::Thread, None, 1),
            &[Op::Compute(100), Op::Compute(100)],
        );
        g.compute_stall_ns = vec![(g.strands[a as usize].first, 50)];
        let mut main = vec![Op::Spawn(a)];
        if let Some(w) = b {
            let b = g.push_strand(strand(Runs::Thread, None, 2), &[Op::Compute(w)]);
            main.extend([Op::Spawn(b), Op::Await(b)]);
        }
        main.push(Op::Await(a));
        g.push_strand(strand(Runs::Thread, Some(0), 0), &main);
        let mut o = Overlay::identity(&g);
        o.class_factor[1] = ov.unwrap_or(1.0);
        let r = simulate(&g, &o, SimParams::default());
        (r.strand_end_ns[a as usize], r.makespan_ns)
    };
    assert_eq!(run_ab(None, None), (250, 250));
    // Beside B (300) they share the core (A's first 100 done at 200, B's too); B
    // alone during A's stall (150 done at 250); then they share again, A CPU-bound
    // (no wake-up preference): A ends at 450, B at 500.
    assert_eq!(run_ab(Some(300), None), (450, 500));
    // A 50% faster keeps its stall: its 50 shared by 100, stalled to 150 (B: 100
    // done), its next 50 shared by 250 (B: 150 done), B alone to 400.
    assert_eq!(run_ab(Some(300), Some(0.5)), (250, 400));
    // The sensitivity runs scale stalls with the latencies: ×2 gives A alone 300.
    let mut g = graph(1);
    let a = g.push_strand(
        strand(Runs::Thread, Some(0), 1),
        &[Op::Compute(100), Op::Compute(100)],
    );
    g.compute_stall_ns = vec![(g.strands[a as usize].first, 50)];
    let p = SimParams {
        latency_scale: 2.0,
        ..SimParams::default()
    };
    assert_eq!(simulate(&g, &Overlay::identity(&g), p).makespan_ns, 300);
}

/// fib-like fork-join: a node forks two children and joins them; leaves compute.
fn fj_tree(g: &mut ExecGraph, depth: u32, leaf: u64) -> u32 {
    if depth == 0 {
        return g.push_strand(strand(Runs::Pool(0), None, 1), &[Op::Compute(leaf)]);
    }
    let a = fj_tree(g, depth - 1, leaf);
    let b = fj_tree(g, depth - 1, leaf);
    g.push_strand(
        strand(Runs::Pool(0), None, 1),
        &[Op::Spawn(a), Op::Spawn(b), Op::Await(b), Op::Await(a)],
    )
}

#[test]
fn fork_join_work_is_shared_by_the_workers() {
    // 16 leaves of 100 on 2 workers, 2 cores: work 1600 / 2 = 800 (no overheads).
    let mut g = graph(2);
    add_pool(&mut g, true, 2);
    let root = fj_tree(&mut g, 4, 100);
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[Op::Spawn(root), Op::Await(root)],
    );
    assert_eq!(run(&g), 800);
    let mut ov = Overlay::identity(&g);
    ov.pool_threads[0] = Some(1);
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 1600);
    // Blocking joins instead of running the own deque's task: still no idle core
    // here, since the other worker steals; never faster than the work bound.
    let p = SimParams {
        fj_help: false,
        ..SimParams::default()
    };
    assert!(simulate(&g, &Overlay::identity(&g), p).makespan_ns >= 800);
}

#[test]
fn a_pool_that_waits_on_itself_deadlocks_and_says_so() {
    // One worker; task a submits b to the same pool and waits for it.
    let mut g = graph(2);
    add_pool(&mut g, false, 1);
    let b = g.push_strand(strand(Runs::Pool(0), None, 1), &[Op::Compute(10)]);
    let a = g.push_strand(
        strand(Runs::Pool(0), None, 1),
        &[Op::Spawn(b), Op::Await(b)],
    );
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[Op::Spawn(a), Op::Await(a)],
    );
    let r = simulate(&g, &Overlay::identity(&g), SimParams::default());
    assert!(r.deadlock);
    let mut ov = Overlay::identity(&g);
    ov.pool_threads[0] = Some(2);
    assert!(!simulate(&g, &ov, SimParams::default()).deadlock);
}

#[test]
fn a_class_made_faster_shrinks_only_its_strands() {
    let mut g = graph(1);
    let t = g.push_strand(strand(Runs::Thread, None, 1), &[Op::Compute(100)]);
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[Op::Compute(100), Op::Spawn(t), Op::Await(t)],
    );
    let mut ov = Overlay::identity(&g);
    ov.class_factor[1] = 0.5;
    assert_eq!(run(&g), 200);
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 150);
}

#[test]
fn same_input_same_schedule() {
    let g = lock_graph(3, 20, 7, 13);
    let a = simulate(&g, &Overlay::identity(&g), SimParams::default());
    let b = simulate(&g, &Overlay::identity(&g), SimParams::default());
    assert_eq!(a, b);
}

/// A hand-off through unparks (a one-slot queue between a producer and a consumer,
/// WHATIF.md §1.3 "unpark → park return"): the consumer's waits end at the
/// producer's signals, so making the producer faster moves the consumer.
fn handoff_graph(produce: u64, consume: u64, items: u32) -> ExecGraph {
    let mut g = graph(2);
    g.classes.push("Producer".into());
    g.classes.push("Consumer".into());
    let (mut p, mut c) = (Vec::new(), Vec::new());
    for k in 0..items {
        p.extend([Op::Compute(produce), Op::Signal(k)]);
        c.extend([Op::AwaitSignal(k), Op::Compute(consume)]);
    }
    g.syncs = items;
    g.push_strand(strand(Runs::Thread, Some(0), 3), &p);
    g.push_strand(strand(Runs::Thread, Some(0), 4), &c);
    g
}

#[test]
fn a_consumer_woken_by_unparks_follows_its_producer() {
    // Producer 100 per item, consumer 30: the consumer waits for each item;
    // 3 items end at 300 + 30.
    let g = handoff_graph(100, 30, 3);
    assert_eq!(run(&g), 330);
    // The producer 50% faster: 150 + 30.
    let mut ov = Overlay::identity(&g);
    ov.class_factor[3] = 0.5;
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 180);
    // The consumer faster: nothing moves but its last item (negative control).
    let mut ov = Overlay::identity(&g);
    ov.class_factor[4] = 0.5;
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 315);
    // A signal that fired before its wait is not waited for: a consumer slower than
    // its producer (consumer 100, producer 30) ends at 30 + 3 x 100.
    assert_eq!(run(&handoff_graph(30, 100, 3)), 330);
}

#[test]
fn a_wake_up_latency_delays_each_woken_waiter_and_a_lost_signal_is_a_deadlock() {
    let mut g = handoff_graph(100, 30, 2);
    g.unpark_wake_ns = 5;
    // Each wait ends 5 after its signal: 100 + 5 (+30), 200 + 5 + 30.
    assert_eq!(run(&g), 235);
    // A wait whose signal never fires: no estimate (reported as a deadlock).
    let mut g = graph(2);
    g.syncs = 1;
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[Op::AwaitSignal(0), Op::Compute(10)],
    );
    assert!(simulate(&g, &Overlay::identity(&g), SimParams::default()).deadlock);
}

#[test]
fn each_hand_off_takes_the_wake_up_it_took_when_recorded() {
    // Recorded wake-ups of the three hand-offs: 40, none (the park began after the
    // unpark: the median, 5, is used if it blocks now), 10.
    let mut g = handoff_graph(100, 30, 3);
    g.unpark_wake_ns = 5;
    g.sync_wake_ns = vec![40, 0, 10];
    // Consumer: 100 + 40 -> 140, +30 -> 170; 200 + 5 -> 205, +30 -> 235;
    // 300 + 10 -> 310, +30 -> 340.
    assert_eq!(run(&g), 340);
    // The producer 20% faster (signals at 80, 160, 240): each edge keeps its
    // wake-up: 80 + 40 -> 120 -> 150; 160 + 5 -> 165 -> 195; 240 + 10 -> 250 -> 280.
    let mut ov = Overlay::identity(&g);
    ov.class_factor[3] = 0.8;
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 280);
    // Latencies x2 (a sensitivity run): 100 + 80 -> 180 -> 210; the second signal
    // (200) has fired by then: no wait, 210 -> 240; 300 + 20 -> 320 -> 350.
    let p = SimParams {
        latency_scale: 2.0,
        ..SimParams::default()
    };
    assert_eq!(simulate(&g, &Overlay::identity(&g), p).makespan_ns, 350);
    // Recorded on a loaded machine (3 CPUs of which it got 2: still a core each):
    // the recorded wake-ups held other processes' time slices; the median (5) for
    // each: 105 -> 135, 205 -> 235, 305 -> 335.
    g.cores = 3;
    g.cores_effective = 2.0;
    assert_eq!(run(&g), 335);
}

#[test]
fn a_task_keeps_its_recorded_pickup_and_its_waiter_its_wake_up() {
    // A pool of 1 (medians: pickup 3, wake-up 2). Task A was picked up 7 after its
    // submission and its getter woke 11 after its end when recorded; task B has no
    // recorded latency. main: submit A, get A, compute 10, submit B, get B.
    // A: 0 + 7 -> 7, +100 -> 107; main wakes at 118, computes to 128;
    // B: 128 + 3 -> 131, +50 -> 181; main wakes at 183.
    let mut g = graph(2);
    add_pool(&mut g, false, 1);
    g.pools[0].pickup_ns = 3;
    g.wake_ns = 2;
    let a = g.push_strand(strand(Runs::Pool(0), None, 1), &[Op::Compute(100)]);
    let b = g.push_strand(strand(Runs::Pool(0), None, 1), &[Op::Compute(50)]);
    let main = g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[
            Op::Spawn(a),
            Op::Await(a),
            Op::Compute(10),
            Op::Spawn(b),
            Op::Await(b),
        ],
    );
    let get_a = g.strands[main as usize].first + 1;
    g.await_wake_ns = vec![(get_a, 11)];
    g.task_pickup_ns = vec![(a, 7)];
    assert_eq!(run(&g), 183);
    // Inlined, A and B run on main: no pickup, no wake-up: 100 + 10 + 50.
    let mut ov = Overlay::identity(&g);
    ov.inline[a as usize] = true;
    ov.inline[b as usize] = true;
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 160);
}

#[test]
fn a_wake_up_leaves_the_core_to_others() {
    // One core. main spawns a consumer and another thread, computes 100, signals.
    // The other thread computes 60 from 0: both share the core until 120 (60 each),
    // main alone 40 more -> signal at 160. The consumer, woken 50 after the unpark,
    // holds no core meanwhile: ready at 210, done at 230.
    let mut g = graph(1);
    g.syncs = 1;
    g.sync_wake_ns = vec![50];
    let consumer = g.push_strand(
        strand(Runs::Thread, None, 1),
        &[Op::AwaitSignal(0), Op::Compute(20)],
    );
    let other = g.push_strand(strand(Runs::Thread, None, 2), &[Op::Compute(60)]);
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[
            Op::Spawn(consumer),
            Op::Spawn(other),
            Op::Compute(100),
            Op::Signal(0),
        ],
    );
    assert_eq!(run(&g), 230);
}

#[test]
fn a_refined_leaf_that_unparks_its_joiner_is_still_refined() {
    // One fork-join leaf of 1000 on a pool of 2 (2 cores) whose end unparks main,
    // which waits in a park: refined one level, its two halves run side by side.
    let mut g = graph(2);
    add_pool(&mut g, true, 2);
    g.syncs = 1;
    let leaf = g.push_strand(
        strand(Runs::Pool(0), None, 1),
        &[Op::Compute(1000), Op::Signal(0)],
    );
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[Op::Spawn(leaf), Op::AwaitSignal(0)],
    );
    assert_eq!(run(&g), 1000);
    let edit = crate::Edit::parse("fj-refine:Task:levels=1").expect("parses");
    let (refined, ov) = edit.apply(&g).expect("applies");
    assert_eq!(
        simulate(&refined, &ov, SimParams::default()).makespan_ns,
        500
    );
    // With a stall of 200 after its compute: 1200; the halves stall 100 each: 600.
    g.compute_stall_ns = vec![(g.strands[leaf as usize].first, 200)];
    assert_eq!(run(&g), 1200);
    let (refined, ov) = edit.apply(&g).expect("applies");
    assert_eq!(
        simulate(&refined, &ov, SimParams::default()).makespan_ns,
        600
    );
}

#[test]
fn a_baseline_that_cannot_finish_gives_no_estimate() {
    // main waits for a signal nothing fires (a waker the model lost), after 10 of work.
    let mut g = graph(2);
    g.syncs = 1;
    g.observed_ns = 100;
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[Op::Compute(10), Op::AwaitSignal(0)],
    );
    let base = crate::search::Baseline::of(&g, &[]);
    assert_eq!(base.calibration.simulated_ns, 0);
    let edit = crate::Edit::parse("cores:1").expect("parses");
    let e = crate::estimate(&g, &base, &[edit], "cores:1");
    assert_eq!(e.gain, None);
    assert!(e.reasons[0].contains("no estimate"), "{:?}", e.reasons);
}

/// A thread that wakes up runs ahead of CPU-bound threads for its wake-up preference
/// (1.5 ms on 2 cores), then shares the cores with them (docs/whatif.md §Cores).
#[test]
fn a_woken_thread_runs_ahead_of_cpu_bound_ones_for_its_preference() {
    // Two threads computing 10 ms from the start and a third that sleeps 1 ms, then
    // computes `after` ns; the ends of a bound thread and of the sleeper.
    let run = |after: u64| {
        let mut g = graph(2);
        let bound = g.push_strand(strand(Runs::Thread, Some(0), 1), &[Op::Compute(10_000_000)]);
        g.push_strand(strand(Runs::Thread, Some(0), 1), &[Op::Compute(10_000_000)]);
        let sleeper = g.push_strand(
            strand(Runs::Thread, Some(0), 2),
            &[Op::Delay(1_000_000), Op::Compute(after)],
        );
        let r = simulate(&g, &Overlay::identity(&g), SimParams::default());
        (
            r.strand_end_ns[bound as usize],
            r.strand_end_ns[sleeper as usize],
            r.makespan_ns,
        )
    };
    // Computes 1 ms: all of it ahead of the two others, on a core of its own, while
    // they share the other one: 1 ms at full rate, 1 ms at half, then 8.5 ms.
    assert_eq!(run(1_000_000), (10_500_000, 2_000_000, 10_500_000));
    // 3 ms after the wake-up: 1.5 ms ahead (until 2.5 ms), then the rest, 1.5 ms,
    // shared three ways on 2 cores (2/3 each): 2.25 ms more, until 4.75 ms. The
    // others by then: 1 + 0.75 + 1.5 ms; the 6.75 ms left at full rate: 11.5 ms.
    assert_eq!(run(3_000_000), (11_500_000, 4_750_000, 11_500_000));
}

/// Virtual threads run on their carriers, each until it waits: with one carrier on 2
/// cores, A (100, a wait of 1000 unmounted, 100) and B (100) started by main run A
/// 0–100, B 100–200 (A's wait left the carrier to it), A 1100–1200: 1200. Without
/// the unmount (a pinned wait) B waits for A's end (1300); without the carrier limit, 1200 too
/// but B at 0–100 beside A. Two started at once on one carrier take turns: 200, not
/// the 100 of two cores. `cores:N` gives N carriers when the recording had one per
/// core, and keeps a parallelism the program set (fewer carriers than cores).
#[test]
fn virtual_threads_take_turns_on_their_carriers() {
    let vt = |k: u32| Strand {
        thread: weft_trace::VIRTUAL_THREAD_BASE + k,
        ..strand(Runs::Thread, None, 1)
    };
    let mut g = graph(2);
    g.vt_carriers = 1;
    let a = g.push_strand(
        vt(0),
        &[Op::Compute(100), Op::Delay(1000), Op::Compute(100)],
    );
    let b = g.push_strand(vt(1), &[Op::Compute(100)]);
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[Op::Spawn(a), Op::Spawn(b), Op::Await(a), Op::Await(b)],
    );
    let r = simulate(&g, &Overlay::identity(&g), SimParams::default());
    assert_eq!(r.makespan_ns, 1200);
    assert_eq!(r.strand_end_ns[b as usize], 200);
    // A's wait pinned (it stayed mounted: a sleep inside `synchronized` on JDK 21):
    // it keeps the carrier, B runs after A's end, 1200–1300.
    g.pinned_waits = vec![g.strands[a as usize].first + 1];
    let r = simulate(&g, &Overlay::identity(&g), SimParams::default());
    assert_eq!(r.makespan_ns, 1300);
    assert_eq!(r.strand_end_ns[b as usize], 1300);

    let mut g = graph(2);
    g.vt_carriers = 1;
    let a = g.push_strand(vt(0), &[Op::Compute(100)]);
    let b = g.push_strand(vt(1), &[Op::Compute(100)]);
    g.push_strand(
        strand(Runs::Thread, Some(0), 0),
        &[Op::Spawn(a), Op::Spawn(b), Op::Await(a), Op::Await(b)],
    );
    let with_cores = |g: &ExecGraph, n: f64| {
        let mut ov = Overlay::identity(g);
        ov.cores = Some(n);
        simulate(g, &ov, SimParams::default()).makespan_ns
    };
    assert_eq!(run(&g), 200);
    // A parallelism of 1 set by the program stays 1 on 4 cores.
    assert_eq!(with_cores(&g, 4.0), 200);
    // A carrier per core: 2 run side by side, and take turns on 1.
    g.vt_carriers = 2;
    assert_eq!(run(&g), 100);
    assert_eq!(with_cores(&g, 1.0), 200);
    g.vt_carriers = 0;
    assert_eq!(run(&g), 100);
}

/// A semaphore of 2 permits held across a wait: 4 threads on 4 cores, each takes a
/// permit, waits 100 (a sleep: it needs no core) and gives it back. Two at a time:
/// 0–100 then 100–200, 200; a mutex would take 400, no lock (removed) 100, 4 permits
/// 100.
#[test]
fn a_semaphore_lets_its_permits_hold_at_once() {
    let mut g = graph(4);
    g.locks.push(Lock {
        id: "S@1".into(),
        class: "java.util.concurrent.Semaphore".into(),
        holds_chained: 0,
        holds_assumed: 0,
        holds_recorded: 0,
        handoff_ns: 0,
        monitor: false,
        read_write: false,
        semaphore: true,
        permits: 2,
    });
    let body = [Op::Acquire(0), Op::Delay(100), Op::Release(0)];
    let kids: Vec<u32> = (0..4)
        .map(|_| g.push_strand(strand(Runs::Thread, None, 1), &body))
        .collect();
    let mut ops: Vec<Op> = kids.iter().map(|&t| Op::Spawn(t)).collect();
    ops.extend(kids.iter().map(|&t| Op::Await(t)));
    g.push_strand(strand(Runs::Thread, Some(0), 0), &ops);
    assert_eq!(run(&g), 200);
    let mut ov = Overlay::identity(&g);
    ov.lock_mode[0] = LockMode::Removed;
    assert_eq!(simulate(&g, &ov, SimParams::default()).makespan_ns, 100);
    g.locks[0].permits = 1;
    assert_eq!(run(&g), 400);
    g.locks[0].permits = 4;
    assert_eq!(run(&g), 100);
}

/// A virtual thread's park costs its carrier the unmount before it and the turn and
/// mount after it (`sync_park_ns`, here 10 and 20): paid when its await blocks, left
/// out when the signal came first (it does not park then). Two virtual threads on 2
/// carriers; the consumer computes 40, then 50 (10 of it the park's), awaits the
/// producer's signal, then computes 300 (20 of it the turn and mount).
/// Producer signals at 200: the consumer blocks, pays all: 90, woken at 200, 500.
/// Producer signals at 20: at 40 the signal has come, 40 + 40 + 280 = 360.
#[test]
fn a_virtual_thread_that_need_not_park_skips_its_park_s_cost() {
    let vt = |k: u32| Strand {
        thread: weft_trace::VIRTUAL_THREAD_BASE + k,
        ..strand(Runs::Thread, None, 1)
    };
    let build = |producer_first: u64| {
        let mut g = graph(2);
        g.vt_carriers = 2;
        g.syncs = 1;
        g.sync_park_ns = vec![(10, 20)];
        let p = g.push_strand(
            vt(0),
            &[Op::Compute(producer_first), Op::Signal(0), Op::Compute(10)],
        );
        let c = g.push_strand(
            vt(1),
            &[
                Op::Compute(40),
                Op::Compute(50),
                Op::AwaitSignal(0),
                Op::Compute(300),
            ],
        );
        g.push_strand(
            strand(Runs::Thread, Some(0), 0),
            &[Op::Spawn(p), Op::Spawn(c), Op::Await(p), Op::Await(c)],
        );
        (g, c)
    };
    let (g, c) = build(200);
    let r = simulate(&g, &Overlay::identity(&g), SimParams::default());
    assert_eq!(r.strand_end_ns[c as usize], 500);
    let (g, c) = build(20);
    let r = simulate(&g, &Overlay::identity(&g), SimParams::default());
    assert_eq!(r.strand_end_ns[c as usize], 360);
    // Without the costs known (an earlier build, a platform thread): 390.
    let (mut g, c) = build(20);
    g.sync_park_ns.clear();
    let r = simulate(&g, &Overlay::identity(&g), SimParams::default());
    assert_eq!(r.strand_end_ns[c as usize], 390);
}
