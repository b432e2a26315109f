//! The fork-join model (wosp, digest 003 §3; docs/forkjoin.md): task usages
//! from push records, runs (nested, balanced per thread), cancel, reuse, join
//! waits; derived steals, parent → child (the innermost usage run on the pushing
//! thread's stack), self granularity (nested usage runs subtracted; direct
//! executions of unforked objects are transparent), nesting depth, and per
//! computation (root usage) its tree, work, span and parallelism.

use std::collections::BTreeMap;

// Fx: the maps here are keyed by ids and hold one entry per task (SipHash was a
// third of the report time on a million tasks).
use rustc_hash::FxHashMap as HashMap;

use weft_trace::ThreadIndex;

use crate::events::{EventKind, NONE};
use crate::model::Model;
use crate::tasks::Distribution;

/// One fork-join task usage (a push and its run). 72 bytes: the optional
/// parent and run thread are sentinels (usage ids are never 0; no thread index is
/// `NO_THREAD`), read through [`Usage::parent`] and [`Usage::run_thread`]; the
/// reused task's previous usage (rare) is counted in `reused`, not kept per usage.
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    pub id: u64,
    pub class_id: u32,
    pub push_thread: ThreadIndex,
    pub push_ns: u64,
    pub external: bool,
    /// Innermost usage run on the pushing thread at push time (0: none).
    pub(crate) parent: u64,
    /// The thread that ran it (`NO_THREAD`: it did not run).
    pub(crate) run_thread: ThreadIndex,
    pub begin_ns: u64,
    pub end_ns: u64,
    pub self_ns: u64,
    pub cancelled: bool,
    pub site: u32,
    /// Pool identity (external submissions: the target pool; else the running or pushing worker's pool).
    pub pool: u32,
}

const NO_THREAD: ThreadIndex = ThreadIndex::MAX;

impl Default for Usage {
    fn default() -> Usage {
        Usage {
            id: 0,
            class_id: 0,
            push_thread: 0,
            push_ns: 0,
            external: false,
            parent: 0,
            run_thread: NO_THREAD,
            begin_ns: 0,
            end_ns: 0,
            self_ns: 0,
            cancelled: false,
            site: 0,
            pool: 0,
        }
    }
}

impl Usage {
    pub fn ran(&self) -> bool {
        self.run_thread != NO_THREAD
    }

    /// Innermost usage run on the pushing thread at push time.
    pub fn parent(&self) -> Option<u64> {
        (self.parent != 0).then_some(self.parent)
    }

    /// The thread that ran it, if it ran.
    pub fn run_thread(&self) -> Option<ThreadIndex> {
        self.ran().then_some(self.run_thread)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Computation {
    pub root: u64,
    pub root_class: String,
    pub pool: u32,
    pub tasks: u64,
    pub work_ns: u64,
    pub span_ns: u64,
    pub parallelism: f64,
    pub max_depth: u32,
    pub begin_ns: u64,
    pub end_ns: u64,
    /// Threads outside its pool that ran its tasks or forked its root: the thread
    /// that invoked it (the common pool's parallelism leaves a CPU for that thread).
    pub helpers: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FjThread {
    pub thread: ThreadIndex,
    pub name: String,
    pub pool: u32,
    pub executed: u64,
    pub stolen: u64,
    pub busy_ns: u64,
    /// Time blocked in join/get (join duration minus runs nested in it), outermost joins.
    pub join_blocked_ns: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FjClass {
    pub class: String,
    pub tasks: u64,
    pub granularity_ns: Distribution,
    /// Tasks whose self time is below [`FINE_NS`].
    pub fine: u64,
    /// Innermost user frame of a sampled fork site.
    pub site: Option<String>,
    /// Forked tasks the forking thread ran itself right after the fork, before
    /// doing anything else ([`RUN_AT_ONCE_GAP_RATIO`]): `fork(); join();`.
    pub run_at_once: u64,
    /// Tasks submitted to a pool from outside it (`execute`, `submit`, `invoke`
    /// from a non-worker thread), not forked.
    pub external: u64,
}

/// A forked task is run at once when the thread that forked it ran it next in
/// the forking run (no other fork between, and the fork before it not one still
/// waiting: `a.fork(); b.fork(); b.join()` is not it) with a gap (push to run)
/// under 1/[`RUN_AT_ONCE_GAP_RATIO`] of its own run: `l.fork(); l.join();`, the
/// gap being the fork's own cost (a few µs when it wakes a worker). A sibling
/// computed in between forks nothing when it is a leaf, but leaves its whole run
/// in the gap (about one run when the work is divided in halves).
pub const RUN_AT_ONCE_GAP_RATIO: u64 = 2;

/// Self time under which a task is fine-grained (fork, queue and steal costs are
/// then a large part of it).
pub const FINE_NS: u64 = 10_000;

#[derive(Debug, Clone, PartialEq)]
pub struct FjPool {
    pub pool: u32,
    pub class: String,
    pub parallelism: u32,
    pub threads: u64,
    pub tasks: u64,
    pub steals: u64,
    pub computations: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForkJoinAnalysis {
    pub tasks: u64,
    pub forks: u64,
    pub external_submissions: u64,
    pub steals: u64,
    pub cancelled: u64,
    pub reinitialized: u64,
    pub reused: u64,
    pub never_run: u64,
    pub max_depth: u32,
    /// Deepest nesting of runs on one thread.
    pub max_nesting: u32,
    /// Direct executions of objects that were neither forked nor submitted.
    pub direct_executions: u64,
    pub computations: Vec<Computation>,
    pub threads: Vec<FjThread>,
    pub classes: Vec<FjClass>,
    pub pools: Vec<FjPool>,
    pub usages: Vec<Usage>,
}

impl ForkJoinAnalysis {
    /// Whether the trace had any fork-join activity.
    pub fn is_empty(&self) -> bool {
        self.usages.is_empty() && self.direct_executions == 0
    }

    /// Time the pools' worker threads spent blocked in joins, and running tasks. A
    /// thread outside the pools waiting for a computation it submitted (`main` in
    /// `pool.invoke(root)`) is not a task waiting on a task, and is left out.
    pub fn workers_blocked_and_busy_ns(&self) -> (u64, u64) {
        self.threads
            .iter()
            .filter(|t| t.pool != 0)
            .fold((0, 0), |(b, r), t| (b + t.join_blocked_ns, r + t.busy_ns))
    }

    /// Load balance of a pool: max busy / mean busy over its threads that ran tasks.
    pub fn load_balance(&self, pool: u32) -> Option<f64> {
        let busy: Vec<u64> = self
            .threads
            .iter()
            .filter(|t| t.pool == pool && t.executed > 0)
            .map(|t| t.busy_ns)
            .collect();
        if busy.is_empty() {
            return None;
        }
        let mean = busy.iter().sum::<u64>() as f64 / busy.len() as f64;
        let max = *busy.iter().max().unwrap_or(&0) as f64;
        (mean > 0.0).then(|| max / mean)
    }

    /// Parallelism over time: in each of `buckets` equal time buckets of
    /// [`from`, `to`), the mean number of threads running a fork-join task (a
    /// usage run; runs nested on one thread count once), of one pool or of all
    /// (`None`). Returns the bucket width and one value per bucket.
    pub fn parallelism_over_time(
        &self,
        pool: Option<u32>,
        from: u64,
        to: u64,
        buckets: u32,
    ) -> (u64, Vec<f64>) {
        let n = buckets.max(1) as usize;
        let width = (to.saturating_sub(from)).div_ceil(n as u64).max(1);
        let mut busy = vec![0u64; n];
        let mut runs: BTreeMap<ThreadIndex, Vec<(u64, u64)>> = BTreeMap::new();
        for u in &self.usages {
            if let Some(t) = u.run_thread() {
                if (pool.is_none() || pool == Some(u.pool)) && u.end_ns > u.begin_ns {
                    runs.entry(t).or_default().push((u.begin_ns, u.end_ns));
                }
            }
        }
        for mut rs in runs.into_values() {
            rs.sort_unstable();
            // Union of the thread's runs (nested runs lie inside their outer run).
            let mut merged: Vec<(u64, u64)> = Vec::new();
            for (b, e) in rs {
                match merged.last_mut() {
                    Some(last) if b <= last.1 => last.1 = last.1.max(e),
                    _ => merged.push((b, e)),
                }
            }
            for (b, e) in merged {
                let (b, e) = (b.max(from), e.min(to));
                if e <= b {
                    continue;
                }
                let first = ((b - from) / width) as usize;
                let last = (((e - 1 - from) / width) as usize).min(n - 1);
                for (k, slot) in busy.iter_mut().enumerate().take(last + 1).skip(first) {
                    let lo = from + k as u64 * width;
                    let hi = lo + width;
                    *slot += e.min(hi).saturating_sub(b.max(lo));
                }
            }
        }
        (
            width,
            busy.into_iter().map(|x| x as f64 / width as f64).collect(),
        )
    }
}

struct Frame {
    usage: u64,
    begin: u64,
    /// Inclusive time of usage runs nested directly (through direct executions).
    child: u64,
    /// Time blocked in joins inside this run (join duration minus what ran in it).
    blocked: u64,
    /// Open joins in this frame: (begin, time of runs and inner joins in it, usage).
    joins: Vec<(u64, u64, u64)>,
    /// Strand events of a usage run, at self-time offsets: (offset, usage, is_join).
    ev: Vec<(u64, u64, bool)>,
}

impl Frame {
    fn new(usage: u64, begin: u64) -> Frame {
        Frame {
            usage,
            begin,
            child: 0,
            blocked: 0,
            joins: Vec::new(),
            ev: Vec::new(),
        }
    }

    /// Self time of the run elapsed at `t`.
    fn offset(&self, t: u64) -> u64 {
        t.saturating_sub(self.begin)
            .saturating_sub(self.child)
            .saturating_sub(self.blocked)
    }
}

/// The innermost usage run of a thread's stack.
fn usage_frame(stack: &mut [Frame]) -> Option<&mut Frame> {
    stack.iter_mut().rev().find(|f| f.usage != 0)
}

/// A slot for each pushed usage id, numbered in the order of the pushes' (time,
/// id): the fork-join analysis keeps its usages by slot, so its list comes out in
/// the report's order without a sort (sorting millions of usages was a tenth of
/// the report's time). Built once by the model build ([`UsageSlots::of_events`]);
/// the task model reads it too.
///
/// The agent's usage ids are `buffer << 40 | n`, the n-th push of a buffer (1, 2,
/// ...): a usage's dense index is its buffer's base plus n - 1 (no hashing per
/// task), and `order` maps it to its slot. Ids of another shape (sparse) get
/// their slots from a map.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageSlots {
    /// Buffer -> (first dense index, pushes numbered); empty when sparse.
    bases: HashMap<u64, (usize, u64)>,
    /// Dense index -> slot ([`NO_SLOT`]: no push of that number was seen).
    order: Vec<u32>,
    sparse: HashMap<u64, u32>,
    len: usize,
}

const PUSH_NUMBER_BITS: u32 = 40;
const NO_SLOT: u32 = u32::MAX;

impl UsageSlots {
    /// The slots of the usages the events' pushes (`FjFork`, `FjSubmit`) name.
    pub(crate) fn of_events<'e>(
        events: impl Iterator<Item = &'e crate::events::ThreadEvents>,
    ) -> UsageSlots {
        let push_kinds = [EventKind::FjFork, EventKind::FjSubmit];
        // (time, id) of every push: each thread's in time order (sorted if not), so
        // the stable sort below merges a few sorted runs.
        let mut pushes: Vec<(u64, u64)> = Vec::new();
        for evs in events.filter(|t| t.has_any(&push_kinds)) {
            let from = pushes.len();
            pushes.extend(
                evs.iter()
                    .filter(|e| matches!(e.kind, EventKind::FjFork | EventKind::FjSubmit))
                    .map(|e| (e.ts, e.a)),
            );
            if !pushes[from..].is_sorted() {
                pushes[from..].sort_unstable();
            }
        }
        pushes.sort();
        let mut max: HashMap<u64, u64> = HashMap::default();
        for &(_, u) in &pushes {
            let (b, n) = (u >> PUSH_NUMBER_BITS, u & ((1 << PUSH_NUMBER_BITS) - 1));
            let m = max.entry(b).or_default();
            *m = (*m).max(n);
        }
        let total: u64 = max.values().sum();
        let mut out = UsageSlots::default();
        if total <= 2 * pushes.len() as u64 + 1024 {
            let mut bases: Vec<(u64, u64)> = max.into_iter().collect();
            bases.sort_unstable();
            let mut next = 0usize;
            for (b, n) in bases {
                out.bases.insert(b, (next, n));
                next += n as usize;
            }
            out.order = vec![NO_SLOT; next];
            for &(_, u) in &pushes {
                let d = out.dense(u).expect("a pushed id has a dense index");
                if out.order[d] == NO_SLOT {
                    out.order[d] = slot_number(out.len);
                    out.len += 1;
                }
            }
        } else {
            for &(_, u) in &pushes {
                let next = slot_number(out.sparse.len());
                out.sparse.entry(u).or_insert(next);
            }
            out.len = out.sparse.len();
        }
        out
    }

    /// The dense index of an id of the agent's shape.
    fn dense(&self, usage: u64) -> Option<usize> {
        let (b, n) = (
            usage >> PUSH_NUMBER_BITS,
            usage & ((1 << PUSH_NUMBER_BITS) - 1),
        );
        let &(base, count) = self.bases.get(&b)?;
        (n >= 1 && n <= count).then(|| base + (n - 1) as usize)
    }

    /// The slot of a pushed usage.
    pub(crate) fn get(&self, usage: u64) -> Option<usize> {
        if self.bases.is_empty() {
            return self.sparse.get(&usage).map(|&s| s as usize);
        }
        let s = *self.order.get(self.dense(usage)?)?;
        (s != NO_SLOT).then_some(s as usize)
    }

    /// Number of slots (distinct pushed usages).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

fn slot_number(n: usize) -> u32 {
    u32::try_from(n).expect("fewer than 2^32 fork-join usages")
}

/// The strand events of every usage run (docs/forkjoin.md §Span), by usage slot:
/// (self-time offset, the child usage's slot, whether a join). Packed as varints in
/// one byte list, a run's events a range of it (their count first): the offset as
/// the delta from the run's previous event, the child's slot relative to the run's
/// own with the join flag as its low bit (a list of 16-byte tuples was a third of
/// the fork-join analysis's peak on millions of tasks). Once a run's span is
/// computed its strand is not read again, and its slot holds the span instead.
struct Strands {
    bytes: Vec<u8>,
    /// By slot: 0 (none), the strand's start in `bytes` + 1, or [`SPAN`] | span.
    at: Vec<u64>,
}

/// Tags an entry of [`Strands::at`] that holds a span (spans are below 2^63 ns).
const SPAN: u64 = 1 << 63;

impl Strands {
    fn new(slots: usize) -> Strands {
        Strands {
            bytes: Vec::new(),
            at: vec![0; slots],
        }
    }

    /// The strand of the run of `slot` (replacing an earlier one).
    fn put(&mut self, slot: usize, events: &[(u64, usize, bool)]) {
        use crate::events::{put_varint, zigzag};
        self.at[slot] = self.bytes.len() as u64 + 1;
        put_varint(&mut self.bytes, events.len() as u64);
        let mut prev = 0u64;
        for &(off, child, join) in events {
            put_varint(&mut self.bytes, zigzag(prev, off));
            prev = off;
            // Slots are below 2^32: the shifted difference fits.
            put_varint(
                &mut self.bytes,
                zigzag(slot as u64, child as u64) << 1 | u64::from(join),
            );
        }
    }

    /// The strand of `slot` into `out` (cleared first; empty once its span is set).
    fn read(&self, slot: usize, out: &mut Vec<(u64, usize, bool)>) {
        use crate::events::{get_varint, unzigzag};
        out.clear();
        let at = self.at[slot];
        if at == 0 || at & SPAN != 0 {
            return;
        }
        let mut pos = (at - 1) as usize;
        let n = get_varint(&self.bytes, &mut pos);
        let mut off = 0u64;
        for _ in 0..n {
            off = unzigzag(off, get_varint(&self.bytes, &mut pos));
            let v = get_varint(&self.bytes, &mut pos);
            let child = unzigzag(slot as u64, v >> 1) as usize;
            out.push((off, child, v & 1 == 1));
        }
    }

    fn set_span(&mut self, slot: usize, span: u64) {
        self.at[slot] = SPAN | span.min(SPAN - 1);
    }

    /// The span set for `slot` (since it was last cleared).
    fn span(&self, slot: usize) -> Option<u64> {
        let at = self.at[slot];
        (at & SPAN != 0).then_some(at & !SPAN)
    }

    fn clear(&mut self, slot: usize) {
        self.at[slot] = 0;
    }
}

/// The usages by slot (id 0: no push seen for the slot).
struct UsageTable<'m> {
    slots: std::borrow::Cow<'m, UsageSlots>,
    items: Vec<Usage>,
}

impl<'m> UsageTable<'m> {
    fn new(slots: std::borrow::Cow<'m, UsageSlots>) -> UsageTable<'m> {
        UsageTable {
            items: vec![Usage::default(); slots.len()],
            slots,
        }
    }

    fn get(&self, id: &u64) -> Option<&Usage> {
        let u = &self.items[self.slots.get(*id)?];
        (u.id != 0).then_some(u)
    }

    fn get_mut(&mut self, id: &u64) -> Option<&mut Usage> {
        let i = self.slots.get(*id)?;
        let u = &mut self.items[i];
        (u.id != 0).then_some(u)
    }

    fn contains_key(&self, id: &u64) -> bool {
        self.get(id).is_some()
    }

    /// A push: sets the usage's push fields, keeping its run's (a steal's run
    /// may come before its push in thread order).
    fn push(&mut self, u: Usage) {
        if let Some(i) = self.slots.get(u.id) {
            let old = &mut self.items[i];
            *old = Usage {
                run_thread: old.run_thread,
                begin_ns: old.begin_ns,
                end_ns: old.end_ns,
                self_ns: old.self_ns,
                ..u
            };
        }
    }

    /// A run of `id` on `thread` (kept only if the usage's push is seen).
    fn run(&mut self, id: u64, thread: ThreadIndex, begin_ns: u64, end_ns: u64, self_ns: u64) {
        if let Some(i) = self.slots.get(id) {
            let u = &mut self.items[i];
            u.run_thread = thread;
            u.begin_ns = begin_ns;
            u.end_ns = end_ns;
            u.self_ns = self_ns;
        }
    }

    /// Keeps the usages `keep` says (a usage left out is as if never pushed).
    fn retain(&mut self, mut keep: impl FnMut(&u64, &mut Usage) -> bool) {
        for u in self.items.iter_mut().filter(|u| u.id != 0) {
            let id = u.id;
            if !keep(&id, u) {
                *u = Usage::default();
            }
        }
    }

    fn values(&self) -> impl Iterator<Item = &Usage> {
        self.items.iter().filter(|u| u.id != 0)
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut Usage> {
        self.items.iter_mut().filter(|u| u.id != 0)
    }
}

impl std::ops::Index<&u64> for UsageTable<'_> {
    type Output = Usage;
    fn index(&self, id: &u64) -> &Usage {
        self.get(id).expect("a usage that was pushed")
    }
}

pub fn analyze(model: &Model) -> ForkJoinAnalysis {
    analyze_with(model, std::borrow::Cow::Borrowed(&model.usage_slots))
}

/// [`analyze`] with the model's usage slots taken out of it: they are freed as
/// soon as the trees are built, before the analysis's peak memory.
pub(crate) fn analyze_taking_slots(model: &Model, slots: UsageSlots) -> ForkJoinAnalysis {
    analyze_with(model, std::borrow::Cow::Owned(slots))
}

fn analyze_with(model: &Model, slots: std::borrow::Cow<'_, UsageSlots>) -> ForkJoinAnalysis {
    let mut out = ForkJoinAnalysis::default();
    let mut usages = UsageTable::new(slots);
    // The previous usage of a reused task, for the usages whose last push had one
    // (rare: not a field of every usage).
    let mut reused_prev: HashMap<u64, u64> = HashMap::default();
    let mut sites: HashMap<u64, u32> = HashMap::default();
    let mut worker_pool: HashMap<ThreadIndex, (u32, u32, u32)> = HashMap::default();
    let mut stacks: HashMap<ThreadIndex, Vec<Frame>> = HashMap::default();
    // Joins outside any run, per thread: (begin, nested time, usage).
    let mut base_joins: HashMap<ThreadIndex, Vec<(u64, u64, u64)>> = HashMap::default();
    // Strand events of all runs, packed in one byte list (see `Strands`); usages
    // without a slot are left out (no span of theirs can be looked up).
    let mut strands = Strands::new(usages.items.len());
    let mut strand: Vec<(u64, usize, bool)> = Vec::new();
    let mut threads: BTreeMap<ThreadIndex, FjThread> = BTreeMap::new();
    let mut cancels: Vec<u64> = Vec::new();
    let mut run_at_once: HashMap<u32, u64> = HashMap::default();

    let thread_entry = |threads: &mut BTreeMap<ThreadIndex, FjThread>, t: ThreadIndex| {
        threads.entry(t).or_insert_with(|| FjThread {
            thread: t,
            name: model
                .threads
                .get(&t)
                .map(|i| i.display_name())
                .unwrap_or_else(|| format!("thread #{t}")),
            pool: 0,
            executed: 0,
            stolen: 0,
            busy_ns: 0,
            join_blocked_ns: 0,
        });
    };

    for (t, (pool, class_id, parallelism)) in &model.fj_workers {
        worker_pool.insert(*t, (*pool, *class_id, *parallelism));
    }
    for (usage, site) in &model.fj_sites {
        sites.insert(*usage, *site);
    }
    // The class a run says, for usages whose push did not (applied after the loop:
    // a steal's run may come before its push in thread order).
    let mut run_classes: Vec<(u64, u32)> = Vec::new();
    for evs in &model.events {
        let t = evs.thread;
        for e in evs.iter() {
            let ts = &e.ts;
            match e.kind {
                EventKind::FjFork | EventKind::FjSubmit => {
                    let usage = &e.a;
                    let class_id = &e.b;
                    let external = e.kind == EventKind::FjSubmit;
                    let d = (e.c != NONE).then(|| model.fj_push_details[e.c as usize]);
                    let prev = d.map_or(0, |d| d.prev);
                    let pool = d.map_or(0, |d| d.pool);
                    let stack = stacks.entry(t).or_default();
                    let parent = if external {
                        None
                    } else {
                        match usage_frame(stack) {
                            Some(f) => {
                                let off = f.offset(*ts);
                                f.ev.push((off, *usage, false));
                                Some(f.usage)
                            }
                            None => None,
                        }
                    };
                    if prev != 0 {
                        reused_prev.insert(*usage, prev);
                    } else if !reused_prev.is_empty() {
                        reused_prev.remove(usage);
                    }
                    usages.push(Usage {
                        id: *usage,
                        class_id: *class_id,
                        push_thread: t,
                        push_ns: *ts,
                        external,
                        parent: parent.unwrap_or(0),
                        pool: if external { pool } else { 0 },
                        ..Usage::default()
                    });
                    if external {
                        out.external_submissions += 1;
                    } else {
                        out.forks += 1;
                    }
                    if prev != 0 {
                        out.reused += 1;
                    }
                }
                EventKind::FjRunBegin => {
                    let (usage, class_id) = (&e.a, &e.b);
                    let stack = stacks.entry(t).or_default();
                    stack.push(Frame::new(*usage, *ts));
                    out.max_nesting = out.max_nesting.max(stack.len() as u32);
                    if *usage == 0 {
                        out.direct_executions += 1;
                    } else if let Some(u) = usages.get_mut(usage) {
                        if u.class_id == 0 {
                            u.class_id = *class_id;
                        }
                    } else {
                        run_classes.push((*usage, *class_id));
                    }
                }
                EventKind::FjRunEnd => {
                    let stack = stacks.entry(t).or_default();
                    let Some(f) = stack.pop() else { continue };
                    let incl = ts.saturating_sub(f.begin);
                    let js = match stack.last_mut() {
                        Some(p) => &mut p.joins,
                        None => base_joins.entry(t).or_default(),
                    };
                    if let Some(j) = js.last_mut() {
                        if f.begin >= j.0 {
                            j.1 += incl;
                        }
                    }
                    if f.usage == 0 {
                        // Transparent: nested usage runs and join waits count against the
                        // enclosing usage run.
                        if let Some(p) = usage_frame(stack) {
                            p.child += f.child;
                            p.blocked += f.blocked;
                        }
                        continue;
                    }
                    let self_ns = incl.saturating_sub(f.child).saturating_sub(f.blocked);
                    if let Some(p) = usage_frame(stack) {
                        let n = p.ev.len();
                        let next_after_push = n >= 1
                            && p.ev[n - 1].1 == f.usage
                            && !p.ev[n - 1].2
                            && (n == 1 || p.ev[n - 2].2);
                        if next_after_push {
                            if let Some(u) = usages.get(&f.usage) {
                                let gap = f.begin.saturating_sub(u.push_ns);
                                if u.push_thread == t
                                    && gap.saturating_mul(RUN_AT_ONCE_GAP_RATIO) <= incl
                                {
                                    *run_at_once.entry(u.class_id).or_default() += 1;
                                }
                            }
                        }
                        p.child += incl;
                        // A run inside a run: the outer one waited for it here (an inline
                        // join, or helping; only children count, see span below).
                        let off = p.offset(*ts);
                        p.ev.push((off, f.usage, true));
                    }
                    if let Some(slot) = usages.slots.get(f.usage).filter(|_| !f.ev.is_empty()) {
                        strand.clear();
                        strand.extend(
                            f.ev.iter().filter_map(|&(off, c, join)| {
                                Some((off, usages.slots.get(c)?, join))
                            }),
                        );
                        strands.put(slot, &strand);
                    }
                    thread_entry(&mut threads, t);
                    let th = threads.get_mut(&t).expect("inserted");
                    th.executed += 1;
                    th.busy_ns += self_ns;
                    // Into the usage's slot, whether or not its push was read yet.
                    usages.run(f.usage, t, f.begin, *ts, self_ns);
                }
                EventKind::FjCancel => cancels.push(e.a),
                EventKind::FjReinit => out.reinitialized += 1,
                EventKind::FjJoinBegin => {
                    let usage = &e.a;
                    let stack = stacks.entry(t).or_default();
                    let js = match stack.last_mut() {
                        Some(p) => &mut p.joins,
                        None => base_joins.entry(t).or_default(),
                    };
                    js.push((*ts, 0, *usage));
                }
                EventKind::FjJoinEnd => {
                    let stack = stacks.entry(t).or_default();
                    let js = match stack.last_mut() {
                        Some(p) => &mut p.joins,
                        None => base_joins.entry(t).or_default(),
                    };
                    if let Some((b, nested, target)) = js.pop() {
                        let dur = ts.saturating_sub(b);
                        let blocked = dur.saturating_sub(nested);
                        // An inner join (join inside a join of the same frame) is part of the outer's.
                        if let Some(outer) = js.last_mut() {
                            outer.1 += dur;
                        }
                        thread_entry(&mut threads, t);
                        threads.get_mut(&t).expect("inserted").join_blocked_ns += blocked;
                        if let Some(u) = usage_frame(stack) {
                            u.blocked += blocked;
                            let off = u.offset(*ts);
                            u.ev.push((off, target, true));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for (usage, class_id) in run_classes {
        if let Some(u) = usages.get_mut(&usage) {
            if u.class_id == 0 {
                u.class_id = class_id;
            }
        }
    }
    for u in usages.values() {
        if let Some(t) = u.run_thread() {
            if u.push_thread != t && !u.external {
                if let Some(th) = threads.get_mut(&t) {
                    th.stolen += 1;
                }
            }
        }
    }
    for c in cancels {
        if let Some(u) = usages.get_mut(&c) {
            if !u.ran() && !u.cancelled {
                u.cancelled = true;
                out.cancelled += 1;
            }
        }
    }
    for (t, th) in threads.iter_mut() {
        th.pool = worker_pool.get(t).map_or(0, |p| p.0);
    }
    for u in usages.values_mut() {
        if let Some(s) = sites.get(&u.id) {
            u.site = *s;
        }
        if u.pool == 0 {
            let t = u.run_thread().unwrap_or(u.push_thread);
            u.pool = worker_pool
                .get(&t)
                .or_else(|| worker_pool.get(&u.push_thread))
                .map_or(0, |p| p.0);
        }
    }

    // The virtual-thread scheduler's pool (its workers are CarrierThreads) runs
    // virtual threads' mounts, not fork-join tasks of the program
    // (docs/virtual-threads.md): its usages and workers are left out.
    let scheduler_pools: std::collections::HashSet<u32> = worker_pool
        .iter()
        .filter(|(t, _)| {
            model.threads.get(t).is_some_and(|i| {
                i.class_id != 0 && model.class_name(i.class_id) == "jdk.internal.misc.CarrierThread"
            })
        })
        .map(|(_, p)| p.0)
        .collect();
    if !scheduler_pools.is_empty() {
        usages.retain(|_, u| {
            let keep = !scheduler_pools.contains(&u.pool);
            if !keep {
                if u.external {
                    out.external_submissions -= 1;
                } else {
                    out.forks -= 1;
                }
                out.reused -= u64::from(reused_prev.contains_key(&u.id));
            }
            keep
        });
        threads.retain(|_, th| !scheduler_pools.contains(&th.pool));
        worker_pool.retain(|_, p| !scheduler_pools.contains(&p.0));
    }

    drop(reused_prev);
    // Trees; computations in the order of their roots' pushes (thread order is
    // not time order), each one's children in push order too.
    // Children by parent slot, in one list (CSR): kids of slot i are
    // kids_all[kid_start[i]..kid_start[i + 1]] (slots).
    let nslots = usages.items.len();
    // Each usage's parent as SLOT_TAG | its slot in its own field while the trees
    // are built, so that the slots are freed before the trees' lists are made (the
    // analysis's peak); parents that are not usages are kept aside and put back.
    const SLOT_TAG: u64 = 1 << 63;
    let mut not_usages: Vec<(usize, u64)> = Vec::new();
    let mut kid_start: Vec<u32> = vec![0; nslots + 1];
    let mut roots: Vec<u32> = Vec::new();
    for i in 0..nslots {
        let u = &usages.items[i];
        if u.id == 0 {
            continue;
        }
        let p = u.parent().filter(|p| usages.contains_key(p));
        match p.and_then(|p| usages.slots.get(p)) {
            Some(p) => {
                kid_start[p + 1] += 1;
                usages.items[i].parent = SLOT_TAG | p as u64;
            }
            None => {
                roots.push(i as u32);
                if u.parent & SLOT_TAG != 0 {
                    not_usages.push((i, u.parent));
                    usages.items[i].parent = 0;
                }
            }
        }
    }
    // No usage is looked up by id from here on.
    if let std::borrow::Cow::Owned(slots) = &mut usages.slots {
        *slots = UsageSlots::default();
    }
    let tagged_parent =
        |u: &Usage| (u.parent & SLOT_TAG != 0).then_some((u.parent & !SLOT_TAG) as usize);
    let push_order = |&a: &u32, &b: &u32| {
        let (x, y) = (&usages.items[a as usize], &usages.items[b as usize]);
        (x.push_ns, x.id).cmp(&(y.push_ns, y.id))
    };
    roots.sort_unstable_by(push_order);
    for i in 0..nslots {
        kid_start[i + 1] += kid_start[i];
    }
    // Filled from each range's end down (no second list of places): kid_start[p + 1]
    // ends at p's start, which is kid_start[p] (the ranges are sorted below; the
    // slots are near push order, so from the last usage down leaves little to sort).
    let mut kids_all: Vec<u32> = vec![0; kid_start[nslots] as usize];
    for (i, u) in usages.items.iter().enumerate().rev() {
        if u.id == 0 {
            continue;
        }
        if let Some(p) = tagged_parent(u) {
            kid_start[p + 1] -= 1;
            kids_all[kid_start[p + 1] as usize] = i as u32;
        }
    }
    // Now kid_start[p + 1] is p's start: shift back to (start of p at p).
    kid_start.remove(0);
    kid_start.push(kids_all.len() as u32);
    for i in 0..nslots {
        kids_all[kid_start[i] as usize..kid_start[i + 1] as usize].sort_unstable_by(push_order);
    }
    // The parents' ids back.
    for i in 0..nslots {
        if let Some(p) = tagged_parent(&usages.items[i]) {
            usages.items[i].parent = usages.items[p].id;
        }
    }
    for (i, parent) in not_usages {
        usages.items[i].parent = parent;
    }
    let children = |slot: u32| -> &[u32] {
        let i = slot as usize;
        &kids_all[kid_start[i] as usize..kid_start[i + 1] as usize]
    };
    // Spans by slot in `strands`, cleared after each computation (a join on a
    // usage of another computation finds none, as with a map per computation).
    for root in roots {
        // Iterative post-order; depth from the root (1). Span: the critical path
        // through the strand of each run (docs/forkjoin.md §Span): walking the run's
        // self time, a child forked at offset f contributes f + span(child), and a
        // join (or an inline run) of that child at offset o lifts the strand to it.
        let mut stack: Vec<(u32, u32, bool)> = vec![(root, 1, false)];
        let (mut tasks, mut work, mut depth) = (0u64, 0u64, 0u32);
        let (mut begin, mut end) = (u64::MAX, 0u64);
        // A handful of threads help run a computation: a short list.
        let mut helpers: Vec<ThreadIndex> = Vec::new();
        // A root forked outside the pool (a parallel stream's `invoke()` from `main`
        // forks its pieces there) was forked by the thread that invoked the
        // computation, which waits in it and helps when it can (whether it happened
        // to run one of this root's tasks depends on timing).
        let ru = &usages.items[root as usize];
        if !ru.external && !worker_pool.contains_key(&ru.push_thread) {
            helpers.push(ru.push_thread);
        }
        while let Some((id, d, done)) = stack.pop() {
            let kids = children(id);
            if !done {
                stack.push((id, d, true));
                for k in kids {
                    stack.push((*k, d + 1, false));
                }
                continue;
            }
            let u = &usages.items[id as usize];
            let own = if u.ran() { u.self_ns } else { 0 };
            if u.ran() {
                tasks += 1;
                work += u.self_ns;
                depth = depth.max(d);
                begin = begin.min(u.begin_ns);
                end = end.max(u.end_ns);
                let worker = worker_pool.get(&u.run_thread).map(|p| p.0);
                if worker.is_none() && !helpers.contains(&u.run_thread) {
                    helpers.push(u.run_thread);
                }
            }
            // A run forks a handful of children: a list beats a map per node.
            // (child slot, fork offset)
            let mut forked: Vec<(u32, u64)> = Vec::new();
            let fork_offset =
                |forked: &[(u32, u64)], c: u32| forked.iter().rev().find(|f| f.0 == c).map(|f| f.1);
            let span_at = |strands: &Strands, slot: u32| strands.span(slot as usize);
            let mut extra = 0u64;
            strands.read(id as usize, &mut strand);
            for &(off, c, join) in &strand {
                let Ok(c) = u32::try_from(c) else { continue };
                if !join {
                    forked.push((c, off + extra));
                } else if let (Some(f), Some(sc)) = (fork_offset(&forked, c), span_at(&strands, c))
                {
                    extra = extra.max((f + sc).saturating_sub(off));
                }
            }
            let mut s = own + extra;
            for &slot in kids {
                s = s.max(
                    fork_offset(&forked, slot).unwrap_or(0) + span_at(&strands, slot).unwrap_or(0),
                );
            }
            strands.set_span(id as usize, s);
        }
        let s = strands.span(root as usize).unwrap_or(0);
        let mut tree = vec![root];
        while let Some(id) = tree.pop() {
            strands.clear(id as usize);
            tree.extend_from_slice(children(id));
        }
        let ru = &usages.items[root as usize];
        out.max_depth = out.max_depth.max(depth);
        out.computations.push(Computation {
            root: ru.id,
            root_class: model.class_name(ru.class_id),
            pool: ru.pool,
            tasks,
            work_ns: work,
            span_ns: s,
            parallelism: if s > 0 { work as f64 / s as f64 } else { 0.0 },
            max_depth: depth,
            begin_ns: if begin == u64::MAX { ru.push_ns } else { begin },
            end_ns: end,
            helpers: helpers.len() as u32,
        });
    }

    drop(strands);
    drop(kids_all);
    drop(kid_start);

    // Totals, classes, pools.
    // Per class: self times, fork sites (site → tasks), external submissions.
    type ClassTasks = (Vec<u64>, HashMap<u32, u64>, u64);
    let mut by_class: BTreeMap<u32, ClassTasks> = BTreeMap::new();
    for u in usages.values() {
        if u.ran() {
            out.tasks += 1;
            if u.run_thread != u.push_thread && !u.external {
                out.steals += 1;
            }
            let e = by_class.entry(u.class_id).or_default();
            e.0.push(u.self_ns);
            e.2 += u64::from(u.external);
            if u.site != 0 {
                *e.1.entry(u.site).or_default() += 1;
            }
        } else if !u.cancelled {
            out.never_run += 1;
        }
    }
    out.classes = by_class
        .into_iter()
        .map(|(cid, (selfs, sites, external))| {
            let site = sites
                .into_iter()
                .max_by_key(|(s, n)| (*n, std::cmp::Reverse(*s)))
                .and_then(|(s, _)| model.site_frame(s));
            FjClass {
                class: model.class_name(cid),
                tasks: selfs.len() as u64,
                fine: selfs.iter().filter(|&&s| s < FINE_NS).count() as u64,
                granularity_ns: Distribution::of(&selfs),
                site,
                run_at_once: run_at_once.get(&cid).copied().unwrap_or(0),
                external,
            }
        })
        .collect();
    out.classes.sort_by(|a, b| {
        b.granularity_ns
            .total
            .cmp(&a.granularity_ns.total)
            .then_with(|| a.class.cmp(&b.class))
    });
    let mut pools: BTreeMap<u32, FjPool> = BTreeMap::new();
    for (t, (pool, cls, par)) in &worker_pool {
        let p = pools.entry(*pool).or_insert_with(|| FjPool {
            pool: *pool,
            class: model.class_name(*cls),
            parallelism: *par,
            threads: 0,
            tasks: 0,
            steals: 0,
            computations: 0,
        });
        if threads.get(t).is_some_and(|th| th.executed > 0) {
            p.threads += 1;
        }
    }
    for u in usages.values() {
        if let Some(p) = pools.get_mut(&u.pool) {
            if u.ran() {
                p.tasks += 1;
                if u.run_thread != u.push_thread && !u.external {
                    p.steals += 1;
                }
            }
        }
    }
    for c in &out.computations {
        if let Some(p) = pools.get_mut(&c.pool) {
            p.computations += 1;
        }
    }
    out.pools = pools.into_values().collect();
    out.threads = threads.into_values().collect();
    // The table's own list, in place (a second list of usages was the peak): in
    // (push time, id) order already (see `UsageSlots`), unless an id was pushed
    // twice; ids are unique, so an unstable sort (no buffer) gives the one order.
    let mut us: Vec<Usage> = std::mem::take(&mut usages.items);
    us.retain(|u| u.id != 0);
    if !us.is_sorted_by_key(|u| (u.push_ns, u.id)) {
        us.sort_unstable_by_key(|u| (u.push_ns, u.id));
    }
    out.usages = us;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{C_WORK, TB};
    use weft_trace::Record;

    fn push(usage: u64, ts: u64, external: bool) -> Record {
        TB::fj_push(usage, ts, external, 0)
    }

    fn begin(usage: u64, ts: u64) -> Record {
        TB::fj_begin(usage, ts)
    }

    /// An inline join (p=1) and a join that waits for a thief: self time without the
    /// nested run or the wait, steals, and span as the critical path from the fork.
    #[test]
    fn self_time_blocked_time_and_span() {
        let mut tb = TB::new();
        let recs: Vec<(u32, Record)> = vec![
            // Computation 1 on thread 1: fork c (2) at once, 100 own, join runs c inline
            // (1000), 100 own.
            (0, push(1, 0, true)),
            (1, begin(1, 100)),
            (1, push(2, 100, false)),
            (1, Record::FjJoinBegin { ts: 200, usage: 2 }),
            (1, begin(2, 200)),
            (1, Record::FjRunEnd { ts: 1200 }),
            (1, Record::FjJoinEnd { ts: 1200 }),
            (1, Record::FjRunEnd { ts: 1300 }),
            // Computation 2: root (3) on thread 2 forks 4 at 0, works until 100, waits;
            // thread 3 steals 4 and runs it 50..550; the join returns at 560.
            (0, push(3, 0, true)),
            (2, begin(3, 0)),
            (2, push(4, 0, false)),
            (2, Record::FjJoinBegin { ts: 100, usage: 4 }),
            (2, Record::FjJoinEnd { ts: 560 }),
            (2, Record::FjRunEnd { ts: 600 }),
            (3, begin(4, 50)),
            (3, Record::FjRunEnd { ts: 550 }),
        ];
        for (t, r) in recs {
            tb.recs.push((t, r));
        }
        let model = Model::build(&tb.trace());
        let f = analyze(&model);
        assert_eq!((f.tasks, f.forks, f.external_submissions), (4, 2, 2));
        assert_eq!(f.steals, 1);
        let by = |id: u64| f.usages.iter().find(|u| u.id == id).unwrap().clone();
        assert_eq!(by(1).self_ns, 200);
        assert_eq!(by(2).self_ns, 1000);
        assert_eq!(by(3).self_ns, 140, "600 minus 460 blocked");
        assert_eq!(by(4).parent(), Some(3));
        let c1 = f.computations.iter().find(|c| c.root == 1).unwrap();
        assert_eq!((c1.tasks, c1.work_ns, c1.span_ns), (2, 1200, 1100));
        let c2 = f.computations.iter().find(|c| c.root == 3).unwrap();
        // Fork at 0, child 500, join at offset 100, 40 more after it: 540.
        assert_eq!((c2.work_ns, c2.span_ns), (640, 540));
        let t2 = f.threads.iter().find(|t| t.thread == 2).unwrap();
        assert_eq!(t2.join_blocked_ns, 460);
    }

    /// Forked tasks run by their forker next, with little gap (`fork(); join();`),
    /// are counted per class; forking both halves and joining the last forked first,
    /// or computing the sibling between fork and join, is not that.
    #[test]
    fn tasks_run_at_once_after_their_fork() {
        let at_once = |recs: Vec<Record>| {
            let mut tb = TB::new();
            tb.recs.push((0, push(1, 0, true)));
            for r in recs {
                tb.recs.push((1, r));
            }
            let f = analyze(&Model::build(&tb.trace()));
            (f.classes[0].run_at_once, f.classes[0].tasks)
        };
        let end = |ts| Record::FjRunEnd { ts };
        // `l.fork(); l.join(); r.compute()` twice down the spine: 2 and 3 run at once
        // (gaps 10 vs runs 1000 and 500).
        let wrong = vec![
            begin(1, 0),
            push(2, 10, false),
            begin(2, 20),
            end(1020),
            push(3, 1030, false),
            begin(3, 1040),
            end(1540),
            end(2100),
        ];
        assert_eq!(at_once(wrong), (2, 3));
        // `a.fork(); b.fork(); b.join(); a.join()`: b follows a fork still queued, a
        // does not follow its own push.
        let both = vec![
            begin(1, 0),
            push(2, 10, false),
            push(3, 20, false),
            begin(3, 30),
            end(530),
            begin(2, 540),
            end(1040),
            end(1050),
        ];
        assert_eq!(at_once(both), (0, 3));
        // `l.fork(); r.compute(); l.join()` with a leaf sibling: the gap (500) is as
        // long as l's run (500).
        let right = vec![
            begin(1, 0),
            push(2, 10, false),
            begin(2, 510),
            end(1010),
            end(1020),
        ];
        assert_eq!(at_once(right), (0, 2));
    }

    /// A client thread waiting for the computation it submitted is not counted as a
    /// worker blocked in a join; a worker waiting for a stolen child is.
    #[test]
    fn workers_blocked_time_leaves_out_the_submitting_thread() {
        let mut tb = TB::new();
        let worker = |pool: u32| Record::FjWorker {
            pool,
            class_id: C_WORK,
            parallelism: 2,
        };
        let recs: Vec<(u32, Record)> = vec![
            // Thread 1 (main) submits root 1 and waits 0..1000 for it.
            (1, push(1, 0, true)),
            (1, Record::FjJoinBegin { ts: 0, usage: 1 }),
            (1, Record::FjJoinEnd { ts: 1000 }),
            // Worker 2 runs the root, forks 2, waits 300..500 for worker 3's steal.
            (2, worker(7)),
            (2, begin(1, 10)),
            (2, push(2, 20, false)),
            (2, Record::FjJoinBegin { ts: 300, usage: 2 }),
            (2, Record::FjJoinEnd { ts: 500 }),
            (2, Record::FjRunEnd { ts: 900 }),
            (3, worker(7)),
            (3, begin(2, 30)),
            (3, Record::FjRunEnd { ts: 480 }),
        ];
        for (t, r) in recs {
            tb.recs.push((t, r));
        }
        let model = Model::build(&tb.trace());
        let f = analyze(&model);
        let main = f.threads.iter().find(|t| t.thread == 1).unwrap();
        assert_eq!((main.pool, main.join_blocked_ns), (0, 1000));
        // Worker 2: 200 blocked; busy 890 - 200 = 690; worker 3: 450.
        assert_eq!(f.workers_blocked_and_busy_ns(), (200, 690 + 450));
    }

    /// Parallelism over time counts threads running tasks; nested runs count once.
    #[test]
    fn parallelism_over_time_counts_threads() {
        let run = |id: u64, t: ThreadIndex, b: u64, e: u64, pool: u32| Usage {
            id,
            run_thread: t,
            begin_ns: b,
            end_ns: e,
            pool,
            ..Usage::default()
        };
        let f = ForkJoinAnalysis {
            usages: vec![
                run(1, 1, 0, 400, 7),
                // Nested in 1 on the same thread: no extra parallelism.
                run(2, 1, 100, 200, 7),
                run(3, 2, 100, 300, 7),
                run(4, 3, 0, 400, 8),
                Usage {
                    id: 5,
                    ..Usage::default()
                },
            ],
            ..ForkJoinAnalysis::default()
        };
        let (w, p) = f.parallelism_over_time(Some(7), 0, 400, 4);
        assert_eq!(w, 100);
        assert_eq!(p, vec![1.0, 2.0, 2.0, 1.0]);
        let (_, all) = f.parallelism_over_time(None, 0, 400, 2);
        assert_eq!(all, vec![2.5, 2.5]);
        let (w, p) = f.parallelism_over_time(Some(7), 50, 250, 1);
        assert_eq!((w, p), (200, vec![1.75]));
    }
}
