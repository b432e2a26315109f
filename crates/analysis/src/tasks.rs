//! The task model of docs/task-model.md: task executions per thread (shadow
//! stacks), plumbing resolution, thread executions, submissions matched to
//! executions, aggregation (R1–R3), self times, and per-class statistics.
//!
//! Input is the [`Model`] and the trace's task records; output is a
//! [`TaskAnalysis`]. It does no formatting and no CPU/findings work.

use std::collections::{BTreeMap, BTreeSet};

// Fx: the maps here are keyed by ids and hold one entry per task.
use rustc_hash::FxHashMap as HashMap;

use weft_trace::{ProbeKind, ThreadIndex};

use crate::edges::{self, Edge, EdgeKind, Edges, Ident};
use crate::events::{unobj, EventKind, NONE};
use crate::model::Model;

/// The identity of a task object: (class id, identity hash).
fn object(class_id: u32, ident: u32) -> Ident {
    (class_id, ident as u64)
}

/// The identity of a fork-join usage (its push) or of a direct `doExec` of an
/// object that was not forked (`direct`: a number unique in the trace). Identity
/// hashes are below 2^32, so these never equal an object's.
fn fj_key(class_id: u32, usage: u64, direct: u64) -> Ident {
    if usage != 0 {
        (class_id, 1 << 63 | usage)
    } else {
        (class_id, 1 << 62 | direct)
    }
}

/// What kind of task a class is, from the execution method that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaskKind {
    Runnable,
    Callable,
    ForkJoin,
    Thread,
    /// A chunk of a parallel loop (Parallel Java's `IntegerForLoop.run(first, last)`):
    /// one call of the loop body, as the library's schedule cut it.
    LoopChunk,
    /// A virtual thread (JDK 21+) started on a Runnable, reported under the
    /// Runnable's class; its self time is its mounted time.
    VirtualThread,
}

impl TaskKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Runnable => "runnable",
            TaskKind::Callable => "callable",
            TaskKind::ForkJoin => "forkjoin",
            TaskKind::Thread => "thread",
            TaskKind::LoopChunk => "loop-chunk",
            TaskKind::VirtualThread => "virtual-thread",
        }
    }
}

/// One task execution (reported or aggregated). Plumbing executions dropped by
/// rules 1–2 are not listed. A row is 48 bytes: links are `u32` indices with a
/// sentinel, the yes/no facts are bits of one byte (read through methods), the
/// class name is in [`TaskAnalysis`], and what only some executions have (a
/// submission, a creation site) is boxed ([`ExecDetails`]); a fork-join trace has
/// millions of executions and almost none of those.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskExecution {
    /// Reported class: the runtime class, or the inner task's class for a plumbing
    /// stand-in. Its name: [`TaskAnalysis::class`] (a name per row, even
    /// shared, cost 16 B per execution).
    pub class_id: u32,
    pub thread: ThreadIndex,
    pub begin_ns: u64,
    pub end_ns: u64,
    /// Duration minus the reported executions nested in it (through aggregated ones).
    pub self_ns: u64,
    /// Enclosing execution on the same thread (after dropping plumbing), or [`NO_EXEC`].
    pub(crate) parent: u32,
    pub kind: TaskKind,
    /// [`REPORTED`], [`FOLDED_INTO_PARENT`], [`SUBMITTED`], [`INCOMPLETE`], [`STAND_IN`].
    pub(crate) flags: u8,
    pub(crate) details: Option<Box<ExecDetails>>,
}

/// Reported as a task of its class (else aggregated).
pub(crate) const REPORTED: u8 = 1;
/// Aggregated into its parent (R1); else, when not reported, into its thread (R3).
pub(crate) const FOLDED_INTO_PARENT: u8 = 2;
/// Matched to a submission.
pub(crate) const SUBMITTED: u8 = 4;
/// Closed by weft (no end record: thread ended, trace cut, or records lost).
pub(crate) const INCOMPLETE: u8 = 8;
/// A plumbing execution reported for its inner task (rule 3).
pub(crate) const STAND_IN: u8 = 16;

/// "No execution" for an index of [`TaskExecution`].
pub const NO_EXEC: u32 = u32::MAX;

/// The parts of an execution that only some have.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecDetails {
    pub submit_ns: Option<u64>,
    /// The thread that made the submission (kept from the match, so that no view
    /// has to match submissions again).
    pub submit_thread: Option<ThreadIndex>,
    /// Innermost user frames of the sites; shared by the executions of a site.
    pub created_site: Option<std::sync::Arc<str>>,
    pub submitted_site: Option<std::sync::Arc<str>>,
}

impl TaskExecution {
    /// Reported as a task of its class (else aggregated).
    pub fn reported(&self) -> bool {
        self.flags & REPORTED != 0
    }

    /// Matched to a submission.
    pub fn submitted(&self) -> bool {
        self.flags & SUBMITTED != 0
    }

    /// Closed by weft (no end record: thread ended, trace cut, or records lost).
    pub fn incomplete(&self) -> bool {
        self.flags & INCOMPLETE != 0
    }

    /// A plumbing execution reported for its inner task (rule 3).
    pub fn stand_in(&self) -> bool {
        self.flags & STAND_IN != 0
    }

    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.begin_ns)
    }

    /// Enclosing execution on the same thread (after dropping plumbing): an index
    /// into `TaskAnalysis::executions`.
    pub fn parent(&self) -> Option<usize> {
        (self.parent != NO_EXEC).then_some(self.parent as usize)
    }

    /// For an aggregated execution: the execution it is folded into (index into
    /// `TaskAnalysis::executions`), or `None` when folded into its thread (R3).
    pub fn aggregated_into(&self) -> Option<usize> {
        self.parent()
            .filter(|_| self.flags & FOLDED_INTO_PARENT != 0)
    }

    pub fn submit_ns(&self) -> Option<u64> {
        self.details.as_ref().and_then(|d| d.submit_ns)
    }

    /// The thread that made the submission.
    pub fn submit_thread(&self) -> Option<ThreadIndex> {
        self.details.as_ref().and_then(|d| d.submit_thread)
    }

    /// Begin − submission time, for submitted executions.
    pub fn queue_wait_ns(&self) -> Option<u64> {
        self.submit_ns().map(|s| self.begin_ns.saturating_sub(s))
    }

    /// Innermost user frame of the site that created the task.
    pub fn created_site(&self) -> Option<&str> {
        self.details
            .as_ref()
            .and_then(|d| d.created_site.as_deref())
    }

    /// Innermost user frame of the site that submitted the task.
    pub fn submitted_site(&self) -> Option<&str> {
        self.details
            .as_ref()
            .and_then(|d| d.submitted_site.as_deref())
    }
}

/// An index of [`TaskAnalysis::executions`] as stored in a row.
pub(crate) fn exec_index(i: Option<usize>) -> u32 {
    i.map_or(NO_EXEC, |i| {
        u32::try_from(i).expect("fewer than 2^32 executions")
    })
}

/// Total, min, percentiles and max of a set of durations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Distribution {
    pub count: u64,
    pub total: u64,
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub max: u64,
}

impl Distribution {
    /// Nearest-rank percentiles (p-th = the ⌈p·n/100⌉-th smallest value).
    pub fn of(values: &[u64]) -> Distribution {
        if values.is_empty() {
            return Distribution::default();
        }
        let mut v = values.to_vec();
        v.sort_unstable();
        Distribution {
            count: v.len() as u64,
            total: v.iter().fold(0u64, |a, &x| a.saturating_add(x)),
            min: v[0],
            p50: percentile_sorted(&v, 50),
            p90: percentile_sorted(&v, 90),
            max: v[v.len() - 1],
        }
    }
}

/// Nearest-rank percentile of sorted, non-empty values.
pub fn percentile_sorted(sorted: &[u64], p: u32) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let n = sorted.len() as u64;
    let rank = (p as u64 * n).div_ceil(100).clamp(1, n);
    sorted[(rank - 1) as usize]
}

/// A (created, submitted) site pair of a class, innermost frames.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SitePair {
    pub created: Option<String>,
    pub submitted: Option<String>,
}

/// Per-class statistics (one entry per class name and kind).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskClassStats {
    pub class: String,
    pub kind: TaskKind,
    /// Reported executions.
    pub executions: u64,
    /// Executions folded into an enclosing execution or thread.
    pub aggregated: u64,
    /// Reported executions matched to a submission.
    pub submitted: u64,
    /// Reported executions closed by weft (no end record).
    pub incomplete: u64,
    /// Self times of the reported executions.
    pub granularity_ns: Distribution,
    /// Queue waits of the submitted executions; `None` when none was submitted.
    pub queue_wait_ns: Option<Distribution>,
    /// Distinct threads that ran reported executions.
    pub threads: u64,
    /// Distinct (created, submitted) sites with their execution counts, most frequent first.
    /// Executions with neither site captured are not listed.
    pub sites: Vec<(SitePair, u64)>,
}

/// Result of the task model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskAnalysis {
    /// Sorted by total self time, descending.
    pub classes: Vec<TaskClassStats>,
    /// All executions (reported and aggregated), per thread in begin order.
    pub executions: Vec<TaskExecution>,
    /// Executions weft had to close itself.
    pub incomplete: u64,
    /// `TaskEnd` records with no open matching `TaskBegin`.
    pub unmatched_ends: u64,
    /// Submissions never matched to an execution (not run, or run unobserved).
    pub unmatched_submissions: u64,
    /// Plumbing executions dropped by rules 1–2.
    pub dropped_plumbing: u64,
    /// Happens-before edges between executions (docs/task-model.md §Edges).
    pub edges: crate::edges::Edges,
    /// The name of each execution's class, by class id (read through
    /// [`TaskAnalysis::class`]).
    pub(crate) class_names: HashMap<u32, std::sync::Arc<str>>,
}

impl TaskAnalysis {
    /// The name of an execution's reported class.
    pub fn class(&self, e: &TaskExecution) -> &str {
        self.class_names
            .get(&e.class_id)
            .map_or("<unknown class>", |n| n)
    }

    /// The reported executions of a task class (its row in [`TaskAnalysis::classes`]).
    pub fn executions_of<'a>(
        &'a self,
        c: &'a TaskClassStats,
    ) -> impl Iterator<Item = &'a TaskExecution> + 'a {
        self.executions
            .iter()
            .filter(move |e| e.reported() && e.kind == c.kind && self.class(e) == c.class)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Run,
    Call,
    Exec,
    /// A parallel-loop body `run(first, last, …)` (crates/agent/src/decide.rs, LOOP_BODIES).
    LoopBody,
    Unknown,
}

#[derive(Debug, Clone)]
struct Node {
    thread: ThreadIndex,
    is_thread: bool,
    /// The thread execution of a virtual thread (a `VtStart`).
    virtual_thread: bool,
    obj: Ident,
    method: Method,
    plumbing: bool,
    begin: u64,
    end: u64,
    closed: bool,
    incomplete: bool,
    /// Enclosing raw execution (index into the nodes), or [`NO_EXEC`].
    raw_parent: u32,
    /// Plumbing whose inner task ran nested in it (rule 2).
    resolved: bool,
    /// What only plumbing and thread executions have (a node is 56 bytes, not
    /// 136: a fork-join trace has millions of nodes and almost none of these).
    wide: Option<Box<WideNode>>,
}

#[derive(Debug, Clone, Default)]
struct WideNode {
    inner: Option<Ident>,
    target: Option<Ident>,
    /// Identities of plumbing objects this execution stands for.
    extra_ids: Vec<Ident>,
}

impl Node {
    fn has_identity(&self, id: Ident) -> bool {
        self.obj == id || self.target() == Some(id)
    }

    fn inner(&self) -> Option<Ident> {
        self.wide.as_ref().and_then(|w| w.inner)
    }

    fn target(&self) -> Option<Ident> {
        self.wide.as_ref().and_then(|w| w.target)
    }

    fn extra_ids(&self) -> &[Ident] {
        self.wide.as_ref().map_or(&[], |w| &w.extra_ids)
    }

    fn raw_parent(&self) -> Option<usize> {
        (self.raw_parent != NO_EXEC).then_some(self.raw_parent as usize)
    }

    fn wide(
        inner: Option<Ident>,
        target: Option<Ident>,
        extra_ids: Vec<Ident>,
    ) -> Option<Box<WideNode>> {
        (inner.is_some() || target.is_some() || !extra_ids.is_empty()).then(|| {
            Box::new(WideNode {
                inner,
                target,
                extra_ids,
            })
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    node: usize,
    probe: u32,
    ident: u64,
    reentry: bool,
    thread_base: bool,
}

/// The probe of the executions that fork-join runs are (they are not recorded by
/// an execution probe, but by the fork-join probes; docs/forkjoin.md).
const FJ_RUN_PROBE: u32 = u32::MAX;

struct SubmitRec {
    ts: u64,
    probe: u32,
    site: u32,
    thread: ThreadIndex,
}

/// Run the task model on a model.
pub fn analyze_tasks(model: &Model) -> TaskAnalysis {
    let mut out = TaskAnalysis::default();
    let vt_scheduler = vthread_scheduler_classes(model);

    let mut submits: Vec<SubmitRec> = Vec::new();
    // (identity, submission) of every submission; sorted by identity, then time, it
    // is each identity's FIFO queue (one list: a queue per object cost ~450 B per
    // submitted task, the task model's peak on a million tasks).
    let mut submit_queues: ByIdent<u32> = ByIdent::default();
    // (identity, (ts, thread, site)) of creations, sorted the same way.
    let mut created: ByIdent<(u64, ThreadIndex, u32)> = ByIdent::default();
    // (identity, ts, thread) of forks, sorted: one list, as most objects are forked
    // once (a Vec per object cost ~100 B per fork-join task).
    let mut forked: Vec<(Ident, u64, ThreadIndex)> = Vec::new();
    // The thread that forked each fork-join usage, by usage slot (a usage is
    // forked once: its run's creator).
    let usage_slots = &model.usage_slots;
    let mut push_thread: Vec<ThreadIndex> = vec![ThreadIndex::MAX; usage_slots.len()];
    // External fork-join submissions: usage -> the submitted object's identity hash,
    // so the run matches its `Submit` (and joins on the object find it).
    let mut ext_ident: HashMap<u64, u32> = HashMap::default();
    for evs in &model.events {
        let thread = evs.thread;
        for e in evs.iter() {
            match e.kind {
                EventKind::Submit => {
                    // The virtual-thread scheduler's own runnables are not the program's.
                    if vt_scheduler.contains(&unobj(e.a).0) {
                        continue;
                    }
                    let i = submits.len();
                    submits.push(SubmitRec {
                        ts: e.ts,
                        probe: e.b,
                        site: e.c,
                        thread,
                    });
                    let (c, id) = unobj(e.a);
                    submit_queues.push(object(c, id), i as u32);
                }
                EventKind::Created => {
                    let (c, id) = unobj(e.a);
                    created.push(object(c, id), (e.ts, thread, e.c))
                }
                EventKind::Fork => {
                    let (c, id) = unobj(e.a);
                    forked.push((object(c, id), e.ts, thread))
                }
                EventKind::FjFork => {
                    if let Some(i) = usage_slots.get(e.a) {
                        push_thread[i] = thread;
                    }
                }
                EventKind::FjSubmit => {
                    let ident = match e.c {
                        NONE => 0,
                        c => model.fj_push_details[c as usize].ident,
                    };
                    ext_ident.insert(e.a, ident);
                }
                _ => {}
            }
        }
    }
    submit_queues.sort_by_key(|&i| (submits[i as usize].ts, i));
    created.sort_by_key(|e| e.0);
    forked.sort_by_key(|e| (e.0, e.1));
    let fj_plumbing = fj_plumbing_classes(model);

    // ---- pass 1: raw execution trees per thread ----
    let mut nodes: Vec<Node> = Vec::new();
    let mut direct_runs = 0u64;
    // Per virtual thread, the stretches it spent unmounted (parked), which are
    // not its executions' self time.
    let mut unmounted: HashMap<ThreadIndex, Vec<(u64, u64)>> = HashMap::default();
    for evs in &model.events {
        let thread = evs.thread;
        let last_ts = model.threads.get(&thread).map_or(0, |t| t.last_ns);
        let mut stack: Vec<Frame> = Vec::new();
        let mut unmount_at: Option<u64> = None;
        // Open fork-join runs: the key of the execution, None for a plumbing adapter
        // (which its own execution probe records).
        let mut fj_open: Vec<Option<Ident>> = Vec::new();
        for e in evs.iter() {
            // A fork-join run is an execution of method `exec` (kind fork-join).
            let (ts, probe, obj, inner) = match e.kind {
                EventKind::ThreadStart => {
                    if stack.iter().any(|f| f.thread_base) {
                        continue; // a second start: ignore
                    }
                    if model
                        .threads
                        .get(&thread)
                        .is_some_and(|t| t.is_main(model) || t.is_jvm_service(model))
                    {
                        continue; // main, a JVM thread: listed as threads, not task executions
                    }
                    let (class_id, ident) = unobj(e.a);
                    let (target_class_id, target_ident) = (e.b, e.c);
                    if (class_id, ident, target_class_id) == (0, 0, 0) {
                        // A thread that began before the window (window.rs): a
                        // thread, not an execution of the window's work.
                        continue;
                    }
                    open_thread_execution(
                        &mut nodes,
                        &mut stack,
                        thread,
                        object(class_id, ident),
                        (target_class_id != 0).then_some(object(target_class_id, target_ident)),
                        false,
                        e.ts,
                    );
                    continue;
                }
                EventKind::VtStart => {
                    // A virtual thread is an execution of its task, unless the task is
                    // a thread-per-task executor's wrapper: then the submitted task
                    // inside is the execution, reported like any executor task.
                    let (class_id, ident) = unobj(e.a);
                    if stack.iter().any(|f| f.thread_base)
                        || is_thread_per_task_wrapper(model, class_id)
                    {
                        continue;
                    }
                    let task = object(class_id, ident);
                    open_thread_execution(
                        &mut nodes,
                        &mut stack,
                        thread,
                        task,
                        Some(task),
                        true,
                        e.ts,
                    );
                    continue;
                }
                EventKind::VtUnmount => {
                    unmount_at = Some(e.ts);
                    continue;
                }
                EventKind::VtMount => {
                    if let Some(from) = unmount_at.take() {
                        unmounted.entry(thread).or_default().push((from, e.ts));
                    }
                    continue;
                }
                EventKind::ThreadEnd | EventKind::VtEnd => {
                    while let Some(f) = stack.pop() {
                        close(&mut nodes[f.node], f, e.ts, !f.thread_base);
                    }
                    continue;
                }
                EventKind::TaskEnd | EventKind::FjRunEnd => {
                    let (probe, ident) = if e.kind == EventKind::TaskEnd {
                        (e.b, e.a)
                    } else {
                        match fj_open.pop() {
                            Some(Some(key)) => (FJ_RUN_PROBE, key.1),
                            _ => continue,
                        }
                    };
                    let pos = stack
                        .iter()
                        .rposition(|f| !f.thread_base && f.probe == probe && f.ident == ident);
                    match pos {
                        None => out.unmatched_ends += 1,
                        Some(i) => {
                            while stack.len() > i + 1 {
                                let f = stack.pop().expect("len > i+1");
                                close(&mut nodes[f.node], f, e.ts, true);
                            }
                            let f = stack.pop().expect("len == i+1");
                            close(&mut nodes[f.node], f, e.ts, false);
                        }
                    }
                    continue;
                }
                EventKind::TaskBegin => {
                    let (class_id, ident) = unobj(e.a);
                    let inner = (e.c != NONE).then(|| model.inner_tasks[e.c as usize]);
                    (e.ts, e.b, object(class_id, ident), inner)
                }
                EventKind::FjRunBegin => {
                    let (usage, class_id) = (e.a, e.b);
                    if fj_plumbing.contains(&class_id) {
                        fj_open.push(None);
                        continue;
                    }
                    let key = if usage == 0 {
                        direct_runs += 1;
                        fj_key(class_id, 0, direct_runs)
                    } else {
                        match ext_ident.get(&usage) {
                            Some(&id) => object(class_id, id),
                            None => fj_key(class_id, usage, 0),
                        }
                    };
                    fj_open.push(Some(key));
                    (e.ts, FJ_RUN_PROBE, key, None)
                }
                _ => continue,
            };
            let def = if probe == FJ_RUN_PROBE {
                None
            } else {
                model.probes.get(&probe)
            };
            let plumbing = match def {
                Some(d) => d.kind == ProbeKind::PlumbingExecution,
                None => probe != FJ_RUN_PROBE && inner.is_some_and(|i| i.0 != 0),
            };
            // The virtual-thread scheduler's own runnables (a mount, a timed
            // unpark) are plumbing with nothing of the program inside.
            let scheduler =
                vt_scheduler.contains(&obj.0) || inner.is_some_and(|i| vt_scheduler.contains(&i.0));
            let plumbing = plumbing || scheduler;
            let inner = inner
                .filter(|i| plumbing && !scheduler && i.0 != 0)
                .map(|(c, id)| object(c, id));
            if let Some(top) = stack.last() {
                let top_node = &mut nodes[top.node];
                // A wrapper inside a wrapper of the same task (FutureTask →
                // RunnableAdapter → lambda) is the same execution.
                let same_wrapped_task = inner.is_some()
                    && top_node.plumbing
                    && !top_node.resolved
                    && top_node.inner() == inner;
                if same_wrapped_task && !top_node.extra_ids().contains(&obj) {
                    top_node
                        .wide
                        .get_or_insert_with(Default::default)
                        .extra_ids
                        .push(obj);
                }
                // A thread whose target is plumbing (CompletableFuture's one thread per
                // async task when the common pool has one thread): the thread is an
                // execution of the task inside, as a pool's run of that target would be.
                if top_node.is_thread
                    && !top_node.virtual_thread
                    && top_node.target() == Some(obj)
                    && top_node.inner().is_none()
                {
                    if let (Some(i), Some(w)) = (inner, top_node.wide.as_mut()) {
                        w.inner = Some(i);
                    }
                }
                if same_wrapped_task || top_node.has_identity(obj) {
                    stack.push(Frame {
                        node: top.node,
                        probe,
                        ident: obj.1,
                        reentry: true,
                        thread_base: false,
                    });
                    continue;
                }
            }
            let method = if probe == FJ_RUN_PROBE {
                Method::Exec
            } else {
                match def.map(|d| (d.method.as_str(), d.descriptor.as_str())) {
                    Some(("run", "()V")) => Method::Run,
                    Some(("run", _)) => Method::LoopBody,
                    Some(("call", _)) => Method::Call,
                    Some(("exec", _) | ("doExec", _)) => Method::Exec,
                    _ => Method::Unknown,
                }
            };
            let idx = nodes.len();
            let mut extra = Vec::new();
            // Rule 2: open plumbing wrapping this object is resolved by it.
            for f in stack.iter().rev() {
                if f.reentry {
                    continue;
                }
                let n = &mut nodes[f.node];
                if n.plumbing && !n.resolved && n.inner() == Some(obj) {
                    n.resolved = true;
                    extra.push(n.obj);
                    extra.extend(n.extra_ids().iter().copied());
                }
            }
            nodes.push(Node {
                thread,
                is_thread: false,
                virtual_thread: false,
                obj,
                method,
                plumbing,
                begin: ts,
                end: ts,
                closed: false,
                incomplete: false,
                raw_parent: exec_index(stack.last().map(|f| f.node)),
                resolved: false,
                wide: Node::wide(inner, None, extra),
            });
            stack.push(Frame {
                node: idx,
                probe,
                ident: obj.1,
                reentry: false,
                thread_base: false,
            });
        }
        // Still open at the thread's last record. A thread still alive when the
        // recording ended (its base frame open, the trace complete) was still in
        // them: a task blocked to the end in a `Future.get` (a pool whose tasks wait
        // for tasks queued behind them) waited until the end, not until its wait began.
        let alive = model.end_ns.is_some() && stack.iter().any(|f| f.thread_base);
        while let Some(f) = stack.pop() {
            let end = if alive { model.duration_ns } else { last_ts };
            close(&mut nodes[f.node], f, end, true);
        }
    }

    // ---- pass 2: drop plumbing (rules 1–2), effective parents ----
    let dropped: Vec<bool> = nodes
        .iter()
        .map(|n| n.plumbing && (n.inner().is_none() || n.resolved))
        .collect();
    out.dropped_plumbing = dropped.iter().filter(|&&d| d).count() as u64;
    let mut new_index: Vec<u32> = vec![u32::MAX; nodes.len()];
    // Indices of the kept nodes (u32: a node index per execution).
    let mut kept: Vec<u32> = Vec::new();
    for (i, d) in dropped.iter().enumerate() {
        if !d {
            new_index[i] = kept.len() as u32;
            kept.push(i as u32);
        }
    }
    let eff_parent = |mut i: usize| -> Option<usize> {
        while let Some(p) = nodes[i].raw_parent() {
            if !dropped[p] {
                return Some(new_index[p] as usize).filter(|_| new_index[p] != u32::MAX);
            }
            i = p;
        }
        None
    };

    // ---- submissions matched to executions (FIFO per identity, in begin order) ----
    // (No submission recorded, as in a fork-join program: nothing to order.)
    let mut order: Vec<u32> = Vec::new();
    if !submit_queues.is_empty() {
        order = (0..kept.len() as u32).collect();
        order.sort_by_key(|&k| (nodes[kept[k as usize] as usize].begin, k));
    }
    // The submission matched to each kept execution (NO_SUBMIT: none).
    let mut matched: Vec<u32> = vec![NO_SUBMIT; kept.len()];
    for &k in &order {
        let k = k as usize;
        let n = &nodes[kept[k] as usize];
        // A thread is submitted only when a thread-per-task executor started it for a
        // task: its target is that executor's wrapper, with the task inside (JDK 21's
        // `newThreadPerTaskExecutor`, CompletableFuture's thread per async task).
        let (own, wrapper, extra): (Ident, Option<Ident>, &[Ident]) = if n.is_thread {
            match n.inner() {
                Some(i) => (i, n.target(), &[]),
                None => continue,
            }
        } else {
            let own = n.inner().unwrap_or(n.obj);
            (own, n.inner().is_some().then_some(n.obj), n.extra_ids())
        };
        let ids = std::iter::once(own)
            .chain(wrapper)
            .chain(extra.iter().copied());
        for id in ids {
            if let Some(&s) = submit_queues.front(id) {
                if submits[s as usize].ts <= n.end {
                    submit_queues.pop_front(id);
                    matched[k] = s;
                    break;
                }
            }
        }
    }
    drop(order);
    out.unmatched_submissions = submit_queues.remaining() as u64;
    drop(submit_queues);

    // ---- build executions: class, kind, creation, aggregation ----
    let mut execs: Vec<TaskExecution> = Vec::with_capacity(kept.len());
    let mut site_names = SiteNames::default();
    let mut class_names: HashMap<u32, std::sync::Arc<str>> = HashMap::default();
    for (k, &ni) in kept.iter().enumerate() {
        let ni = ni as usize;
        let n = &nodes[ni];
        let parent = eff_parent(ni);
        let stand_in = n.plumbing && n.inner().is_some();
        let obj = n.inner().unwrap_or(n.obj);
        let (class_id, kind) = if n.virtual_thread {
            (n.obj.0, TaskKind::VirtualThread)
        } else if n.is_thread {
            let thread_class = model.class_name(n.obj.0);
            let cid = if n.obj.0 != 0 && thread_class != "java.lang.Thread" {
                n.obj.0
            } else if let Some(i) = n.inner() {
                i.0 // the task inside a plumbing target
            } else if let Some(t) = n.target() {
                t.0
            } else {
                n.obj.0
            };
            (cid, TaskKind::Thread)
        } else if stand_in {
            let plumb = model.class_name(n.obj.0);
            let submit_probe =
                submit_of(&matched, k).and_then(|s| model.probes.get(&submits[s].probe));
            let callable_submit = submit_probe
                .is_some_and(|p| p.descriptor.starts_with("(Ljava/util/concurrent/Callable;"));
            let runnable_submit = submit_probe.is_some_and(|p| {
                p.method == "submit" && p.descriptor.starts_with("(Ljava/lang/Runnable;")
            });
            // The wrapper right around the task: a FutureTask there holds it as its
            // `callable` (a Runnable sits in a RunnableAdapter, which runs nested and
            // comes last in the chain; `submit(Runnable)` says so itself).
            // `invokeAll`'s and an ExecutorCompletionService's callables (a FutureTask
            // given to `execute`) read "runnable" before session 15.
            let direct = n.extra_ids().last().map_or(n.obj.0, |w| w.0);
            let holds_callable =
                !runnable_submit && model.class_name(direct).ends_with("FutureTask");
            let kind = if plumb.contains("Callable")
                || plumb.ends_with("AsyncSupply")
                || (plumb.ends_with("FutureTask") && callable_submit)
                || holds_callable
            {
                TaskKind::Callable
            } else {
                TaskKind::Runnable
            };
            (obj.0, kind)
        } else {
            let kind = match n.method {
                Method::Call => TaskKind::Callable,
                Method::Exec => TaskKind::ForkJoin,
                Method::LoopBody => TaskKind::LoopChunk,
                Method::Run | Method::Unknown => TaskKind::Runnable,
            };
            (obj.0, kind)
        };
        // Creation: the latest Created at or before the begin (else the first),
        // falling back to Fork; unknown means the running thread.
        let creation_of = |o: Ident| {
            let creation = created
                .get(o)
                .and_then(|v| latest_before(v, n.begin, |e| e.1 .0))
                .map(|e| e.1);
            let creator = creation.map(|c| c.1).or_else(|| {
                if o.1 >> 63 == 1 {
                    // A forked usage's run (see fj_key).
                    let slot = usage_slots.get(o.1 & !(1 << 63))?;
                    return Some(push_thread[slot]).filter(|&t| t != ThreadIndex::MAX);
                }
                let from = forked.partition_point(|f| f.0 < o);
                let to = forked.partition_point(|f| f.0 <= o);
                latest_before(&forked[from..to], n.begin, |f| f.1).map(|f| f.2)
            });
            (creation, creator)
        };
        let (mut creation, mut creator) = creation_of(obj);
        if creator.is_none() && stand_in {
            // A lambda has no constructor probe: a wrapper's creation stands for its
            // task's (the ScheduledFutureTask `schedule` made on main, the adapter
            // `ForkJoinPool.invokeAll` pushed). Taken as made by the running thread,
            // every scheduled run was aggregated into the pool's worker.
            for o in std::iter::once(n.obj).chain(n.extra_ids().iter().copied()) {
                let (c, t) = creation_of(o);
                if t.is_some() {
                    (creation, creator) = (c, t);
                    break;
                }
            }
        }
        // Unknown for a stand-in: its wrapper was made by the JDK's executor machinery
        // (ScheduledThreadPoolExecutor.schedule* wraps without a submission probe), so
        // the task was handed to this thread, not made here: reported (R2).
        let created_here = creator.map_or(!stand_in, |t| t == n.thread);
        let submit = submit_of(&matched, k).map(|s| &submits[s]);
        let submitted = submit.is_some();
        let parent_is_task = parent.is_some_and(|p| !is_thread_exec_at(&nodes, &kept, p));
        // A loop chunk is scheduled work even though nothing submits it: the
        // library's schedule cut the loop into it (never aggregated, like a submission).
        let (reported, aggregated_into) = if n.is_thread || submitted || kind == TaskKind::LoopChunk
        {
            (true, None)
        } else if parent_is_task {
            (false, parent) // R1
        } else if created_here {
            (false, None) // R3
        } else {
            (true, None) // R2
        };
        let details = ExecDetails {
            submit_ns: submit.map(|s| s.ts),
            submit_thread: submit.map(|s| s.thread),
            created_site: creation.and_then(|c| site_names.get(model, c.2)),
            submitted_site: submit.and_then(|s| site_names.get(model, s.site)),
        };
        class_names
            .entry(class_id)
            .or_insert_with(|| model.class_name(class_id).into());
        execs.push(TaskExecution {
            class_id,
            kind,
            thread: n.thread,
            begin_ns: n.begin,
            end_ns: n.end.max(n.begin),
            self_ns: 0,
            flags: [
                (reported, REPORTED),
                (aggregated_into.is_some(), FOLDED_INTO_PARENT),
                (submitted, SUBMITTED),
                (n.incomplete, INCOMPLETE),
                (stand_in, STAND_IN),
            ]
            .iter()
            .fold(0, |f, &(yes, bit)| if yes { f | bit } else { f }),
            parent: exec_index(parent),
            details: (details != ExecDetails::default()).then(|| Box::new(details)),
        });
    }
    drop(dropped);
    drop(new_index);
    drop(push_thread);

    // What the edges need from the raw executions, so that those are freed first:
    // the identities each execution stands for (only the ones something joins),
    // and the Thread object and target of thread executions.
    let completion_probes = completion_probes(model);
    let joined = edges::joined_identities(model, &completion_probes);
    let mut idents = edges::ExecIdents::default();
    let mut thread_objects: Vec<(usize, Ident, Option<Ident>)> = Vec::new();
    for (k, &ni) in kept.iter().enumerate() {
        let n = &nodes[ni as usize];
        let (inner, extra): (Option<Ident>, &[Ident]) = if n.is_thread {
            thread_objects.push((k, n.obj, n.target()));
            (None, &[])
        } else {
            (n.inner(), n.extra_ids())
        };
        idents.push(
            std::iter::once(n.obj)
                .chain(inner)
                .chain(extra.iter().copied())
                .filter(|id| joined.contains(id)),
        );
    }
    drop(nodes);
    drop(kept);
    // ---- self times: subtract reported executions nested below, through aggregated ones ----
    // Children always come after their parent (begin order per thread).
    // On a virtual thread, time unmounted (parked, waiting for a carrier) is not
    // running time: durations here are mounted time.
    for g in unmounted.values_mut() {
        g.sort_unstable();
    }
    let mut reported_below: Vec<u64> = vec![0; execs.len()];
    for i in (0..execs.len()).rev() {
        let e = &execs[i];
        let gaps = unmounted
            .get(&e.thread)
            .map_or(0, |g| overlap_ns(g, e.begin_ns, e.end_ns));
        let dur = e.duration_ns().saturating_sub(gaps);
        let below = reported_below[i];
        let self_ns = dur.saturating_sub(below);
        let contrib = if e.reported() { dur } else { below };
        let parent = e.parent();
        execs[i].self_ns = self_ns;
        if let Some(p) = parent {
            if p < i {
                reported_below[p] = reported_below[p].saturating_add(contrib);
            }
        }
    }
    drop(reported_below);
    out.edges = happens_before(
        model,
        &execs,
        (&submits, &matched),
        &created,
        &thread_objects,
        &idents,
        &completion_probes,
    );
    out.incomplete = execs.iter().filter(|e| e.incomplete()).count() as u64;
    out.classes = class_stats(&execs, &class_names);
    out.class_names = class_names;
    out.executions = execs;
    out
}

/// Submit, thread-start and join edges (crates/analysis/src/edges.rs).
fn happens_before(
    model: &Model,
    execs: &[TaskExecution],
    (submits, matched): (&[SubmitRec], &[u32]),
    created: &ByIdent<(u64, ThreadIndex, u32)>,
    thread_objects: &[(usize, Ident, Option<Ident>)],
    idents: &edges::ExecIdents,
    completion_probes: &std::collections::HashSet<u32>,
) -> Edges {
    let mut out = Edges::default();
    let mut by_thread: HashMap<ThreadIndex, Vec<usize>> = HashMap::default();
    for (i, e) in execs.iter().enumerate() {
        by_thread.entry(e.thread).or_default().push(i);
    }
    // Sized up front: a million submissions' edges grown by doubling were the task
    // model's peak.
    let mut submit_edges = Vec::with_capacity(matched.iter().filter(|&&m| m != NO_SUBMIT).count());
    let mut start_edges = Vec::new();
    for (k, e) in execs.iter().enumerate() {
        if let Some((sth, sts)) = submit_of(matched, k).map(|s| (submits[s].thread, submits[s].ts))
        {
            submit_edges.push(Edge {
                kind: EdgeKind::Submit,
                from: edges::innermost_at(execs, &by_thread, sth, sts),
                from_thread: sth,
                from_ns: sts,
                to: Some(k),
                to_thread: e.thread,
                to_ns: e.begin_ns,
            });
        }
    }
    for &(k, obj, target) in thread_objects {
        let e = &execs[k];
        {
            // The Thread object's creation, else its target's.
            let c = std::iter::once(obj)
                .chain(target)
                .find_map(|id| created.get(id))
                .and_then(|v| latest_before(v, e.begin_ns, |c| c.1 .0))
                .map(|c| c.1)
                .filter(|c| c.0 <= e.begin_ns);
            match c {
                None => out.unresolved_starts += 1,
                Some((ts, th, _)) => start_edges.push(Edge {
                    kind: EdgeKind::ThreadStart,
                    from: edges::innermost_at(execs, &by_thread, th, ts),
                    from_thread: th,
                    from_ns: ts,
                    to: Some(k),
                    to_thread: e.thread,
                    to_ns: e.begin_ns,
                }),
            }
        }
    }
    submit_edges.sort_by_key(|e| (e.to_ns, e.to_thread));
    start_edges.sort_by_key(|e| (e.to_ns, e.to_thread));
    if out.edges.is_empty() {
        out.edges = submit_edges;
    } else {
        out.edges.extend(submit_edges);
    }
    out.edges.extend(start_edges);
    let late: Vec<bool> = execs.iter().map(|e| e.stand_in()).collect();
    edges::resolve_joins(
        model,
        completion_probes,
        execs,
        idents,
        &late,
        &by_thread,
        &mut out,
    );
    out
}

/// No submission matched (in `matched`).
const NO_SUBMIT: u32 = u32::MAX;

/// The submission matched to kept execution `k`.
fn submit_of(matched: &[u32], k: usize) -> Option<usize> {
    Some(matched[k] as usize).filter(|_| matched[k] != NO_SUBMIT)
}

/// Join probes whose `JoinBegin` marks a completion: CompletableFuture.postComplete
/// (crates/agent/src/joins.rs).
fn completion_probes(model: &Model) -> std::collections::HashSet<u32> {
    model
        .probes
        .iter()
        .filter(|(_, p)| p.kind == ProbeKind::Join && p.method == "postComplete")
        .map(|(id, _)| *id)
        .collect()
}

/// Site frames by site id, each made once and shared by its executions.
#[derive(Default)]
struct SiteNames(HashMap<u32, Option<std::sync::Arc<str>>>);

impl SiteNames {
    fn get(&mut self, model: &Model, site: u32) -> Option<std::sync::Arc<str>> {
        self.0
            .entry(site)
            .or_insert_with(|| model.site_frame(site).map(Into::into))
            .clone()
    }
}

/// The async stage classes of CompletableFuture (their function in field `fn`).
const CF_STAGES: &[&str] = &[
    "java.util.concurrent.CompletableFuture$UniApply",
    "java.util.concurrent.CompletableFuture$UniAccept",
    "java.util.concurrent.CompletableFuture$UniRun",
    "java.util.concurrent.CompletableFuture$UniWhenComplete",
    "java.util.concurrent.CompletableFuture$UniHandle",
    "java.util.concurrent.CompletableFuture$UniExceptionally",
    "java.util.concurrent.CompletableFuture$UniComposeExceptionally",
    "java.util.concurrent.CompletableFuture$UniCompose",
    "java.util.concurrent.CompletableFuture$BiApply",
    "java.util.concurrent.CompletableFuture$BiAccept",
    "java.util.concurrent.CompletableFuture$BiRun",
    "java.util.concurrent.CompletableFuture$OrApply",
    "java.util.concurrent.CompletableFuture$OrAccept",
    "java.util.concurrent.CompletableFuture$OrRun",
];

/// Classes of the plumbing adapters that fork-join runs wrap: their runs are
/// recorded by their own execution probes, so a fork-join run of one is not an
/// execution of its own.
fn fj_plumbing_classes(model: &Model) -> std::collections::HashSet<u32> {
    let mut plumbing: std::collections::HashSet<&str> = model
        .probes
        .values()
        .filter(|p| p.kind == ProbeKind::PlumbingExecution)
        .map(|p| p.class.as_str())
        .collect();
    // JDK 25: the plumbing probes sit on the abstract ForkJoinTask$InterruptibleTask
    // (crates/agent/src/plumbing.rs); its adapters run under their own class names.
    if plumbing.contains("java.util.concurrent.ForkJoinTask$InterruptibleTask") {
        plumbing.extend([
            "java.util.concurrent.ForkJoinTask$AdaptedInterruptibleRunnable",
            "java.util.concurrent.ForkJoinTask$AdaptedInterruptibleCallable",
            "java.util.concurrent.ForkJoinTask$CallableWithTimeout",
            "java.util.concurrent.ForkJoinTask$RunnableExecuteAction",
        ]);
    }
    // An async CompletableFuture stage: the probes sit on the abstract Completion
    // (crates/agent/src/plumbing.rs); the stages run under their own class names.
    if plumbing.contains("java.util.concurrent.CompletableFuture$Completion") {
        plumbing.extend(CF_STAGES);
    }
    // By class id: a name lookup per run allocated a String per task.
    model
        .classes
        .iter()
        .filter(|(_, name)| plumbing.contains(name.as_str()))
        .map(|(id, _)| *id)
        .collect()
}

fn is_thread_exec_at(nodes: &[Node], kept: &[u32], k: usize) -> bool {
    kept.get(k).is_some_and(|&ni| nodes[ni as usize].is_thread)
}

fn close(n: &mut Node, f: Frame, ts: u64, incomplete: bool) {
    if f.reentry || n.closed {
        return;
    }
    n.end = ts.max(n.begin);
    n.closed = true;
    n.incomplete = incomplete;
}

/// The last entry with time ≤ `t`, else the first entry.
/// Values by object identity, in one list (most objects have one or two): filled
/// with [`ByIdent::push`], then [`ByIdent::sort_by_key`] once; each identity's values
/// are a range of it, in the key's order, found through a map of range starts (a
/// binary search per lookup missed the cache at every step: 5 s on a million
/// tasks). A queue's front is a cursor per range.
struct ByIdent<T> {
    items: Vec<(Ident, T)>,
    /// Each identity's first item.
    starts: HashMap<Ident, u32>,
    /// By range start: how many of the range were popped.
    popped: Vec<u32>,
    remaining: usize,
}

impl<T> Default for ByIdent<T> {
    fn default() -> Self {
        ByIdent {
            items: Vec::new(),
            starts: HashMap::default(),
            popped: Vec::new(),
            remaining: 0,
        }
    }
}

impl<T: Copy> ByIdent<T> {
    fn push(&mut self, id: Ident, v: T) {
        self.items.push((id, v));
    }

    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Sorts by identity, then by `key` of the values (stable: equal keys keep
    /// their push order, as each identity's own list did), and indexes the ranges.
    fn sort_by_key<K: Ord>(&mut self, key: impl Fn(&T) -> K) {
        self.items
            .sort_by(|a, b| a.0.cmp(&b.0).then_with(|| key(&a.1).cmp(&key(&b.1))));
        self.starts = HashMap::default();
        self.starts.reserve(self.items.len());
        for (i, e) in self.items.iter().enumerate() {
            self.starts.entry(e.0).or_insert(i as u32);
        }
        self.popped = vec![0; self.items.len()];
        self.remaining = self.items.len();
    }

    fn range(&self, id: Ident) -> Option<std::ops::Range<usize>> {
        let from = *self.starts.get(&id)? as usize;
        let len = self.items[from..].iter().take_while(|e| e.0 == id).count();
        Some(from..from + len)
    }

    /// The entries of `id` (none: `None`), in sorted order; pops do not hide them.
    fn get(&self, id: Ident) -> Option<&[(Ident, T)]> {
        self.range(id).map(|r| &self.items[r])
    }

    /// The first value of `id` not popped yet.
    fn front(&self, id: Ident) -> Option<&T> {
        let r = self.range(id)?;
        let at = r.start + self.popped[r.start] as usize;
        (at < r.end).then(|| &self.items[at].1)
    }

    fn pop_front(&mut self, id: Ident) {
        if let Some(r) = self.range(id) {
            let p = &mut self.popped[r.start];
            if r.start + (*p as usize) < r.end {
                *p += 1;
                self.remaining -= 1;
            }
        }
    }

    /// Values never popped.
    fn remaining(&self) -> usize {
        self.remaining
    }
}

fn latest_before<T: Copy>(v: &[T], t: u64, ts: impl Fn(&T) -> u64) -> Option<T> {
    let n = v.partition_point(|e| ts(e) <= t);
    if n > 0 {
        Some(v[n - 1])
    } else {
        v.first().copied()
    }
}

fn class_stats(
    execs: &[TaskExecution],
    names: &HashMap<u32, std::sync::Arc<str>>,
) -> Vec<TaskClassStats> {
    #[derive(Default)]
    struct Acc {
        reported: u64,
        aggregated: u64,
        submitted: u64,
        incomplete: u64,
        selfs: Vec<u64>,
        waits: Vec<u64>,
        threads: BTreeSet<ThreadIndex>,
        sites: HashMap<SitePair, u64>,
    }
    let mut by: BTreeMap<(std::sync::Arc<str>, TaskKind), Acc> = BTreeMap::new();
    for e in execs {
        let class = names
            .get(&e.class_id)
            .cloned()
            .unwrap_or_else(|| "<unknown class>".into());
        let a = by.entry((class, e.kind)).or_default();
        if !e.reported() {
            a.aggregated += 1;
            continue;
        }
        a.reported += 1;
        a.selfs.push(e.self_ns);
        a.threads.insert(e.thread);
        if e.incomplete() {
            a.incomplete += 1;
        }
        if let Some(w) = e.queue_wait_ns() {
            a.submitted += 1;
            a.waits.push(w);
        }
        if e.created_site().is_some() || e.submitted_site().is_some() {
            *a.sites
                .entry(SitePair {
                    created: e.created_site().map(str::to_string),
                    submitted: e.submitted_site().map(str::to_string),
                })
                .or_default() += 1;
        }
    }
    let mut classes: Vec<TaskClassStats> = by
        .into_iter()
        .map(|((class, kind), a)| {
            let mut sites: Vec<(SitePair, u64)> = a.sites.into_iter().collect();
            sites.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
            TaskClassStats {
                class: class.to_string(),
                kind,
                executions: a.reported,
                aggregated: a.aggregated,
                submitted: a.submitted,
                incomplete: a.incomplete,
                granularity_ns: Distribution::of(&a.selfs),
                queue_wait_ns: (!a.waits.is_empty()).then(|| Distribution::of(&a.waits)),
                threads: a.threads.len() as u64,
                sites,
            }
        })
        .collect();
    classes.sort_by(|a, b| {
        b.granularity_ns
            .total
            .cmp(&a.granularity_ns.total)
            .then_with(|| a.class.cmp(&b.class))
            .then_with(|| a.kind.cmp(&b.kind))
    });
    classes
}

#[cfg(test)]
#[path = "tasks_tests.rs"]
mod tests;

/// Opens the execution of a thread (a platform thread's `ThreadStart`, or a virtual
/// thread's `VtStart`): it encloses everything already open on the thread and is
/// the base of its stack.
fn open_thread_execution(
    nodes: &mut Vec<Node>,
    stack: &mut Vec<Frame>,
    thread: ThreadIndex,
    obj: Ident,
    target: Option<Ident>,
    virtual_thread: bool,
    ts: u64,
) {
    let idx = nodes.len();
    nodes.push(Node {
        thread,
        is_thread: true,
        virtual_thread,
        obj,
        method: Method::Run,
        plumbing: false,
        begin: ts,
        end: ts,
        closed: false,
        incomplete: false,
        raw_parent: NO_EXEC,
        resolved: false,
        wide: Node::wide(None, target, Vec::new()),
    });
    for f in stack.iter() {
        if !f.reentry && nodes[f.node].raw_parent().is_none() && f.node != idx {
            nodes[f.node].raw_parent = exec_index(Some(idx));
        }
    }
    stack.insert(
        0,
        Frame {
            node: idx,
            probe: u32::MAX,
            ident: obj.1,
            reentry: false,
            thread_base: true,
        },
    );
}

/// The classes of the virtual-thread scheduler's own runnables
/// (`VirtualThread::runContinuation`, the timed unpark): plumbing of the JDK, not
/// tasks of the program. By class id, like [`fj_plumbing_classes`]: a name lookup
/// per task allocated a String per task.
fn vthread_scheduler_classes(model: &Model) -> std::collections::HashSet<u32> {
    model
        .classes
        .iter()
        .filter(|(_, name)| name.starts_with("java.lang.VirtualThread$$Lambda"))
        .map(|(id, _)| *id)
        .collect()
}

/// A thread-per-task executor's wrapper of a submitted task (the task a virtual
/// thread of `newVirtualThreadPerTaskExecutor()` runs).
fn is_thread_per_task_wrapper(model: &Model, class_id: u32) -> bool {
    class_id != 0
        && model
            .class_name(class_id)
            .starts_with("java.util.concurrent.ThreadPerTaskExecutor$")
}

/// Total length of the parts of `intervals` (sorted, disjoint) inside [from, to].
pub(crate) fn overlap_ns(intervals: &[(u64, u64)], from: u64, to: u64) -> u64 {
    let start = intervals.partition_point(|g| g.1 <= from);
    intervals[start..]
        .iter()
        .take_while(|g| g.0 < to)
        .map(|g| g.1.min(to).saturating_sub(g.0.max(from)))
        .sum()
}
