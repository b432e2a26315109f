//! The measured window: the part of a recording a report covers.
//!
//! A window is one or more time ranges of the recording: the calls of the window
//! method (`weft record --window`, records `WindowEnter`/`WindowExit`), a range
//! given after the fact (`weft report --from/--to`), or both intersected. The
//! restriction is one step before the analyses ([`restrict`]): the trace is cut to
//! the ranges and its times are mapped onto them laid end to end, so that every
//! analysis and view covers only the window without knowing about it. Times in a
//! windowed report count from the window's start.
//!
//! What is kept (docs/views.md §Window):
//! - executions (tasks, fork-join runs) and threads that *begin* inside the window,
//!   cut at its end; those that began before it are left out (they are not the
//!   window's work), their nested executions that begin inside are kept; a thread
//!   that began before and lives into the window is kept as a thread (named, from
//!   the window's start, its `ThreadStart` without class or target: not a task);
//! - waits, lock blocking, joins and GC pauses that overlap the window, cut to it
//!   (they are time, not work);
//! - point events (submissions, creations, forks) inside the window;
//! - CPU samples and per-thread scheduler readings inside, plus readings
//!   interpolated at each range's ends;
//! - the CPU time of a thread that lived partly outside the window, in proportion
//!   to its lifetime inside (an estimate: the agent reads it once, at thread end).

use std::collections::HashMap;

use weft_trace::{header_keys, Record, ThreadIndex, Trace, GLOBAL_THREAD};

use crate::cpu::merge_intervals;

/// What the user asked the report to cover.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Selection {
    /// `--from`, ns since the start of recording.
    pub from_ns: Option<u64>,
    /// `--to`, ns since the start of recording.
    pub to_ns: Option<u64>,
    /// `--window-all`: each call of the window method is its own window (the
    /// trace header's `window.calls` when not given).
    pub each_call: bool,
}

/// The window a report covers, as the views show it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    /// The window method (`pkg.Class.method`), when the trace was recorded with one.
    pub method: Option<String>,
    /// Every call is its own window (else: first entry to last exit).
    pub each_call: bool,
    /// Calls of the window method (outermost per thread).
    pub calls: u64,
    /// `--from` / `--to` as given (recording time, ns).
    pub from_ns: Option<u64>,
    pub to_ns: Option<u64>,
    /// The ranges covered, in recording time (ns since the start of recording),
    /// sorted and disjoint. Empty when the window method never ran.
    pub ranges: Vec<(u64, u64)>,
    /// Length of the recording the window was taken from.
    pub recording_ns: u64,
    /// Something the reader must know (the method never ran, a call never returned).
    pub notes: Vec<String>,
}

impl Window {
    /// Total time covered.
    pub fn covered_ns(&self) -> u64 {
        self.ranges.iter().map(|(s, e)| e - s).sum()
    }
}

/// What the window needs to know of a trace, gathered record by record: the calls
/// of the window method and the length of the recording.
#[derive(Default)]
pub struct WindowCalls {
    /// Per thread: (enter of the outermost open call, depth).
    open: HashMap<ThreadIndex, (u64, u32)>,
    /// (enter, exit) of the outermost calls.
    calls: Vec<(u64, u64)>,
    /// The largest time seen.
    end: u64,
}

impl WindowCalls {
    pub fn record(&mut self, thread: ThreadIndex, r: &Record) {
        let ts = match r {
            Record::Loss { to_ts, .. } => Some(*to_ts),
            r => r.ts(),
        };
        if let Some(ts) = ts {
            self.end = self.end.max(ts);
        }
        match r {
            Record::WindowEnter { ts } => {
                self.open.entry(thread).or_insert((*ts, 0)).1 += 1;
            }
            Record::WindowExit { ts } => {
                if let Some(e) = self.open.get_mut(&thread) {
                    e.1 -= 1;
                    if e.1 == 0 {
                        self.calls.push((e.0, *ts));
                        self.open.remove(&thread);
                    }
                }
            }
            _ => {}
        }
    }

    /// Length of the recording: the `End` time or the largest time seen.
    pub fn recording_ns(&self) -> u64 {
        self.end
    }

    /// The calls, sorted, a call still open at the end lasting to it; and how many
    /// were still open.
    fn calls(&self) -> (Vec<(u64, u64)>, u64) {
        let mut calls = self.calls.clone();
        calls.extend(self.open.values().map(|(s, _)| (*s, self.end)));
        calls.sort_unstable();
        (calls, self.open.len() as u64)
    }
}

impl weft_trace::RecordSink for WindowCalls {
    fn record(&mut self, thread: ThreadIndex, record: &Record) {
        WindowCalls::record(self, thread, record);
    }
}

/// The model builder behind the restriction: what the window keeps goes on to it.
struct Restricted {
    restriction: Restriction,
    builder: crate::ModelBuilder,
}

impl weft_trace::RecordSink for Restricted {
    fn record(&mut self, thread: ThreadIndex, record: &Record) {
        let b = &mut self.builder;
        self.restriction
            .record(thread, record, |t, r| b.record(t, &r));
    }
}

/// Reads a trace file into the model of the part inside the window `sel` selects
/// (the trace's own window method by default), with the trace's header. Without a
/// window: one pass ([`crate::Model::read`]). With one: a first pass gathers the
/// window method's calls, the second hands each record through the [`Restriction`]
/// to the model builder, so the analyses see the window only. Errors are one line;
/// the reader's warnings (damage skipped or corrected) come along.
pub fn read_model(
    path: &std::path::Path,
    sel: &Selection,
) -> Result<
    (
        crate::Model,
        Option<Window>,
        weft_trace::Header,
        Vec<String>,
    ),
    String,
> {
    let err = |e: weft_trace::TraceError| e.to_string();
    let header = weft_trace::read_header(path).map_err(err)?;
    let has_method = header
        .get(header_keys::WINDOW_METHOD)
        .is_some_and(|m| !m.is_empty());
    let window = if has_method || sel.from_ns.is_some() || sel.to_ns.is_some() {
        let (calls, _) = weft_trace::stream_trace(path, |_| WindowCalls::default()).map_err(err)?;
        resolve_calls(&header, &calls, sel)?
    } else {
        None
    };
    let Some(w) = window else {
        let (model, warnings) = crate::Model::read_with_warnings(path).map_err(err)?;
        return Ok((model, None, header, warnings));
    };
    let (sink, mut end) = weft_trace::stream_trace(path, |h| Restricted {
        restriction: Restriction::new(w.ranges.clone()),
        builder: crate::ModelBuilder::new(h),
    })
    .map_err(err)?;
    let Restricted {
        restriction,
        mut builder,
    } = sink;
    restriction.finish(|t, r| builder.record(t, &r));
    let warnings = std::mem::take(&mut end.warnings);
    let model = builder.finish(end.truncated, end.unknown_records, |u| {
        end.fj_usage_class(u)
    });
    Ok((model, Some(w), header, warnings))
}

/// The window a selection gives on a trace: see [`resolve_calls`].
pub fn resolve(trace: &Trace, sel: &Selection) -> Result<Option<Window>, String> {
    let mut calls = WindowCalls::default();
    for (thread, r) in &trace.records {
        calls.record(*thread, r);
    }
    resolve_calls(&trace.header, &calls, sel)
}

/// The window a selection gives on a trace (its header and calls): `Ok(None)` when
/// the report covers the whole recording, an error (one line) for a range outside
/// the trace.
pub fn resolve_calls(
    header: &weft_trace::Header,
    calls: &WindowCalls,
    sel: &Selection,
) -> Result<Option<Window>, String> {
    let end = calls.recording_ns();
    let method = header
        .get(header_keys::WINDOW_METHOD)
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    if method.is_none() && sel.from_ns.is_none() && sel.to_ns.is_none() {
        return Ok(None);
    }
    let human = crate::findings::human_ns;
    if let Some(f) = sel.from_ns {
        if f >= end {
            return Err(format!(
                "--from {} is at or after the end of the trace ({} long)",
                human(f),
                human(end)
            ));
        }
    }
    if let Some(t) = sel.to_ns {
        if t == 0 || t > end {
            return Err(format!(
                "--to {} is outside the trace (0 to {})",
                human(t),
                human(end)
            ));
        }
    }
    let (from, to) = (sel.from_ns.unwrap_or(0), sel.to_ns.unwrap_or(end));
    if from >= to {
        return Err(format!(
            "--from {} is not before --to {}",
            human(from),
            human(to)
        ));
    }
    let each_call = sel.each_call || header.get(header_keys::WINDOW_CALLS) == Some("each");
    let mut w = Window {
        method: method.clone(),
        each_call,
        from_ns: sel.from_ns,
        to_ns: sel.to_ns,
        recording_ns: end,
        ..Window::default()
    };
    let base = match &method {
        None => vec![(from, to)],
        Some(m) => {
            let (calls, unfinished) = calls.calls();
            w.calls = calls.len() as u64;
            if calls.is_empty() {
                w.notes.push(format!(
                    "the window method {m} never ran in this recording (check the name: \
                     pkg.Class.method, every overload counts; a method that is also a task's \
                     run/call method cannot be a window): this report covers the whole recording"
                ));
                vec![(from, to)]
            } else {
                if unfinished > 0 {
                    w.notes.push(format!(
                        "{unfinished} call{} of {m} had not returned when recording ended: \
                         {} window{} at the end of the recording",
                        if unfinished == 1 { "" } else { "s" },
                        if unfinished == 1 { "its" } else { "their" },
                        if unfinished == 1 { " ends" } else { "s end" },
                    ));
                }
                let spans = if each_call {
                    merge_intervals(&calls)
                } else {
                    let first = calls.iter().map(|c| c.0).min().unwrap_or(0);
                    let last = calls.iter().map(|c| c.1).max().unwrap_or(end);
                    vec![(first, last)]
                };
                let cut: Vec<(u64, u64)> = spans
                    .into_iter()
                    .map(|(s, e)| (s.max(from), e.min(to)))
                    .filter(|(s, e)| e > s)
                    .collect();
                if cut.is_empty() {
                    return Err(format!(
                        "no call of {m} falls between --from {} and --to {}",
                        human(from),
                        human(to)
                    ));
                }
                cut
            }
        }
    };
    w.ranges = base;
    Ok(Some(w))
}

/// Maps recording times onto the ranges laid end to end.
struct TimeMap {
    ranges: Vec<(u64, u64)>,
    offsets: Vec<u64>,
}

impl TimeMap {
    fn new(ranges: Vec<(u64, u64)>) -> TimeMap {
        let mut offsets = Vec::with_capacity(ranges.len());
        let mut o = 0;
        for (s, e) in &ranges {
            offsets.push(o);
            o += e - s;
        }
        TimeMap { ranges, offsets }
    }

    /// Index of the last range starting at or before `t`.
    fn range_of(&self, t: u64) -> Option<usize> {
        self.ranges.partition_point(|r| r.0 <= t).checked_sub(1)
    }

    fn inside(&self, t: u64) -> bool {
        self.range_of(t).is_some_and(|k| t <= self.ranges[k].1)
    }

    /// Window time of recording time `t`; times outside map to the nearest end.
    fn map(&self, t: u64) -> u64 {
        match self.range_of(t) {
            None => 0,
            Some(k) => self.offsets[k] + t.min(self.ranges[k].1) - self.ranges[k].0,
        }
    }

    /// Time of `[a, b]` inside the ranges.
    fn covered(&self, a: u64, b: u64) -> u64 {
        self.map(b).saturating_sub(self.map(a))
    }
}

/// A begin/end pair of records that is time (cut to the window), not work.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Span {
    Lock,
    Wait,
    Join,
    FjJoin,
    Gc,
}

fn span_begin(r: &Record) -> Option<Span> {
    Some(match r {
        Record::LockBlock { .. } => Span::Lock,
        Record::WaitBegin { .. } => Span::Wait,
        Record::JoinBegin { .. } => Span::Join,
        Record::FjJoinBegin { .. } => Span::FjJoin,
        Record::GcStart { .. } => Span::Gc,
        _ => return None,
    })
}

fn span_end(r: &Record) -> Option<Span> {
    Some(match r {
        Record::LockAcquired { .. } | Record::LockGaveUp { .. } => Span::Lock,
        Record::WaitEnd { .. } => Span::Wait,
        Record::JoinEnd { .. } => Span::Join,
        Record::FjJoinEnd { .. } => Span::FjJoin,
        Record::GcEnd { .. } => Span::Gc,
        _ => return None,
    })
}

#[derive(Default)]
struct ThreadState {
    /// Open TaskBegin (probe, ident, kept).
    tasks: Vec<(u32, u32, bool)>,
    /// Open FjRunBegin: kept.
    fj_runs: Vec<bool>,
    /// Open spans: the begin record while not yet written (outside the window).
    spans: Vec<(Span, Option<Record>)>,
    /// First time seen (the ThreadStart's, when there is one).
    first_ts: Option<u64>,
    /// The thread began before the window: its start as a plain thread (not a
    /// task), written at its first record in the window.
    held_start: Option<Record>,
    ended: bool,
}

/// Writes records with their times mapped onto the window.
struct Out<'m, F: FnMut(ThreadIndex, Record)> {
    map: &'m TimeMap,
    emit: F,
}

impl<F: FnMut(ThreadIndex, Record)> Out<'_, F> {
    fn push(&mut self, thread: ThreadIndex, mut r: Record) {
        if let Some(ts) = r.ts() {
            let mapped = self.map.map(ts);
            if let Record::Loss { to_ts, .. } = &mut r {
                *to_ts = self.map.map(*to_ts);
            }
            if let Some(t) = r.ts_mut() {
                *t = mapped;
            }
        }
        (self.emit)(thread, r);
    }

    /// Writes `r` after the thread's open spans still held back (they overlap it).
    fn push_flushing(&mut self, thread: ThreadIndex, st: &mut ThreadState, r: Record) {
        if let Some(start) = st.held_start.take() {
            self.push(thread, start);
        }
        for (_, held) in st.spans.iter_mut() {
            if let Some(b) = held.take() {
                self.push(thread, b);
            }
        }
        self.push(thread, r);
    }
}

/// Whether a ThreadStart is the JVM's main thread (not a task: kept even when it
/// began before the window, so that `main` keeps its name).
fn is_main_start(r: &Record) -> bool {
    matches!(r, Record::ThreadStart { name, target_class_id: 0, .. }
        if matches!(&**name, "main" | "DestroyJavaVM"))
}

/// Cumulative counters read at times: the process's (`Sample`: CPU, voluntary and
/// involuntary context switches, live threads) and each thread's (`ThreadSched`:
/// on-CPU, run-queue, time slices). The restricted trace has them at each range's
/// ends, interpolated, so that differences over the window are the window's.
#[derive(Default)]
struct Counters {
    /// (ts, values), in file order (sorted by time). Values: process CPU, voluntary and
    /// involuntary context switches, live threads, machine idle (0 when unknown).
    points: Vec<(u64, [u64; 5])>,
    /// Every reading had the machine's idle time.
    machine_idle: bool,
}

impl Counters {
    /// The counters at `t`, linearly between the readings around it (the first or
    /// last reading outside them).
    fn at(&self, t: u64) -> Option<[u64; 5]> {
        let p = &self.points;
        let i = p.partition_point(|s| s.0 <= t);
        let (a, b) = match (i.checked_sub(1).map(|j| p[j]), p.get(i)) {
            (Some(a), Some(b)) => (a, *b),
            (Some(a), None) => (a, a),
            (None, Some(b)) => (*b, *b),
            (None, None) => return None,
        };
        let f = if b.0 > a.0 {
            (t.clamp(a.0, b.0) - a.0) as f64 / (b.0 - a.0) as f64
        } else {
            0.0
        };
        let mut v = [0u64; 5];
        for (k, x) in v.iter_mut().enumerate() {
            *x = a.1[k] + (b.1[k].saturating_sub(a.1[k]) as f64 * f).round() as u64;
        }
        Some(v)
    }

    /// The times to write: each range's ends and the readings inside.
    fn times(&self, ranges: &[(u64, u64)]) -> Vec<u64> {
        let mut out = Vec::new();
        for &(s, e) in ranges {
            out.push(s);
            out.extend(self.points.iter().map(|p| p.0).filter(|&t| t > s && t < e));
            out.push(e);
        }
        out
    }
}

/// The restriction as a stream: each record of a trace, in file order, goes
/// through [`record`](Restriction::record), which writes what the window keeps
/// (times mapped onto it); [`finish`](Restriction::finish) writes the counters
/// interpolated at the ranges' ends. Memory: per-thread open spans and the counter
/// readings, not the records.
pub struct Restriction {
    map: TimeMap,
    threads: HashMap<ThreadIndex, ThreadState>,
    samples: Counters,
    sched: std::collections::BTreeMap<ThreadIndex, Counters>,
}

impl Restriction {
    /// A restriction to `ranges` (recording time, sorted and disjoint).
    pub fn new(ranges: Vec<(u64, u64)>) -> Restriction {
        Restriction {
            map: TimeMap::new(ranges),
            threads: HashMap::new(),
            samples: Counters::default(),
            sched: Default::default(),
        }
    }

    /// Takes the next record of `thread`; `emit` gets what the window keeps.
    pub fn record(
        &mut self,
        thread: ThreadIndex,
        r: &Record,
        emit: impl FnMut(ThreadIndex, Record),
    ) {
        let mut out = Out {
            map: &self.map,
            emit,
        };
        let st = self.threads.entry(thread).or_default();
        let Some(ts) = r.ts() else {
            out.push(thread, r.clone()); // definitions
            return;
        };
        if st.first_ts.is_none() {
            st.first_ts = Some(ts);
        }
        let inside = self.map.inside(ts);
        if let Some(kind) = span_begin(r) {
            if inside {
                out.push_flushing(thread, st, r.clone());
                st.spans.push((kind, None));
            } else {
                st.spans.push((kind, Some(r.clone())));
            }
            return;
        }
        if let Some(kind) = span_end(r) {
            match st.spans.iter().rposition(|(k, _)| *k == kind) {
                Some(i) => {
                    let (_, held) = st.spans.remove(i);
                    match held {
                        // Held back and no window time since: not in the window.
                        Some(b) if self.map.covered(b.ts().unwrap_or(ts), ts) == 0 => {}
                        Some(b) => {
                            out.push_flushing(thread, st, b);
                            out.push(thread, r.clone());
                        }
                        None => out.push(thread, r.clone()),
                    }
                }
                None if inside => out.push_flushing(thread, st, r.clone()),
                None => {}
            }
            return;
        }
        match r {
            Record::Sample {
                ts,
                process_cpu_ns,
                voluntary_cs,
                involuntary_cs,
                live_threads,
                machine_idle_ns,
            } => {
                if self.samples.points.is_empty() {
                    self.samples.machine_idle = true;
                }
                self.samples.machine_idle &= machine_idle_ns.is_some();
                self.samples.points.push((
                    *ts,
                    [
                        *process_cpu_ns,
                        *voluntary_cs,
                        *involuntary_cs,
                        *live_threads as u64,
                        machine_idle_ns.unwrap_or(0),
                    ],
                ))
            }
            Record::ThreadSched {
                ts,
                thread,
                on_cpu_ns,
                runq_ns,
                timeslices,
            } => self
                .sched
                .entry(*thread)
                .or_default()
                .points
                .push((*ts, [*on_cpu_ns, *runq_ns, *timeslices, 0, 0])),
            Record::Calibration { .. } => {} // times are already ns
            // main began before the window: kept (named, and not a task).
            Record::ThreadStart { ts, .. }
                if inside || (is_main_start(r) && self.map.map(*ts) == 0) =>
            {
                out.push_flushing(thread, st, r.clone())
            }
            // Began before the window (a pool started earlier): kept as a thread,
            // named, from where the window meets it, but not as a task execution
            // (its start is not the window's work): no Thread class, no target.
            Record::ThreadStart { .. } => {
                let mut start = r.clone();
                if let Record::ThreadStart {
                    class_id,
                    target_class_id,
                    target_ident,
                    ident,
                    ..
                } = &mut start
                {
                    (*class_id, *target_class_id, *target_ident, *ident) = (0, 0, 0, 0);
                }
                st.held_start = Some(start);
            }
            Record::ThreadEnd {
                ts,
                cpu_ns,
                voluntary_cs,
                involuntary_cs,
            } => {
                st.ended = true;
                let start = st.first_ts.unwrap_or(*ts);
                let lived = ts.saturating_sub(start);
                let covered = self.map.covered(start, *ts);
                if covered == 0 && !inside {
                    return; // lived and ended outside the window
                }
                let share = |v: u64| {
                    if lived == 0 || covered >= lived {
                        v
                    } else {
                        (v as f64 * covered as f64 / lived as f64).round() as u64
                    }
                };
                out.push_flushing(
                    thread,
                    st,
                    Record::ThreadEnd {
                        ts: *ts,
                        cpu_ns: share(*cpu_ns),
                        voluntary_cs: share(*voluntary_cs),
                        involuntary_cs: share(*involuntary_cs),
                    },
                );
            }
            Record::TaskBegin { probe, ident, .. } => {
                st.tasks.push((*probe, *ident, inside));
                if inside {
                    out.push_flushing(thread, st, r.clone());
                }
            }
            Record::TaskEnd { probe, ident, .. } => {
                match st
                    .tasks
                    .iter()
                    .rposition(|(p, i, _)| p == probe && i == ident)
                {
                    Some(i) => {
                        let kept = st.tasks[i].2;
                        st.tasks.truncate(i);
                        if kept {
                            out.push_flushing(thread, st, r.clone());
                        }
                    }
                    None if inside => out.push_flushing(thread, st, r.clone()),
                    None => {}
                }
            }
            Record::FjRunBegin { .. } => {
                st.fj_runs.push(inside);
                if inside {
                    out.push_flushing(thread, st, r.clone());
                }
            }
            Record::FjRunEnd { .. } => match st.fj_runs.pop() {
                Some(true) => out.push_flushing(thread, st, r.clone()),
                Some(false) => {}
                None if inside => out.push_flushing(thread, st, r.clone()),
                None => {}
            },
            // The program's start, recording's end and losses: cut to the window.
            Record::AppStart { .. } | Record::End { .. } => out.push(thread, r.clone()),
            Record::Loss { from_ts, to_ts, .. }
                if inside || self.map.covered(*from_ts, *to_ts) > 0 =>
            {
                out.push(thread, r.clone())
            }
            Record::Loss { .. } => {}
            // Point events: inside the window only.
            _ if inside => out.push_flushing(thread, st, r.clone()),
            _ => {}
        }
    }

    /// After the last record: the counter readings inside the window and at its ends.
    pub fn finish(self, emit: impl FnMut(ThreadIndex, Record)) {
        let mut out = Out {
            map: &self.map,
            emit,
        };
        // Threads that began before the window, lived into it and left no record
        // in it (busy without a wait, lock or task to record).
        let mut held: Vec<(ThreadIndex, Record)> = Vec::new();
        for (thread, st) in self.threads {
            if let (Some(start), false) = (st.held_start, st.ended) {
                let ts = start.ts().unwrap_or(0);
                if self.map.covered(ts, u64::MAX) > 0 {
                    held.push((thread, start));
                }
            }
        }
        held.sort_by_key(|h| h.0);
        for (thread, start) in held {
            out.push(thread, start);
        }
        // Counters: the readings inside, and their values at each range's ends.
        for t in self.samples.times(&self.map.ranges) {
            if let Some(v) = self.samples.at(t) {
                let r = Record::Sample {
                    ts: t,
                    process_cpu_ns: v[0],
                    voluntary_cs: v[1],
                    involuntary_cs: v[2],
                    live_threads: v[3] as u32,
                    machine_idle_ns: self.samples.machine_idle.then_some(v[4]),
                };
                out.push(GLOBAL_THREAD, r);
            }
        }
        for (thread, c) in &self.sched {
            for t in c.times(&self.map.ranges) {
                if let Some(v) = c.at(t) {
                    let r = Record::ThreadSched {
                        ts: t,
                        thread: *thread,
                        on_cpu_ns: v[0],
                        runq_ns: v[1],
                        timeslices: v[2],
                    };
                    out.push(GLOBAL_THREAD, r);
                }
            }
        }
    }
}

/// The trace cut to `ranges` (recording time, sorted and disjoint), with its times
/// mapped onto them laid end to end (see the module comment for what is kept).
pub fn restrict(trace: &Trace, ranges: &[(u64, u64)]) -> Trace {
    let mut records = Vec::with_capacity(trace.records.len());
    let mut r = Restriction::new(ranges.to_vec());
    for (thread, rec) in &trace.records {
        r.record(*thread, rec, |t, x| records.push((t, x)));
    }
    r.finish(|t, x| records.push((t, x)));
    Trace {
        header: trace.header.clone(),
        records,
        truncated: trace.truncated,
        unknown_records: trace.unknown_records,
        clock: trace.clock.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{C_WORK, MAIN, P_WORK_RUN, TB};

    fn on(tb: &mut TB, thread: u32, r: Record) {
        tb.recs.push((thread, r));
    }

    fn begin(ts: u64, ident: u32) -> Record {
        Record::TaskBegin {
            ts,
            probe: P_WORK_RUN,
            class_id: C_WORK,
            ident,
            inner_class_id: 0,
            inner_ident: 0,
        }
    }

    fn end(ts: u64, ident: u32) -> Record {
        Record::TaskEnd {
            ts,
            probe: P_WORK_RUN,
            ident,
        }
    }

    /// A trace with window calls [100, 200] and [300, 400] on thread 1, tasks before,
    /// inside and across the window, a lock wait across its start, and samples.
    fn windowed() -> Trace {
        let mut tb = TB::new();
        tb.header.set(header_keys::WINDOW_METHOD, "demo.Main.solve");
        for (ts, cpu) in [
            (0, 0),
            (50, 50),
            (150, 100),
            (250, 300),
            (350, 350),
            (500, 400),
        ] {
            tb.global(Record::Sample {
                ts,
                process_cpu_ns: cpu,
                voluntary_cs: 0,
                involuntary_cs: 0,
                live_threads: 2,
                machine_idle_ns: None,
            });
        }
        for (ts, on_cpu) in [(0, 0), (200, 100), (450, 350)] {
            tb.global(Record::ThreadSched {
                ts,
                thread: MAIN,
                on_cpu_ns: on_cpu,
                runq_ns: 0,
                timeslices: 1,
            });
        }
        on(&mut tb, MAIN, begin(10, 1)); // before: left out
        on(&mut tb, MAIN, end(20, 1));
        on(&mut tb, MAIN, begin(90, 2)); // across the start: left out
        on(&mut tb, MAIN, Record::WindowEnter { ts: 100 });
        on(&mut tb, MAIN, begin(110, 3)); // nested inside 2: kept
        on(&mut tb, MAIN, end(120, 3));
        on(&mut tb, MAIN, end(130, 2));
        on(&mut tb, MAIN, Record::WindowExit { ts: 200 });
        on(&mut tb, MAIN, begin(250, 4)); // between the calls
        on(&mut tb, MAIN, end(260, 4));
        on(&mut tb, MAIN, Record::WindowEnter { ts: 300 });
        on(&mut tb, MAIN, begin(390, 5)); // across the end: cut
        on(&mut tb, MAIN, Record::WindowExit { ts: 400 });
        on(&mut tb, MAIN, end(450, 5));
        for (id, name) in [(70, "demo.Row"), (71, "demo.Gate")] {
            tb.global(Record::ClassDef {
                id,
                name: name.into(),
            });
        }
        on(
            &mut tb,
            1,
            Record::WaitDetail {
                class_id: 70,
                site: 0,
            },
        );
        on(
            &mut tb,
            1,
            Record::WaitBegin {
                ts: 80,
                kind: 2,
                lock: 0,
            },
        );
        on(
            &mut tb,
            1,
            Record::WaitEnd {
                ts: 150,
                timed_out: false,
            },
        );
        on(
            &mut tb,
            1,
            Record::WaitDetail {
                class_id: 71,
                site: 0,
            },
        );
        on(
            &mut tb,
            1,
            Record::WaitBegin {
                ts: 210,
                kind: 2,
                lock: 0,
            },
        );
        on(
            &mut tb,
            1,
            Record::WaitEnd {
                ts: 220,
                timed_out: false,
            },
        ); // between the calls: dropped
        tb.global(Record::End { ts: 500 });
        tb.trace()
    }

    /// A wait that began before the window keeps its detail (class), written before
    /// its WaitBegin: the WaitBegin is held back and written at the window's start.
    /// A wait left out leaves its detail on no other wait.
    #[test]
    fn a_held_back_wait_keeps_its_detail() {
        let t = windowed();
        let classes = |each_call: bool| -> Vec<u64> {
            let sel = Selection {
                each_call,
                ..Selection::default()
            };
            let w = resolve(&t, &sel).unwrap().unwrap();
            let m = crate::model::Model::build(&restrict(&t, &w.ranges));
            let evs = m.thread_events(1).expect("thread 1's events");
            evs.iter()
                .filter(|e| e.kind == crate::events::EventKind::WaitBegin)
                .map(|e| e.a)
                .collect()
        };
        assert_eq!(classes(false), vec![70, 71]);
        // Each call its own window: the wait between the calls is left out.
        assert_eq!(classes(true), vec![70]);
    }

    /// Threads started before the window (a pool started earlier) are in it when
    /// they live into it: named, from the window's start, not as task executions,
    /// and counted by the lock analysis (a `--from` that cuts a running pool does
    /// not read as one thread). One that ended before is not.
    #[test]
    fn threads_started_before_the_window_are_kept_as_threads() {
        let mut tb = TB::new();
        tb.start(2, 50, C_WORK, (0, 0)); // waits inside the window
        on(
            &mut tb,
            2,
            Record::WaitBegin {
                ts: 150,
                kind: 2,
                lock: 0,
            },
        );
        on(
            &mut tb,
            2,
            Record::WaitEnd {
                ts: 160,
                timed_out: false,
            },
        );
        tb.start(3, 20, C_WORK, (0, 0)); // ended before the window
        on(
            &mut tb,
            3,
            Record::ThreadEnd {
                ts: 60,
                cpu_ns: 0,
                voluntary_cs: 0,
                involuntary_cs: 0,
            },
        );
        tb.start(4, 30, C_WORK, (0, 0)); // busy across the window, ends after
        on(
            &mut tb,
            4,
            Record::ThreadEnd {
                ts: 450,
                cpu_ns: 0,
                voluntary_cs: 0,
                involuntary_cs: 0,
            },
        );
        tb.start(5, 40, C_WORK, (0, 0)); // busy to the end of the recording
        tb.start(6, 420, C_WORK, (0, 0)); // started after the window
        tb.global(Record::End { ts: 500 });
        let m = crate::model::Model::build(&restrict(&tb.trace(), &[(100, 400)]));
        let kept: Vec<(u32, String, Option<u64>)> = m
            .threads
            .values()
            .filter(|t| t.name.is_some())
            .map(|t| (t.index, t.display_name(), t.start_ns))
            .collect();
        assert_eq!(
            kept,
            vec![
                (2, "worker-2".to_string(), Some(0)),
                (4, "worker-4".to_string(), Some(0)),
                (5, "worker-5".to_string(), Some(0)),
            ]
        );
        let tasks = crate::tasks::analyze_tasks(&m);
        assert!(tasks.classes.is_empty(), "{:?}", tasks.classes);
        let locks = crate::locks::analyze_locks(&m);
        assert_eq!(locks.lifetimes.len(), 3, "{:?}", locks.lifetimes);
    }

    #[test]
    fn window_from_first_entry_to_last_exit() {
        let t = windowed();
        let w = resolve(&t, &Selection::default()).unwrap().unwrap();
        assert_eq!(w.ranges, vec![(100, 400)]);
        assert_eq!(w.calls, 2);
        assert!(w.notes.is_empty());
        let r = restrict(&t, &w.ranges);
        let begins: Vec<u64> = r
            .records
            .iter()
            .filter_map(|(_, r)| match r {
                Record::TaskBegin { ident, ts, .. } => Some((*ident as u64) * 1000 + ts),
                _ => None,
            })
            .collect();
        // 3 at 10, 4 at 150, 5 at 290 (window time).
        assert_eq!(begins, vec![3010, 4150, 5290]);
        let ends: Vec<(u32, u64)> = r
            .records
            .iter()
            .filter_map(|(_, r)| match r {
                Record::TaskEnd { ident, ts, .. } => Some((*ident, *ts)),
                _ => None,
            })
            .collect();
        assert_eq!(ends, vec![(3, 20), (4, 160), (5, 300)]);
        // The wait across the start is cut to it; the other one is inside.
        let waits: Vec<u64> = r
            .records
            .iter()
            .filter(|(th, _)| *th == 1)
            .filter_map(|(_, r)| r.ts())
            .collect();
        assert_eq!(waits, vec![0, 50, 110, 120]);
        assert!(r
            .records
            .iter()
            .any(|(_, r)| matches!(r, Record::End { ts: 300 })));
        // CPU at 100 and 400 interpolated between the samples around them.
        let cpu: Vec<(u64, u64)> = r
            .records
            .iter()
            .filter_map(|(_, r)| match r {
                Record::Sample {
                    ts, process_cpu_ns, ..
                } => Some((*ts, *process_cpu_ns)),
                _ => None,
            })
            .collect();
        assert_eq!(cpu.first(), Some(&(0, 75)));
        assert_eq!(cpu.last(), Some(&(300, 367)));
        // The thread's scheduler readings: at 100 (50), inside (100 at 200), at 400 (300).
        let sched: Vec<(u64, u64)> = r
            .records
            .iter()
            .filter_map(|(_, r)| match r {
                Record::ThreadSched { ts, on_cpu_ns, .. } => Some((*ts, *on_cpu_ns)),
                _ => None,
            })
            .collect();
        assert_eq!(sched, vec![(0, 50), (100, 100), (300, 300)]);
    }

    #[test]
    fn each_call_is_its_own_window() {
        let t = windowed();
        let sel = Selection {
            each_call: true,
            ..Selection::default()
        };
        let w = resolve(&t, &sel).unwrap().unwrap();
        assert_eq!(w.ranges, vec![(100, 200), (300, 400)]);
        let r = restrict(&t, &w.ranges);
        let idents: Vec<u32> = r
            .records
            .iter()
            .filter_map(|(_, r)| match r {
                Record::TaskBegin { ident, .. } => Some(*ident),
                _ => None,
            })
            .collect();
        assert_eq!(idents, vec![3, 5], "the task between the calls is left out");
        // (Each wait's WaitDetail has no time: it passes through, like definitions.)
        let waits = r
            .records
            .iter()
            .filter(|(th, r)| *th == 1 && r.ts().is_some())
            .count();
        assert_eq!(waits, 2, "only the wait overlapping a call");
    }

    #[test]
    fn ranges_after_the_fact_and_bad_ranges() {
        let mut t = windowed();
        t.header
            .entries
            .retain(|(k, _)| k != header_keys::WINDOW_METHOD);
        assert_eq!(resolve(&t, &Selection::default()).unwrap(), None);
        let sel = |f: Option<u64>, to: Option<u64>| Selection {
            from_ns: f,
            to_ns: to,
            each_call: false,
        };
        let w = resolve(&t, &sel(Some(50), None)).unwrap().unwrap();
        assert_eq!(w.ranges, vec![(50, 500)]);
        assert!(resolve(&t, &sel(Some(500), None)).is_err());
        assert!(resolve(&t, &sel(None, Some(501))).is_err());
        assert!(resolve(&t, &sel(Some(300), Some(200))).is_err());
    }

    #[test]
    fn a_window_method_that_never_ran_is_said() {
        let mut tb = TB::new();
        tb.header.set(header_keys::WINDOW_METHOD, "demo.Main.solve");
        on(&mut tb, MAIN, begin(10, 1));
        on(&mut tb, MAIN, end(20, 1));
        let w = resolve(&tb.trace(), &Selection::default())
            .unwrap()
            .unwrap();
        assert_eq!(w.calls, 0);
        assert_eq!(w.ranges, vec![(0, 20)]);
        assert!(w.notes[0].contains("never ran"), "{:?}", w.notes);
    }
}
