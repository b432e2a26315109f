//! The one place that turns the analyses into an [`ExecGraph`] (docs/whatif.md
//! §Graph). It reads the analysis outputs (task executions and their edges,
//! fork-join usages, lock blocked periods and waits, threads) and, for what
//! those do not keep, the model's per-thread events (fork-join and task join
//! intervals).

use std::collections::BTreeMap;

/// Mean run-queue wait per time slice above which the program's threads were
/// kept off free CPUs by other work (a scheduler slice is milliseconds), rather
/// than waiting the microseconds a wake-up takes on an idle machine.
pub const LOADED_RUNQ_DELAY_NS: u64 = 500_000;

use rustc_hash::FxHashMap as HashMap;

use weft_analysis::edges::EdgeKind;
use weft_analysis::events::EventKind;
use weft_analysis::model::pool_name;
use weft_analysis::{Analysis, SchedPoint, TaskKind};
use weft_trace::ThreadIndex;

use crate::cpu_share::{share_intervals, share_over, ShareInterval};
use crate::graph::{ExecGraph, Lock, Op, Pool, PoolId, Runs, Strand, StrandId};

/// A dated fact on a thread that becomes an op of the strand running there.
#[derive(Debug, Clone, Copy)]
enum Mark {
    /// Lock release inferred from a hand-off (a point).
    Release(u32),
    /// A submit, fork or thread start (a point).
    Spawn(StrandId),
    /// Blocked acquiring a lock from `start` to `end`; with the time from the
    /// previous holder's release to `end` when the lock was handed over (a recorded
    /// section's hand-off latency), else 0; and how the hold's release is known,
    /// which says across which of the holder's own waits the hold may go.
    Blocked(u32, u64, Release),
    /// Waited for a strand (a get, a join, an inline run of a forked task).
    Await(StrandId),
    /// Waited, and nothing recorded says for what: kept as a delay (anchored).
    Anchored,
    /// A virtual thread unmounted (parked, then waiting for a carrier): anchored too,
    /// and an inferred lock hold does not span it (below).
    Unmounted,
    /// Unparked a waiter (a point).
    Signal(u32),
    /// Waited in a park that an unpark ended.
    AwaitSignal(u32),
}

impl Mark {
    /// Order of marks at the same instant.
    fn rank(self) -> u8 {
        match self {
            Mark::Release(_) | Mark::Signal(_) => 0,
            Mark::Spawn(_) => 1,
            Mark::Blocked(..) => 2,
            Mark::Await(_) | Mark::AwaitSignal(_) => 3,
            Mark::Anchored | Mark::Unmounted => 4,
        }
    }
}

/// How the end of a hold is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Release {
    /// Recorded, or a j.u.c. release's unpark of the next holder: the hold spans the
    /// holder's waits (a `Future.get` under a `ReentrantLock`).
    Known,
    /// A semaphore's hold of the median found length (its release unparked nobody):
    /// it spans the holder's unmounts (a permit held across a sleep), not its waits
    /// for another strand (that one could need the permit: the model deadlocked).
    Assumed,
    /// Inferred from the next acquisition: cut at the holder's first wait.
    Inferred,
}

#[derive(Debug, Clone, Copy)]
struct Dated {
    start: u64,
    end: u64,
    mark: Mark,
}

/// Longest time from a virtual thread's end to the unpark its carrier makes for it
/// (its joiner's wake-up, in `afterDone` right after the unmount).
const VT_END_WAKE_NS: u64 = 1_000_000;
/// A wake-up by a thread outside any strand, at most this long after a strand of that
/// thread ended, is that strand's end (the pool's code after a task: a worker's exit
/// signalling `awaitTermination`).
const WAKE_AFTER_STRAND_NS: u64 = 1_000_000;

/// Builds the execution graph of a trace and its analysis.
///
/// A hold inferred from hand-offs lasts until the next waiter's acquisition, which
/// may come after its holder took another contended lock: two locks taken one after
/// the other (`NativePRNG`'s two monitors, 4 threads drawing from one
/// `SecureRandom`) then nested crosswise in the graph and the replay deadlocked
/// ("cannot be replayed: no estimate", also with `--lock-detail`, which records no
/// JDK monitor). When the replay deadlocks and the run did not (no deadlock
/// finding), the graph is built again with each such hold cut at its thread's
/// next contended acquisition of another lock, and kept if that replays. The same
/// when a monitor's inferred hold was kept across its virtual thread's unmount (JDK
/// 24+): cut there instead in the second build.
pub fn build(a: &Analysis) -> ExecGraph {
    let g = build_with(a, false);
    let inferred = g
        .locks
        .iter()
        .filter(|l| l.holds_chained + l.holds_assumed > 0)
        .count();
    let hung = a
        .findings
        .iter()
        .any(|f| f.kind == weft_analysis::findings::FindingKind::Deadlock);
    if hung || (inferred < 2 && g.inferred_holds_across_unmounts == 0) {
        return g;
    }
    if replay(&g).is_some() {
        return g;
    }
    let cut = build_with(a, true);
    if replay(&cut).is_some() {
        cut
    } else {
        g
    }
}

/// The makespan of the unedited graph's replay; `None` when it cannot finish.
fn replay(g: &ExecGraph) -> Option<u64> {
    let r = crate::sim::simulate(
        g,
        &crate::sim::Overlay::identity(g),
        crate::sim::SimParams::default(),
    );
    (!r.deadlock && r.makespan_ns > 0).then_some(r.makespan_ns)
}

/// [`build`], with inferred holds cut at their thread's next contended acquisition
/// of another lock when `cut_holds`.
fn build_with(a: &Analysis, cut_holds: bool) -> ExecGraph {
    let m = &a.model;
    let execs = &a.tasks.executions;
    let mut g = ExecGraph {
        cores: m.cpus.unwrap_or(1).max(1),
        vt_carriers: a.virtual_threads.carriers.min(u32::MAX as u64) as u32,
        lost_records: m.lost_records(),
        lock_detail_recorded: m.lock_detail,
        ..ExecGraph::default()
    };
    (g.spin_share, g.spin_frame) = spin_wait_share(m);
    let name_of = |t: ThreadIndex| {
        m.threads
            .get(&t)
            .map(|i| i.display_name())
            .unwrap_or_else(|| format!("thread #{t}"))
    };

    // ---- pools: fork-join workers, and threads running submitted tasks of other threads ----
    let mut submit_of: HashMap<usize, (ThreadIndex, u64)> = HashMap::default();
    let mut start_of: HashMap<usize, (ThreadIndex, u64)> = HashMap::default();
    for e in &a.tasks.edges.edges {
        match (e.kind, e.to) {
            (EdgeKind::Submit, Some(to)) => {
                submit_of.insert(to, (e.from_thread, e.from_ns));
            }
            (EdgeKind::ThreadStart, Some(to)) => {
                start_of.insert(to, (e.from_thread, e.from_ns));
            }
            _ => {}
        }
    }
    let mut pool_ids: BTreeMap<String, PoolId> = BTreeMap::new();
    let mut thread_pool: HashMap<ThreadIndex, PoolId> = HashMap::default();
    let mut pool_of = |g: &mut ExecGraph, name: String, fj: bool| -> PoolId {
        *pool_ids.entry(name.clone()).or_insert_with(|| {
            g.pools.push(Pool {
                id: name,
                forkjoin: fj,
                threads: 0,
                pickup_ns: 0,
            });
            (g.pools.len() - 1) as PoolId
        })
    };
    for t in &a.forkjoin.threads {
        if t.pool != 0 {
            let p = pool_of(&mut g, pool_name(&t.name), true);
            thread_pool.insert(t.thread, p);
        }
    }
    let outermost = |i: usize| {
        execs[i]
            .parent()
            .is_none_or(|p| execs[p].kind == TaskKind::Thread)
    };
    let is_pool_task = |i: usize| {
        let x = &execs[i];
        x.kind != TaskKind::Thread
            && x.kind != TaskKind::ForkJoin
            && outermost(i)
            && submit_of.get(&i).is_some_and(|s| s.0 != x.thread)
    };
    for (i, x) in execs.iter().enumerate() {
        if is_pool_task(i) && !thread_pool.contains_key(&x.thread) {
            let p = pool_of(&mut g, pool_name(&name_of(x.thread)), false);
            thread_pool.insert(x.thread, p);
        }
    }
    for p in thread_pool.values() {
        g.pools[*p as usize].threads += 1;
    }
    // A fork-join pool has its parallelism in workers even when fewer ran a task.
    for t in &a.forkjoin.threads {
        if let (Some(&p), Some(fp)) = (
            thread_pool.get(&t.thread),
            a.forkjoin.pools.iter().find(|x| x.pool == t.pool),
        ) {
            let pool = &mut g.pools[p as usize];
            pool.threads = pool.threads.max(fp.parallelism);
        }
    }

    let vt_mounts = carrier_turns(a);

    // ---- strands ----
    // (thread, begin, end, strand) of every strand, to place marks.
    let mut placed: Vec<(ThreadIndex, u64, u64, StrandId)> = Vec::new();
    let mut exec_strand: HashMap<usize, StrandId> = HashMap::default();
    let mut spawn_at: Vec<Option<(ThreadIndex, u64)>> = Vec::new();
    let add = |g: &mut ExecGraph,
               placed: &mut Vec<(ThreadIndex, u64, u64, StrandId)>,
               spawn_at: &mut Vec<Option<(ThreadIndex, u64)>>,
               class: &str,
               runs: Runs,
               thread: ThreadIndex,
               begin: u64,
               end: u64,
               site: Option<String>,
               spawn: Option<(ThreadIndex, u64)>| {
        let class = g.class_index(class);
        let site = site.map(|s| match g.sites.iter().position(|x| *x == s) {
            Some(i) => i as u32,
            None => {
                g.sites.push(s);
                (g.sites.len() - 1) as u32
            }
        });
        g.strands.push(Strand {
            class,
            runs,
            first: 0,
            len: 0,
            root_start_ns: None,
            observed_begin_ns: begin,
            observed_end_ns: end.max(begin),
            site,
            thread,
        });
        let id = (g.strands.len() - 1) as StrandId;
        placed.push((thread, begin, end.max(begin), id));
        spawn_at.push(spawn);
        id
    };
    for t in m.threads.values() {
        if t.is_main(m) && t.name.as_deref() == Some("main") {
            add(
                &mut g,
                &mut placed,
                &mut spawn_at,
                "main",
                Runs::Thread,
                t.index,
                t.first_ns,
                t.last_ns,
                None,
                None,
            );
        }
    }
    // A virtual thread's first strand begins with its turn on the carrier (its
    // mount, the JDK's start plumbing, and the carrier's scheduling work before it).
    let mut first_on_vt: HashMap<ThreadIndex, usize> = HashMap::default();
    for (i, x) in execs.iter().enumerate() {
        if vt_mounts.contains_key(&x.thread) {
            let f = first_on_vt.entry(x.thread).or_insert(i);
            if x.begin_ns < execs[*f].begin_ns {
                *f = i;
            }
        }
    }
    let begin_of = |i: usize| {
        let x = &execs[i];
        match vt_mounts.get(&x.thread).and_then(|v| v.first()) {
            Some(turn) if first_on_vt.get(&x.thread) == Some(&i) => x.begin_ns.min(turn.0),
            _ => x.begin_ns,
        }
    };
    for (i, x) in execs.iter().enumerate() {
        let (runs, spawn) = if x.kind == TaskKind::Thread {
            // Pool workers run tasks, not a program; daemon and JVM threads (cleaners,
            // reference handlers) do not hold the run open and are left out.
            let info = m.threads.get(&x.thread);
            if thread_pool.contains_key(&x.thread)
                || info.is_none_or(|t| {
                    t.daemon
                        || weft_analysis::locks::JVM_THREADS.contains(&t.display_name().as_str())
                })
                || a.tasks.class(x).starts_with("jdk.internal.")
            {
                continue;
            }
            (Runs::Thread, start_of.get(&i).copied())
        } else if x.kind == TaskKind::VirtualThread {
            // `Thread.ofVirtual().start(r)`: a program of its own, as a thread's, on a
            // context of its own that shares the cores (the carriers are one per core
            // by default). A virtual thread's task submitted to an executor is a pool
            // task below.
            (Runs::Thread, start_of.get(&i).copied())
        } else if is_pool_task(i) {
            (
                Runs::Pool(thread_pool[&x.thread]),
                submit_of.get(&i).copied(),
            )
        } else {
            continue;
        };
        let id = add(
            &mut g,
            &mut placed,
            &mut spawn_at,
            a.tasks.class(x),
            runs,
            x.thread,
            begin_of(i),
            x.end_ns,
            x.submitted_site().or(x.created_site()).map(str::to_string),
            spawn,
        );
        exec_strand.insert(i, id);
    }
    let mut usage_strand: HashMap<u64, StrandId> = HashMap::default();
    for u in &a.forkjoin.usages {
        let Some(t) = u.run_thread() else { continue };
        let Some(&p) = thread_pool.get(&t) else {
            continue; // run outside a pool (a direct invoke on a plain thread): part of its strand
        };
        let id = add(
            &mut g,
            &mut placed,
            &mut spawn_at,
            &m.class_name(u.class_id),
            Runs::Pool(p),
            t,
            u.begin_ns,
            u.end_ns,
            m.site_frame(u.site),
            Some((u.push_thread, u.push_ns)),
        );
        usage_strand.insert(u.id, id);
    }

    // ---- per thread: strands by begin, with their enclosing strand ----
    let mut on_thread: HashMap<ThreadIndex, Vec<(u64, u64, StrandId)>> = HashMap::default();
    for &(t, b, e, s) in &placed {
        on_thread.entry(t).or_default().push((b, e, s));
    }
    let mut enclosing: Vec<Option<StrandId>> = vec![None; g.strands.len()];
    for v in on_thread.values_mut() {
        // Outer first at equal begins.
        v.sort_by_key(|&(b, e, s)| (b, std::cmp::Reverse(e), s));
        let mut stack: Vec<(u64, StrandId)> = Vec::new();
        for &(b, e, s) in v.iter() {
            while stack.last().is_some_and(|&(end, _)| end < b) {
                stack.pop();
            }
            enclosing[s as usize] = stack.last().map(|x| x.1);
            stack.push((e, s));
        }
    }
    let innermost = |t: ThreadIndex, ts: u64| -> Option<StrandId> {
        let v = on_thread.get(&t)?;
        let n = v.partition_point(|x| x.0 <= ts);
        let mut cur = v[..n].last().map(|x| x.2);
        while let Some(s) = cur {
            let st = &g.strands[s as usize];
            if st.observed_end_ns >= ts {
                return Some(s);
            }
            cur = enclosing[s as usize];
        }
        None
    };

    // ---- marks ----
    let mut marks: Vec<Vec<Dated>> = vec![Vec::new(); g.strands.len()];
    let put =
        |marks: &mut Vec<Vec<Dated>>, t: ThreadIndex, start: u64, end: u64, mark: Mark| -> bool {
            match innermost(t, start) {
                Some(s) => {
                    marks[s as usize].push(Dated { start, end, mark });
                    true
                }
                None => false,
            }
        };
    // Spawns: a strand whose spawner is not a strand starts by itself.
    let mut roots: Vec<(StrandId, u64)> = Vec::new();
    for (s, sp) in spawn_at.iter().enumerate() {
        let s = s as StrandId;
        let placed_ok = match sp {
            Some((t, ts)) => put(&mut marks, *t, *ts, *ts, Mark::Spawn(s)),
            None => false,
        };
        if !placed_ok {
            let st = &g.strands[s as usize];
            let at = match (st.runs, sp) {
                (Runs::Pool(_), Some((_, ts))) => (*ts).min(st.observed_begin_ns),
                _ => st.observed_begin_ns,
            };
            roots.push((s, at));
        }
    }
    // Fork-join joins and task joins (gets, Thread.join), from the model's events.
    let mut fj_joins: Vec<(ThreadIndex, u64, u64, u64)> = Vec::new();
    let mut task_joins: HashMap<ThreadIndex, Vec<(u64, u64)>> = HashMap::default();
    for te in &m.events {
        let t = te.thread;
        let mut fj_open: Vec<(u64, u64)> = Vec::new();
        let mut open: Vec<u64> = Vec::new();
        for ev in te.iter() {
            match ev.kind {
                EventKind::FjJoinBegin => fj_open.push((ev.ts, ev.a)),
                EventKind::FjJoinEnd => {
                    if let Some((b, u)) = fj_open.pop() {
                        fj_joins.push((t, b, ev.ts, u));
                    }
                }
                EventKind::JoinBegin => open.push(ev.ts),
                EventKind::JoinEnd => {
                    if let Some(b) = open.pop() {
                        task_joins.entry(t).or_default().push((b, ev.ts));
                    }
                }
                _ => {}
            }
        }
    }
    for v in task_joins.values_mut() {
        v.sort_unstable();
    }
    // The strand that waits for `target` at `ts` on thread `t`: the innermost one
    // running there that is not the target itself or inside it (a join whose target
    // was popped and run in place can begin in the same clock tick as that run, which
    // would make the target wait for itself: a deadlock in the model).
    let within = |x: StrandId, target: StrandId| {
        let mut up = Some(x);
        while let Some(y) = up {
            if y == target {
                return true;
            }
            up = enclosing[y as usize];
        }
        false
    };
    let waiter = |t: ThreadIndex, ts: u64, target: StrandId| -> Option<StrandId> {
        let mut cur = innermost(t, ts);
        while let Some(x) = cur {
            if !within(x, target) {
                return Some(x);
            }
            cur = enclosing[x as usize];
        }
        None
    };
    let put_await =
        |marks: &mut Vec<Vec<Dated>>, t: ThreadIndex, start: u64, end: u64, target: StrandId| {
            match waiter(t, start, target) {
                Some(w) => marks[w as usize].push(Dated {
                    start,
                    end,
                    mark: Mark::Await(target),
                }),
                None => {
                    put(marks, t, start, end, Mark::Anchored);
                }
            }
        };
    for &(t, b, e, u) in &fj_joins {
        match usage_strand.get(&u) {
            Some(&s) => put_await(&mut marks, t, b, e, s),
            None => {
                put(&mut marks, t, b, e, Mark::Anchored);
            }
        }
    }
    for e in &a.tasks.edges.edges {
        if !matches!(e.kind, EdgeKind::FutureGet | EdgeKind::ThreadJoin) {
            continue;
        }
        // A task with no strand of its own (run by a pool whose submissions no probe
        // sees: a `ScheduledThreadPoolExecutor`'s) is awaited as the strand it ran in
        // only if that strand ended by the join's return; otherwise the strand is a
        // worker that went on (a `schedule(...).get()` awaited a worker's whole life:
        // +22% on the replay of a program of scheduled ticks), and the join's park,
        // woken by the task's completion, is the edge (the waits below).
        let target = e.from.and_then(|x| match exec_strand.get(&x) {
            Some(&s) => Some(Some(s)),
            None => {
                let s = innermost(execs[x].thread, execs[x].begin_ns)?;
                let ended = g.strands[s as usize].observed_end_ns;
                Some((ended <= e.to_ns.saturating_add(JOIN_END_SLACK_NS)).then_some(s))
            }
        });
        let begin = task_joins
            .get(&e.to_thread)
            .and_then(|v| {
                let n = v.partition_point(|j| j.0 <= e.to_ns);
                v[..n].iter().rev().find(|j| j.1 >= e.to_ns).map(|j| j.0)
            })
            .unwrap_or(e.to_ns);
        match target {
            Some(Some(s)) => put_await(&mut marks, e.to_thread, begin, e.to_ns, s),
            Some(None) => {}
            None => {
                put(&mut marks, e.to_thread, begin, e.to_ns, Mark::Anchored);
            }
        }
    }
    // A strand run nested in another on the same thread: the outer waited for it there.
    for (s, outer) in enclosing.iter().enumerate() {
        if let Some(outer) = *outer {
            let st = &g.strands[s];
            marks[outer as usize].push(Dated {
                start: st.observed_begin_ns,
                end: st.observed_end_ns,
                mark: Mark::Await(s as StrandId),
            });
        }
    }
    // Locks recorded by `--lock-detail`: each critical section as it was (blocked
    // from the request to the acquisition, held to the release).
    let locks = &a.locks;
    for l in &locks.locks {
        g.locks.push(Lock {
            id: l.id.clone(),
            class: l.class.clone(),
            holds_chained: 0,
            holds_assumed: 0,
            holds_recorded: 0,
            monitor: l.kind == "monitor",
            read_write: is_read_write(l.kind),
            semaphore: l.kind == "semaphore",
            permits: 1,
            handoff_ns: 0,
        });
    }
    let mut lock_index: HashMap<u32, u32> = locks
        .locks
        .iter()
        .enumerate()
        .map(|(i, l)| (l.lock, i as u32))
        .collect();
    let sections = weft_analysis::graph::monitor_sections(m);
    let handoffs = monitor_handoffs(&sections);
    let mut handoffs_of: Vec<Vec<u64>> = Vec::new();
    for (sec, &handoff) in sections.iter().zip(&handoffs) {
        let li = *lock_index.entry(sec.lock).or_insert_with(|| {
            let (class, ident) = m
                .lock_defs
                .get(&sec.lock)
                .map(|d| (d.class.clone(), d.ident))
                .unwrap_or_else(|| ("?".into(), sec.lock));
            g.locks.push(Lock {
                id: format!("{class}@{ident:x}"),
                class,
                holds_chained: 0,
                holds_assumed: 0,
                holds_recorded: 0,
                monitor: true,
                read_write: false,
                semaphore: false,
                permits: 1,
                handoff_ns: 0,
            });
            (g.locks.len() - 1) as u32
        });
        g.locks[li as usize].holds_recorded += 1;
        if handoff > 0 {
            handoffs_of.resize(handoffs_of.len().max(li as usize + 1), Vec::new());
            handoffs_of[li as usize].push(handoff);
        }
        if put(
            &mut marks,
            sec.thread,
            sec.requested_ns,
            sec.acquired_ns,
            Mark::Blocked(li, handoff, Release::Known),
        ) {
            if let Some(s) = innermost(sec.thread, sec.acquired_ns) {
                let e = sec.released_ns.min(g.strands[s as usize].observed_end_ns);
                marks[s as usize].push(Dated {
                    start: e,
                    end: e,
                    mark: Mark::Release(li),
                });
            }
        }
    }
    for (li, mut v) in handoffs_of.into_iter().enumerate() {
        v.sort_unstable();
        g.locks[li].handoff_ns = v.get(v.len() / 2).copied().unwrap_or(0);
    }
    // Contended acquisitions of the other locks: each holds until the next waiter's
    // hand-off when that waiter was already waiting, else for the lock's median such hold.
    let mut by_lock: Vec<Vec<usize>> = vec![Vec::new(); locks.locks.len()];
    let mut shared_blocked: Vec<bool> = vec![false; locks.locks.len()];
    for (i, b) in locks.blocked.iter().enumerate() {
        if b.gave_up {
            // A timed `tryLock` that ran out of time: it waited its timeout and took
            // no hold. Kept as recorded (an edit of the lock could make it succeed and
            // the program take another path, which the trace does not show).
            put(&mut marks, b.thread, b.start_ns, b.end_ns, Mark::Anchored);
            continue;
        }
        if b.shared {
            if let Some(x) = shared_blocked.get_mut(b.lock) {
                *x = true;
            }
            // A reader blocked behind a writer (read-write or stamped lock): readers'
            // holds are shared and not recorded, so its wait stays a delay; as
            // unmarked time it was compute, shrunk to the little CPU it used (a
            // read-heavy cache replayed 31% short, 19% so). Writers stay modelled
            // as holders of an exclusive lock: anchoring them too replayed that
            // cache 8% short but a stamped-lock workload 7% long (1.9% so).
            put(&mut marks, b.thread, b.start_ns, b.end_ns, Mark::Anchored);
        } else if b.lock < by_lock.len() && g.locks[b.lock].holds_recorded == 0 {
            by_lock[b.lock].push(i);
        }
    }
    // A j.u.c. lock's release to a parked waiter unparks it: the release is then
    // known, not only the next acquisition (a `Future.get` inside the hold: cut at the
    // holder's wait, 4 threads taking turns replayed 48% short). Gathered once, also
    // for the unpark edges below.
    let unparks = std::rc::Rc::new(weft_analysis::graph::unparks_by_target(m));
    // Per thread, its contended acquisitions by start: (start, lock), for `cut_holds`.
    let mut blocks_of: HashMap<ThreadIndex, Vec<(u64, usize)>> = HashMap::default();
    if cut_holds {
        for b in &locks.blocked {
            blocks_of
                .entry(b.thread)
                .or_default()
                .push((b.start_ns, b.lock));
        }
        for v in blocks_of.values_mut() {
            v.sort_unstable();
        }
        g.holds_cut_at_next_block = true;
    }
    let next_block_elsewhere = |t: ThreadIndex, after: u64, lock: usize| -> Option<u64> {
        let v = blocks_of.get(&t)?;
        v[v.partition_point(|x| x.0 < after)..]
            .iter()
            .find(|x| x.1 != lock)
            .map(|x| x.0)
    };
    for (li, v) in by_lock.iter_mut().enumerate() {
        v.sort_by_key(|&i| (locks.blocked[i].end_ns, i));
        let mut hold_end: Vec<Option<u64>> = vec![None; v.len()];
        // The hold's release from the holder's unpark of the next holder (the
        // next one's acquisition then follows it by a hand-off).
        let mut released: Vec<Option<u64>> = vec![None; v.len()];
        let mut chained: Vec<u64> = Vec::new();
        // Not a read-write lock's that readers blocked on: a writer's release may wake
        // readers first, whose holds then lie between it and the next writer (a
        // read-mostly cache replayed +18% against +10%).
        let readers_blocked = g.locks[li].read_write && shared_blocked[li];
        let juc = !g.locks[li].monitor && !readers_blocked;
        for k in 0..v.len() {
            let cur = &locks.blocked[v[k]];
            if let Some(&n) = v.get(k + 1) {
                let next = &locks.blocked[n];
                if next.start_ns <= cur.end_ns && next.thread != cur.thread {
                    hold_end[k] = Some(next.end_ns);
                    chained.push(next.end_ns - cur.end_ns);
                    if juc {
                        // The holder's first unpark of the next holder after its own
                        // acquisition, by the next one's.
                        released[k] = unparks.get(&next.thread).and_then(|u| {
                            let i = u.partition_point(|x| x.0 < cur.end_ns);
                            u[i..]
                                .iter()
                                .take_while(|x| x.0 <= next.end_ns)
                                .find(|x| x.1 == cur.thread)
                                .map(|x| x.0)
                        });
                    }
                }
            }
        }
        // A semaphore's permit goes back to any waiter: each blocked acquisition was
        // woken by the last unpark of its thread during the block, and a holder's
        // release is its first such wake-up of a waiter after its acquisition (before
        // its next one). Its permits: how many of those holds overlapped. (Any unpark of
        // a thread then blocked on it read 3 permits for 2 on JDK 25: a non-fair
        // semaphore's head waiter, unparked at a release, can lose the permit to a
        // newcomer.) A release that unparked nobody (the next waiter was awake) is
        // not found: that hold takes the median of the found ones.
        let mut woken_at: Vec<Option<u64>> = vec![None; v.len()];
        let mut semaphore_hold: Option<u64> = None;
        // The holder's next blocked acquisition of the semaphore: every hold ends
        // before it (a permit the model kept past it, the holder waited for itself).
        let mut next_attempt: Vec<Option<u64>> = vec![None; v.len()];
        if g.locks[li].semaphore {
            let mut wakes_by: HashMap<ThreadIndex, Vec<u64>> = HashMap::default();
            for (k, &i) in v.iter().enumerate() {
                let b = &locks.blocked[i];
                let Some(u) = unparks.get(&b.thread) else {
                    continue;
                };
                let j = u.partition_point(|x| x.0 <= b.end_ns);
                if let Some(&(ts, w)) = u[..j].last().filter(|x| x.0 >= b.start_ns) {
                    wakes_by.entry(w).or_default().push(ts);
                    woken_at[k] = Some(ts);
                }
            }
            for w in wakes_by.values_mut() {
                w.sort_unstable();
            }
            let mut next_of_thread: HashMap<ThreadIndex, u64> = HashMap::default();
            for k in (0..v.len()).rev() {
                let cur = &locks.blocked[v[k]];
                let before = next_of_thread.insert(cur.thread, cur.start_ns);
                next_attempt[k] = before;
                released[k] = wakes_by.get(&cur.thread).and_then(|w| {
                    let ts = *w.get(w.partition_point(|&x| x < cur.end_ns))?;
                    before.is_none_or(|n| ts <= n).then_some(ts)
                });
            }
            let mut holds: Vec<u64> = released
                .iter()
                .zip(v.iter())
                .filter_map(|(r, &i)| Some(r.as_ref()?.saturating_sub(locks.blocked[i].end_ns)))
                .collect();
            holds.sort_unstable();
            semaphore_hold = holds.get(holds.len() / 2).copied();
            let mut edges: Vec<(u64, i32)> = Vec::new();
            for (k, r) in released.iter().enumerate() {
                if let Some(r) = *r {
                    edges.push((locks.blocked[v[k]].end_ns, 1));
                    edges.push((r, -1));
                }
            }
            edges.sort_unstable_by_key(|e| (e.0, e.1));
            let (mut open, mut most) = (0i32, 1i32);
            for (_, d) in edges {
                open += d;
                most = most.max(open);
            }
            g.locks[li].permits = most as u32;
        }
        // Semaphore holds whose release was not found: the median found one, kept
        // across the holder's unmounts (`Release::Assumed`).
        let mut assumed = vec![false; v.len()];
        if let Some(h) = semaphore_hold {
            for (k, &i) in v.iter().enumerate() {
                if released[k].is_none() {
                    let end = locks.blocked[i].end_ns + h;
                    released[k] = Some(next_attempt[k].map_or(end, |n| end.min(n)));
                    assumed[k] = true;
                }
            }
        }
        chained.sort_unstable();
        let median = chained.get(chained.len() / 2).copied().unwrap_or(0);
        for (k, &i) in v.iter().enumerate() {
            let b = &locks.blocked[i];
            // A known release is a chained hold's (there is a next holder).
            let end = match released[k].or(hold_end[k]) {
                Some(e) if assumed[k] => {
                    g.locks[li].holds_assumed += 1;
                    e
                }
                Some(e) => {
                    g.locks[li].holds_chained += 1;
                    e
                }
                None => {
                    g.locks[li].holds_assumed += 1;
                    b.end_ns + median
                }
            };
            let end = match next_block_elsewhere(b.thread, b.end_ns, li) {
                Some(n) if released[k].is_none() => end.min(n),
                _ => end,
            };
            let end = next_attempt[k].map_or(end, |n| end.min(n));
            let handoff = if g.locks[li].semaphore {
                woken_at[k].map_or(0, |r| b.end_ns.saturating_sub(r))
            } else {
                k.checked_sub(1)
                    .and_then(|p| released[p])
                    .map_or(0, |r| b.end_ns.saturating_sub(r))
            };
            if put(
                &mut marks,
                b.thread,
                b.start_ns,
                b.end_ns,
                Mark::Blocked(
                    li as u32,
                    handoff,
                    match released[k] {
                        Some(_) if assumed[k] => Release::Assumed,
                        Some(_) => Release::Known,
                        None => Release::Inferred,
                    },
                ),
            ) {
                // The release goes to the strand that acquired, clamped to its end.
                if let Some(s) = innermost(b.thread, b.end_ns) {
                    let e = end.min(g.strands[s as usize].observed_end_ns);
                    marks[s as usize].push(Dated {
                        start: e,
                        end: e,
                        mark: Mark::Release(li as u32),
                    });
                }
            }
        }
    }
    // Waits an unpark ended (queue hand-offs, condition signals, latches) or, with
    // --lock-detail, a notify (Object.wait): the waker's strand signals at the unpark
    // or notify, the waiter's awaits it. Waits nothing explains (timeouts, parks
    // nobody recorded waking, Object.wait without --lock-detail): anchored.
    let woken_by: HashMap<(ThreadIndex, u64), (ThreadIndex, u64)> =
        weft_analysis::graph::unpark_edges_with(a, unparks.clone())
            .chain(weft_analysis::graph::notify_edges(a))
            .map(|e| ((e.to_thread, e.to_ns), (e.from_thread, e.from_ns)))
            .collect();
    // A virtual thread's end wakes its joiners from its carrier, after it unmounted
    // (`Thread.join` on it waits on a latch the carrier counts down): the wake-up is
    // the end of the virtual thread that last left that carrier, just before.
    let vt_ended_before = |carrier: ThreadIndex, ts: u64| -> Option<(ThreadIndex, u64)> {
        let v = a.virtual_threads.ended_on.get(&carrier)?;
        let &(end, vt) = v[..v.partition_point(|x| x.0 <= ts)].last()?;
        (ts - end <= VT_END_WAKE_NS).then_some((vt, end))
    };
    // A pool worker wakes `awaitTermination` (and a latch counted down in a task's
    // `finally`, a future completed by the pool's code) after its last task ended, in
    // the pool's own code: the wake-up is that task's end, just before. (Else the
    // shutdown wait was a fixed delay: a task class made 2× faster estimated ×1.00.)
    let strand_ended_before = |t: ThreadIndex, ts: u64| -> Option<u64> {
        let v = on_thread.get(&t)?;
        let n = v.partition_point(|x| x.0 <= ts);
        v[n.saturating_sub(64)..n]
            .iter()
            .map(|x| g.strands[x.2 as usize].observed_end_ns)
            .filter(|&e| e <= ts)
            .max()
            .filter(|&e| ts - e <= WAKE_AFTER_STRAND_NS)
    };
    let mut sync_ts: Vec<u64> = Vec::new();
    // Per sync from a virtual thread's unmounted stretch: its park's cost around it.
    let mut sync_park: Vec<(u32, (u64, u64))> = Vec::new();
    // A virtual thread's park that unmounted it is its unmounted stretch's (below):
    // the stretch ends where its carrier's turn for it began, and the turn is its
    // compute. As a wait from the park's entry to its return (its turn and mount
    // inside), halving the middle stage of a virtual-thread pipeline read ×1.16 for
    // ×1.4 before the parks were recorded as waits.
    for w in &locks.wait_intervals {
        if unmounted_during(a, w.thread, w.start_ns, w.end_ns) {
            continue;
        }
        let sync = sync_ts.len() as u32;
        let signalled = woken_by.get(&(w.thread, w.end_ns)).and_then(|&(t, ts)| {
            if put(&mut marks, t, ts, ts, Mark::Signal(sync)) {
                return Some((t, ts));
            }
            if let Some(end) = strand_ended_before(t, ts) {
                if put(&mut marks, t, end, end, Mark::Signal(sync)) {
                    return Some((t, end));
                }
            }
            let (vt, end) = vt_ended_before(t, ts)?;
            put(&mut marks, vt, end, end, Mark::Signal(sync)).then_some((vt, end))
        });
        if let Some((_, ts)) = signalled {
            sync_ts.push(ts);
            put(
                &mut marks,
                w.thread,
                w.start_ns,
                w.end_ns,
                Mark::AwaitSignal(sync),
            );
        } else {
            put(&mut marks, w.thread, w.start_ns, w.end_ns, Mark::Anchored);
        }
    }
    // A virtual thread's parks never reach `Unsafe.park` (no wait interval): it waits
    // unmounted, from its unmount to its next mount. Anchored: without it that time
    // was compute needing a core, and a run of 20,000 virtual threads that each waited
    // ~0.1 s simulated to 480 s for 0.6 s recorded. The unmounted stretch also holds
    // the wait for a free carrier after the wake-up, which the simulator's core
    // sharing adds again (docs/whatif.md §Virtual threads).
    // It ends where the carrier's turn for its next mount began: the carrier's
    // scheduling work is the virtual thread's compute.
    // A stretch that another thread's unpark of it ended (`LockSupport.unpark`: a
    // queue, condition or latch hand-off) awaits that unpark instead: it parked for
    // the waker, who an edit may make earlier or later (a virtual-thread pipeline
    // whose middle stage is made 2x faster, anchored: x1.08 estimated, x1.73
    // measured; x1.55 so). Sleeps and timed parks that ran out have no recorded
    // unpark. Its wake-up keeps the recorded latency, from the unpark to the
    // carrier's turn for it, like a platform thread's (1 ns instead, the queueing for
    // a carrier left to the simulator: x1.53 and the replay 7% short instead of 5%).
    let mut vt_parks: HashMap<ThreadIndex, Vec<(u64, u64)>> = HashMap::default();
    for w in &locks.wait_intervals {
        if weft_trace::is_virtual_thread(w.thread) {
            vt_parks
                .entry(w.thread)
                .or_default()
                .push((w.start_ns, w.end_ns));
        }
    }
    for v in vt_parks.values_mut() {
        v.sort_unstable();
    }
    for (&vt, stretches) in &a.virtual_threads.unmounted {
        let turns = vt_mounts.get(&vt).map_or(&[][..], Vec::as_slice);
        let woken = unparks.get(&vt).map_or(&[][..], Vec::as_slice);
        let parks = vt_parks.get(&vt).map_or(&[][..], Vec::as_slice);
        for &(from, to) in stretches {
            let unpark = woken[woken.partition_point(|u| u.0 < from)..]
                .first()
                .filter(|u| u.0 <= to)
                .copied();
            let mounted = to;
            let to = turns
                .iter()
                .find(|t| t.1 >= to && t.0 <= to)
                .map_or(to, |t| t.0.max(from));
            let sync = sync_ts.len() as u32;
            match unpark {
                Some((ts, waker)) if put(&mut marks, waker, ts, ts, Mark::Signal(sync)) => {
                    sync_ts.push(ts);
                    put(&mut marks, vt, from, to, Mark::AwaitSignal(sync));
                    // The park's entry and return (its recorded wait, when the agent
                    // had the park hooks), else the unmount and the mount.
                    let park = parks[..parks.partition_point(|p| p.0 <= from)]
                        .last()
                        .filter(|p| p.1 >= mounted);
                    let (entry, exit) = park.map_or((from, mounted), |p| (p.0, p.1));
                    sync_park.push((sync, (from - entry, exit.saturating_sub(to))));
                }
                _ => {
                    put(&mut marks, vt, from, to, Mark::Unmounted);
                }
            }
        }
    }
    g.syncs = sync_ts.len() as u32;
    if !sync_park.is_empty() {
        g.sync_park_ns = vec![(0, 0); sync_ts.len()];
        for (k, cost) in sync_park {
            g.sync_park_ns[k as usize] = cost;
        }
    }

    // ---- latencies: pickup by an idle worker, wake-up of a blocked waiter ----
    let mut pickups: Vec<Vec<u64>> = vec![Vec::new(); g.pools.len()];
    for v in on_thread.values() {
        let mut prev_end: Option<u64> = None;
        for &(b, e, sid) in v {
            if enclosing[sid as usize].is_some() {
                continue;
            }
            let st = &g.strands[sid as usize];
            // A worker's first task also waited for the thread to be created: not a pickup.
            if let (Runs::Pool(p), Some((_, spawned)), Some(pe)) =
                (st.runs, spawn_at[sid as usize], prev_end)
            {
                if pe <= spawned && b >= spawned {
                    pickups[p as usize].push(b - spawned);
                    g.task_pickup_ns.push((sid, b - spawned));
                }
            }
            prev_end = Some(prev_end.map_or(e, |pe| pe.max(e)));
        }
    }
    g.task_pickup_ns.sort_unstable();
    for (p, mut v) in pickups.into_iter().enumerate() {
        v.sort_unstable();
        g.pools[p].pickup_ns = v.get(v.len() / 2).copied().unwrap_or(0);
    }
    let mut wakes: Vec<u64> = Vec::new();
    for ms in &marks {
        for d in ms {
            if let Mark::Await(c) = d.mark {
                let te = g.strands[c as usize].observed_end_ns;
                if te >= d.start && te <= d.end && d.end > d.start {
                    wakes.push(d.end - te);
                }
            }
        }
    }
    wakes.sort_unstable();
    g.wake_ns = wakes.get(wakes.len() / 2).copied().unwrap_or(0);
    g.sync_wake_ns = vec![0; sync_ts.len()];
    let mut unpark_wakes: Vec<u64> = Vec::new();
    for d in marks.iter().flatten() {
        if let Mark::AwaitSignal(k) = d.mark {
            let ts = sync_ts[k as usize];
            if ts >= d.start && ts <= d.end && d.end > d.start {
                g.sync_wake_ns[k as usize] = d.end - ts;
                unpark_wakes.push(d.end - ts);
            }
        }
    }
    unpark_wakes.sort_unstable();
    g.unpark_wake_ns = unpark_wakes
        .get(unpark_wakes.len() / 2)
        .copied()
        .unwrap_or(0);

    // ---- ops ----
    let t0 = g
        .strands
        .iter()
        .map(|s| s.observed_begin_ns)
        .min()
        .unwrap_or(0);
    let t_end = g
        .strands
        .iter()
        .map(|s| s.observed_end_ns)
        .max()
        .unwrap_or(t0);
    g.observed_ns = t_end - t0;
    g.origin_ns = t0;
    let mut all_ops: Vec<Op> = Vec::new();
    let mut op_begin: Vec<u64> = Vec::new();
    let mut firsts: Vec<(u32, u32)> = Vec::with_capacity(g.strands.len());
    // The thread whose CPU a compute wall used: a virtual thread's is the carrier it
    // was mounted on (a virtual thread has no schedstat readings; taken as the
    // measured threads' mean share, 100,000 virtual-thread tasks that shared 2 CPUs
    // with a main thread computing 77% of its walls lost 23% of their CPU).
    let cpu_thread = |t: ThreadIndex, ts: u64| -> ThreadIndex {
        let Some(v) = vt_mounts.get(&t) else {
            return t;
        };
        match v[..v.partition_point(|x| x.0 <= ts)].last() {
            Some(&(_, to, carrier)) if ts <= to => carrier,
            _ => t,
        }
    };
    let mut wall_per_thread: HashMap<ThreadIndex, u64> = HashMap::default();
    let mut compute_walls: Vec<(ThreadIndex, u64, u64)> = Vec::new();
    let monitors: Vec<bool> = g.locks.iter().map(|l| l.monitor).collect();
    // Whether virtual thread `t` stayed mounted through a wait from `from` to `to`.
    let pinned = |t: ThreadIndex, from: u64, to: u64| -> bool {
        weft_trace::is_virtual_thread(t) && to > from && !unmounted_during(a, t, from, to)
    };
    for (s, ms) in marks.iter_mut().enumerate() {
        let st = &g.strands[s];
        ms.sort_by_key(|d| (d.start, d.mark.rank(), d.end));
        let first = all_ops.len() as u32;
        let mut cursor = st.observed_begin_ns;
        let mut compute = |ops: &mut Vec<Op>, begins: &mut Vec<u64>, from: u64, to: u64| {
            if to > from {
                ops.push(Op::Compute(to - from));
                begins.push(from - t0);
                let t = cpu_thread(st.thread, from);
                *wall_per_thread.entry(t).or_default() += to - from;
                compute_walls.push((t, from, to));
            }
        };
        // Locks this strand holds (acquired, release not reached yet), and how each
        // hold's release is known.
        let mut held: Vec<(u32, Release)> = Vec::new();
        for d in ms.iter() {
            let point = matches!(d.mark, Mark::Spawn(_) | Mark::Release(_) | Mark::Signal(_));
            if !point && d.start < cursor {
                continue; // inside a wait already accounted for
            }
            let at = d.start.max(cursor).min(st.observed_end_ns);
            compute(&mut all_ops, &mut op_begin, cursor, at);
            cursor = cursor.max(at);
            if matches!(
                d.mark,
                Mark::Await(_) | Mark::AwaitSignal(_) | Mark::Unmounted
            ) {
                // An inferred hold never spans a wait for another strand: a thread
                // waiting on a condition has released its lock (Condition.await,
                // Object.wait), and a hold kept across the wait could deadlock the
                // model with the strand that signals it. Nor an unmount: a hold
                // inferred from the next waiter's acquisition includes that virtual
                // thread's way back to a carrier, and kept across the holder's own
                // unmount it serialised 2,000 sleeping virtual threads on the JDK 21
                // timer queue's lock (2.2 s simulated for 0.2 s recorded).
                // A hold whose release is known ends there, across the holder's
                // own waits (a `Future.get` under a `ReentrantLock`) and unmounts (a
                // lock or a semaphore's permit held across a sleep: 200 virtual threads
                // through a `ReentrantLock`, 2,000 through a `Semaphore(2)`, replayed
                // 70–90% short, the sleeps side by side; known since virtual threads'
                // unparks are recorded).
                // A monitor too: a virtual thread unmounts holding one only on JDK
                // 24+, where it keeps it (2,000 virtual threads sleeping inside 64
                // monitors on JDK 25, the holds cut at the sleep: replayed 59% short).
                // (Not when holds are cut: kept, they can deadlock the replay.)
                let unmount = matches!(d.mark, Mark::Unmounted);
                held.retain(|&(l, release)| {
                    let keep = match release {
                        Release::Known => true,
                        Release::Assumed => unmount,
                        Release::Inferred => unmount && monitors[l as usize] && !cut_holds,
                    };
                    if keep && release == Release::Inferred {
                        g.inferred_holds_across_unmounts += 1;
                    }
                    if !keep {
                        all_ops.push(Op::Release(l));
                        op_begin.push(at - t0);
                    }
                    keep
                });
            }
            op_begin.push(at - t0);
            // A virtual thread that waits without unmounting (pinned: a sleep inside
            // `synchronized` on JDK 21-23) keeps its carrier meanwhile: 2,000 of them
            // sleeping 5 ms on 2 carriers replayed in 0.14 s for 5.2 s recorded. Only
            // a wait nothing recorded ends (a sleep, a timed park): kept through a wait
            // for a lock or a signal, a carrier held by a waiter whose holder (an
            // inferred hold, longer than the real one) needs a carrier deadlocked the
            // model (10,000 virtual threads on a `synchronized` counter, JDK 25).
            if matches!(d.mark, Mark::Anchored) && pinned(st.thread, d.start, d.end) {
                g.pinned_waits.push(all_ops.len() as u32);
            }
            match d.mark {
                Mark::Spawn(c) => all_ops.push(Op::Spawn(c)),
                Mark::Release(l) => {
                    // Already released before a wait: a no-op in the simulator.
                    if let Some(i) = held.iter().position(|&h| h.0 == l) {
                        held.remove(i);
                    }
                    all_ops.push(Op::Release(l));
                }
                Mark::Signal(k) => all_ops.push(Op::Signal(k)),
                Mark::AwaitSignal(k) => {
                    all_ops.push(Op::AwaitSignal(k));
                    let waited = d.end.saturating_sub(d.start);
                    g.waits.exact_ns += waited;
                    g.waits.unpark_ns += waited;
                    cursor = cursor.max(d.end.min(st.observed_end_ns));
                }
                Mark::Blocked(l, handoff, release) => {
                    held.push((l, release));
                    all_ops.push(Op::Acquire(l));
                    if handoff > 0 {
                        // In op order: sorted.
                        g.acquire_handoff_ns
                            .push(((all_ops.len() - 1) as u32, handoff));
                    }
                    g.waits.exact_ns += d.end.saturating_sub(d.start);
                    cursor = cursor.max(d.end.min(st.observed_end_ns));
                }
                Mark::Await(c) => {
                    all_ops.push(Op::Await(c));
                    // A wait that blocked keeps its wake-up (in op order: sorted).
                    let te = g.strands[c as usize].observed_end_ns;
                    if te >= d.start && te <= d.end && d.end > d.start {
                        g.await_wake_ns
                            .push(((all_ops.len() - 1) as u32, d.end - te));
                    }
                    g.waits.exact_ns += d.end.saturating_sub(d.start);
                    cursor = cursor.max(d.end.min(st.observed_end_ns));
                }
                Mark::Anchored | Mark::Unmounted => {
                    let e = d.end.min(st.observed_end_ns);
                    all_ops.push(Op::Delay(e.saturating_sub(at)));
                    g.waits.anchored_ns += e.saturating_sub(at);
                    cursor = cursor.max(e);
                }
            }
        }
        compute(&mut all_ops, &mut op_begin, cursor, st.observed_end_ns);
        firsts.push((first, all_ops.len() as u32 - first));
    }
    // Compute ops are walls. Their CPU demand (WHATIF.md §1.5): the wall times the
    // thread's on-CPU share over the op, on-CPU / (on-CPU + run-queue), from its
    // schedstat readings; a thread without readings: its CPU time at thread end over
    // its compute wall; else the mean of the measured ops.
    let measured = |t: &ThreadIndex| {
        m.threads
            .get(t)
            .is_some_and(|i| i.sched.len() >= 2 || i.cpu_ns.is_some())
    };
    let mut thread_factor: HashMap<ThreadIndex, f64> = HashMap::default();
    for (t, wall) in &wall_per_thread {
        if let Some(cpu) = m.threads.get(t).and_then(|i| i.cpu_ns) {
            if *wall > 0 {
                thread_factor.insert(*t, (cpu as f64 / *wall as f64).min(1.0));
            }
        }
    }
    // Per thread, the share of each interval between its readings (cpu_share.rs:
    // run-queue time a wake-up spent inside a wait is not charged to compute).
    let mut walls_of: HashMap<ThreadIndex, Vec<(u64, u64)>> = HashMap::default();
    for &(t, b, e) in &compute_walls {
        walls_of.entry(t).or_default().push((b, e));
    }
    let shares: HashMap<ThreadIndex, Vec<ShareInterval>> = walls_of
        .iter()
        .filter_map(|(t, w)| {
            let info = m.threads.get(t)?;
            Some((*t, share_intervals(&info.sched, w)))
        })
        .collect();
    let (mut cpu_sum, mut wall_sum, mut blocked_sum) = (0f64, 0u64, 0f64);
    let mut unmeasured: Vec<usize> = Vec::new();
    let contention = Contention::new(&compute_walls, g.cores.max(1));
    let mut stalls: Vec<(u32, u64)> = Vec::new();
    // The part of those stalls that was blocking no probe recorded (not runnable):
    // kept on a loaded machine too, where the rest is other processes' slices.
    let mut off_stalls: Vec<(u32, u64)> = Vec::new();
    let recorded_lock = |l: u32| {
        g.locks
            .get(l as usize)
            .is_some_and(|k| k.holds_recorded > 0)
    };
    for (s, &(first, len)) in firsts.iter().enumerate() {
        let strand_thread = g.strands[s].thread;
        // Inside a recorded critical section (--lock-detail): its exit probe can
        // be preempted between the monitorexit and its timestamp (by the waiter the
        // exit woke), so the hold's recorded end holds off-CPU time that was after
        // the release: no stall there.
        let mut in_section = 0u32;
        for i in first as usize..(first + len) as usize {
            let n = match all_ops[i] {
                Op::Compute(n) => n,
                Op::Acquire(l) if recorded_lock(l) => {
                    in_section += 1;
                    continue;
                }
                Op::Release(l) if recorded_lock(l) => {
                    in_section = in_section.saturating_sub(1);
                    continue;
                }
                _ => continue,
            };
            let from = op_begin[i] + t0;
            let t = cpu_thread(strand_thread, from);
            let measured_share = shares.get(&t).and_then(|iv| share_over(iv, from, from + n));
            let k = measured_share
                .map(|s| s.cpu)
                .or_else(|| thread_factor.get(&t).copied());
            match k {
                Some(k) => {
                    // Blocking nothing recorded (sleep, I/O) is latency, not demand.
                    let blocked = n as f64 * measured_share.map_or(0.0, |s| s.off);
                    let d = (n as f64 - blocked) * k;
                    cpu_sum += d;
                    wall_sum += n;
                    blocked_sum += blocked;
                    all_ops[i] = Op::Compute(d.round() as u64);
                    // Off-CPU time in the op beyond what sharing the cores with the
                    // program's other computing threads explains (docs/whatif.md
                    // §Durations: stalls). Only from schedstat readings: a thread
                    // with its CPU time at its end only has no run-queue time.
                    let stall = (n as f64 - blocked - d) - contention.loss(from, from + n);
                    let runq_stall = if in_section == 0 { stall.max(0.0) } else { 0.0 };
                    if measured_share.is_some() && runq_stall + blocked >= 1.0 {
                        stalls.push((i as u32, (runq_stall + blocked).round() as u64));
                    }
                    if blocked >= 1.0 {
                        off_stalls.push((i as u32, blocked.round() as u64));
                    }
                }
                None => unmeasured.push(i),
            }
        }
    }
    let mean_factor = if wall_sum > 0 {
        cpu_sum / wall_sum as f64
    } else {
        1.0
    };
    for i in unmeasured {
        if let Op::Compute(n) = all_ops[i] {
            all_ops[i] = Op::Compute((n as f64 * mean_factor).round() as u64);
        }
    }
    // Capacity: when the program's threads waited for a core (factor < 0.9) while
    // other processes ran, the cores it actually got is its CPU rate while its
    // threads computed. The kernel shares CPU between sessions (autogroups), not
    // threads: that capacity does not grow with more program threads.
    g.cores_effective = g.cores as f64;
    // A thread woken by a lock hand-off or an unpark waits in the run queue too,
    // for microseconds, on an idle machine: a program that hands off thousands of
    // times a second reads as "got 74% of the CPU it asked for" with the CPUs
    // free. Another process holding the CPUs makes a thread wait a scheduler
    // slice (ms). Only the latter is capacity the program was denied.
    let denied = waited_a_scheduler_slice(
        wall_per_thread
            .keys()
            .filter_map(|t| m.threads.get(t))
            .map(|i| i.sched.as_slice()),
    );
    // The factor over the part of the walls that was on a CPU or runnable: time a
    // thread slept or did I/O inside a compute op (latency, `blocked` above) is not
    // CPU it asked for (10 threads sleeping 100 ms between bursts read "got 11% of the
    // CPU it asked for", and the capacity then fell to 1 of 2 idle CPUs: +50%).
    let wanted_sum = wall_sum as f64 - blocked_sum;
    let factor_wanted = if wanted_sum > 0.0 {
        cpu_sum / wanted_sum
    } else {
        1.0
    };
    // All the cores, unless the program's threads were kept from them; then, when
    // only the JVM's own threads kept them (not other processes), all the cores is
    // the other candidate, kept if it replays the run closer.
    let mut all_cores_too = false;
    if factor_wanted < 0.9 && wall_sum > 0 {
        let sched = || {
            wall_per_thread
                .keys()
                .filter_map(|t| m.threads.get(t))
                .map(|i| i.sched.as_slice())
        };
        // Whether other processes held CPUs the threads waited for: the machine's
        // idle time says (recorded since session 18: where the threads waited, the
        // program could have had its own CPU plus the idle CPUs); without it, the
        // threads' run-queue waits say yes, whoever made them (10 threads sleeping
        // between bursts wait for the cores in each burst: their own number).
        // The CPUs the JVM's own threads no probe sees (JIT compilers, GC) used are
        // not the program's either: a pool compiling with `javax.tools` got ~1 of 2
        // CPUs beside the compiler threads, and 5 workers were estimated ×1.87 for
        // ×1.04 measured (session 22). Without the recorded threads' readings
        // (`&[]`) the program's CPU is the process's, as before session 23.
        let recorded: Vec<&[SchedPoint]> = m.threads.values().map(|i| i.sched.as_slice()).collect();
        let reduced = |c: &Option<MachineCapacity>| {
            c.is_none_or(|c| c.available < FULL_CAPACITY_SHARE * g.cores as f64)
        };
        let machine = machine_capacity(&m.samples, g.cores, sched(), &recorded);
        let jvm_threads_only = !reduced(&machine_capacity(&m.samples, g.cores, sched(), &[]));
        // Short run-queue waits (not `denied`) are the program's own hand-offs, unless
        // the JVM's threads took the CPUs meanwhile: 100,000 virtual-thread tasks
        // whose carriers waited 17 µs per time slice, 0.96 s in all, beside a JIT
        // and GC using 0.26 of 2 CPUs (then the closer replay decides, as below).
        if reduced(&machine) && (denied || jvm_threads_only) {
            all_cores_too = jvm_threads_only;
            // The cores the program got: its CPU demand over the union of its compute
            // walls.
            let iv: Vec<(u64, u64)> = compute_walls
                .iter()
                .filter(|(t, _, _)| measured(t))
                .map(|&(_, b, e)| (b, e))
                .collect();
            let union: u64 = weft_analysis::cpu::merge_intervals(&iv)
                .iter()
                .map(|(b, e)| e - b)
                .sum();
            if union > 0 {
                g.cores_effective = (cpu_sum / union as f64).clamp(0.05, g.cores as f64);
            }
            g.cpu_share = factor_wanted;
            if let Some(c) = machine {
                g.cores_jvm_threads = c.jvm_threads;
                g.cores_other_processes = c.other_processes;
            }
        }
    }
    // On a loaded recording the off-CPU time is other processes' time slices, which
    // the reduced capacity accounts for.
    let all_cores_stalls = all_cores_too.then(|| stalls.clone());
    g.compute_stall_ns = if g.cores_effective >= g.cores as f64 {
        stalls
    } else {
        off_stalls
    };
    for (s, &(first, len)) in firsts.iter().enumerate() {
        let st = &mut g.strands[s];
        st.first = first;
        st.len = len;
        st.observed_begin_ns -= t0;
        st.observed_end_ns -= t0;
    }
    for (s, at) in roots {
        g.strands[s as usize].root_start_ns = Some(at.saturating_sub(t0));
    }
    g.ops = all_ops;
    g.op_begin = op_begin;
    match all_cores_stalls {
        Some(stalls) => closer_of_capacities(g, stalls),
        None => g,
    }
}

/// Each virtual thread's turns on its carriers: (from, to, carrier) of every mount,
/// `from` taken back to where the carrier finished its previous mount (or woke from
/// a park after it): the scheduler's work between two mounts (taking the next one
/// off the queue, mounting it) is the next virtual thread's. Left out, it was 0.3 s of
/// the 3.6 s the JDK 25 carriers of 100,000 short tasks ran (~2.5 µs a mount), part of
/// a replay 31% short of the recorded run (docs/whatif.md §Virtual threads).
fn carrier_turns(a: &Analysis) -> HashMap<ThreadIndex, Vec<(u64, u64, ThreadIndex)>> {
    let vts = &a.virtual_threads;
    // By carrier: (mount from, mount to, virtual thread, index in its mounts).
    let mut by_carrier: HashMap<ThreadIndex, Vec<(u64, u64, ThreadIndex, usize)>> =
        HashMap::default();
    for (&vt, v) in &vts.mounts {
        for (k, &(from, to, carrier)) in v.iter().enumerate() {
            by_carrier
                .entry(carrier)
                .or_default()
                .push((from, to, vt, k));
        }
    }
    let mut woke: HashMap<ThreadIndex, Vec<u64>> = HashMap::default();
    for w in &a.locks.wait_intervals {
        if by_carrier.contains_key(&w.thread) {
            woke.entry(w.thread).or_default().push(w.end_ns);
        }
    }
    let mut out: HashMap<ThreadIndex, Vec<(u64, u64, ThreadIndex)>> =
        vts.mounts.iter().map(|(k, v)| (*k, v.clone())).collect();
    for (carrier, mut v) in by_carrier {
        v.sort_unstable();
        let mut wakes = woke.remove(&carrier).unwrap_or_default();
        wakes.sort_unstable();
        for i in 1..v.len() {
            let (from, prev_to) = (v[i].0, v[i - 1].1);
            let woke_at = wakes[..wakes.partition_point(|&w| w <= from)].last();
            let turn = woke_at.map_or(prev_to, |&w| w.max(prev_to)).min(from);
            if let Some(m) = out.get_mut(&v[i].2).and_then(|m| m.get_mut(v[i].3)) {
                m.0 = turn;
            }
        }
    }
    out
}

/// `g` with the capacity the program got beside the JVM's own threads, or the same
/// graph with all the cores and the run-queue stalls (the model before session 23),
/// whichever replays the recorded run closer. A JIT that competes all run long
/// (the `javax.tools` pool: −3.7% with all the cores, +1.3% with 0.94 of 2) is
/// capacity; one that competes at start-up and in bursts is better left to the
/// stalls where they happened (a parallel regex run: +0.7% with all the cores,
/// +16% with 0.97 cores over the whole run). Ties keep all the cores.
fn closer_of_capacities(g: ExecGraph, stalls: Vec<(u32, u64)>) -> ExecGraph {
    let error = |g: &ExecGraph| {
        replay(g).map_or(f64::INFINITY, |ns| {
            (ns as f64 - g.observed_ns as f64).abs() / g.observed_ns.max(1) as f64
        })
    };
    let mut all = g.clone();
    all.cores_effective = all.cores as f64;
    all.cpu_share = 0.0;
    all.cores_jvm_threads = 0.0;
    all.cores_other_processes = 0.0;
    all.compute_stall_ns = stalls;
    if error(&g) < error(&all) {
        g
    } else {
        all
    }
}

/// How many of the program's threads were in a compute op over time (their recorded
/// walls), as the time a computing thread waits for a core when the cores are
/// shared equally: `(1 − P/n)` of each ns where `n > P` compute.
struct Contention {
    /// Boundaries of constant `n`, with the integral of `(1 − P/n)+` up to each.
    at: Vec<u64>,
    integral: Vec<f64>,
}

impl Contention {
    fn new(walls: &[(ThreadIndex, u64, u64)], cores: u32) -> Contention {
        let mut ev: Vec<(u64, i32)> = walls
            .iter()
            .filter(|w| w.2 > w.1)
            .flat_map(|&(_, b, e)| [(b, 1), (e, -1)])
            .collect();
        ev.sort_unstable();
        let (mut at, mut integral) = (Vec::with_capacity(ev.len()), Vec::with_capacity(ev.len()));
        let (mut n, mut acc, mut last) = (0i32, 0f64, 0u64);
        for (t, d) in ev {
            if n as u32 > cores {
                acc += (t - last) as f64 * (1.0 - cores as f64 / n as f64);
            }
            match integral.last_mut() {
                Some(v) if at.last() == Some(&t) => *v = acc,
                _ => {
                    at.push(t);
                    integral.push(acc);
                }
            }
            n += d;
            last = t;
        }
        Contention { at, integral }
    }

    /// The integral at `t` (linear between boundaries).
    fn at(&self, t: u64) -> f64 {
        let i = self.at.partition_point(|&x| x <= t);
        if i == 0 {
            return 0.0;
        }
        let (t0, v0) = (self.at[i - 1], self.integral[i - 1]);
        match (self.at.get(i), self.integral.get(i)) {
            (Some(&t1), Some(&v1)) if t1 > t0 => {
                v0 + (v1 - v0) * (t - t0) as f64 / (t1 - t0) as f64
            }
            _ => v0,
        }
    }

    /// Time a thread computing over `[a, b)` waited for a core under equal sharing.
    fn loss(&self, a: u64, b: u64) -> f64 {
        (self.at(b) - self.at(a)).max(0.0)
    }
}

/// Per recorded section (same order), its hand-off latency: the time from the
/// release of the section acquired just before it on the same lock (by another
/// thread, while this one was waiting: between its request and its acquisition)
/// to its acquisition; 0 otherwise (the lock was free, or taken after a spin).
/// Only the previous holder counts: a thread can be preempted between its
/// monitorexit and the probe's timestamp, so a release can be recorded after the
/// next acquisition; an earlier release would then count a whole hold as latency.
fn monitor_handoffs(sections: &[weft_analysis::graph::MonitorSection]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..sections.len()).collect();
    order.sort_unstable_by_key(|&i| (sections[i].lock, sections[i].acquired_ns, i));
    let mut out = vec![0; sections.len()];
    for w in order.windows(2) {
        let (prev, cur) = (&sections[w[0]], &sections[w[1]]);
        if prev.lock == cur.lock
            && prev.thread != cur.thread
            && prev.released_ns >= cur.requested_ns
            && prev.released_ns <= cur.acquired_ns
        {
            out[w[1]] = cur.acquired_ns - prev.released_ns;
        }
    }
    out
}

/// The share of the program's threads' CPU samples that spin
/// (`weft_analysis::profile::SPIN_METHODS`), and the method most of those are in.
fn spin_wait_share(m: &weft_analysis::Model) -> (f64, Option<String>) {
    let (mut all, mut spinning) = (0u64, 0u64);
    let mut by: HashMap<&str, u64> = HashMap::default();
    for (t, w) in m.sampled.spin_waits() {
        let program = m.threads.get(&t).is_some_and(|i| {
            !weft_analysis::locks::JVM_THREADS.contains(&i.display_name().as_str())
        });
        if !program {
            continue;
        }
        all += w.cpu_samples;
        spinning += w.spinning(false);
        for (m, n) in w.by_method {
            *by.entry(m).or_default() += n;
        }
    }
    if all == 0 || spinning == 0 {
        return (0.0, None);
    }
    let top = by
        .into_iter()
        .max_by_key(|(m, n)| (*n, std::cmp::Reverse(*m)))
        .map(|(m, _)| m.to_string());
    (spinning as f64 / all as f64, top)
}

/// A strand that a join awaited ends before the join returns; its last record may
/// come a little after (written after the wake-up).
const JOIN_END_SLACK_NS: u64 = 1_000_000;

/// The program could have had at least this share of the cores where its threads
/// waited for one: the cores were its own (the waits were its threads outnumbering
/// them), not held by other processes.
pub const FULL_CAPACITY_SHARE: f64 = 0.9;
/// Where the CPUs went where the program's threads waited for one (per sampler
/// interval, averaged with the threads' run-queue time in the interval as the weight).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineCapacity {
    /// CPUs the program's threads could have used: their CPU time plus the
    /// machine's idle time (at most `cores`).
    pub available: f64,
    /// CPUs the JVM's threads that no probe sees (JIT compilers, GC) used: the
    /// process's CPU time beyond its recorded threads'.
    pub jvm_threads: f64,
    /// CPUs other processes used: neither the process's nor idle.
    pub other_processes: f64,
}

/// [`MachineCapacity`] from the sampler's process CPU and machine idle time and the
/// recorded threads' schedstat readings (`recorded`: every recorded thread;
/// `waiting`: the threads whose run-queue time weighs the intervals). All the cores
/// when they never waited; `None` without the machine's idle time in the trace.
fn machine_capacity<'a>(
    samples: &[weft_analysis::model::Sample],
    cores: u32,
    waiting: impl Iterator<Item = &'a [SchedPoint]>,
    recorded: &[&[SchedPoint]],
) -> Option<MachineCapacity> {
    if samples.len() < 2 || samples.iter().any(|s| s.machine_idle_ns.is_none()) {
        return None;
    }
    let steps = RateIntegral::of(waiting, |p| p.runq_ns);
    let cpu = RateIntegral::of(recorded.iter().copied(), |p| p.on_cpu_ns);
    let (mut sum, mut jvm, mut other, mut weight) = (0f64, 0f64, 0f64, 0f64);
    for w in samples.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let dt = b.ts_ns.saturating_sub(a.ts_ns);
        let (Some(ia), Some(ib)) = (a.machine_idle_ns, b.machine_idle_ns) else {
            continue;
        };
        if dt == 0 {
            continue;
        }
        let dt = dt as f64;
        let process = b.process_cpu_ns.saturating_sub(a.process_cpu_ns) as f64;
        // Without readings (no schedstat) the recorded threads' CPU is the process's.
        let own = if cpu.steps.is_empty() {
            process
        } else {
            cpu.between(a.ts_ns, b.ts_ns).min(process)
        };
        let idle = ib.saturating_sub(ia) as f64;
        let available = ((own + idle) / dt).min(cores as f64);
        let runq = steps.between(a.ts_ns, b.ts_ns);
        sum += available * runq;
        jvm += (process - own) / dt * runq;
        other += (cores as f64 - (process + idle) / dt).max(0.0) * runq;
        weight += runq;
    }
    Some(if weight > 0.0 {
        MachineCapacity {
            available: sum / weight,
            jvm_threads: jvm / weight,
            other_processes: other / weight,
        }
    } else {
        MachineCapacity {
            available: cores as f64,
            jvm_threads: 0.0,
            other_processes: 0.0,
        }
    })
}

/// The integral over time of a sum of per-thread rates, each constant between two
/// readings of a counter (run-queue time, CPU time): what the threads accumulated
/// between two instants that are not their readings' (the sampler's ticks).
struct RateIntegral {
    /// (at, integral up to `at`, total rate after `at`).
    steps: Vec<(u64, f64, f64)>,
}

impl RateIntegral {
    /// The sum over `threads` of the `counter` of their schedstat readings.
    fn of<'a>(
        threads: impl Iterator<Item = &'a [SchedPoint]>,
        counter: impl Fn(&SchedPoint) -> u64,
    ) -> RateIntegral {
        let mut ev: Vec<(u64, f64)> = Vec::new();
        for w in threads.flat_map(|p| p.windows(2)) {
            let (from, to) = (w[0].ts_ns, w[1].ts_ns);
            if to <= from {
                continue;
            }
            let r = counter(&w[1]).saturating_sub(counter(&w[0])) as f64 / (to - from) as f64;
            ev.push((from, r));
            ev.push((to, -r));
        }
        ev.sort_by_key(|e| e.0);
        let mut steps: Vec<(u64, f64, f64)> = Vec::with_capacity(ev.len());
        let (mut rate, mut acc, mut last) = (0f64, 0f64, 0u64);
        for (at, dr) in ev {
            acc += rate * at.saturating_sub(last) as f64;
            rate += dr;
            last = at;
            match steps.last_mut() {
                Some(s) if s.0 == at => *s = (at, acc, rate),
                _ => steps.push((at, acc, rate)),
            }
        }
        RateIntegral { steps }
    }

    fn at(&self, t: u64) -> f64 {
        let i = self.steps.partition_point(|s| s.0 <= t);
        match i.checked_sub(1).map(|j| self.steps[j]) {
            Some((at, acc, rate)) => acc + rate.max(0.0) * (t - at) as f64,
            None => 0.0,
        }
    }

    /// What the threads accumulated in `[a, b]`.
    fn between(&self, a: u64, b: u64) -> f64 {
        (self.at(b) - self.at(a)).max(0.0)
    }
}

/// Whether the program's threads were kept off the CPUs by other work: their mean
/// run-queue wait per time slice, over their schedstat readings, is at least
/// [`LOADED_RUNQ_DELAY_NS`]. Without readings (or time slices) it cannot tell and
/// says yes, leaving the CPU-factor test alone to decide.
fn waited_a_scheduler_slice<'a>(threads: impl Iterator<Item = &'a [SchedPoint]>) -> bool {
    let (runq, slices) = threads.filter_map(|p| Some((p.first()?, p.last()?))).fold(
        (0u64, 0u64),
        |(r, n), (a, b)| {
            (
                r + b.runq_ns.saturating_sub(a.runq_ns),
                n + b.timeslices.saturating_sub(a.timeslices),
            )
        },
    );
    slices == 0 || runq / slices >= LOADED_RUNQ_DELAY_NS
}

/// A lock kind with a shared (read) side (`weft_analysis::locks` kinds).
/// Whether thread `t` (a virtual thread: no other has unmounted stretches) was
/// unmounted at some time between `from` and `to`.
fn unmounted_during(a: &Analysis, t: ThreadIndex, from: u64, to: u64) -> bool {
    a.virtual_threads.unmounted.get(&t).is_some_and(|v| {
        // The first stretch that ends after `from` starts before `to`.
        v.get(v.partition_point(|x| x.1 <= from))
            .is_some_and(|x| x.0 < to)
    })
}

fn is_read_write(kind: &str) -> bool {
    matches!(kind, "read_write_lock" | "stamped_lock")
}

#[cfg(test)]
mod tests {
    use super::{
        closer_of_capacities, machine_capacity, monitor_handoffs, waited_a_scheduler_slice,
        Contention,
    };
    use weft_analysis::graph::MonitorSection;
    use weft_analysis::SchedPoint;

    fn at(ts_ns: u64, on_cpu_ns: u64, runq_ns: u64, timeslices: u64) -> SchedPoint {
        SchedPoint {
            ts_ns,
            on_cpu_ns,
            runq_ns,
            timeslices,
        }
    }

    fn points(runq_per_slice_ns: u64, slices: u64) -> Vec<SchedPoint> {
        vec![
            at(0, 0, 0, 0),
            at(400_000_000, 300_000_000, runq_per_slice_ns * slices, slices),
        ]
    }

    #[test]
    fn contention_is_the_equal_share_of_the_cores_the_computing_threads_lacked() {
        // 2 cores; threads 1 and 2 compute over 0..100, thread 3 over 50..150: three
        // compute over 50..100, each a third of the time without a core.
        let c = Contention::new(&[(1, 0, 100), (2, 0, 100), (3, 50, 150)], 2);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(c.loss(0, 100), 50.0 / 3.0), "{}", c.loss(0, 100));
        assert!(close(c.loss(50, 75), 25.0 / 3.0));
        assert!(close(c.loss(100, 150), 0.0));
        assert!(close(c.loss(0, 50), 0.0));
        // On 3 cores nobody waits.
        let c = Contention::new(&[(1, 0, 100), (2, 0, 100), (3, 50, 150)], 3);
        assert!(close(c.loss(0, 150), 0.0));
    }

    #[test]
    fn a_hand_off_is_measured_from_the_previous_holders_release() {
        let sec = |thread, requested_ns, acquired_ns, released_ns| MonitorSection {
            thread,
            lock: 1,
            requested_ns,
            acquired_ns,
            released_ns,
        };
        let s = [
            // Thread 0 holds 0..100. Thread 1 waits from 10, acquires at 130: 30.
            sec(0, 0, 0, 100),
            sec(1, 10, 130, 200),
            // Thread 0 asks at 150; thread 1's release is recorded after
            // thread 0's acquisition (a late exit probe): no measurable hand-off,
            // not thread 0's own earlier release either.
            sec(0, 150, 190, 260),
            // Thread 2 asks at 300, after the last release: the lock was free.
            sec(2, 300, 301, 320),
        ];
        assert_eq!(monitor_handoffs(&s), vec![0, 30, 0, 0]);
    }

    /// Two threads of 1000 ns recorded on 2 CPUs, the JVM's own threads taking one:
    /// the capacity they left (1 core) is kept only if it replays the run closer
    /// than all the cores do.
    #[test]
    fn the_jvm_s_share_is_capacity_only_where_it_replays_the_run_closer() {
        use crate::graph::ExecGraph;
        use crate::sim_tests::threads_of;
        let graph = |observed_ns: u64| {
            let g = ExecGraph {
                cores: 2,
                classes: vec!["main".into(), "Task".into()],
                observed_ns,
                cores_effective: 1.0,
                cpu_share: 0.5,
                cores_jvm_threads: 1.0,
                ..ExecGraph::default()
            };
            threads_of(g, 2, 1000)
        };
        // Recorded 2000: the JIT held a CPU all run long; 1 core replays it exactly.
        let kept = closer_of_capacities(graph(2000), Vec::new());
        assert_eq!(kept.cores_effective, 1.0);
        assert_eq!(kept.cores_jvm_threads, 1.0);
        // Recorded 1000: the threads had both CPUs after all; all the cores.
        let all = closer_of_capacities(graph(1000), Vec::new());
        assert_eq!(all.cores_effective, 2.0);
        assert_eq!((all.cpu_share, all.cores_jvm_threads), (0.0, 0.0));
    }

    /// A lock hand-off every ~100 µs on an idle machine: 4,000 wake-ups of ~40 µs
    /// each in the run queue (a CPU factor of ~0.65) is not capacity denied; the
    /// same run beside busy processes waits milliseconds per slice.
    #[test]
    fn the_machine_s_idle_time_tells_own_threads_from_other_processes() {
        // A sampler tick every 100 ms: the process's CPU and the machine's idle time.
        let tick = |i: u64, cpu_ms: u64, idle_ms: Option<u64>| weft_analysis::model::Sample {
            ts_ns: i * 100_000_000,
            process_cpu_ns: cpu_ms * 1_000_000,
            voluntary_cs: 0,
            involuntary_cs: 0,
            live_threads: 4,
            machine_idle_ns: idle_ms.map(|m| m * 1_000_000),
        };
        // One thread that waited 50 ms for a CPU in each of the two intervals and
        // ran 100 ms in each: all of the process's CPU.
        let waiting = vec![
            at(0, 0, 0, 0),
            at(200_000_000, 200_000_000, 100_000_000, 10),
        ];
        let got = |samples: &[weft_analysis::model::Sample]| {
            machine_capacity(
                samples,
                2,
                std::iter::once(waiting.as_slice()),
                &[waiting.as_slice()],
            )
            .map(|c| (c.available, c.jvm_threads, c.other_processes))
        };
        // Its threads used 1 CPU of 2 and the machine idled 1 CPU's worth: the
        // waits were its own (bursts, sleeps around them); it could have had 2.
        let idle = [
            tick(0, 0, Some(0)),
            tick(1, 100, Some(100)),
            tick(2, 200, Some(200)),
        ];
        assert_eq!(got(&idle), Some((2.0, 0.0, 0.0)));
        // The same CPU, no idle time: another process held the other CPU.
        let loaded = [
            tick(0, 0, Some(0)),
            tick(1, 100, Some(0)),
            tick(2, 200, Some(0)),
        ];
        assert_eq!(got(&loaded), Some((1.0, 0.0, 1.0)));
        // Idle in the first interval only: the mean of 2 and 1 at equal waits.
        let half = [
            tick(0, 0, Some(0)),
            tick(1, 100, Some(100)),
            tick(2, 200, Some(100)),
        ];
        assert_eq!(got(&half), Some((1.5, 0.0, 0.5)));
        // The process used both CPUs, its recorded thread one: the JVM's own
        // threads (a JIT compiler) held the other, which the program could not use.
        let jit = [
            tick(0, 0, Some(0)),
            tick(1, 200, Some(0)),
            tick(2, 400, Some(0)),
        ];
        assert_eq!(got(&jit), Some((1.0, 1.0, 0.0)));
        // A trace without the machine's idle time cannot tell.
        let old = [tick(0, 0, None), tick(1, 100, None), tick(2, 200, None)];
        assert_eq!(got(&old), None);
        // No thread waited: all the cores.
        assert_eq!(
            machine_capacity(&loaded, 2, std::iter::empty(), &[waiting.as_slice()])
                .map(|c| c.available),
            Some(2.0)
        );
        // Without schedstat readings the recorded threads' CPU is the process's.
        assert_eq!(
            machine_capacity(&jit, 2, std::iter::once(waiting.as_slice()), &[])
                .map(|c| c.available),
            Some(2.0)
        );
    }

    #[test]
    fn hand_off_wake_ups_are_not_a_loaded_machine() {
        let idle = [points(40_000, 4_000), points(35_000, 4_000)];
        assert!(!waited_a_scheduler_slice(idle.iter().map(Vec::as_slice)));
        // The mean is per time slice: one thread's 60 long waits among 4,000 short
        // wake-ups (84 µs a slice) do not make the machine loaded.
        let mixed = [points(3_000_000, 60), points(40_000, 4_000)];
        assert!(!waited_a_scheduler_slice(mixed.iter().map(Vec::as_slice)));
        let busy = [points(3_000_000, 60), points(2_500_000, 80)];
        assert!(waited_a_scheduler_slice(busy.iter().map(Vec::as_slice)));
        // No readings: the CPU factor decides alone.
        assert!(waited_a_scheduler_slice(std::iter::empty()));
    }

    /// A thread's end at `ts` with `cpu_ns` of CPU.
    fn thread_end(ts: u64, cpu_ns: u64) -> weft_trace::Record {
        weft_trace::Record::ThreadEnd {
            ts,
            cpu_ns,
            voluntary_cs: 0,
            involuntary_cs: 0,
        }
    }

    /// A blocked acquisition of lock 5 begins at `ts` (a j.u.c. lock's slow path).
    fn block5(ts: u64) -> weft_trace::Record {
        weft_trace::Record::LockBlock {
            ts,
            lock: 5,
            flags: 0,
            owner: 0,
            site: 0,
        }
    }

    /// Lock 5 acquired at `ts` after a park.
    fn acquired5(ts: u64) -> weft_trace::Record {
        weft_trace::Record::LockAcquired {
            ts,
            lock: 5,
            parked: true,
        }
    }

    /// This thread unparks the thread of Java id `target` at `ts`.
    fn unpark(ts: u64, target: u64) -> weft_trace::Record {
        weft_trace::Record::Unpark { ts, target, ns: 0 }
    }

    /// (position of the first `Release`, of the first `AwaitSignal`) in the ops of the
    /// strand of thread `t`: where a hold's release is, before or after the wait.
    fn release_and_wait(g: &crate::ExecGraph, t: u32) -> (usize, usize) {
        let st = g
            .strands
            .iter()
            .position(|s| s.thread == t)
            .expect("the thread's strand");
        let ops = g.ops_of(st as crate::graph::StrandId);
        let rel = ops
            .iter()
            .position(|o| matches!(o, crate::Op::Release(_)))
            .expect("a release");
        let wait = ops
            .iter()
            .position(|o| matches!(o, crate::Op::AwaitSignal(_)))
            .expect("the wait");
        (rel, wait)
    }

    /// A thread's start at 1 ns, named `name`, Java id `java_id`.
    fn thread_start(name: &str, java_id: u64) -> weft_trace::Record {
        weft_trace::Record::ThreadStart {
            ts: 1,
            name: name.into(),
            java_id,
            os_tid: 100 + java_id as u32,
            daemon: false,
            class_id: 0,
            target_class_id: 0,
            target_ident: 0,
            ident: java_id as u32,
        }
    }

    /// The graph of a constructed trace on 2 CPUs (records in any thread order).
    fn graph_of(
        mut records: Vec<(weft_trace::ThreadIndex, weft_trace::Record)>,
    ) -> crate::ExecGraph {
        use weft_trace::{Clock, Header, Trace};
        records.sort_by_key(|(t, _)| *t);
        let mut header = Header::default();
        header.set(weft_trace::header_keys::CPUS, "2");
        let trace = Trace {
            header,
            records,
            truncated: false,
            unknown_records: 0,
            clock: Clock::new(0, 1.0),
        };
        super::build(&weft_analysis::analyze(&trace))
    }

    /// A read-write lock: a reader blocked behind a writer for 60 ms keeps that
    /// time as a delay (as unmarked time it became compute shrunk to the CPU it
    /// used), and an edit of the lock is low confidence, with the reason.
    #[test]
    fn a_read_write_lock_s_blocking_is_kept_and_its_edits_are_low_confidence() {
        use weft_trace::{lock_flags, lock_kind, Record, GLOBAL_THREAD};
        const MS: u64 = 1_000_000;
        let start = thread_start;
        let end = |ts| thread_end(ts, 40 * MS);
        let records = vec![
            (
                GLOBAL_THREAD,
                Record::LockDef {
                    id: 5,
                    kind: lock_kind::READ_WRITE_LOCK,
                    class: "java.util.concurrent.locks.ReentrantReadWriteLock".into(),
                    ident: 0x55,
                    fair: false,
                },
            ),
            (0, start("main", 1)),
            (0, end(100 * MS)),
            (1, start("reader", 2)),
            (
                1,
                Record::LockBlock {
                    ts: 20 * MS,
                    lock: 5,
                    flags: lock_flags::SHARED,
                    owner: 1,
                    site: 0,
                },
            ),
            (
                1,
                Record::LockAcquired {
                    ts: 80 * MS,
                    lock: 5,
                    parked: true,
                },
            ),
            (1, end(100 * MS)),
            (GLOBAL_THREAD, Record::End { ts: 100 * MS }),
        ];
        let g = graph_of(records);
        assert!(g.locks.iter().any(|l| l.read_write), "{:?}", g.locks);
        let delays: u64 = g
            .ops
            .iter()
            .map(|op| match op {
                crate::Op::Delay(ns) => *ns,
                _ => 0,
            })
            .sum();
        assert!(delays >= 60 * MS, "{:?}", g.ops);
        let base = crate::search::Baseline::of(&g, &[]);
        let edit =
            crate::Edit::parse("lock:java.util.concurrent.locks.ReentrantReadWriteLock:remove")
                .unwrap();
        let e = crate::estimate(&g, &base, &[edit], "lock remove");
        assert_eq!(e.confidence, crate::Confidence::Low);
        assert!(
            e.reasons
                .iter()
                .any(|r| r.contains("read-write or stamped lock")),
            "{:?}",
            e.reasons
        );
    }

    /// A `Semaphore` of 2 permits: A (acquired at 10) and B (12) hold at once; B's
    /// release unparks D (blocked 4..45), A's, after A's own wait (20..60), unparks C
    /// (blocked 3..72; B's earlier unpark of it at 40 lost the race to D). Releases are
    /// the holders' wake-ups of waiters that then acquired: 2 permits, and A's hold
    /// spans its wait.
    #[test]
    fn a_semaphore_s_permits_and_releases_come_from_its_wake_ups() {
        use weft_trace::{lock_kind, wait_kind, Record, GLOBAL_THREAD};
        const MS: u64 = 1_000_000;
        let end = |ts| thread_end(ts, 10 * MS);
        let (block, acquired) = (block5, acquired5);
        let mut records = vec![
            (
                GLOBAL_THREAD,
                Record::LockDef {
                    id: 5,
                    kind: lock_kind::SEMAPHORE,
                    class: "java.util.concurrent.Semaphore".into(),
                    ident: 0x55,
                    fair: false,
                },
            ),
            (1, thread_start("A", 1)),
            (1, block(MS)),
            (1, acquired(10 * MS)),
            (
                1,
                Record::WaitBegin {
                    ts: 20 * MS,
                    kind: wait_kind::PARK,
                    lock: 0,
                },
            ),
            (
                1,
                Record::WaitEnd {
                    ts: 60 * MS,
                    timed_out: false,
                },
            ),
            (1, unpark(70 * MS, 3)),
            (1, end(100 * MS)),
            (2, thread_start("B", 2)),
            (2, block(2 * MS)),
            (2, acquired(12 * MS)),
            (2, unpark(40 * MS, 3)),
            (2, unpark(41 * MS, 4)),
            (2, end(100 * MS)),
            (3, thread_start("C", 3)),
            (3, block(3 * MS)),
            (3, acquired(72 * MS)),
            (3, end(100 * MS)),
            (4, thread_start("D", 4)),
            (4, block(4 * MS)),
            (4, acquired(45 * MS)),
            (4, end(100 * MS)),
            (5, thread_start("H", 5)),
            (5, unpark(9 * MS, 1)),
            (5, unpark(11 * MS, 2)),
            (5, unpark(59 * MS, 1)),
            (5, end(100 * MS)),
            (GLOBAL_THREAD, Record::End { ts: 100 * MS }),
        ];
        records.sort_by_key(|(t, r)| (*t, r.ts().unwrap_or(0)));
        let g = graph_of(records);
        assert!(g.locks[0].semaphore);
        assert_eq!(g.locks[0].permits, 2);
        let (rel, wait) = release_and_wait(&g, 1);
        assert!(rel > wait, "A released after its wait");
    }

    /// A `ReentrantLock` held across a wait (a `Future.get` inside the hold): the
    /// holder's unpark of the next waiter gives the release, after the wait, so the
    /// hold spans it; without that unpark the inferred hold ends at the wait.
    #[test]
    fn a_j_u_c_hold_released_by_an_unpark_spans_the_holder_s_wait() {
        use weft_trace::{lock_kind, wait_kind, Record, GLOBAL_THREAD};
        const MS: u64 = 1_000_000;
        let start = thread_start;
        let end = |ts| thread_end(ts, 10 * MS);
        let (block, acquired) = (block5, acquired5);
        let records = |release_unpark: bool| {
            let mut r = vec![
                (
                    GLOBAL_THREAD,
                    Record::LockDef {
                        id: 5,
                        kind: lock_kind::REENTRANT_LOCK,
                        class: "java.util.concurrent.locks.ReentrantLock".into(),
                        ident: 0x55,
                        fair: false,
                    },
                ),
                // The holder: acquires at 10 (contended; the waiter waits from 8),
                // waits 20..80 for the helper's unpark, releases at 90 (unparking
                // the waiter).
                (1, start("holder", 1)),
                (1, block(5 * MS)),
                (1, acquired(10 * MS)),
                (
                    1,
                    Record::WaitBegin {
                        ts: 20 * MS,
                        kind: wait_kind::PARK,
                        lock: 0,
                    },
                ),
                (
                    1,
                    Record::WaitEnd {
                        ts: 80 * MS,
                        timed_out: false,
                    },
                ),
                (1, end(100 * MS)),
                (2, start("waiter", 2)),
                (2, block(8 * MS)),
                (2, acquired(95 * MS)),
                (2, end(100 * MS)),
                (3, start("helper", 3)),
                (3, unpark(79 * MS, 1)),
                (3, end(100 * MS)),
                (GLOBAL_THREAD, Record::End { ts: 100 * MS }),
            ];
            if release_unpark {
                r.push((1, unpark(90 * MS, 2)));
            }
            r.sort_by_key(|(t, r)| (*t, r.ts().unwrap_or(0)));
            r
        };
        let (rel, wait) = release_and_wait(&graph_of(records(true)), 1);
        assert!(rel > wait, "released after the wait");
        let (rel, wait) = release_and_wait(&graph_of(records(false)), 1);
        assert!(rel < wait, "released at the wait");
    }

    /// A fork-join join whose target was popped and run in place in the same clock
    /// tick as the join began (ForkJoin 300 50 256 on a loaded machine): the target
    /// must not become its own waiter (a deadlock in the model: "no estimate").
    #[test]
    fn a_join_in_the_tick_of_its_target_run_is_the_parent_s() {
        use weft_trace::{Record, GLOBAL_THREAD};
        let start = thread_start;
        let push = |ts, usage, external| Record::FjPush {
            ts,
            usage,
            prev: 0,
            class_id: 10,
            external,
            ident: usage as u32,
            pool: if external { 7 } else { 0 },
        };
        let run = |ts, usage| Record::FjRunBegin {
            ts,
            usage,
            class_id: 10,
        };
        let records = vec![
            (
                GLOBAL_THREAD,
                Record::ClassDef {
                    id: 10,
                    name: "demo.Rec".into(),
                },
            ),
            (0, start("main", 1)),
            (0, push(5, 1, true)),
            (0, Record::FjJoinBegin { ts: 6, usage: 1 }),
            (0, Record::FjJoinEnd { ts: 100 }),
            (
                0,
                Record::ThreadEnd {
                    ts: 105,
                    cpu_ns: 10,
                    voluntary_cs: 0,
                    involuntary_cs: 0,
                },
            ),
            (1, start("ForkJoinPool-1-worker-1", 2)),
            (
                1,
                Record::FjWorker {
                    pool: 7,
                    class_id: 0,
                    parallelism: 1,
                },
            ),
            (1, run(10, 1)),
            (1, push(20, 2, false)),
            // join(2) and the run of 2 popped in place: the same tick.
            (1, Record::FjJoinBegin { ts: 30, usage: 2 }),
            (1, run(30, 2)),
            (1, Record::FjRunEnd { ts: 60 }),
            (1, Record::FjJoinEnd { ts: 60 }),
            (1, Record::FjRunEnd { ts: 90 }),
            (
                1,
                Record::ThreadEnd {
                    ts: 104,
                    cpu_ns: 10,
                    voluntary_cs: 0,
                    involuntary_cs: 0,
                },
            ),
            (GLOBAL_THREAD, Record::End { ts: 110 }),
        ];
        let g = graph_of(records);
        let runs: Vec<usize> = (0..g.strands.len())
            .filter(|&i| g.classes[g.strands[i].class as usize] == "demo.Rec")
            .collect();
        assert_eq!(runs.len(), 2, "{:?}", g.strands);
        for (i, st) in g.strands.iter().enumerate() {
            let ops = &g.ops[st.first as usize..(st.first + st.len) as usize];
            assert!(
                !ops.contains(&crate::Op::Await(i as crate::graph::StrandId)),
                "strand {i} waits for itself: {ops:?}"
            );
        }
        // The root awaits the child it ran in place.
        let root = &g.strands[runs[0]];
        let root_ops = &g.ops[root.first as usize..(root.first + root.len) as usize];
        assert!(
            root_ops.contains(&crate::Op::Await(runs[1] as crate::graph::StrandId)),
            "{root_ops:?}"
        );
        let r = crate::simulate(
            &g,
            &crate::Overlay::identity(&g),
            crate::SimParams::default(),
        );
        assert!(!r.deadlock);
    }

    /// main parks from 10 to 50; a thread unparks it at 30: the hand-off keeps its
    /// recorded wake-up (20). main's readings (0..100: 50 on CPU, 40 in the run
    /// queue) over 60 of compute wall: 10 of the run-queue time fits in the compute
    /// wall, the other 30 was the wake-up inside the park, so main's compute is
    /// 60 x 50 / 60 = 50 (the rule before charged all 40 to it: 60 x 50 / 90 = 33).
    #[test]
    fn a_woken_thread_keeps_its_wake_up_and_its_cpu() {
        use weft_trace::{wait_kind, Record, GLOBAL_THREAD};
        let start = |name: &str, java_id: u64, class_id: u32| Record::ThreadStart {
            ts: 0,
            name: name.into(),
            java_id,
            os_tid: 100 + java_id as u32,
            daemon: false,
            class_id,
            target_class_id: 0,
            target_ident: 0,
            ident: java_id as u32,
        };
        let end = |ts| Record::ThreadEnd {
            ts,
            cpu_ns: 0,
            voluntary_cs: 0,
            involuntary_cs: 0,
        };
        let sched = |ts, thread, on_cpu_ns, runq_ns| Record::ThreadSched {
            ts,
            thread,
            on_cpu_ns,
            runq_ns,
            // Many short slices: hand-off wake-ups, not a loaded machine.
            timeslices: 1 + ts / 10,
        };
        let records = vec![
            (
                GLOBAL_THREAD,
                Record::ClassDef {
                    id: 11,
                    name: "demo.Waker".into(),
                },
            ),
            (0, start("main", 1, 0)),
            (
                0,
                Record::WaitBegin {
                    ts: 10,
                    kind: wait_kind::PARK,
                    lock: 0,
                },
            ),
            (
                0,
                Record::WaitEnd {
                    ts: 50,
                    timed_out: false,
                },
            ),
            (0, end(100)),
            (1, start("waker", 2, 11)),
            (
                1,
                Record::Unpark {
                    ts: 30,
                    target: 1,
                    ns: 2,
                },
            ),
            (1, end(40)),
            (GLOBAL_THREAD, sched(0, 0, 0, 0)),
            (GLOBAL_THREAD, sched(100, 0, 50, 40)),
            (GLOBAL_THREAD, Record::End { ts: 100 }),
        ];
        let g = graph_of(records);
        assert_eq!(g.syncs, 1, "{:?}", g.ops);
        assert_eq!(g.sync_wake_ns, vec![20]);
        let main = g
            .strands
            .iter()
            .position(|s| g.classes[s.class as usize] == "main")
            .expect("main strand");
        let ops = g.ops_of(main as u32);
        assert!(ops.contains(&crate::Op::AwaitSignal(0)), "{ops:?}");
        let cpu: u64 = ops
            .iter()
            .map(|o| match o {
                crate::Op::Compute(n) => *n,
                _ => 0,
            })
            .sum();
        assert_eq!(cpu, 50, "{ops:?}");
        // The 10 of run-queue time inside main's compute (its 60 of wall hold 50
        // of CPU; the waker computed beside it, on enough cores): stalls of its two
        // ops (walls 10 and 50), in proportion.
        let first = g.strands[main].first;
        assert_eq!(
            g.compute_stall_ns,
            vec![(first, 2), (first + 2, 8)],
            "{ops:?}"
        );
    }

    /// A virtual thread computes on its carrier: its CPU share is the carrier's
    /// (it has no readings of its own), and the carrier's turn between two mounts
    /// (the scheduler taking the next virtual thread) is the next one's compute. On
    /// one carrier: A mounted 10-20, B 25-45, A again 50-60, the carrier on a CPU
    /// for all 50 of its 50 busy ns.
    #[test]
    fn a_virtual_thread_computes_its_carrier_s_turn_at_the_carrier_s_share() {
        use weft_trace::{Record, GLOBAL_THREAD, VIRTUAL_THREAD_BASE};
        const A: u32 = VIRTUAL_THREAD_BASE;
        const B: u32 = VIRTUAL_THREAD_BASE + 1;
        let vt_start = |ts, vt| Record::VtStart {
            ts,
            vt,
            carrier: 1,
            class_id: 11,
            ident: vt as u32,
        };
        let records = |unpark: bool| {
            let mut v = vec![
                (
                    GLOBAL_THREAD,
                    Record::ClassDef {
                        id: 11,
                        name: "demo.Job".into(),
                    },
                ),
                (0, thread_start("main", 1)),
                (0, thread_end(100, 0)),
                (
                    1,
                    Record::ThreadStart {
                        ts: 1,
                        name: "ForkJoinPool-1-worker-1".into(),
                        java_id: 2,
                        os_tid: 102,
                        daemon: true,
                        class_id: 0,
                        target_class_id: 0,
                        target_ident: 0,
                        ident: 2,
                    },
                ),
                (A, vt_start(10, 10)),
                (
                    A,
                    Record::VtUnmount {
                        ts: 20,
                        vt: 10,
                        carrier: 1,
                    },
                ),
                (
                    A,
                    Record::VtMount {
                        ts: 50,
                        vt: 10,
                        carrier: 1,
                    },
                ),
                (
                    A,
                    Record::VtEnd {
                        ts: 60,
                        vt: 10,
                        carrier: 1,
                    },
                ),
                (B, vt_start(25, 11)),
                (
                    B,
                    Record::Unpark {
                        ts: 40,
                        target: 10,
                        ns: 0,
                    },
                ),
                (
                    B,
                    Record::VtEnd {
                        ts: 45,
                        vt: 11,
                        carrier: 1,
                    },
                ),
                (
                    GLOBAL_THREAD,
                    Record::ThreadSched {
                        ts: 0,
                        thread: 1,
                        on_cpu_ns: 0,
                        runq_ns: 0,
                        timeslices: 0,
                    },
                ),
                (
                    GLOBAL_THREAD,
                    Record::ThreadSched {
                        ts: 100,
                        thread: 1,
                        on_cpu_ns: 50,
                        runq_ns: 0,
                        timeslices: 9,
                    },
                ),
                (GLOBAL_THREAD, Record::End { ts: 100 }),
            ];
            if !unpark {
                v.retain(|r| !matches!(r.1, Record::Unpark { .. }));
            }
            v
        };
        let g = graph_of(records(false));
        let ops_on = |g: &crate::ExecGraph, t: u32| {
            let s = g
                .strands
                .iter()
                .position(|s| s.thread == t)
                .expect("strand");
            g.ops_of(s as u32).to_vec()
        };
        use crate::Op::{Compute, Delay};
        // B: the carrier's turn from A's unmount (20), then its mount: 25 of CPU.
        assert_eq!(ops_on(&g, B), vec![Compute(25)]);
        // A: its first mount; unmounted until the carrier's turn for it began
        // (B's end, 45); that turn and its second mount.
        assert_eq!(ops_on(&g, A), vec![Compute(10), Delay(25), Compute(15)]);
        // B unparks A at 40 (`LockSupport.unpark`, a hand-off): A's unmounted stretch
        // awaits that signal, woken 5 after it (the carrier's turn for A began at 45).
        let g = graph_of(records(true));
        use crate::Op::{AwaitSignal, Signal};
        assert_eq!(ops_on(&g, B), vec![Compute(20), Signal(0), Compute(5)]);
        assert_eq!(
            ops_on(&g, A),
            vec![Compute(10), AwaitSignal(0), Compute(15)]
        );
        assert_eq!(g.sync_wake_ns, vec![5]);
        // Its park's cost: none known before the unmount (no park hook's wait), the
        // turn and the mount after it (45 to 50), left out if it need not park.
        assert_eq!(g.sync_park_ns, vec![(0, 5)]);
    }

    /// Three threads computing 900 ns on 2 CPUs while the JVM's own threads (a JIT)
    /// take one: each got 300 of CPU, and waited in the run queue 600 in 100 short
    /// slices, which alone reads as hand-off latency, not a loaded machine. The JVM's
    /// share is still capacity: 1 core replays the 900 recorded, all the cores with
    /// the run-queue time as stalls do not (the JIT's CPU went unseen).
    #[test]
    fn the_jvm_s_share_is_capacity_also_beside_short_run_queue_waits() {
        use weft_trace::{Record, GLOBAL_THREAD};
        let sample = |ts, process_cpu_ns| Record::Sample {
            ts,
            process_cpu_ns,
            voluntary_cs: 0,
            involuntary_cs: 0,
            live_threads: 3,
            machine_idle_ns: Some(0),
        };
        let sched = |ts, thread, on_cpu_ns, runq_ns, timeslices| Record::ThreadSched {
            ts,
            thread,
            on_cpu_ns,
            runq_ns,
            timeslices,
        };
        let mut records = vec![
            (GLOBAL_THREAD, sample(1, 0)),
            (GLOBAL_THREAD, sample(901, 1800)),
            (GLOBAL_THREAD, Record::End { ts: 901 }),
        ];
        for t in 0..3u32 {
            records.push((t, thread_start(&format!("t{t}"), 10 + t as u64)));
            records.push((t, thread_end(901, 300)));
            records.push((GLOBAL_THREAD, sched(1, t, 0, 0, 0)));
            records.push((GLOBAL_THREAD, sched(901, t, 300, 600, 100)));
        }
        let g = graph_of(records);
        assert!(
            (g.cores_effective - 1.0).abs() < 0.05,
            "capacity {} of {}",
            g.cores_effective,
            g.cores
        );
        assert!(
            (g.cores_jvm_threads - 1.0).abs() < 0.05,
            "{}",
            g.cores_jvm_threads
        );
    }

    /// A timed `tryLock` that ran out of time (`LockGaveUp`) waited its timeout and
    /// took no hold: a delay as recorded, no acquisition of the lock in the model
    /// (recorded as an acquisition before session 24, it took a hold inferred up to
    /// the next waiter's).
    #[test]
    fn a_timed_try_that_gave_up_is_a_delay_not_a_hold() {
        use weft_trace::{lock_kind, Record, GLOBAL_THREAD};
        let end = |ts| thread_end(ts, 0);
        let records = vec![
            (
                GLOBAL_THREAD,
                Record::LockDef {
                    id: 5,
                    kind: lock_kind::REENTRANT_LOCK,
                    class: "java.util.concurrent.locks.ReentrantLock".into(),
                    ident: 0x55,
                    fair: false,
                },
            ),
            (0, thread_start("main", 1)),
            (0, end(100)),
            (1, thread_start("trier", 2)),
            (
                1,
                Record::LockBlock {
                    ts: 10,
                    lock: 5,
                    flags: 0,
                    owner: 0,
                    site: 0,
                },
            ),
            (1, Record::LockGaveUp { ts: 30, lock: 5 }),
            (1, end(50)),
            (GLOBAL_THREAD, Record::End { ts: 100 }),
        ];
        let g = graph_of(records);
        let trier = g
            .strands
            .iter()
            .position(|s| g.classes[s.class as usize] == "trier" || s.thread == 1)
            .expect("the trier's strand");
        let ops = g.ops_of(trier as u32);
        assert!(ops.contains(&crate::Op::Delay(20)), "{ops:?}");
        assert!(
            !ops.iter()
                .any(|o| matches!(o, crate::Op::Acquire(_) | crate::Op::Release(_))),
            "{ops:?}"
        );
    }
}
