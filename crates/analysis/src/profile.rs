//! Sampled stacks (docs/sampling.md): CPU and wall-clock profiles, tied to the
//! task model and the lock analysis by thread and time.
//!
//! A sample belongs to the innermost reported task execution running on its
//! thread at its time (an aggregated one counts for the execution it is folded
//! into), and to a contended lock when its thread held that lock while another
//! thread was blocked on it. Counts are samples; times are samples × period.
//! Not here: rendering (crates/views: collapsed, flamegraph, speedscope).

use std::collections::HashMap;

use weft_trace::{frame_kind, sample_mode, thread_state, Record, ThreadIndex};

use crate::locks::LockAnalysis;
use crate::model::Model;
use crate::tasks::TaskAnalysis;

/// Which samples a profile view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Cpu,
    Wall,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Cpu => "cpu",
            Mode::Wall => "wall",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub class: String,
    pub method: String,
    pub line: i32,
    pub kind: u8,
}

impl Frame {
    /// `package.Class.method`, with `:line` when asked (and known).
    pub fn name(&self, lines: bool) -> String {
        if self.kind == frame_kind::BROKEN {
            return format!("[broken:{}]", self.method);
        }
        if self.kind == frame_kind::NO_JAVA {
            return format!("[not_in_Java:{}]", self.method);
        }
        let mut s = if self.class.is_empty() {
            self.method.clone()
        } else {
            format!("{}.{}", self.class, self.method)
        };
        if lines && self.line > 0 {
            s.push_str(&format!(":{}", self.line));
        }
        s
    }
}

/// One sample, with what it was tied to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackSample {
    pub ts_ns: u64,
    pub thread: ThreadIndex,
    pub stack: u32,
    pub mode: Mode,
    /// OS state ([`thread_state`]) of a wall sample.
    pub state: u8,
    /// Index into `TaskAnalysis::executions` of the reported execution it ran in.
    pub execution: Option<usize>,
    /// Index into `LockAnalysis::locks`: for a CPU sample, the lock its thread
    /// held while others were blocked on it; for a wall sample, the lock its
    /// thread was blocked on.
    pub lock: Option<usize>,
}

/// Methods a task class (or a lock holder) spent its samples in.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodShare {
    /// `package.Class.method` of the innermost Java frame (self time).
    pub method: String,
    pub samples: u64,
    /// Of the group's samples.
    pub share: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TaskClassProfile {
    pub class: String,
    pub cpu_samples: u64,
    /// cpu_samples × the CPU period.
    pub cpu_ns: u64,
    /// Top 5 methods by self CPU samples.
    pub top_methods: Vec<MethodShare>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LockHolderProfile {
    /// The lock's id as the lock analysis names it.
    pub lock: String,
    /// CPU samples of the holder while another thread was blocked on the lock.
    pub holder_samples: u64,
    pub top_methods: Vec<MethodShare>,
}

/// What a task class costs beyond its own work, in CPU samples: inside its
/// executions (work), in its pool's code between executions on the threads
/// that ran it (dispatch: taking the next task), and in the submission calls
/// on the threads that submitted it (submit). Shares of the three together.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskOverhead {
    pub class: String,
    pub work_samples: u64,
    pub dispatch_samples: u64,
    pub submit_samples: u64,
}

impl TaskOverhead {
    /// (dispatch + submit) / all three.
    pub fn overhead_share(&self) -> f64 {
        let all = self.work_samples + self.dispatch_samples + self.submit_samples;
        (self.dispatch_samples + self.submit_samples) as f64 / all.max(1) as f64
    }
}

/// The sampled-stack analysis.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub cpu_period_ns: u64,
    pub wall_period_ns: u64,
    pub frames: HashMap<u32, Frame>,
    /// Frame ids innermost first.
    pub stacks: HashMap<u32, Vec<u32>>,
    /// By thread, then time.
    pub samples: Vec<StackSample>,
    pub cpu_samples: u64,
    pub wall_samples: u64,
    /// Samples whose walk failed (AsyncGetCallTrace error), per mode.
    pub cpu_broken: u64,
    pub wall_broken: u64,
    /// Samples whose walk is kept only up to where it met a stale caller (a
    /// weft probe frame above application code: `[broken:stale_caller]` at the
    /// root end, docs/sampling.md § Stale callers), per mode; not in `*_broken`.
    pub cpu_partial: u64,
    pub wall_partial: u64,
    /// CPU samples taken while the thread had no Java frame (in the VM, or native
    /// code outside any Java call): not failed walks.
    pub cpu_not_in_java: u64,
    /// Per task class, by CPU samples (most first).
    pub task_classes: Vec<TaskClassProfile>,
    /// Per contended lock with holder samples (most first).
    pub lock_holders: Vec<LockHolderProfile>,
    /// Per submitted task class with samples: work vs dispatch and submission
    /// (by work samples, most first).
    pub overheads: Vec<TaskOverhead>,
}

/// A frame of a pool's worker loop (a sample outside any execution with one of
/// these is the pool taking its next task).
fn is_worker_loop(f: &Frame) -> bool {
    matches!(
        (f.class.as_str(), f.method.as_str()),
        (
            "java.util.concurrent.ThreadPoolExecutor",
            "runWorker" | "getTask"
        ) | (
            "java.util.concurrent.ForkJoinPool",
            "runWorker" | "scan" | "awaitWork"
        ) | ("java.util.concurrent.ForkJoinWorkerThread", "run")
    )
}

/// A frame of a submission call of java.util.concurrent.
fn is_submission(f: &Frame) -> bool {
    f.class.starts_with("java.util.concurrent.")
        && matches!(
            f.method.as_str(),
            "execute"
                | "submit"
                | "schedule"
                | "supplyAsync"
                | "runAsync"
                | "externalPush"
                | "externalSubmit"
                | "invokeAll"
        )
}

const TOP: usize = 5;

/// The sampled-stack records of a trace (kept by the model builder, one pass).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampledRecords {
    pub cpu_period_ns: u64,
    pub wall_period_ns: u64,
    pub frames: HashMap<u32, Frame>,
    /// Frame ids innermost first.
    pub stacks: HashMap<u32, Vec<u32>>,
    pub samples: Vec<StackSample>,
}

/// Methods whose samples are a thread spinning for something (a busy wait), when one
/// of them is among a sample's innermost [`SPIN_FRAMES_DEPTH`] frames. The program's
/// own (`Thread.onSpinWait`, `Thread.yield`) first, then the JDK's hand-offs that spin
/// a little before they park. `Thread.onSpinWait` is an intrinsic that compiled code
/// inlines away: a program's spin loop on it shows only while it runs interpreted or
/// in C1.
pub const SPIN_METHODS: &[&str] = &[
    "java.lang.Thread.onSpinWait",
    "java.lang.Thread.yield",
    "java.lang.Thread.yield0",
    "java.util.concurrent.SynchronousQueue$TransferStack.awaitFulfill",
    "java.util.concurrent.SynchronousQueue$TransferQueue.awaitFulfill",
    "java.util.concurrent.LinkedTransferQueue.awaitMatch",
    "java.util.concurrent.LinkedTransferQueue$DualNode.await",
    "java.util.concurrent.Exchanger.slotExchange",
    "java.util.concurrent.Exchanger.arenaExchange",
    "java.util.concurrent.Phaser.internalAwaitAdvance",
];
/// Of [`SPIN_METHODS`], those a program calls to spin itself.
pub const PROGRAM_SPIN_METHODS: usize = 3;
pub const SPIN_FRAMES_DEPTH: usize = 2;

/// A thread's CPU samples and, of them, those spin-waiting, by spin method.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpinWaits {
    pub cpu_samples: u64,
    pub by_method: std::collections::BTreeMap<&'static str, u64>,
}

impl SpinWaits {
    /// Samples in the program's own spin methods (`Thread.yield`, `onSpinWait`), or in any.
    pub fn spinning(&self, own_only: bool) -> u64 {
        self.by_method
            .iter()
            .filter(|(m, _)| !own_only || SPIN_METHODS[..PROGRAM_SPIN_METHODS].contains(m))
            .map(|(_, n)| n)
            .sum()
    }
}

impl SampledRecords {
    /// The spin-wait method ([`SPIN_METHODS`]) among the innermost frames of `stack`.
    pub fn spin_method(&self, stack: u32) -> Option<&'static str> {
        self.stacks
            .get(&stack)?
            .iter()
            .take(SPIN_FRAMES_DEPTH)
            .find_map(|id| {
                let f = self.frames.get(id)?;
                SPIN_METHODS.iter().copied().find(|m| {
                    m.len() == f.class.len() + 1 + f.method.len()
                        && m.starts_with(f.class.as_str())
                        && m.ends_with(f.method.as_str())
                        && m.as_bytes()[f.class.len()] == b'.'
                })
            })
    }

    /// Per thread: its CPU samples and those spin-waiting ([`SPIN_METHODS`]).
    pub fn spin_waits(&self) -> std::collections::BTreeMap<ThreadIndex, SpinWaits> {
        let mut out: std::collections::BTreeMap<ThreadIndex, SpinWaits> = Default::default();
        for s in self.samples.iter().filter(|s| s.mode == Mode::Cpu) {
            let e = out.entry(s.thread).or_default();
            e.cpu_samples += 1;
            if let Some(m) = self.spin_method(s.stack) {
                *e.by_method.entry(m).or_default() += 1;
            }
        }
        out
    }

    pub fn from_header(h: &weft_trace::Header) -> SampledRecords {
        SampledRecords {
            cpu_period_ns: h.get_u64("sampling.cpu_period_ns").unwrap_or(0),
            wall_period_ns: h.get_u64("sampling.wall_period_ns").unwrap_or(0),
            ..SampledRecords::default()
        }
    }

    /// Keeps a sampled-stack record; false for any other record.
    pub fn record(&mut self, r: &Record) -> bool {
        match r {
            Record::FrameDef {
                id,
                kind,
                line,
                class,
                method,
            } => {
                self.frames.insert(
                    *id,
                    Frame {
                        class: class.to_string(),
                        method: method.to_string(),
                        line: *line,
                        kind: *kind,
                    },
                );
            }
            Record::StackDef { id, frames } => {
                self.stacks.insert(*id, frames.clone());
            }
            Record::StackSample {
                ts,
                thread,
                stack,
                mode_state,
            } => {
                let mode = if mode_state & 0xF == sample_mode::CPU {
                    Mode::Cpu
                } else {
                    Mode::Wall
                };
                self.samples.push(StackSample {
                    ts_ns: *ts,
                    thread: *thread,
                    stack: *stack,
                    mode,
                    state: mode_state >> 4,
                    execution: None,
                    lock: None,
                });
            }
            _ => return false,
        }
        true
    }
}

impl Profile {
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn broken_share(&self, mode: Mode) -> f64 {
        let (b, n) = match mode {
            Mode::Cpu => (self.cpu_broken, self.cpu_samples),
            Mode::Wall => (self.wall_broken, self.wall_samples),
        };
        if n == 0 {
            0.0
        } else {
            b as f64 / n as f64
        }
    }

    /// Whether a stack was cut short (a broken frame past its leaf).
    fn is_partial(&self, stack: u32) -> bool {
        self.stacks.get(&stack).is_some_and(|s| {
            s.iter().skip(1).any(|f| {
                self.frames
                    .get(f)
                    .is_some_and(|f| f.kind == frame_kind::BROKEN)
            })
        })
    }

    fn leaf_kind(&self, stack: u32) -> Option<u8> {
        self.stacks
            .get(&stack)
            .and_then(|s| s.first())
            .and_then(|f| self.frames.get(f))
            .map(|f| f.kind)
    }

    /// Names of a stack's frames, root first (an unknown id shows as such).
    pub fn stack_names(&self, stack: u32, lines: bool) -> Vec<String> {
        let Some(ids) = self.stacks.get(&stack) else {
            return vec!["[unknown stack]".to_string()];
        };
        ids.iter()
            .rev()
            .map(|id| match self.frames.get(id) {
                Some(f) => f.name(lines),
                None => "[unknown frame]".to_string(),
            })
            .collect()
    }

    /// The innermost frame's method (`package.Class.method`).
    pub fn leaf_method(&self, stack: u32) -> String {
        self.stacks
            .get(&stack)
            .and_then(|s| s.first())
            .and_then(|f| self.frames.get(f))
            .map(|f| f.name(false))
            .unwrap_or_else(|| "[unknown frame]".to_string())
    }

    /// Builds the profile and ties samples to executions and locks.
    pub fn build(model: &Model, tasks: &TaskAnalysis, locks: &LockAnalysis) -> Profile {
        let r = &model.sampled;
        let mut p = Profile {
            cpu_period_ns: r.cpu_period_ns,
            wall_period_ns: r.wall_period_ns,
            frames: r.frames.clone(),
            stacks: r.stacks.clone(),
            samples: r.samples.clone(),
            ..Profile::default()
        };
        p.samples.sort_by_key(|s| (s.thread, s.ts_ns));
        let kinds: Vec<(Mode, Option<u8>, bool)> = p
            .samples
            .iter()
            .map(|s| (s.mode, p.leaf_kind(s.stack), p.is_partial(s.stack)))
            .collect();
        for (mode, kind, partial) in kinds {
            let broken = kind == Some(frame_kind::BROKEN);
            match mode {
                Mode::Cpu => {
                    p.cpu_samples += 1;
                    p.cpu_broken += broken as u64;
                    p.cpu_partial += partial as u64;
                    p.cpu_not_in_java += (kind == Some(frame_kind::NO_JAVA)) as u64;
                }
                Mode::Wall => {
                    p.wall_samples += 1;
                    p.wall_broken += broken as u64;
                    p.wall_partial += partial as u64;
                }
            }
        }
        p.tie_to_executions(tasks);
        p.task_classes = p.task_class_profiles(tasks);
        p.tie_to_locks(model, locks);
        p.lock_holders = p.lock_holder_profiles(locks);
        p.overheads = p.task_overheads(tasks);
        p
    }

    /// Sets each sample's execution: the innermost reported execution on its
    /// thread covering its time.
    fn tie_to_executions(&mut self, tasks: &TaskAnalysis) {
        let mut by_thread: HashMap<ThreadIndex, Vec<usize>> = HashMap::new();
        for (i, e) in tasks.executions.iter().enumerate() {
            by_thread.entry(e.thread).or_default().push(i);
        }
        for v in by_thread.values_mut() {
            v.sort_by_key(|&i| tasks.executions[i].begin_ns);
        }
        for s in &mut self.samples {
            let Some(list) = by_thread.get(&s.thread) else {
                continue;
            };
            let n = list.partition_point(|&i| tasks.executions[i].begin_ns <= s.ts_ns);
            if n == 0 {
                continue;
            }
            // The latest execution begun by then, or the ancestor of it still running.
            let mut cur = Some(list[n - 1]);
            while let Some(i) = cur {
                let e = &tasks.executions[i];
                if e.end_ns > s.ts_ns {
                    break;
                }
                cur = e.parent();
            }
            // An aggregated execution counts for the one it is folded into.
            let mut guard = 0;
            while let Some(i) = cur {
                let e = &tasks.executions[i];
                if e.reported() || guard > 64 {
                    break;
                }
                guard += 1;
                cur = e.aggregated_into();
            }
            s.execution = cur.filter(|&i| tasks.executions[i].reported());
        }
    }

    fn top_methods(&self, samples: impl Iterator<Item = u32>) -> (u64, Vec<MethodShare>) {
        let mut counts: HashMap<String, u64> = HashMap::new();
        let mut total = 0;
        for stack in samples {
            total += 1;
            *counts.entry(self.leaf_method(stack)).or_default() += 1;
        }
        let mut v: Vec<(String, u64)> = counts.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let top = v
            .into_iter()
            .take(TOP)
            .map(|(method, n)| MethodShare {
                method,
                samples: n,
                share: n as f64 / total.max(1) as f64,
            })
            .collect();
        (total, top)
    }

    fn task_class_profiles(&self, tasks: &TaskAnalysis) -> Vec<TaskClassProfile> {
        let mut by_class: HashMap<&str, Vec<u32>> = HashMap::new();
        for s in &self.samples {
            if s.mode != Mode::Cpu {
                continue;
            }
            if let Some(i) = s.execution {
                by_class
                    .entry(tasks.class(&tasks.executions[i]))
                    .or_default()
                    .push(s.stack);
            }
        }
        let mut out: Vec<TaskClassProfile> = by_class
            .into_iter()
            .map(|(class, stacks)| {
                let (n, top) = self.top_methods(stacks.into_iter());
                TaskClassProfile {
                    class: class.to_string(),
                    cpu_samples: n,
                    cpu_ns: n * self.cpu_period_ns,
                    top_methods: top,
                }
            })
            .collect();
        out.sort_by(|a, b| {
            b.cpu_samples
                .cmp(&a.cpu_samples)
                .then_with(|| a.class.cmp(&b.class))
        });
        out
    }

    /// Work, dispatch and submission samples per submitted task class (see
    /// [`TaskOverhead`]). A dispatch sample counts for the next execution begun on
    /// its thread, a submission sample for the latest submission of its thread.
    fn task_overheads(&self, tasks: &TaskAnalysis) -> Vec<TaskOverhead> {
        let ex = &tasks.executions;
        let mut begins: HashMap<ThreadIndex, Vec<(u64, usize)>> = HashMap::new();
        let mut submits: HashMap<ThreadIndex, Vec<(u64, usize)>> = HashMap::new();
        for (i, e) in ex.iter().enumerate() {
            if !e.submitted() || !e.reported() {
                continue;
            }
            begins.entry(e.thread).or_default().push((e.begin_ns, i));
            if let (Some(t), Some(ts)) = (e.submit_thread(), e.submit_ns()) {
                submits.entry(t).or_default().push((ts, i));
            }
        }
        for v in begins.values_mut().chain(submits.values_mut()) {
            v.sort();
        }
        let mut per: HashMap<&str, [u64; 3]> = HashMap::new();
        for s in self.samples.iter().filter(|s| s.mode == Mode::Cpu) {
            let frames: Vec<&Frame> = self
                .stacks
                .get(&s.stack)
                .map(|ids| ids.iter().filter_map(|id| self.frames.get(id)).collect())
                .unwrap_or_default();
            let class = if frames.iter().any(|f| is_submission(f)) {
                // The latest submission of this thread at or before the sample.
                submits.get(&s.thread).and_then(|v| {
                    let k = v.partition_point(|x| x.0 <= s.ts_ns);
                    (k > 0).then(|| (2, tasks.class(&ex[v[k - 1].1])))
                })
            } else if let Some(i) = s.execution.filter(|&i| ex[i].submitted()) {
                Some((0, tasks.class(&ex[i])))
            } else if frames.iter().any(|f| is_worker_loop(f)) {
                // The next execution begun on this thread.
                begins.get(&s.thread).and_then(|v| {
                    let k = v.partition_point(|x| x.0 <= s.ts_ns);
                    v.get(k).map(|x| (1, tasks.class(&ex[x.1])))
                })
            } else {
                None
            };
            if let Some((slot, c)) = class {
                per.entry(c).or_default()[slot] += 1;
            }
        }
        let mut out: Vec<TaskOverhead> = per
            .into_iter()
            .map(|(class, n)| TaskOverhead {
                class: class.to_string(),
                work_samples: n[0],
                dispatch_samples: n[1],
                submit_samples: n[2],
            })
            .collect();
        out.sort_by(|a, b| {
            b.work_samples
                .cmp(&a.work_samples)
                .then_with(|| a.class.cmp(&b.class))
        });
        out
    }

    /// Sets each sample's lock: CPU samples of a holder while others were blocked
    /// on its lock, wall samples of a thread while it was blocked on one.
    fn tie_to_locks(&mut self, model: &Model, locks: &LockAnalysis) {
        let by_name: HashMap<String, ThreadIndex> = model
            .threads
            .values()
            .map(|t| (t.display_name(), t.index))
            .collect();
        // Per (thread, mode): (start, end, lock) intervals; merged per lock for holders.
        let mut held: HashMap<(usize, ThreadIndex), Vec<(u64, u64)>> = HashMap::new();
        let mut blocked: HashMap<ThreadIndex, Vec<(u64, u64, usize)>> = HashMap::new();
        for b in &locks.blocked {
            blocked
                .entry(b.thread)
                .or_default()
                .push((b.start_ns, b.end_ns, b.lock));
            let Some(owner) = b.owner.as_ref().and_then(|o| by_name.get(o)) else {
                continue;
            };
            held.entry((b.lock, *owner))
                .or_default()
                .push((b.start_ns, b.end_ns));
        }
        let mut holding: HashMap<ThreadIndex, Vec<(u64, u64, usize)>> = HashMap::new();
        for ((lock, owner), mut iv) in held {
            iv.sort();
            let mut merged: Vec<(u64, u64)> = Vec::new();
            for (s, e) in iv {
                match merged.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => merged.push((s, e)),
                }
            }
            holding
                .entry(owner)
                .or_default()
                .extend(merged.into_iter().map(|(s, e)| (s, e, lock)));
        }
        for v in holding.values_mut().chain(blocked.values_mut()) {
            v.sort();
        }
        // The interval of `list` (by start) covering `ts`: the latest begun by then
        // that has not ended (intervals of one thread do not nest).
        fn covering(list: &[(u64, u64, usize)], ts: u64) -> Option<usize> {
            let k = list.partition_point(|iv| iv.0 <= ts);
            (k > 0 && list[k - 1].1 > ts).then(|| list[k - 1].2)
        }
        for s in &mut self.samples {
            let table = match s.mode {
                Mode::Cpu => &holding,
                Mode::Wall => &blocked,
            };
            s.lock = table.get(&s.thread).and_then(|l| covering(l, s.ts_ns));
        }
    }

    fn lock_holder_profiles(&self, locks: &LockAnalysis) -> Vec<LockHolderProfile> {
        let mut per_lock: HashMap<usize, Vec<u32>> = HashMap::new();
        for s in &self.samples {
            if let (Mode::Cpu, Some(lock)) = (s.mode, s.lock) {
                per_lock.entry(lock).or_default().push(s.stack);
            }
        }
        let mut out: Vec<LockHolderProfile> = per_lock
            .into_iter()
            .filter_map(|(lock, stacks)| {
                let name = locks.locks.get(lock)?.id.clone();
                let (n, top) = self.top_methods(stacks.into_iter());
                Some(LockHolderProfile {
                    lock: name,
                    holder_samples: n,
                    top_methods: top,
                })
            })
            .collect();
        out.sort_by(|a, b| {
            b.holder_samples
                .cmp(&a.holder_samples)
                .then_with(|| a.lock.cmp(&b.lock))
        });
        out
    }

    /// Collapsed stacks of one mode: (frames root first joined by `;`, samples),
    /// sorted by stack. `keep` filters samples (by thread, task class, …).
    pub fn collapsed(
        &self,
        mode: Mode,
        lines: bool,
        keep: impl Fn(&StackSample) -> bool,
    ) -> Vec<(String, u64)> {
        let mut counts: HashMap<u32, u64> = HashMap::new();
        for s in self.samples.iter().filter(|s| s.mode == mode && keep(s)) {
            *counts.entry(s.stack).or_default() += 1;
        }
        let mut by_name: HashMap<String, u64> = HashMap::new();
        for (stack, n) in counts {
            *by_name
                .entry(self.stack_names(stack, lines).join(";"))
                .or_default() += n;
        }
        let mut v: Vec<(String, u64)> = by_name.into_iter().collect();
        v.sort();
        v
    }

    /// The state name of a wall sample.
    pub fn state_name(s: &StackSample) -> &'static str {
        thread_state::name(s.state)
    }
}

/// Which samples an export keeps (`weft export --profile … --thread/--task-class/--lock`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleFilter {
    /// Thread name (exact).
    pub thread: Option<String>,
    /// Task class (exact, or its simple name after the last `.`).
    pub task_class: Option<String>,
    /// Lock: its id (`class@hash`) or its class (full, after the package, or after
    /// the last `$`). CPU samples
    /// of its holders while others were blocked on it; wall samples of the threads
    /// blocked on it.
    pub lock: Option<String>,
}

impl SampleFilter {
    pub fn keeps(
        &self,
        s: &StackSample,
        model: &Model,
        tasks: &TaskAnalysis,
        locks: &LockAnalysis,
    ) -> bool {
        if let Some(want) = &self.lock {
            let Some(l) = s.lock.and_then(|i| locks.locks.get(i)) else {
                return false;
            };
            let simple = l.class.rsplit('.').next().unwrap_or(&l.class);
            let inner = simple.rsplit('$').next().unwrap_or(simple);
            if ![l.id.as_str(), l.class.as_str(), simple, inner].contains(&want.as_str()) {
                return false;
            }
        }
        if let Some(t) = &self.thread {
            let name = model.threads.get(&s.thread).map(|t| t.display_name());
            if name.as_deref() != Some(t.as_str()) {
                return false;
            }
        }
        if let Some(c) = &self.task_class {
            let Some(e) = s.execution.and_then(|i| tasks.executions.get(i)) else {
                return false;
            };
            let class: &str = tasks.class(e);
            let simple = class.rsplit('.').next().unwrap_or(class);
            if class != c && simple != c {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use weft_trace::GLOBAL_THREAD;

    fn frame(tb: &mut TB, id: u32, kind: u8, class: &str, method: &str, line: i32) {
        tb.global(Record::FrameDef {
            id,
            kind,
            line,
            class: class.into(),
            method: method.into(),
        });
    }

    fn sample(tb: &mut TB, ts: u64, thread: u32, stack: u32, mode_state: u8) {
        tb.recs.push((
            GLOBAL_THREAD,
            Record::StackSample {
                ts,
                thread,
                stack,
                mode_state,
            },
        ));
    }

    /// A pool thread (1) runs a demo.Work (22-52) submitted by main at 10,
    /// inside a FutureTask; frames 1-4 (Thread.run, Work.run, Work.spin, a
    /// broken walk), stacks 1 (spin) and 2 (broken).
    fn pool_run() -> TB {
        let mut tb = TB::new();
        tb.submit(MAIN, 10, (C_WORK, 7), 0);
        tb.start(1, 0, C_THREAD, (C_WORKER, 2001));
        tb.begin(1, 1, P_WORKER_RUN, C_WORKER, 2001);
        tb.begin_p(1, 20, P_FUTURETASK_RUN, C_FUTURETASK, 300, (C_WORK, 7));
        tb.run(1, 22, 52, P_WORK_RUN, C_WORK, 7);
        tb.end(1, 55, P_FUTURETASK_RUN, 300);
        tb.end(1, 99, P_WORKER_RUN, 2001);
        tb.thread_end(1, 100);
        frame(&mut tb, 1, frame_kind::JAVA, "java.lang.Thread", "run", 840);
        frame(&mut tb, 2, frame_kind::JAVA, "demo.Work", "run", 12);
        frame(&mut tb, 3, frame_kind::JAVA, "demo.Work", "spin", 30);
        frame(&mut tb, 4, frame_kind::BROKEN, "", "GC_active", 0);
        tb.global(Record::StackDef {
            id: 1,
            frames: vec![3, 2, 1],
        });
        tb.global(Record::StackDef {
            id: 2,
            frames: vec![4],
        });
        tb
    }

    /// Samples are tied to the innermost execution running on their thread;
    /// collapsed stacks are root first; broken walks are counted, not named.
    #[test]
    fn ties_samples_to_executions_and_collapses_stacks() {
        let mut tb = pool_run();
        let cpu = sample_mode::CPU | (thread_state::RUNNING << 4);
        sample(&mut tb, 25, 1, 1, cpu);
        sample(&mut tb, 30, 1, 1, cpu);
        sample(&mut tb, 40, 1, 2, cpu);
        sample(&mut tb, 60, 1, 1, cpu); // after the execution: the thread's own time
        sample(
            &mut tb,
            70,
            1,
            1,
            sample_mode::WALL | (thread_state::SLEEPING << 4),
        );
        tb.global(Record::End { ts: 100 });
        let trace = tb.trace();
        let a = crate::analyze(&trace);
        let p = &a.profile;
        assert_eq!((p.cpu_samples, p.wall_samples, p.cpu_broken), (4, 1, 1));
        assert!((p.broken_share(Mode::Cpu) - 0.25).abs() < 1e-9);
        let work = p
            .task_classes
            .iter()
            .find(|c| c.class == "demo.Work")
            .expect("demo.Work profile");
        assert_eq!(work.cpu_samples, 3);
        assert_eq!(work.top_methods[0].method, "demo.Work.spin");
        assert_eq!(work.top_methods[0].samples, 2);
        let collapsed = p.collapsed(Mode::Cpu, true, |_| true);
        assert_eq!(
            collapsed,
            vec![
                ("[broken:GC_active]".to_string(), 1),
                (
                    "java.lang.Thread.run:840;demo.Work.run:12;demo.Work.spin:30".to_string(),
                    3
                ),
            ]
        );
        let wall = p.collapsed(Mode::Wall, false, |_| true);
        assert_eq!(
            wall,
            vec![(
                "java.lang.Thread.run;demo.Work.run;demo.Work.spin".to_string(),
                1
            )]
        );
        let only_work = SampleFilter {
            task_class: Some("Work".into()),
            ..SampleFilter::default()
        };
        let n: u64 = p
            .collapsed(Mode::Cpu, false, |s| {
                only_work.keeps(s, &a.model, &a.tasks, &a.locks)
            })
            .iter()
            .map(|x| x.1)
            .sum();
        assert_eq!(n, 3);
    }

    /// Work, dispatch (the pool's loop before the task) and submission (main in
    /// ThreadPoolExecutor.execute) samples of a submitted class.
    #[test]
    fn splits_a_task_class_into_work_dispatch_and_submission() {
        let mut tb = pool_run();
        let tpe = "java.util.concurrent.ThreadPoolExecutor";
        frame(&mut tb, 5, frame_kind::JAVA, tpe, "getTask", 1050);
        frame(&mut tb, 6, frame_kind::JAVA, tpe, "execute", 1350);
        frame(&mut tb, 7, frame_kind::JAVA, "demo.Main", "main", 5);
        tb.global(Record::StackDef {
            id: 3,
            frames: vec![5, 1],
        });
        tb.global(Record::StackDef {
            id: 4,
            frames: vec![6, 7],
        });
        let cpu = sample_mode::CPU | (thread_state::RUNNING << 4);
        sample(&mut tb, 11, MAIN, 4, cpu); // submitting
        sample(&mut tb, 15, 1, 3, cpu); // the worker taking the task
        sample(&mut tb, 25, 1, 1, cpu); // the task's work
        sample(&mut tb, 30, 1, 1, cpu);
        tb.global(Record::End { ts: 100 });
        let a = crate::analyze(&tb.trace());
        let o = a
            .profile
            .overheads
            .iter()
            .find(|o| o.class == "demo.Work")
            .expect("demo.Work overhead");
        assert_eq!(
            (o.work_samples, o.dispatch_samples, o.submit_samples),
            (2, 1, 1)
        );
        assert!((o.overhead_share() - 0.5).abs() < 1e-9);
    }
}
