//! Happens-before edges between task executions (docs/task-model.md §Edges), for a
//! later rebuild of the run as a DAG:
//! - `submit`: the submission call (submitting thread, time) → the begin of the
//!   execution it was matched to;
//! - `thread_start`: the creation of a thread's `Thread` object, or else of its
//!   `Runnable` target, when recorded (`Thread.start` itself cannot be probed) → the
//!   begin of the thread execution;
//! - `thread_join`: the end of a thread execution → the return of a `Thread.join`
//!   that waited for it (an `Object.wait` on the Thread object, `JoinBegin` probe 0);
//! - `future_get`: the end of the execution that completed a `FutureTask` → the
//!   return of a `get` on it; the completion of a `CompletableFuture` (its
//!   `postComplete`, on the completing thread) → the return of a `get` / `join` on it.
//!
//! Edges are built by [`crate::tasks::analyze_tasks`], which owns the identities of
//! the executions; this module defines them and resolves the joins.

// Fx: the maps here are keyed by ids and hold one entry per task.
use rustc_hash::FxHashMap as HashMap;

use weft_trace::ThreadIndex;

use crate::events::{unobj, EventKind};
use crate::model::Model;
use crate::tasks::TaskExecution;

/// What an execution stands for: (class id, identity hash) of an object, or for a
/// fork-join run a key above 2^32 (its usage; see `tasks.rs`).
pub type Ident = (u32, u64);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    Submit,
    ThreadStart,
    ThreadJoin,
    FutureGet,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Submit => "submit",
            EdgeKind::ThreadStart => "thread_start",
            EdgeKind::ThreadJoin => "thread_join",
            EdgeKind::FutureGet => "future_get",
        }
    }
}

/// One happens-before edge: everything before (`from_thread`, `from_ns`) happens
/// before what follows (`to_thread`, `to_ns`).
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub kind: EdgeKind,
    /// Source execution (index into `TaskAnalysis::executions`): for `submit` and
    /// `thread_start` the innermost execution running on the source thread at
    /// `from_ns` (none outside any execution, e.g. on main); for joins the target
    /// execution (the thread execution, or the execution that completed the future).
    pub from: Option<usize>,
    pub from_thread: ThreadIndex,
    pub from_ns: u64,
    /// Destination execution: for `submit` and `thread_start` the execution that
    /// begins at `to_ns`; for joins the innermost execution running the join (none
    /// outside any execution).
    pub to: Option<usize>,
    pub to_thread: ThreadIndex,
    pub to_ns: u64,
}

/// Edges and what could not be resolved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Edges {
    /// In the order submit, thread_start, joins; each by destination time.
    pub edges: Vec<Edge>,
    /// Thread executions whose start has no known source (no creation recorded).
    pub unresolved_starts: u64,
    /// Joins/gets that returned with no target execution found ended (or, for a
    /// stand-in, begun) by then: a target not run as a recorded execution (e.g. a
    /// `CompletableFuture` completed by `complete()` or by an async task, whose link
    /// to the future is not recorded), a timed join that timed out, or a thread
    /// that was not recorded.
    pub unresolved_joins: u64,
}

impl Edges {
    /// Number of edges of a kind.
    pub fn count(&self, kind: EdgeKind) -> u64 {
        self.edges.iter().filter(|e| e.kind == kind).count() as u64
    }
}

/// The innermost execution on `thread` running at `ts`, from the executions of that
/// thread in begin order (`per_thread`).
pub fn innermost_at(
    execs: &[TaskExecution],
    per_thread: &HashMap<ThreadIndex, Vec<usize>>,
    thread: ThreadIndex,
    ts: u64,
) -> Option<usize> {
    let v = per_thread.get(&thread)?;
    let n = v.partition_point(|&i| execs[i].begin_ns <= ts);
    let mut cur = v[..n].last().copied();
    while let Some(i) = cur {
        if execs[i].end_ns >= ts {
            return Some(i);
        }
        cur = execs[i].parent();
    }
    None
}

/// The objects each execution stands for, in one list (a `Vec` per execution was
/// an allocation per task).
#[derive(Default)]
pub struct ExecIdents {
    ids: Vec<Ident>,
    /// End of execution i's identities in `ids`.
    ends: Vec<usize>,
}

impl ExecIdents {
    /// Appends the identities of the next execution.
    pub fn push(&mut self, ids: impl IntoIterator<Item = Ident>) {
        self.ids.extend(ids);
        self.ends.push(self.ids.len());
    }

    /// The identities of execution `i` (none if there is no such execution).
    pub fn of(&self, i: usize) -> &[Ident] {
        let begin = i
            .checked_sub(1)
            .map_or(0, |p| self.ends.get(p).copied().unwrap_or(0));
        let end = self.ends.get(i).copied().unwrap_or(begin);
        &self.ids[begin..end]
    }
}

/// The identities that a join or get waits for (the targets of the `JoinBegin`s
/// that are not completions): the only ones the edges look executions up by.
pub fn joined_identities(
    model: &Model,
    completion_probes: &std::collections::HashSet<u32>,
) -> std::collections::HashSet<Ident> {
    let mut joined = std::collections::HashSet::new();
    for evs in model
        .events
        .iter()
        .filter(|t| t.has_any(&[EventKind::JoinBegin]))
    {
        for e in evs.iter() {
            if e.kind == EventKind::JoinBegin && !completion_probes.contains(&e.b) {
                let (c, id) = unobj(e.a);
                joined.insert((c, id as u64));
            }
        }
    }
    joined
}

/// Resolves the `JoinBegin`/`JoinEnd` pairs of each thread (the model's events) against the executions' identities (`idents[i]`: every object
/// execution `i` stands for; for a thread execution, its Thread object) and the
/// completions (`JoinBegin` of a probe in `completion_probes`: the target was
/// completed there), and appends `thread_join` / `future_get` edges. A join whose
/// `JoinEnd` is missing is ignored.
pub fn resolve_joins(
    model: &Model,
    completion_probes: &std::collections::HashSet<u32>,
    execs: &[TaskExecution],
    idents: &ExecIdents,
    stand_in_completes_late: &[bool],
    per_thread: &HashMap<ThreadIndex, Vec<usize>>,
    out: &mut Edges,
) {
    // No join or get recorded (a fork-join program: its joins are fork-join
    // events): nothing to resolve, and no pass over the events.
    if !model.has_any(&[EventKind::JoinBegin]) {
        return;
    }
    // One pass over the JoinBegins: completions (target -> (time, thread), sorted
    // below), and the identities that something joins, the only ones looked up in
    // the index of executions (an index of every execution cost ~100 MB per million
    // fork-join tasks, which join otherwise).
    let mut completions: HashMap<Ident, Vec<(u64, ThreadIndex)>> = HashMap::default();
    let mut joined: std::collections::HashSet<Ident> = std::collections::HashSet::new();
    for evs in model
        .events
        .iter()
        .filter(|t| t.has_any(&[EventKind::JoinBegin]))
    {
        let thread = evs.thread;
        for e in evs.iter() {
            if e.kind == EventKind::JoinBegin {
                let (c, id) = unobj(e.a);
                let target = (c, id as u64);
                let (ts, probe) = (&e.ts, &e.b);
                if completion_probes.contains(probe) {
                    completions.entry(target).or_default().push((*ts, thread));
                } else {
                    joined.insert(target);
                }
            }
        }
    }
    // identity -> executions, in begin order.
    let mut by_ident: HashMap<Ident, Vec<usize>> = HashMap::default();
    let mut order: Vec<usize> = (0..execs.len()).collect();
    order.sort_by_key(|&i| (execs[i].begin_ns, i));
    for &i in &order {
        for id in idents.of(i).iter().filter(|id| joined.contains(id)) {
            let v = by_ident.entry(*id).or_default();
            if v.last() != Some(&i) {
                v.push(i);
            }
        }
    }
    for v in completions.values_mut() {
        v.sort_unstable();
    }
    let mut joins = Vec::new();
    for evs in model
        .events
        .iter()
        .filter(|t| t.has_any(&[EventKind::JoinBegin]))
    {
        let thread = evs.thread;
        let mut open: Vec<(u32, Ident)> = Vec::new();
        for e in evs.iter() {
            let (ts, probe) = (&e.ts, &e.b);
            match e.kind {
                EventKind::JoinBegin | EventKind::JoinEnd if completion_probes.contains(probe) => {}
                EventKind::JoinBegin => {
                    let (c, id) = unobj(e.a);
                    open.push((*probe, (c, id as u64)))
                }
                EventKind::JoinEnd => {
                    let Some(pos) = open.iter().rposition(|o| o.0 == *probe) else {
                        continue;
                    };
                    let (_, target) = open.remove(pos);
                    open.truncate(pos);
                    let is_thread_join = *probe == 0;
                    // The latest execution of the target that begun before the return.
                    let from = by_ident.get(&target).and_then(|v| {
                        let n = v.partition_point(|&i| execs[i].begin_ns <= *ts);
                        v[..n].last().copied()
                    });
                    // Completed by the return: ended before it; a stand-in (its
                    // wrapper completes the future inside the execution, then
                    // returns) only needs to have begun.
                    let from = from.filter(|&i| {
                        execs[i].end_ns <= *ts || (!is_thread_join && stand_in_completes_late[i])
                    });
                    // Else the first completion of the target before the return
                    // (a CompletableFuture completes once; later complete() calls
                    // change nothing).
                    if from.is_none() && !is_thread_join {
                        if let Some(&(cts, cth)) = completions
                            .get(&target)
                            .and_then(|v| v.first())
                            .filter(|c| c.0 <= *ts)
                        {
                            joins.push(Edge {
                                kind: EdgeKind::FutureGet,
                                from: innermost_at(execs, per_thread, cth, cts),
                                from_thread: cth,
                                from_ns: cts,
                                to: innermost_at(execs, per_thread, thread, *ts),
                                to_thread: thread,
                                to_ns: *ts,
                            });
                            continue;
                        }
                    }
                    match from {
                        None => out.unresolved_joins += 1,
                        Some(i) => joins.push(Edge {
                            kind: if is_thread_join {
                                EdgeKind::ThreadJoin
                            } else {
                                EdgeKind::FutureGet
                            },
                            from: Some(i),
                            from_thread: execs[i].thread,
                            from_ns: execs[i].end_ns.min(*ts),
                            to: innermost_at(execs, per_thread, thread, *ts),
                            to_thread: thread,
                            to_ns: *ts,
                        }),
                    }
                }
                _ => {}
            }
        }
    }
    joins.sort_by_key(|e| (e.to_ns, e.to_thread));
    out.edges.extend(joins);
}

#[cfg(test)]
mod tests {
    use super::ExecIdents;

    #[test]
    fn exec_idents_keep_each_execution_list() {
        let mut ids = ExecIdents::default();
        ids.push([(1, 10u64), (2, 20)]);
        ids.push([]);
        ids.push([(3, 30)]);
        assert_eq!(ids.of(0), [(1, 10), (2, 20)]);
        assert!(ids.of(1).is_empty());
        assert_eq!(ids.of(2), [(3, 30)]);
        assert!(ids.of(3).is_empty());
    }
}
