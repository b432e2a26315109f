//! Timeline aggregates for the views (HTML report, Perfetto/Chrome exports,
//! flame graphs): nesting levels, per-thread time buckets for traces with a
//! million executions, the longest executions to show one by one, the number
//! of running tasks over time, self-time histograms per class, self time by
//! (kind, site, class) stacks, and which thread submitted each execution.
//!
//! Everything here is derived from [`TaskAnalysis`]; the views only lay it out.

use std::collections::HashMap;

use weft_trace::ThreadIndex;

use crate::tasks::{TaskAnalysis, TaskKind};

/// Nesting level of each execution among task executions: the number of
/// enclosing executions that are not thread executions (thread executions get 0
/// too; they are the thread's own life).
pub fn levels(tasks: &TaskAnalysis) -> Vec<u16> {
    let ex = &tasks.executions;
    let mut out = vec![0u16; ex.len()];
    for i in 0..ex.len() {
        if let Some(p) = ex[i].parent() {
            if p < i {
                let step = u16::from(ex[p].kind != TaskKind::Thread);
                out[i] = out[p].saturating_add(step);
            }
        }
    }
    out
}

/// Nesting depth of each execution on its thread, thread executions included
/// (0 = outermost). Slices at depth d+1 lie inside one at depth d.
pub fn depths(tasks: &TaskAnalysis) -> Vec<u16> {
    let ex = &tasks.executions;
    let mut out = vec![0u16; ex.len()];
    for i in 0..ex.len() {
        if let Some(p) = ex[i].parent() {
            if p < i {
                out[i] = out[p].saturating_add(1);
            }
        }
    }
    out
}

/// One time bucket of one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    pub bucket: u32,
    /// Time covered by outermost task executions (not thread executions) in the bucket.
    pub busy_ns: u64,
    /// Task executions (any level, not threads) that began in the bucket.
    pub begun: u32,
    /// Index into `TaskAnalysis::classes` of the class with most busy time in the bucket
    /// (`u32::MAX` when none).
    pub top_class: u32,
}

/// The non-empty buckets of one thread, in bucket order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lane {
    pub thread: ThreadIndex,
    pub cells: Vec<Cell>,
}

/// Executions aggregated into equal time buckets per thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buckets {
    pub from_ns: u64,
    pub bucket_ns: u64,
    pub count: u32,
    /// Threads with at least one task execution, by thread index.
    pub lanes: Vec<Lane>,
}

/// Index of each execution's class row in `TaskAnalysis::classes` (by class name and kind).
pub fn class_rows(tasks: &TaskAnalysis) -> Vec<u32> {
    let by: HashMap<(&str, TaskKind), u32> = tasks
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.class.as_str(), c.kind), i as u32))
        .collect();
    tasks
        .executions
        .iter()
        .map(|e| {
            by.get(&(tasks.class(e), e.kind))
                .copied()
                .unwrap_or(u32::MAX)
        })
        .collect()
}

/// Aggregates executions into `count` buckets over `[from_ns, to_ns)`.
pub fn buckets(tasks: &TaskAnalysis, from_ns: u64, to_ns: u64, count: u32) -> Buckets {
    let count = count.max(1);
    let span = to_ns.saturating_sub(from_ns).max(1);
    let bucket_ns = span.div_ceil(count as u64).max(1);
    let levels = levels(tasks);
    let rows = class_rows(tasks);
    let last = count - 1;
    let bucket_of = |t: u64| -> u32 { ((t.saturating_sub(from_ns) / bucket_ns) as u32).min(last) };
    // thread -> bucket -> (busy, begun, per-class busy)
    type Acc = HashMap<u32, (u64, u32, HashMap<u32, u64>)>;
    let mut per: std::collections::BTreeMap<ThreadIndex, Acc> = Default::default();
    for (i, e) in tasks.executions.iter().enumerate() {
        if e.kind == TaskKind::Thread {
            continue;
        }
        let acc = per.entry(e.thread).or_default();
        acc.entry(bucket_of(e.begin_ns)).or_default().1 += 1;
        if levels[i] != 0 {
            continue;
        }
        let (b, end) = (e.begin_ns.max(from_ns), e.end_ns.min(to_ns));
        if end <= b {
            continue;
        }
        for k in bucket_of(b)..=bucket_of(end - 1) {
            let k0 = from_ns + k as u64 * bucket_ns;
            let ov = end.min(k0 + bucket_ns).saturating_sub(b.max(k0));
            if ov == 0 {
                continue;
            }
            let c = acc.entry(k).or_default();
            c.0 += ov;
            *c.2.entry(rows[i]).or_default() += ov;
        }
    }
    let lanes = per
        .into_iter()
        .map(|(thread, acc)| {
            let mut cells: Vec<Cell> = acc
                .into_iter()
                .map(|(bucket, (busy_ns, begun, by))| Cell {
                    bucket,
                    busy_ns,
                    begun,
                    top_class: by
                        .into_iter()
                        .max_by_key(|&(c, ns)| (ns, std::cmp::Reverse(c)))
                        .map_or(u32::MAX, |(c, _)| c),
                })
                .collect();
            cells.sort_by_key(|c| c.bucket);
            Lane { thread, cells }
        })
        .collect();
    Buckets {
        from_ns,
        bucket_ns,
        count,
        lanes,
    }
}

/// Indices of the executions to show one by one when there are too many: every
/// thread execution, then the `max` longest task executions; in index order.
pub fn longest(tasks: &TaskAnalysis, max: usize) -> Vec<usize> {
    let ex = &tasks.executions;
    let (threads, mut others): (Vec<usize>, Vec<usize>) =
        (0..ex.len()).partition(|&i| ex[i].kind == TaskKind::Thread);
    if others.len() > max {
        others.select_nth_unstable_by(max, |&a, &b| {
            ex[b]
                .duration_ns()
                .cmp(&ex[a].duration_ns())
                .then(a.cmp(&b))
        });
        others.truncate(max);
    }
    let mut out = threads;
    out.extend(others);
    out.sort_unstable();
    out
}

/// Running task executions (reported, not threads) over time: `(time, count)`
/// at every change, in time order, starting from 0.
pub fn active_tasks(tasks: &TaskAnalysis) -> Vec<(u64, u32)> {
    let mut ev: Vec<(u64, i32)> = Vec::new();
    for e in &tasks.executions {
        if e.reported() && e.kind != TaskKind::Thread {
            ev.push((e.begin_ns, 1));
            ev.push((e.end_ns, -1));
        }
    }
    // Ends before begins at one time: a hand-off is not an overlap.
    ev.sort_unstable();
    let mut out: Vec<(u64, u32)> = Vec::new();
    let mut n: i64 = 0;
    for (t, d) in ev {
        n += d as i64;
        let v = n.max(0) as u32;
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 = v,
            _ => out.push((t, v)),
        }
    }
    out
}

/// Bins per decade of the self-time histograms.
pub const HISTOGRAM_BINS_PER_DECADE: u32 = 4;
/// Histograms cover 1 ns (bin 0, with 0 ns) to 10^11 ns.
pub const HISTOGRAM_DECADES: u32 = 11;

/// Self times of a class's reported executions, in log-spaced bins: bin `k`
/// holds self times in `[10^(k/4), 10^((k+1)/4))` ns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    pub counts: Vec<u64>,
}

impl Histogram {
    /// Lower edge of bin `k`, ns.
    pub fn lower_ns(k: usize) -> f64 {
        10f64.powf(k as f64 / HISTOGRAM_BINS_PER_DECADE as f64)
    }
}

/// One histogram per row of `TaskAnalysis::classes`, same order.
pub fn self_time_histograms(tasks: &TaskAnalysis) -> Vec<Histogram> {
    let nbins = (HISTOGRAM_BINS_PER_DECADE * HISTOGRAM_DECADES) as usize;
    let rows = class_rows(tasks);
    let mut out = vec![
        Histogram {
            counts: vec![0; nbins]
        };
        tasks.classes.len()
    ];
    for (i, e) in tasks.executions.iter().enumerate() {
        if !e.reported() || rows[i] == u32::MAX {
            continue;
        }
        let k = if e.self_ns <= 1 {
            0
        } else {
            ((e.self_ns as f64).log10() * HISTOGRAM_BINS_PER_DECADE as f64).floor() as usize
        };
        out[rows[i] as usize].counts[k.min(nbins - 1)] += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::{Distribution, TaskClassStats, TaskExecution};

    fn ex(thread: u32, b: u64, e: u64, parent: Option<usize>, kind: TaskKind) -> TaskExecution {
        TaskExecution {
            class_id: if kind == TaskKind::Thread { 2 } else { 1 },
            kind,
            thread,
            begin_ns: b,
            end_ns: e,
            self_ns: e - b,
            flags: crate::tasks::REPORTED,
            parent: crate::tasks::exec_index(parent),
            details: None,
        }
    }

    fn analysis() -> TaskAnalysis {
        let class = |c: &str, kind| TaskClassStats {
            class: c.into(),
            kind,
            executions: 0,
            aggregated: 0,
            submitted: 0,
            incomplete: 0,
            granularity_ns: Distribution::default(),
            queue_wait_ns: None,
            threads: 1,
            sites: vec![],
        };
        TaskAnalysis {
            classes: vec![class("W", TaskKind::Runnable), class("T", TaskKind::Thread)],
            executions: vec![
                ex(1, 0, 1000, None, TaskKind::Thread),
                ex(1, 100, 300, Some(0), TaskKind::Runnable),
                ex(1, 150, 200, Some(1), TaskKind::Runnable),
                ex(1, 300, 700, Some(0), TaskKind::Runnable),
            ],
            class_names: [(1, "W".into()), (2, "T".into())].into_iter().collect(),
            ..TaskAnalysis::default()
        }
    }

    #[test]
    fn levels_buckets_active_histograms() {
        let t = analysis();
        assert_eq!(levels(&t), vec![0, 0, 1, 0]);
        assert_eq!(depths(&t), vec![0, 1, 2, 1]);
        let b = buckets(&t, 0, 1000, 4);
        assert_eq!(b.bucket_ns, 250);
        let cells = &b.lanes[0].cells;
        assert_eq!(
            cells
                .iter()
                .map(|c| (c.bucket, c.busy_ns, c.begun))
                .collect::<Vec<_>>(),
            vec![(0, 150, 2), (1, 250, 1), (2, 200, 0)]
        );
        assert!(cells.iter().all(|c| c.top_class == 0));
        assert_eq!(
            active_tasks(&t),
            vec![(100, 1), (150, 2), (200, 1), (300, 1), (700, 0)]
        );
        let h = self_time_histograms(&t);
        assert_eq!(h[0].counts.iter().sum::<u64>(), 3);
        assert_eq!(h[1].counts.iter().sum::<u64>(), 1);
        // 200 ns: log10 = 2.30 -> bin 9
        assert_eq!(h[0].counts[9], 1);
        assert_eq!(longest(&t, 1), vec![0, 3]);
    }
}
