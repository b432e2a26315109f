//! Estimates with ranges and confidence, and the candidate search (docs/whatif.md
//! §Estimates, §Search).

use crate::critical::{critical_path, PathKind, PathPart};
use crate::edit::{heights, Edit, EditKind};
use crate::graph::{ExecGraph, Op, Runs};
use crate::sim::{simulate, Overlay, SimParams};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Confidence {
    /// No number: weft cannot make this estimate (the reason says why).
    None,
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::None => "none",
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// One estimated edit (or set of edits).
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub edit: String,
    /// `None` when weft cannot estimate it (see `reasons`).
    pub estimated_ns: Option<u64>,
    pub gain: Option<f64>,
    pub gain_lo: Option<f64>,
    pub gain_hi: Option<f64>,
    pub confidence: Confidence,
    pub reasons: Vec<String>,
    /// Peak busy workers per pool, before → after (pool id, before, after).
    pub peak_busy: Vec<(String, u32, u32)>,
    // For suggestions:
    pub kind: &'static str,
    pub target: String,
    pub sites: Vec<String>,
    pub verify: String,
}

/// The calibration of the simulator on this trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub observed_ns: u64,
    pub simulated_ns: u64,
    pub error: f64,
}

/// Everything `weft whatif` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIf {
    pub calibration: Calibration,
    pub estimates: Vec<Estimate>,
    pub suggestions: Vec<Estimate>,
    pub critical_path: Vec<PathPart>,
    /// (id, kind, threads, task classes it ran).
    pub pools: Vec<(String, &'static str, u32, Vec<String>)>,
    pub cores: u32,
    /// The capacity the program got where its threads waited for a CPU (`cores`
    /// when they did not), and where the rest went: CPUs the JVM's own unrecorded
    /// threads used, and other processes (docs/whatif.md §Cores).
    pub capacity: Capacity,
    pub ops: usize,
    pub strands: usize,
    pub waits_exact_ns: u64,
    pub waits_anchored_ns: u64,
    /// The part of `waits_exact_ns` matched through the unpark that ended a park.
    pub waits_unpark_ns: u64,
    /// Lock critical sections by how their extent is known: (recorded by
    /// `--lock-detail`, inferred from a hand-off, assumed the lock's median hold).
    pub lock_sections: (u64, u64, u64),
    /// A `synchronized` monitor is on the recorded critical path and its critical
    /// sections were inferred (no `--lock-detail`): uncontended and spun acquisitions
    /// are unseen, so lock estimates are low (a program's lock made real: ×1.38
    /// estimated without, ×1.65 with, ×1.66 measured; session 15). Record again
    /// with `--lock-detail` for them.
    pub lock_detail_advised: bool,
    /// Recorded with `--lock-detail`, yet a monitor on the critical path has
    /// inferred sections only: the JDK's, which `--lock-detail` does not record.
    pub jdk_monitors_inferred: bool,
    pub lost_records: u64,
    /// Share of the recorded critical path that is anchored delay (unexplained waits).
    pub critical_path_anchored_share: f64,
    /// The recorded run, its replay and the run after the first given edit (else the
    /// top suggestion), to draw side by side.
    pub schedules: Vec<crate::schedule::Schedule>,
}

/// [`WhatIf::capacity`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capacity {
    pub cores: f64,
    pub jvm_threads: f64,
    pub other_processes: f64,
}

/// [`WhatIf::lock_detail_advised`]: no section was recorded, and a monitor whose
/// sections were inferred is on the recorded critical path. (A trace recorded with
/// `--lock-detail` whose critical path has only such monitors has only the JDK's:
/// [`WhatIf::jdk_monitors_inferred`].)
fn lock_detail_advised(locks: &[crate::graph::Lock], path: &[PathPart]) -> bool {
    locks.iter().all(|l| l.holds_recorded == 0)
        && path.iter().any(|p| {
            p.kind == PathKind::Lock
                && locks
                    .iter()
                    .any(|l| l.id == p.target && l.monitor && l.holds_chained + l.holds_assumed > 0)
        })
}

/// Sensitivity variants (WHATIF.md §6.3): join policy, lock grant order, steal seed.
const VARIANTS: [SimParams; 6] = [
    SimParams {
        fj_help: true,
        lock_fifo: true,
        seed: 1,
        latency_scale: 1.0,
        idle_machine: false,
    },
    SimParams {
        fj_help: false,
        lock_fifo: true,
        seed: 1,
        latency_scale: 1.0,
        idle_machine: false,
    },
    SimParams {
        fj_help: true,
        lock_fifo: false,
        seed: 2,
        latency_scale: 1.0,
        idle_machine: false,
    },
    SimParams {
        fj_help: true,
        lock_fifo: true,
        seed: 3,
        latency_scale: 0.5,
        idle_machine: false,
    },
    SimParams {
        fj_help: true,
        lock_fifo: true,
        seed: 1,
        latency_scale: 2.0,
        idle_machine: false,
    },
    SimParams {
        fj_help: true,
        lock_fifo: true,
        seed: 1,
        latency_scale: 1.0,
        idle_machine: true,
    },
];

/// Baseline makespans per sensitivity variant (computed once per graph).
pub struct Baseline {
    pub makespans: Vec<u64>,
    pub peak_busy: Vec<u32>,
    pub calibration: Calibration,
    pub anchored_share: f64,
}

impl Baseline {
    pub fn of(g: &ExecGraph, path: &[PathPart]) -> Baseline {
        let id = Overlay::identity(g);
        let runs: Vec<_> = VARIANTS.iter().map(|p| simulate(g, &id, *p)).collect();
        let sim = if runs[0].deadlock {
            0
        } else {
            runs[0].makespan_ns
        };
        let obs = g.observed_ns.max(1);
        let total: u64 = path.iter().map(|p| p.ns).sum();
        let anchored: u64 = path
            .iter()
            .filter(|p| p.kind == PathKind::Delay && p.target != "start")
            .map(|p| p.ns)
            .sum();
        Baseline {
            // A baseline that cannot finish in the model is no baseline (0: no estimate).
            makespans: runs
                .iter()
                .map(|r| if r.deadlock { 0 } else { r.makespan_ns })
                .collect(),
            peak_busy: runs[0].peak_busy.clone(),
            calibration: Calibration {
                observed_ns: g.observed_ns,
                simulated_ns: sim,
                error: (sim as f64 - obs as f64).abs() / obs as f64,
            },
            anchored_share: if total > 0 {
                anchored as f64 / total as f64
            } else {
                0.0
            },
        }
    }
}

/// Spin-waiting in this share of the program's CPU samples makes an estimate medium,
/// in this share low (`ExecGraph::spin_share`).
const SPIN_MEDIUM_SHARE: f64 = 0.05;
const SPIN_LOW_SHARE: f64 = 0.25;

/// Estimates one edit, or several together.
pub fn estimate(g: &ExecGraph, base: &Baseline, edits: &[Edit], label: &str) -> Estimate {
    let mut e = Estimate {
        edit: label.to_string(),
        estimated_ns: None,
        gain: None,
        gain_lo: None,
        gain_hi: None,
        confidence: Confidence::None,
        reasons: Vec::new(),
        peak_busy: Vec::new(),
        kind: edits.first().map_or("combination", |x| kind_name(&x.kind)),
        target: String::new(),
        sites: Vec::new(),
        verify: String::new(),
    };
    let Some(first) = edits.first() else {
        e.reasons.push("no edit".into());
        return e;
    };
    let (graph, ov) = match first.apply_all(g, edits) {
        Ok(x) => x,
        Err(msg) => {
            e.reasons.push(msg);
            return e;
        }
    };
    if base.makespans.contains(&0) {
        e.reasons.push(
            "the recorded run cannot be simulated (no task or thread activity, or its model cannot finish: a wait whose waker it lost, a lock cycle): no estimate"
                .into(),
        );
        return e;
    }
    let mut gains = Vec::new();
    let mut first_run = None;
    for (k, p) in VARIANTS.iter().enumerate() {
        let r = simulate(&graph, &ov, *p);
        let r = crate::sim::with_jvm_work(&graph, &ov, *p, base.makespans[k], r);
        if r.deadlock || r.makespan_ns == 0 {
            e.reasons.push(
                "the edited run cannot finish in the model (a pool starved by tasks waiting for tasks of the same pool, or a lock cycle): no estimate"
                    .into(),
            );
            return e;
        }
        gains.push(base.makespans[k] as f64 / r.makespan_ns as f64);
        if k == 0 {
            first_run = Some(r);
        }
    }
    let Some(r) = first_run else { return e };
    let gain = gains[0];
    let lo = gains.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = gains.iter().cloned().fold(0.0f64, f64::max);
    // Displayed times: the recorded time over the gain (the simulator's bias cancels).
    e.estimated_ns = Some((g.observed_ns as f64 / gain).round() as u64);
    e.gain = Some(gain);
    e.gain_lo = Some(lo);
    e.gain_hi = Some(hi);
    for (i, p) in g.pools.iter().enumerate() {
        e.peak_busy.push((
            p.id.clone(),
            base.peak_busy.get(i).copied().unwrap_or(0),
            r.peak_busy.get(i).copied().unwrap_or(0),
        ));
    }
    // Confidence (WHATIF.md §6.3, adapted: docs/whatif.md §Confidence).
    let e0 = base.calibration.error;
    let width = (hi - lo) / gain;
    let mut low = false;
    let mut medium = false;
    // A measure above `low_above` makes the estimate low, above `medium_above` medium.
    let mut grade = |x: f64, medium_above: f64, low_above: f64, reason: String| {
        if x > low_above {
            low = true;
        } else if x > medium_above {
            medium = true;
        } else {
            return;
        }
        e.reasons.push(reason);
    };
    grade(
        e0,
        0.05,
        0.10,
        format!(
            "the simulated baseline is {:.0}% off the recorded time",
            e0 * 100.0
        ),
    );
    let share = base.anchored_share;
    grade(
        share,
        0.05,
        0.20,
        format!(
            "wait ends not matched ({:.0}% of the critical path)",
            share * 100.0
        ),
    );
    grade(
        width,
        0.10,
        0.25,
        "the model's choices (join policy, lock grant order, steal order, wake-up latency, machine load) change the answer".into(),
    );
    // Busy-waiting threads: their spinning is compute in the graph, kept under an
    // edit, while the change may shorten what they wait for (and so the spin).
    grade(
        g.spin_share,
        SPIN_MEDIUM_SHARE,
        SPIN_LOW_SHARE,
        format!(
            "threads spin-wait: {:.0}% of the program's CPU samples are in {}, waiting the model counts as work",
            g.spin_share * 100.0,
            g.spin_frame.as_deref().map_or("spin loops".to_string(), |f| format!("`{f}`"))
        ),
    );
    if g.cpu_share > 0.0 && g.cpu_share < 0.9 {
        medium = true;
        // Where the JVM's threads alone cut the capacity, their CPU is fixed work
        // beside the program's (`sim::with_jvm_work`), not a kept share.
        let (by, kept) = if g.cores_jvm_threads > g.cores_other_processes {
            (
                format!(
                    "the JVM's own threads (JIT compilers, GC) used {:.1} of the {} CPUs where the program's threads waited for one",
                    g.cores_jvm_threads, g.cores
                ),
                if crate::sim::jvm_threads_alone(g) {
                    "the estimate keeps their CPU time as work beside the program's"
                } else {
                    "the estimate keeps that capacity"
                },
            )
        } else {
            (
                "the machine was loaded".to_string(),
                "the estimate keeps that capacity",
            )
        };
        e.reasons.push(format!(
            "{by}: the program's threads got {:.0}% of the CPU they asked for; {kept}, the range's other end assumes all cores",
            g.cpu_share * 100.0
        ));
    }
    if g.lost_records > 0 {
        medium = true;
        e.reasons
            .push(format!("{} records were lost", g.lost_records));
    }
    for x in edits {
        match &x.kind {
            EditKind::FjRefine(..) => {
                low = true;
                e.reasons
                    .push("the finer fork-join tree is synthesised, not recorded".into());
            }
            EditKind::LockRemove(l) | EditKind::LockShorten(l, _) | EditKind::LockSplit(l, _) => {
                medium = true;
                let named = g.locks.iter().filter(|k| k.id == *l || k.class == *l);
                if named.clone().any(|k| k.read_write) {
                    low = true;
                    e.reasons.push(
                        "a read-write or stamped lock: its readers' holds are not recorded (a reader blocked behind a writer is kept as the delay it was; a writer's wait for readers is inferred as for an exclusive lock)"
                            .into(),
                    );
                }
                if g.holds_cut_at_next_block {
                    low = true;
                    e.reasons.push(
                        "inferred holds cut at each thread's next contended acquisition of another lock (as inferred they nested crosswise and the replay deadlocked)"
                            .into(),
                    );
                }
                if named.clone().any(|k| k.holds_recorded == 0) {
                    e.reasons.push(
                        "uncontended holds not recorded (critical sections are inferred from hand-offs; `weft record --lock-detail` records them)"
                            .into(),
                    );
                } else {
                    e.reasons.push(
                        "critical sections recorded (--lock-detail); the grant order is simulated (FIFO, barging in the range)"
                            .into(),
                    );
                }
                if matches!(x.kind, EditKind::LockSplit(..)) {
                    e.reasons.push("which stripe each acquisition takes is unknowable; stripes are drawn by a hash".into());
                }
            }
            EditKind::Cores(n) if *n > g.cores => {
                low = true;
                e.reasons.push(format!(
                    "extrapolated beyond the {} recorded cores",
                    g.cores
                ));
            }
            EditKind::Cores(_) | EditKind::Pool(..) => {
                medium = true;
                e.reasons.push(
                    "caches, memory bandwidth and a decomposition that depends on the core count are not modelled"
                        .into(),
                );
            }
            _ => {}
        }
    }
    e.confidence = if low {
        Confidence::Low
    } else if medium {
        Confidence::Medium
    } else {
        Confidence::High
    };
    e
}

fn kind_name(k: &EditKind) -> &'static str {
    match k {
        EditKind::LockRemove(_) => "lock_remove",
        EditKind::LockShorten(..) => "lock_shorten",
        EditKind::LockSplit(..) => "lock_split",
        EditKind::Inline(_) => "inline",
        EditKind::FjCoarsen(..) => "fj_coarsen",
        EditKind::FjRefine(..) => "fj_refine",
        EditKind::Pool(..) => "pool_size",
        EditKind::Cores(_) => "cores",
        EditKind::Faster(..) => "speedup",
    }
}

/// The largest pool size the search suggests for tasks that mostly block.
const MAX_POOL_SUGGESTED: u64 = 256;

/// The candidates weft tries without `--edit`: every contended lock, every task
/// class submitted to an executor pool and waited for, the fork-join classes'
/// cutoffs, every pool's size (doubled, and for a pool whose tasks mostly block, as
/// many threads as keep the cores busy), the core count, and the top task classes
/// faster.
pub fn candidates(g: &ExecGraph) -> Vec<(Edit, String, Vec<String>)> {
    let mut out: Vec<(String, String, Vec<String>)> = Vec::new();
    for l in g.locks.iter().take(5) {
        out.push((format!("lock:{}:remove", l.id), l.id.clone(), Vec::new()));
        out.push((
            format!("lock:{}:shorten=50%", l.id),
            l.id.clone(),
            Vec::new(),
        ));
        // A semaphore in 2 stripes of its permits: twice the permits, what its lock
        // finding advises when the resource allows (removing it rarely does).
        if l.semaphore {
            out.push((format!("lock:{}:split=2", l.id), l.id.clone(), Vec::new()));
        }
    }
    // Executor classes whose tasks were awaited.
    let mut awaited = vec![false; g.strands.len()];
    for op in &g.ops {
        if let Op::Await(s) = op {
            awaited[*s as usize] = true;
        }
    }
    let mut classes: Vec<(u32, bool, u64)> = Vec::new(); // (class, fj, compute)
                                                         // Per pool: its tasks' compute, their stalls (blocking, for the pool size below)
                                                         // and how many tasks.
    let mut per_pool = vec![(0u64, 0u64, 0u64); g.pools.len()];
    for (i, s) in g.strands.iter().enumerate() {
        let Runs::Pool(p) = s.runs else { continue };
        let fj = g.pools[p as usize].forkjoin;
        let w: u64 = g
            .ops_of(i as u32)
            .iter()
            .map(|o| if let Op::Compute(n) = o { *n } else { 0 })
            .sum();
        if let Some(pp) = per_pool.get_mut(p as usize) {
            let (a, b) = (s.first, s.first + s.len);
            let from = g.compute_stall_ns.partition_point(|x| x.0 < a);
            pp.0 += w;
            pp.1 += g.compute_stall_ns[from..]
                .iter()
                .take_while(|x| x.0 < b)
                .map(|x| x.1)
                .sum::<u64>();
            pp.2 += 1;
        }
        match classes.iter_mut().find(|c| c.0 == s.class && c.1 == fj) {
            Some(c) => c.2 += w,
            None => classes.push((s.class, fj, w)),
        }
        if !fj
            && awaited[i]
            && !out
                .iter()
                .any(|o| o.0 == format!("inline:{}", g.classes[s.class as usize]))
        {
            let c = &g.classes[s.class as usize];
            let sites = s
                .site
                .and_then(|x| g.site_frame(x))
                .map(|x| vec![x.to_string()])
                .unwrap_or_default();
            out.push((format!("inline:{c}"), c.clone(), sites));
        }
    }
    let h = heights(g);
    for &(c, fj, _) in &classes {
        if fj {
            let name = &g.classes[c as usize];
            let max_h = (0..g.strands.len())
                .filter(|&i| g.strands[i].class == c)
                .map(|i| h[i])
                .max()
                .unwrap_or(0);
            if max_h >= 2 {
                out.push((
                    format!("fj-coarsen:{name}:levels=2"),
                    name.clone(),
                    Vec::new(),
                ));
            }
            out.push((
                format!("fj-refine:{name}:levels=1"),
                name.clone(),
                Vec::new(),
            ));
        }
    }
    for (p, &(compute, blocked, tasks)) in g.pools.iter().zip(&per_pool) {
        out.push((
            format!("pool:{}={}", p.id, p.threads * 2),
            p.id.clone(),
            Vec::new(),
        ));
        // A pool whose tasks mostly block (sleep, I/O: their ops' stalls) keeps the
        // cores busy only with more threads than cores: cores × (1 + blocked /
        // compute), at most one per task (and 256). Doubling a pool of 2 threads
        // whose tasks sleep 10 ms per 0.2 ms of CPU found ×1.9 of the ×9 in reach.
        if !p.forkjoin && compute > 0 && blocked > compute {
            let want = (g.cores as f64 * (1.0 + blocked as f64 / compute as f64)).ceil() as u64;
            let n = want.min(tasks).min(MAX_POOL_SUGGESTED) as u32;
            if n > p.threads * 2 {
                out.push((format!("pool:{}={n}", p.id), p.id.clone(), Vec::new()));
            }
        }
    }
    out.push((format!("cores:{}", g.cores * 2), "cores".into(), Vec::new()));
    // Application threads' programs are task classes too (a pipeline's stages, Coz's
    // classic): they compete for "made faster" with the pools' classes. `main` too: a
    // producer feeding consumers is often the main thread (its critical path "compute
    // main 100%" had no suggestion).
    for (i, s) in g.strands.iter().enumerate() {
        if s.runs != Runs::Thread {
            continue;
        }
        let w: u64 = g
            .ops_of(i as u32)
            .iter()
            .map(|o| if let Op::Compute(n) = o { *n } else { 0 })
            .sum();
        match classes.iter_mut().find(|c| c.0 == s.class) {
            Some(c) => c.2 += w,
            None => classes.push((s.class, false, w)),
        }
    }
    classes.sort_by_key(|c| std::cmp::Reverse(c.2));
    for &(c, _, _) in classes.iter().take(3) {
        let name = &g.classes[c as usize];
        out.push((format!("faster:{name}:20%"), name.clone(), Vec::new()));
    }
    out.into_iter()
        .filter_map(|(t, target, sites)| Edit::parse(&t).ok().map(|e| (e, target, sites)))
        .collect()
}

/// The whole what-if section: calibration, the given edits (each alone, and
/// together with `combine`), the ranked suggestions when no edit is given.
pub fn whatif(g: &ExecGraph, edits: &[Edit], combine: bool, search: bool) -> WhatIf {
    let path = critical_path(g);
    let base = Baseline::of(g, &path);
    let mut estimates: Vec<Estimate> = edits
        .iter()
        .map(|e| estimate(g, &base, std::slice::from_ref(e), &e.text))
        .collect();
    if combine && edits.len() > 1 {
        let label = edits
            .iter()
            .map(|e| e.text.as_str())
            .collect::<Vec<_>>()
            .join(" + ");
        let mut c = estimate(g, &base, edits, &label);
        c.kind = "combination";
        estimates.push(c);
    }
    let mut suggestions = Vec::new();
    let mut searched: Vec<Edit> = Vec::new();
    if search {
        for (e, target, sites) in candidates(g) {
            let mut s = estimate(g, &base, std::slice::from_ref(&e), &e.text);
            if s.gain.is_none() {
                continue;
            }
            s.target = target;
            s.sites = sites;
            s.verify = format!(
                "make the change, record again with `weft record -o after.weft -- …`, then `weft compare THIS.weft after.weft --edit '{}'`",
                e.text
            );
            suggestions.push(s);
            searched.push(e);
        }
        // Medium and high confidence first (a low one is a lead, not advice), then by
        // the low end of the range.
        suggestions.sort_by(|a, b| {
            let k = |x: &Estimate| x.gain_lo.unwrap_or(0.0);
            let trusted = |x: &Estimate| x.confidence >= Confidence::Medium;
            trusted(b)
                .cmp(&trusted(a))
                .then(k(b).total_cmp(&k(a)))
                .then(b.confidence.cmp(&a.confidence))
        });
        suggestions.retain(|s| s.gain_hi.unwrap_or(0.0) >= 1.02);
        suggestions.truncate(10);
    }
    let mut pools = Vec::new();
    for (i, p) in g.pools.iter().enumerate() {
        let mut classes: Vec<String> = g
            .strands
            .iter()
            .filter(|s| s.runs == Runs::Pool(i as u32))
            .map(|s| g.classes[s.class as usize].clone())
            .collect();
        classes.sort();
        classes.dedup();
        pools.push((
            p.id.clone(),
            if p.forkjoin { "forkjoin" } else { "executor" },
            p.threads,
            classes,
        ));
    }
    let shown = edits.first().or_else(|| {
        let top = suggestions.first()?;
        searched.iter().find(|e| e.text == top.edit)
    });
    let schedules = crate::schedule::schedules(g, shown);
    let lock_sections = g.locks.iter().fold((0, 0, 0), |a, l| {
        (
            a.0 + l.holds_recorded,
            a.1 + l.holds_chained,
            a.2 + l.holds_assumed,
        )
    });
    let inferred_on_path = lock_detail_advised(&g.locks, &path);
    let lock_detail_advised = inferred_on_path && !g.lock_detail_recorded;
    let jdk_monitors_inferred = inferred_on_path && g.lock_detail_recorded;
    WhatIf {
        schedules,
        calibration: base.calibration,
        estimates,
        suggestions,
        critical_path: path,
        pools,
        cores: g.cores,
        capacity: Capacity {
            cores: if g.cores_effective > 0.0 {
                g.cores_effective
            } else {
                g.cores as f64
            },
            jvm_threads: g.cores_jvm_threads,
            other_processes: g.cores_other_processes,
        },
        ops: g.ops.len(),
        strands: g.strands.len(),
        waits_exact_ns: g.waits.exact_ns,
        waits_anchored_ns: g.waits.anchored_ns,
        waits_unpark_ns: g.waits.unpark_ns,
        lock_sections,
        lock_detail_advised,
        jdk_monitors_inferred,
        lost_records: g.lost_records,
        critical_path_anchored_share: base.anchored_share,
    }
}

#[cfg(test)]
mod lock_detail_tests {
    use super::*;
    use crate::graph::Lock;

    fn lock(id: &str, monitor: bool, chained: u64, recorded: u64) -> Lock {
        Lock {
            id: id.into(),
            class: "C".into(),
            holds_chained: chained,
            holds_assumed: 0,
            holds_recorded: recorded,
            handoff_ns: 0,
            monitor,
            read_write: false,
            semaphore: false,
            permits: 1,
        }
    }

    fn on_path(target: &str) -> Vec<PathPart> {
        vec![PathPart {
            kind: PathKind::Lock,
            target: target.into(),
            ns: 10,
        }]
    }

    #[test]
    fn lock_detail_is_advised_for_an_inferred_monitor_on_the_critical_path_only() {
        assert!(lock_detail_advised(
            &[lock("M@1", true, 5, 0)],
            &on_path("M@1")
        ));
        // Recorded with --lock-detail, a j.u.c. lock (not what it records), off the path.
        assert!(!lock_detail_advised(
            &[lock("M@1", true, 0, 5)],
            &on_path("M@1")
        ));
        assert!(!lock_detail_advised(
            &[lock("R@1", false, 5, 0)],
            &on_path("R@1")
        ));
        assert!(!lock_detail_advised(
            &[lock("M@1", true, 5, 0)],
            &on_path("M@2")
        ));
        assert!(!lock_detail_advised(&[lock("M@1", true, 5, 0)], &[]));
    }
}
