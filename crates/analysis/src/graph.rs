//! The execution graph's cross-thread edges, in one typed form (docs/model.md;
//! `../shared/reference/WHATIF.md` §1.3): what the possible-speedup and what-if
//! analyses build on.
//!
//! Nodes are the model's per-thread events ([`crate::Model::events`]); program order
//! is implied by their order on each thread. The strands are the task analysis's
//! executions (tasks, threads, loop chunks and fork-join runs alike). Edges that the
//! analyses already hold (submissions, thread starts and joins, future gets, fork-join
//! pushes) are read from them; the others (fork-join join completions, contended lock
//! hand-offs) are derived from the events on demand. Nothing here is stored per task:
//! [`edges`] yields the edges lazily, so a report that does not ask costs nothing.
//! GC pauses are global outages, not edges: [`crate::Model::gc_pauses`].

use rustc_hash::FxHashMap as HashMap;
use weft_trace::ThreadIndex;

use crate::edges::EdgeKind;
use crate::events::EventKind;
use crate::Analysis;

/// What an edge of the execution graph stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GraphEdgeKind {
    /// The creation of a thread's `Thread` object (or target) → its first event.
    ThreadStart,
    /// A thread's end → the return of a `Thread.join` on it.
    ThreadJoin,
    /// A submission → the begin of the execution it was matched to.
    Submit,
    /// A fork-join push by a task (`fork()`) → the begin of its run, on the
    /// pushing thread or a thief.
    Fork,
    /// A fork-join push from outside the pool → the begin of its run.
    ExternalPush,
    /// The end of a fork-join run → the return of a join on that usage.
    ForkJoinJoin,
    /// The completion of a future (its task's end, or `postComplete`) → the
    /// return of a `get`/`join` on it.
    FutureGet,
    /// A contended lock: the holder when the acquirer blocked → the acquisition.
    /// The release is not recorded, so the edge starts at the acquisition time on
    /// the holder's thread (docs/locks.md §Owner).
    LockHandoff,
    /// `LockSupport.unpark(t)` → the end of `t`'s recorded wait (a park: a queue
    /// hand-off, a condition signal, a latch count-down, a pool wake-up). Recorded
    /// by agents with the `Unpark` record; none in older traces.
    Unpark,
    /// `notify()`/`notifyAll()` of a monitor → the end of an `Object.wait` on it
    /// (`--lock-detail` only: `MonitorNotify`, and the monitor in the wait's `WaitBegin`).
    Notify,
}

impl GraphEdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GraphEdgeKind::ThreadStart => "thread_start",
            GraphEdgeKind::ThreadJoin => "thread_join",
            GraphEdgeKind::Submit => "submit",
            GraphEdgeKind::Fork => "fork",
            GraphEdgeKind::ExternalPush => "external_push",
            GraphEdgeKind::ForkJoinJoin => "forkjoin_join",
            GraphEdgeKind::FutureGet => "future_get",
            GraphEdgeKind::LockHandoff => "lock_handoff",
            GraphEdgeKind::Unpark => "unpark",
            GraphEdgeKind::Notify => "notify",
        }
    }
}

/// One edge: everything on `from_thread` up to `from_ns` happens before what
/// `to_thread` does from `to_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphEdge {
    pub kind: GraphEdgeKind,
    pub from_thread: ThreadIndex,
    pub from_ns: u64,
    pub to_thread: ThreadIndex,
    pub to_ns: u64,
}

/// Every cross-thread (or cross-strand) edge of the analysed run, kind by kind:
/// the task model's edges, fork-join pushes, fork-join join completions, lock
/// hand-offs, unparks that ended waits.
pub fn edges(a: &Analysis) -> impl Iterator<Item = GraphEdge> + '_ {
    task_edges(a)
        .chain(push_edges(a))
        .chain(forkjoin_join_edges(a))
        .chain(lock_handoff_edges(a))
        .chain(unpark_edges(a))
        .chain(notify_edges(a))
}

/// Submissions, thread starts and joins, future gets (the task model's edges).
pub fn task_edges(a: &Analysis) -> impl Iterator<Item = GraphEdge> + '_ {
    a.tasks.edges.edges.iter().map(|e| GraphEdge {
        kind: match e.kind {
            EdgeKind::Submit => GraphEdgeKind::Submit,
            EdgeKind::ThreadStart => GraphEdgeKind::ThreadStart,
            EdgeKind::ThreadJoin => GraphEdgeKind::ThreadJoin,
            EdgeKind::FutureGet => GraphEdgeKind::FutureGet,
        },
        from_thread: e.from_thread,
        from_ns: e.from_ns,
        to_thread: e.to_thread,
        to_ns: e.to_ns,
    })
}

/// Fork-join pushes (forks and external submissions) → the runs of their usages.
pub fn push_edges(a: &Analysis) -> impl Iterator<Item = GraphEdge> + '_ {
    a.forkjoin.usages.iter().filter_map(|u| {
        Some(GraphEdge {
            kind: if u.external {
                GraphEdgeKind::ExternalPush
            } else {
                GraphEdgeKind::Fork
            },
            from_thread: u.push_thread,
            from_ns: u.push_ns,
            to_thread: u.run_thread()?,
            to_ns: u.begin_ns,
        })
    })
}

/// The end of a usage's run → the return of each fork-join join on it that
/// returned after the run ended (a join that returned first did not wait for it:
/// a timed join, or a cancelled task).
pub fn forkjoin_join_edges(a: &Analysis) -> impl Iterator<Item = GraphEdge> + '_ {
    // usage -> (run thread, run end), for the usages that ran.
    let runs: std::rc::Rc<HashMap<u64, (ThreadIndex, u64)>> = std::rc::Rc::new(
        a.forkjoin
            .usages
            .iter()
            .filter_map(|u| Some((u.id, (u.run_thread()?, u.end_ns))))
            .collect(),
    );
    a.model.events.iter().flat_map(move |evs| {
        let runs = runs.clone();
        let mut open: Vec<u64> = Vec::new();
        evs.iter().filter_map(move |e| match e.kind {
            EventKind::FjJoinBegin => {
                open.push(e.a);
                None
            }
            EventKind::FjJoinEnd => {
                let usage = open.pop()?;
                let &(thread, end) = runs.get(&usage)?;
                (end <= e.ts).then_some(GraphEdge {
                    kind: GraphEdgeKind::ForkJoinJoin,
                    from_thread: thread,
                    from_ns: end,
                    to_thread: evs.thread,
                    to_ns: e.ts,
                })
            }
            _ => None,
        })
    })
}

/// Contended acquisitions whose holder was recorded: the holder's thread at the
/// acquisition time → the acquiring thread.
pub fn lock_handoff_edges(a: &Analysis) -> impl Iterator<Item = GraphEdge> + '_ {
    let by_java_id = std::rc::Rc::new(a.model.threads_by_java_id());
    a.model.events.iter().flat_map(move |evs| {
        let mut owner: Option<u64> = None;
        let by_java_id = by_java_id.clone();
        evs.iter().filter_map(move |e| match e.kind {
            EventKind::LockBlock => {
                owner = Some(e.a);
                None
            }
            // A thread that gave up (a timed `tryLock`) got nothing handed off.
            EventKind::LockAcquired if e.flag & crate::events::LOCK_GAVE_UP != 0 => {
                owner = None;
                None
            }
            EventKind::LockAcquired => {
                let holder = by_java_id.get(&owner.take()?).copied()?;
                (holder != evs.thread).then_some(GraphEdge {
                    kind: GraphEdgeKind::LockHandoff,
                    from_thread: holder,
                    from_ns: e.ts,
                    to_thread: evs.thread,
                    to_ns: e.ts,
                })
            }
            _ => None,
        })
    })
}

/// The unpark that ended each recorded wait (`WaitBegin`..`WaitEnd`) whose thread
/// was unparked: the first unpark of that thread during the wait; else, when the
/// park returned at once on a permit, the last unpark since the thread's previous
/// wait or lock acquisition ended. A wait nobody unparked (a timeout, an
/// `Object.wait` woken by `notify`) has no edge.
pub fn unpark_edges(a: &Analysis) -> impl Iterator<Item = GraphEdge> + '_ {
    unpark_edges_with(a, std::rc::Rc::new(unparks_by_target(&a.model)))
}

/// Every recorded `Unpark` of a thread by another: target thread -> (time, waker),
/// by time.
pub type UnparksByTarget = HashMap<ThreadIndex, Vec<(u64, ThreadIndex)>>;

/// [`UnparksByTarget`] of a model.
pub fn unparks_by_target(model: &crate::Model) -> UnparksByTarget {
    let by_java_id = model.threads_by_java_id();
    let mut unparks: UnparksByTarget = HashMap::default();
    for evs in &model.events {
        for e in evs.iter() {
            if e.kind == EventKind::Unpark {
                if let Some(&t) = by_java_id.get(&e.a) {
                    if t != evs.thread {
                        unparks.entry(t).or_default().push((e.ts, evs.thread));
                    }
                }
            }
        }
    }
    for v in unparks.values_mut() {
        v.sort_unstable();
    }
    unparks
}

/// [`unpark_edges`] from unparks already gathered.
pub fn unpark_edges_with(
    a: &Analysis,
    unparks: std::rc::Rc<UnparksByTarget>,
) -> impl Iterator<Item = GraphEdge> + '_ {
    a.model.events.iter().flat_map(move |evs| {
        let unparks = unparks.clone();
        let mut floor = 0u64;
        let mut begin: Option<u64> = None;
        evs.iter().filter_map(move |e| {
            match e.kind {
                EventKind::WaitBegin => begin = Some(e.ts),
                EventKind::LockAcquired => floor = e.ts,
                EventKind::WaitEnd => {
                    let b = begin.take()?;
                    let lo = std::mem::replace(&mut floor, e.ts);
                    let v = unparks.get(&evs.thread)?;
                    let during = v.partition_point(|u| u.0 < b);
                    let (ts, waker) = match v.get(during) {
                        Some(&u) if u.0 <= e.ts => u,
                        _ => v[..during].last().copied().filter(|u| u.0 > lo)?,
                    };
                    return Some(GraphEdge {
                        kind: GraphEdgeKind::Unpark,
                        from_thread: waker,
                        from_ns: ts,
                        to_thread: evs.thread,
                        to_ns: e.ts,
                    });
                }
                _ => {}
            }
            None
        })
    })
}

/// The notify that ended each `Object.wait` of a known monitor (`--lock-detail`):
/// the last `notify`/`notifyAll` of that monitor by another thread during the wait.
/// The waiter returns once it holds the monitor again, after the notifier left it,
/// so the edge ends at the wait's end. A wait that timed out, or that a notify before
/// its begin released (impossible: the waiter holds the monitor until it waits), has
/// none; two waiters woken one by one by two `notify` calls both read the later one
/// when both calls came before the first of them returned (a notify does not say
/// which waiter it woke).
pub fn notify_edges(a: &Analysis) -> impl Iterator<Item = GraphEdge> + '_ {
    // lock -> (time, notifier), by time.
    let mut notifies: HashMap<u32, Vec<(u64, ThreadIndex)>> = HashMap::default();
    for evs in &a.model.events {
        for e in evs.iter() {
            if e.kind == EventKind::MonitorNotify && e.b != 0 {
                notifies.entry(e.b).or_default().push((e.ts, evs.thread));
            }
        }
    }
    for v in notifies.values_mut() {
        v.sort_unstable();
    }
    let notifies = std::rc::Rc::new(notifies);
    a.model.events.iter().flat_map(move |evs| {
        let notifies = notifies.clone();
        let mut wait: Option<(u64, u32)> = None;
        evs.iter().filter_map(move |e| {
            match e.kind {
                EventKind::WaitBegin => {
                    wait = (e.flag == weft_trace::wait_kind::OBJECT_WAIT && e.b != 0)
                        .then_some((e.ts, e.b));
                }
                EventKind::WaitEnd => {
                    let (begin, lock) = wait.take()?;
                    let v = notifies.get(&lock)?;
                    let upto = v.partition_point(|n| n.0 <= e.ts);
                    let &(ts, notifier) = v[..upto]
                        .iter()
                        .rev()
                        .take_while(|n| n.0 >= begin)
                        .find(|n| n.1 != evs.thread)?;
                    return Some(GraphEdge {
                        kind: GraphEdgeKind::Notify,
                        from_thread: notifier,
                        from_ns: ts,
                        to_thread: evs.thread,
                        to_ns: e.ts,
                    });
                }
                _ => {}
            }
            None
        })
    })
}

/// A critical section of a monitor, from `--lock-detail`'s records: the thread asked
/// for `lock` (a LockDef id) at `requested_ns`, got it at `acquired_ns` (after a
/// spin or a block; = `requested_ns` when it was free) and released it at
/// `released_ns`. Only a thread's outermost hold of a lock is a section (a
/// re-entry is inside it). An `Object.wait` releases the monitor: a section ends
/// at the wait's begin and another starts at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonitorSection {
    pub thread: ThreadIndex,
    pub lock: u32,
    pub requested_ns: u64,
    pub acquired_ns: u64,
    pub released_ns: u64,
}

/// The monitor critical sections of every thread, in each thread's order of
/// release (empty without `--lock-detail`). A hold still open at the thread's
/// last event ends there; an exit whose enter is before a window's start is dropped.
pub fn monitor_sections(model: &crate::Model) -> Vec<MonitorSection> {
    let mut out = Vec::new();
    if !model.lock_detail {
        return out;
    }
    for evs in &model.events {
        // (lock, requested, acquired), innermost last.
        let mut open: Vec<(u32, u64, u64)> = Vec::new();
        let mut last = 0u64;
        // The next Object.wait is a Thread.join's (on the Thread, not the program's monitor).
        let mut joining = false;
        // (lock, blocked since) of the last contended enter, from its LockBlock, once it
        // was acquired: a synchronized method's `MonitorEnter` right after it (its
        // prologue, inside the monitor) takes that as its request.
        let mut blocked: Option<(u32, u64)> = None;
        let mut just_acquired: Option<(u32, u64)> = None;
        let close = |out: &mut Vec<MonitorSection>, open: &[(u32, u64, u64)], i: usize, ts: u64| {
            let (lock, r, a) = open[i];
            // A re-entry of a lock held further out is inside that hold; a hold given
            // up in an Object.wait that never returned was closed at the wait.
            if r != u64::MAX && !open[..i].iter().any(|o| o.0 == lock) {
                out.push(MonitorSection {
                    thread: evs.thread,
                    lock,
                    requested_ns: r,
                    acquired_ns: a.max(r),
                    released_ns: ts.max(a),
                });
            }
        };
        for e in evs.iter() {
            last = last.max(e.ts);
            let after_block = just_acquired.take();
            match e.kind {
                EventKind::LockBlock => blocked = Some((e.b, e.ts)),
                EventKind::LockAcquired => {
                    just_acquired = blocked.take().filter(|b| b.0 == e.b);
                }
                EventKind::MonitorEnter => {
                    let requested = after_block
                        .filter(|b| b.0 == e.b)
                        .map_or(e.ts, |b| b.1.min(e.ts));
                    open.push((e.b, requested, e.ts));
                }
                EventKind::MonitorEntered => {
                    if let Some(o) = open.last_mut() {
                        o.2 = e.ts;
                    }
                }
                EventKind::MonitorExit if !open.is_empty() => {
                    close(&mut out, &open, open.len() - 1, e.ts);
                    open.pop();
                }
                EventKind::JoinBegin => joining = true,
                // Object.wait releases the monitor it waits on (and only that
                // one, but which one is not recorded: the innermost).
                EventKind::WaitBegin if e.flag == weft_trace::wait_kind::OBJECT_WAIT => {
                    if std::mem::take(&mut joining) {
                        continue;
                    }
                    if let Some(i) = open.len().checked_sub(1) {
                        close(&mut out, &open, i, e.ts);
                        open[i].1 = u64::MAX; // reopened at the wait's end
                    }
                }
                EventKind::WaitEnd => {
                    if let Some(o) = open.last_mut().filter(|o| o.1 == u64::MAX) {
                        o.1 = e.ts;
                        o.2 = e.ts;
                    }
                }
                _ => {}
            }
        }
        for i in (0..open.len()).rev() {
            if open[i].1 != u64::MAX {
                close(&mut out, &open, i, last);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TB;
    use weft_trace::{lock_kind, Record, GLOBAL_THREAD};

    #[test]
    fn fork_join_and_lock_edges() {
        let mut tb = TB::new();
        let push = |usage, ts, external| TB::fj_push(usage, ts, external, 0);
        let begin = TB::fj_begin;
        // Threads 1 and 2 (Java ids 11 and 12).
        tb.start(1, 0, 0, (0, 0)).start(2, 0, 0, (0, 0));
        for (t, r) in [
            // Thread 1 submits root 1, runs it, forks 2 at 20, joins it 30..90.
            (1, push(1, 5, true)),
            (1, begin(1, 10)),
            (1, push(2, 20, false)),
            (1, Record::FjJoinBegin { ts: 30, usage: 2 }),
            (1, Record::FjJoinEnd { ts: 90 }),
            (1, Record::FjRunEnd { ts: 100 }),
            // Thread 2 steals 2 and runs it 40..80.
            (2, begin(2, 40)),
            (2, Record::FjRunEnd { ts: 80 }),
            // Thread 2 blocks on a lock held by thread 1 (Java id 11) 200..250.
            (
                GLOBAL_THREAD,
                Record::LockDef {
                    id: 1,
                    kind: lock_kind::MONITOR,
                    class: "L".into(),
                    ident: 1,
                    fair: false,
                },
            ),
            (
                2,
                Record::LockBlock {
                    ts: 200,
                    lock: 1,
                    flags: 0,
                    owner: 11,
                    site: 0,
                },
            ),
            (
                2,
                Record::LockAcquired {
                    ts: 250,
                    lock: 1,
                    parked: true,
                },
            ),
        ] {
            tb.recs.push((t, r));
        }
        let a = crate::analyze(&tb.trace());
        let mut es: Vec<GraphEdge> = edges(&a)
            .filter(|e| e.kind != GraphEdgeKind::ThreadStart)
            .collect();
        es.sort_by_key(|e| (e.kind, e.to_ns));
        let edge = |kind, from_thread, from_ns, to_thread, to_ns| GraphEdge {
            kind,
            from_thread,
            from_ns,
            to_thread,
            to_ns,
        };
        assert_eq!(
            es,
            vec![
                edge(GraphEdgeKind::Fork, 1, 20, 2, 40),
                edge(GraphEdgeKind::ExternalPush, 1, 5, 1, 10),
                edge(GraphEdgeKind::ForkJoinJoin, 2, 80, 1, 90),
                edge(GraphEdgeKind::LockHandoff, 1, 250, 2, 250),
            ]
        );
    }

    #[test]
    fn unparks_end_the_waits_they_woke() {
        use weft_trace::wait_kind;
        let mut tb = TB::new();
        // Threads 1 and 2 (Java ids 11 and 12).
        tb.start(1, 0, 0, (0, 0)).start(2, 0, 0, (0, 0));
        let unpark = |ts, target| Record::Unpark { ts, target, ns: 0 };
        let wait = |ts| Record::WaitBegin {
            ts,
            kind: wait_kind::PARK,
            lock: 0,
        };
        for (t, r) in [
            // Woken during the wait: the first unpark in it is the edge.
            (1, wait(100)),
            (2, unpark(150, 11)),
            (2, unpark(170, 11)),
            (
                1,
                Record::WaitEnd {
                    ts: 200,
                    timed_out: false,
                },
            ),
            // Nobody unparked it (a timeout): no edge.
            (1, wait(300)),
            (
                1,
                Record::WaitEnd {
                    ts: 400,
                    timed_out: false,
                },
            ),
            // A permit given before the park: the park returned at once.
            (2, unpark(450, 11)),
            (1, wait(500)),
            (
                1,
                Record::WaitEnd {
                    ts: 501,
                    timed_out: false,
                },
            ),
            // An unpark consumed by a lock acquisition before the wait: no edge.
            (2, unpark(550, 11)),
            (
                1,
                Record::LockBlock {
                    ts: 540,
                    lock: 1,
                    flags: 0,
                    owner: 0,
                    site: 0,
                },
            ),
            (
                1,
                Record::LockAcquired {
                    ts: 560,
                    lock: 1,
                    parked: true,
                },
            ),
            (1, wait(600)),
            (
                1,
                Record::WaitEnd {
                    ts: 700,
                    timed_out: false,
                },
            ),
            // An unpark of a thread the trace does not know, and of itself: ignored.
            (2, unpark(800, 99)),
            (2, unpark(801, 12)),
        ] {
            tb.recs.push((t, r));
        }
        let a = crate::analyze(&tb.trace());
        let es: Vec<(u32, u64, u32, u64)> = unpark_edges(&a)
            .map(|e| (e.from_thread, e.from_ns, e.to_thread, e.to_ns))
            .collect();
        assert_eq!(es, vec![(2, 150, 1, 200), (2, 450, 1, 501)]);
        assert!(edges(&a).any(|e| e.kind == GraphEdgeKind::Unpark));
    }

    #[test]
    fn notifies_end_the_object_waits_on_their_monitor() {
        use weft_trace::wait_kind;
        let mut tb = TB::new();
        tb.start(1, 0, 0, (0, 0))
            .start(2, 0, 0, (0, 0))
            .start(3, 0, 0, (0, 0));
        let wait = |ts, lock| Record::WaitBegin {
            ts,
            kind: wait_kind::OBJECT_WAIT,
            lock,
        };
        let notify = |ts, lock, all| Record::MonitorNotify { ts, lock, all };
        for (t, r) in [
            // Thread 1 waits on monitor 7; thread 2 notifies monitor 8 (another), then 7.
            (1, wait(100, 7)),
            (2, notify(120, 8, false)),
            (2, notify(150, 7, false)),
            (
                1,
                Record::WaitEnd {
                    ts: 180,
                    timed_out: false,
                },
            ),
            // A notifyAll wakes both waiters of monitor 7.
            (1, wait(200, 7)),
            (3, wait(210, 7)),
            (2, notify(250, 7, true)),
            (
                1,
                Record::WaitEnd {
                    ts: 260,
                    timed_out: false,
                },
            ),
            (
                3,
                Record::WaitEnd {
                    ts: 270,
                    timed_out: false,
                },
            ),
            // A timeout: nobody notified during the wait (the notify came before it).
            (1, wait(300, 7)),
            (
                1,
                Record::WaitEnd {
                    ts: 400,
                    timed_out: false,
                },
            ),
            // A wait of an unknown monitor (no --lock-detail): no edge.
            (1, wait(500, 0)),
            (2, notify(550, 7, false)),
            (
                1,
                Record::WaitEnd {
                    ts: 600,
                    timed_out: false,
                },
            ),
        ] {
            tb.recs.push((t, r));
        }
        let a = crate::analyze(&tb.trace());
        let mut es: Vec<(u32, u64, u32, u64)> = notify_edges(&a)
            .map(|e| (e.from_thread, e.from_ns, e.to_thread, e.to_ns))
            .collect();
        es.sort_unstable();
        assert_eq!(
            es,
            vec![(2, 150, 1, 180), (2, 250, 1, 260), (2, 250, 3, 270)]
        );
        assert!(edges(&a).any(|e| e.kind == GraphEdgeKind::Notify));
    }

    #[test]
    fn monitor_sections_pair_enters_and_exits() {
        use weft_trace::wait_kind;
        let mut tb = TB::new();
        tb.start(1, 0, 0, (0, 0)).start(2, 0, 0, (0, 0));
        let enter = |ts, lock| Record::MonitorEnter { ts, lock };
        let entered = |ts| Record::MonitorEntered { ts };
        let exit = |ts| Record::MonitorExit { ts };
        for (t, r) in [
            // Thread 1: lock 1 free at 10 (no entered), re-entered at 20, released at 40.
            (1, enter(10, 1)),
            (1, enter(20, 1)),
            (1, exit(30)),
            (1, exit(40)),
            // Thread 2 asked at 15, spun until 41, holds to 60; a nested lock 2 50..55.
            (2, enter(15, 1)),
            (2, entered(41)),
            (2, enter(50, 2)),
            (2, exit(55)),
            (2, exit(60)),
            // Thread 1: Object.wait inside lock 1 releases it 80..90.
            (1, enter(70, 1)),
            (
                1,
                Record::WaitBegin {
                    ts: 80,
                    kind: wait_kind::OBJECT_WAIT,
                    lock: 0,
                },
            ),
            (
                1,
                Record::WaitEnd {
                    ts: 90,
                    timed_out: false,
                },
            ),
            (1, exit(95)),
            // A synchronized method that blocked (contended enter 200..230): its
            // prologue's enter (no entered) is inside the monitor; the request is 200.
            (
                1,
                Record::LockBlock {
                    ts: 200,
                    lock: 1,
                    flags: 0,
                    owner: 0,
                    site: 0,
                },
            ),
            (
                1,
                Record::LockAcquired {
                    ts: 230,
                    lock: 1,
                    parked: true,
                },
            ),
            (1, enter(231, 1)),
            (1, exit(250)),
            // An exit without its enter (before a window), and a hold still open.
            (2, exit(100)),
            (2, enter(110, 2)),
            (
                2,
                Record::WaitEnd {
                    ts: 120,
                    timed_out: false,
                },
            ),
        ] {
            tb.recs.push((t, r));
        }
        let mut t = tb.trace();
        t.header.set("locks.detail", "on");
        let a = crate::analyze(&t);
        let got: Vec<(u32, u32, u64, u64, u64)> = monitor_sections(&a.model)
            .iter()
            .map(|s| {
                (
                    s.thread,
                    s.lock,
                    s.requested_ns,
                    s.acquired_ns,
                    s.released_ns,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 1, 10, 10, 40),
                (1, 1, 70, 70, 80),
                (1, 1, 90, 90, 95),
                (1, 1, 200, 231, 250),
                (2, 2, 50, 50, 55),
                (2, 1, 15, 41, 60),
                (2, 2, 110, 110, 120),
            ]
        );
        // Without the header (no --lock-detail): nothing.
        let mut t = tb.trace();
        t.header.set("locks.detail", "off");
        assert!(monitor_sections(&crate::analyze(&t).model).is_empty());
    }
}
