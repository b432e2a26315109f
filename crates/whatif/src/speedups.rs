//! The possible-speedup lines simulated (issue 18, docs/speedups.md §Simulated
//! gains): each limitation of the possible-speedups analysis removed in the
//! execution graph, and the graph simulated (mode S) before and after.
//!
//! The closed form (eq. 11) holds every other efficiency fixed; the simulation
//! follows the graph's dependencies instead (who waits for whom, pools, locks),
//! so where the two disagree the structure of the run matters. Edits:
//! - `serial`: CPU work done in serial time (outside the analysis' parallel
//!   sections) split into as many concurrent pieces as the parallel sections'
//!   team has threads;
//! - `imbalance`: in each parallel section, each team thread's CPU work set to
//!   the team's mean (the total kept), and a team thread's anchored wait that
//!   began inside the section cut by its part in the section (waiting for a
//!   busier teammate, which a balanced section does not do);
//! - `locks`: every lock's acquire and release a no-op, and the parallel work
//!   without the locks' hand-off share (`H_p/A_p`, docs/speedups.md);
//! - `overhead` (with a baseline run): serial work scaled by E_SO, parallel work
//!   by E_PO;
//! - `oversubscription`: a core per team thread (a process that other processes
//!   held below its CPUs keeps the capacity it got, as in the closed form);
//! - `gc`: not simulated (the graph holds no GC pauses).

use std::borrow::Cow;
use std::collections::HashMap;

use weft_analysis::speedups::{Limitation, Speedups, Status, TEAM_MIN_SHARE};

use crate::graph::{recorded, ExecGraph, Op, Runs, Strand, StrandId};
use crate::sim::{simulate, LockMode, Overlay, SimParams};

/// Serial CPU work below this in one op is left serial (splitting it would only
/// add ops).
const MIN_SPLIT_NS: u64 = 20_000;

/// The most pieces one serial op is split into. The team's thread count is the
/// model (the pieces then take the cores' share such a team would against the
/// other strands), but a run of thousands of short-lived threads, each in some
/// team, made millions of strands of it; 64 pieces take within a few percent of
/// the share of any larger team.
const MAX_SPLIT_WAYS: u32 = 64;

/// A parallel section whose team work is at least this share executor tasks
/// is balanced task by task ([`Places::balanced`]).
const POOL_TASKS_SHARE: f64 = 0.5;

/// Strands the serial split may add (each a simulator context: ~0.3 KB).
const MAX_SERIAL_PIECES: usize = 1_000_000;

/// A simulated baseline further than this from the recorded time: the graph
/// misses what shaped the run (unrecorded lock holds, unmatched waits), and a
/// gain simulated on it would not be about this run; none is given.
pub const MAX_CALIBRATION_ERROR: f64 = 0.25;

/// Fills `Line::simulated_gain` of every line the graph can simulate; when none
/// can be, a note says why.
pub fn fill(sp: &mut Speedups, g: &ExecGraph) {
    let gains = simulated_gains(g, sp);
    let mut why: Vec<String> = Vec::new();
    for (l, r) in gains {
        match r {
            Ok(gain) => {
                if let Some(line) = sp.lines.iter_mut().find(|x| x.remove == l) {
                    // Removing a limitation never makes the run slower (at worst the
                    // program keeps it); an edited graph that simulates slower is the
                    // edit's artefact (a serial part split over a team of server
                    // threads that mostly wait read "sim ×0.44").
                    line.simulated_gain = Some(gain.max(1.0));
                }
            }
            Err(msg) => {
                if !why.contains(&msg) {
                    why.push(msg);
                }
            }
        }
    }
    if sp.status == Status::Ok && sp.lines.iter().all(|l| l.simulated_gain.is_none()) {
        sp.notes
            .push(format!("simulated gains: none ({})", why.join("; ")));
    }
}

/// Per line, the gain of simulating the graph with that limitation removed
/// (simulated time before ÷ after), or why there is none.
pub fn simulated_gains(g: &ExecGraph, sp: &Speedups) -> Vec<(Limitation, Result<f64, String>)> {
    let not = |why: &str| {
        Limitation::ALL
            .iter()
            .map(|&l| (l, Err(why.to_string())))
            .collect()
    };
    if sp.status != Status::Ok {
        return not("no parallel section to simulate");
    }
    if g.strands.is_empty() {
        return not("no thread or task activity in the execution graph");
    }
    if sp.sections_total > sp.sections.len() {
        return not("too many parallel sections to place on the graph");
    }
    let base = simulate(g, &Overlay::identity(g), SimParams::default());
    // A recorded run the simulator cannot finish (some strand never ends, as
    // `weft whatif`'s calibration accepts) is still compared like for like: an
    // edit is refused only when it deadlocks where the recorded run did not.
    if base.makespan_ns == 0 {
        return not("the simulator cannot run the recorded run");
    }
    let error =
        (base.makespan_ns as f64 - g.observed_ns as f64).abs() / g.observed_ns.max(1) as f64;
    if error > MAX_CALIBRATION_ERROR {
        return not(&format!(
            "the simulator does not reproduce this run: simulated {} vs recorded {}, more than {:.0}% off",
            weft_analysis::human_ns(base.makespan_ns),
            weft_analysis::human_ns(g.observed_ns),
            MAX_CALIBRATION_ERROR * 100.0
        ));
    }
    let places = Places::new(g, sp);
    Limitation::ALL
        .iter()
        .map(|&l| {
            let edited = match l {
                Limitation::Serial => places.split_serial(g, sp.threads.min(MAX_SPLIT_WAYS)),
                Limitation::Imbalance => Ok((Cow::Owned(places.balanced(g)), SimParams::default())),
                // The locks' own hand-off work (H_p) goes with them, as in the
                // closed form: the parallel work × (1 − H_p/A_p).
                Limitation::Locks => match sp.quantities.handoff_share() {
                    h if h > 0.0 => Ok((
                        Cow::Owned(places.scaled(g, 1.0, 1.0 - h)),
                        SimParams::default(),
                    )),
                    _ => Ok((Cow::Borrowed(g), SimParams::default())),
                },
                Limitation::Overhead => match (
                    sp.efficiencies.serial_overhead,
                    sp.efficiencies.parallel_overhead,
                ) {
                    (Some(so), Some(po)) if so > 0.0 && po > 0.0 => {
                        Ok((Cow::Owned(places.scaled(g, so, po)), SimParams::default()))
                    }
                    _ => Err("needs a baseline run".to_string()),
                },
                // The simulator keeps a loaded machine's capacity (docs/whatif.md
                // §Cores), as the closed form does: more cores help only a
                // process that got the CPUs it had.
                Limitation::Oversubscription => Ok((Cow::Borrowed(g), SimParams::default())),
                Limitation::Gc => Err("the execution graph has no GC pauses".to_string()),
            };
            let gain = edited.and_then(|(graph, params)| {
                let mut ov = Overlay::identity(&graph);
                match l {
                    Limitation::Locks => ov.lock_mode.fill(LockMode::Removed),
                    Limitation::Oversubscription => {
                        ov.cores = Some(sp.threads.max(graph.cores) as f64)
                    }
                    _ => {}
                }
                let r = simulate(&graph, &ov, params);
                if (r.deadlock && !base.deadlock) || r.makespan_ns == 0 {
                    return Err("the edited run cannot finish in the model (deadlock)".to_string());
                }
                Ok(base.makespan_ns as f64 / r.makespan_ns as f64)
            });
            (l, gain)
        })
        .collect()
}

/// Where each op of the graph lies relative to the analysis' parallel sections.
struct Places {
    /// Parallel sections in graph time, sorted and disjoint.
    sections: Vec<(u64, u64)>,
    /// Wall interval of each op (graph time).
    span: Vec<(u64, u64)>,
    /// Strand of each op.
    strand_of: Vec<StrandId>,
}

impl Places {
    fn new(g: &ExecGraph, sp: &Speedups) -> Places {
        let mut sections: Vec<(u64, u64)> = sp
            .sections
            .iter()
            .map(|s| {
                (
                    s.start_ns.saturating_sub(g.origin_ns),
                    s.end_ns.saturating_sub(g.origin_ns),
                )
            })
            .filter(|(s, e)| e > s)
            .collect();
        sections.sort_unstable();
        let mut span = vec![(0, 0); g.ops.len()];
        let mut strand_of = vec![0; g.ops.len()];
        for (si, st) in g.strands.iter().enumerate() {
            let (first, last) = (st.first as usize, (st.first + st.len) as usize);
            for i in first..last {
                let b = g.op_begin.get(i).copied().unwrap_or(st.observed_begin_ns);
                let e = match g.ops[i] {
                    Op::Delay(d) => b + d,
                    _ if i + 1 < last => g.op_begin.get(i + 1).copied().unwrap_or(b),
                    _ => st.observed_end_ns,
                };
                span[i] = (b, e.max(b));
                strand_of[i] = si as StrandId;
            }
        }
        Places {
            sections,
            span,
            strand_of,
        }
    }

    /// The parts of `[b, e)` inside parallel sections, as (section, ns); a point
    /// inside a section counts as one ns there.
    fn pieces(&self, b: u64, e: u64) -> Vec<(usize, u64)> {
        let mut out = Vec::new();
        let mut j = self.sections.partition_point(|s| s.1 <= b);
        while let Some(&(s, t)) = self.sections.get(j) {
            if s > e || (s == e && b != e) {
                break;
            }
            let ov = e.min(t).saturating_sub(b.max(s));
            if ov > 0 {
                out.push((j, ov));
            } else if b == e && s <= b && b < t {
                out.push((j, 1));
            }
            j += 1;
        }
        out
    }

    /// A compute op's CPU split over its wall: (section or None for serial time, ns of CPU).
    fn split(&self, i: usize, n: u64) -> Vec<(Option<usize>, f64)> {
        let (b, e) = self.span[i];
        let len = (e - b).max(1) as f64;
        let pieces = self.pieces(b, e);
        let inside: u64 = pieces.iter().map(|p| p.1).sum();
        let mut out: Vec<(Option<usize>, f64)> = pieces
            .iter()
            .map(|&(j, ov)| (Some(j), n as f64 * ov.min(e - b).max(1) as f64 / len))
            .collect();
        if b == e {
            // A zero-wall op is wholly where its instant is.
            return if out.is_empty() {
                vec![(None, n as f64)]
            } else {
                vec![(out[0].0, n as f64)]
            };
        }
        let serial = (e - b).saturating_sub(inside);
        if serial > 0 {
            out.push((None, n as f64 * serial as f64 / len));
        }
        out
    }

    /// A copy of the graph with every compute op's CPU rescaled piece by piece:
    /// `f(section or None, strand)`; `delay(op, ns)` gives each delay's new length.
    fn rescaled(
        &self,
        g: &ExecGraph,
        f: impl Fn(Option<usize>, StrandId) -> f64,
        delay: impl Fn(usize, u64) -> u64,
    ) -> ExecGraph {
        let mut out = g.clone();
        for (i, op) in out.ops.iter_mut().enumerate() {
            match *op {
                Op::Compute(n) if n > 0 => {
                    let strand = self.strand_of[i];
                    let v: f64 = self
                        .split(i, n)
                        .into_iter()
                        .map(|(j, c)| c * f(j, strand))
                        .sum();
                    *op = Op::Compute(v.round().max(0.0) as u64);
                }
                Op::Delay(d) => *op = Op::Delay(delay(i, d)),
                _ => {}
            }
        }
        out
    }

    /// Overhead removed: serial work × E_SO, parallel work × E_PO.
    fn scaled(&self, g: &ExecGraph, so: f64, po: f64) -> ExecGraph {
        self.rescaled(g, |j, _| if j.is_some() { po } else { so }, |_, d| d)
    }

    /// Each parallel section balanced. Where the team's work there is mostly
    /// executor tasks (each wholly inside the section), every such task's work is
    /// set to their mean: a pool hands tasks to whichever worker is free, so
    /// evening out the workers' shares would be undone by the replay, while the
    /// imbalance is in the tasks (`invokeAll` batches whose long job comes last
    /// replayed ×1.12 against ×1.43 by the closed form). Elsewhere every team
    /// thread's work there is set to the team's mean, and a team thread's wait
    /// that began in the section loses its part in the section (in a balanced
    /// section nobody waits for a busier teammate).
    fn balanced(&self, g: &ExecGraph) -> ExecGraph {
        let mut work: HashMap<(usize, u32), f64> = HashMap::new();
        // An executor task's work, and its one section (None: it crosses a
        // section's edge or runs partly in serial time).
        let mut tasks: HashMap<StrandId, (Option<usize>, f64)> = HashMap::new();
        for (i, op) in g.ops.iter().enumerate() {
            if let Op::Compute(n) = *op {
                let strand = self.strand_of[i];
                let st = &g.strands[strand as usize];
                let task = match st.runs {
                    Runs::Pool(p) => g.pools.get(p as usize).is_some_and(|p| !p.forkjoin),
                    Runs::Thread => false,
                };
                for (j, c) in self.split(i, n) {
                    if let Some(j) = j {
                        *work.entry((j, st.thread)).or_default() += c;
                    }
                    if task {
                        let e = tasks.entry(strand).or_insert((j, 0.0));
                        if e.0 != j {
                            e.0 = None;
                        }
                        e.1 += c;
                    }
                }
            }
        }
        let mut by_section: Vec<Vec<(u32, f64)>> = vec![Vec::new(); self.sections.len()];
        for (&(j, t), &w) in &work {
            by_section[j].push((t, w));
        }
        let mut tasks_in: Vec<Vec<(StrandId, f64)>> = vec![Vec::new(); self.sections.len()];
        for (&s, &(j, w)) in &tasks {
            if let Some(j) = j.filter(|_| w > 0.0) {
                tasks_in[j].push((s, w));
            }
        }
        let mut factor: HashMap<(usize, u32), f64> = HashMap::new();
        let mut task_factor: HashMap<StrandId, f64> = HashMap::new();
        for (j, v) in by_section.iter().enumerate() {
            let max = v.iter().map(|x| x.1).fold(0.0, f64::max);
            let team: Vec<&(u32, f64)> = v
                .iter()
                .filter(|x| x.1 > 0.0 && x.1 >= TEAM_MIN_SHARE * max)
                .collect();
            if team.len() < 2 {
                continue;
            }
            let team_work: f64 = team.iter().map(|x| x.1).sum();
            let in_tasks: f64 = tasks_in[j].iter().map(|x| x.1).sum();
            if tasks_in[j].len() >= 2 && in_tasks >= POOL_TASKS_SHARE * team_work {
                let mean = in_tasks / tasks_in[j].len() as f64;
                for &(s, w) in &tasks_in[j] {
                    task_factor.insert(s, mean / w);
                }
                continue;
            }
            let mean = team_work / team.len() as f64;
            for &&(t, w) in &team {
                factor.insert((j, t), mean / w);
            }
        }
        self.rescaled(
            g,
            |j, s| {
                j.and_then(|j| {
                    task_factor
                        .get(&s)
                        .or_else(|| factor.get(&(j, g.strands[s as usize].thread)))
                        .copied()
                })
                .unwrap_or(1.0)
            },
            |i, d| {
                let (b, _) = self.span[i];
                let thread = g.strands[self.strand_of[i] as usize].thread;
                let j = self.sections.partition_point(|s| s.1 <= b);
                match self.sections.get(j) {
                    Some(&(s, e)) if s <= b && factor.contains_key(&(j, thread)) => {
                        d.saturating_sub(e - b)
                    }
                    _ => d,
                }
            },
        )
    }

    /// Serial work split: each compute op's CPU in serial time becomes `k`
    /// concurrent strands (spawned and awaited where the op began), the rest stays.
    fn split_serial<'g>(
        &self,
        g: &'g ExecGraph,
        k: u32,
    ) -> Result<(Cow<'g, ExecGraph>, SimParams), String> {
        let k = k.max(2);
        let mut out = ExecGraph {
            strands: Vec::with_capacity(g.strands.len()),
            ops: Vec::with_capacity(g.ops.len()),
            op_begin: Vec::with_capacity(g.ops.len()),
            ..g.clone()
        };
        out.strands.clear();
        out.ops.clear();
        out.op_begin.clear();
        let class = out.class_index("serial part (split)");
        let mut pieces: Vec<(Strand, u64)> = Vec::new();
        let mut next = g.strands.len() as StrandId;
        // Where each op went (its per-op data follows it: stalls, wake-ups, hand-offs,
        // pinned waits), in op order; none for a compute op split whole into the pieces.
        let mut placed: Vec<(u32, u32)> = Vec::with_capacity(g.ops.len());
        for st in &g.strands {
            let first = out.ops.len() as u32;
            for i in st.first as usize..(st.first + st.len) as usize {
                let b = self.span[i].0;
                let serial = match g.ops[i] {
                    Op::Compute(n) => self
                        .split(i, n)
                        .iter()
                        .filter(|p| p.0.is_none())
                        .map(|p| p.1)
                        .sum::<f64>()
                        .round() as u64,
                    _ => 0,
                };
                let Op::Compute(n) = g.ops[i] else {
                    placed.push((i as u32, out.ops.len() as u32));
                    out.ops.push(g.ops[i]);
                    out.op_begin.push(b);
                    continue;
                };
                if serial < MIN_SPLIT_NS {
                    placed.push((i as u32, out.ops.len() as u32));
                    out.ops.push(g.ops[i]);
                    out.op_begin.push(b);
                    continue;
                }
                if pieces.len() + k as usize > MAX_SERIAL_PIECES {
                    return Err(format!(
                        "the serial part is in too many pieces to simulate (over {MAX_SERIAL_PIECES})"
                    ));
                }
                let ids: Vec<StrandId> = (0..k).map(|x| next + x).collect();
                next += k;
                for &id in &ids {
                    out.ops.push(Op::Spawn(id));
                    out.op_begin.push(b);
                    pieces.push((
                        Strand {
                            class,
                            runs: Runs::Thread,
                            first: 0,
                            len: 0,
                            root_start_ns: None,
                            observed_begin_ns: b,
                            observed_end_ns: self.span[i].1,
                            site: None,
                            thread: st.thread,
                        },
                        serial / k as u64,
                    ));
                }
                for &id in &ids {
                    out.ops.push(Op::Await(id));
                    out.op_begin.push(b);
                }
                if n > serial {
                    placed.push((i as u32, out.ops.len() as u32));
                    out.ops.push(Op::Compute(n - serial));
                    out.op_begin.push(b);
                } else if let Some(stall) = recorded(&g.compute_stall_ns, i as u32) {
                    // Its off-CPU time (a sleep, a read) stays where it was: the thread
                    // is no faster at waiting for having split its work.
                    out.ops.push(Op::Delay(stall));
                    out.op_begin.push(b);
                }
            }
            out.strands.push(Strand {
                first,
                len: out.ops.len() as u32 - first,
                ..st.clone()
            });
        }
        if pieces.is_empty() {
            return Ok((Cow::Borrowed(g), SimParams::default()));
        }
        // The per-op tables by the ops' new places (the map keeps their order). A
        // main thread that slept between its submissions kept none of its sleeps
        // (they followed other ops' indices) and read "serial part sim ×5.10".
        let mut new_index: Vec<Option<u32>> = vec![None; g.ops.len()];
        for (old, new) in placed {
            new_index[old as usize] = Some(new);
        }
        let moved = |v: &[(u32, u64)]| -> Vec<(u32, u64)> {
            v.iter()
                .filter_map(|&(i, x)| Some((new_index.get(i as usize).copied().flatten()?, x)))
                .collect()
        };
        out.compute_stall_ns = moved(&g.compute_stall_ns);
        out.await_wake_ns = moved(&g.await_wake_ns);
        out.acquire_handoff_ns = moved(&g.acquire_handoff_ns);
        out.pinned_waits = g
            .pinned_waits
            .iter()
            .filter_map(|&i| new_index.get(i as usize).copied().flatten())
            .collect();
        for (s, n) in pieces {
            out.push_strand(s, &[Op::Compute(n)]);
        }
        Ok((Cow::Owned(out), SimParams::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_analysis::speedups::{Line, Section};

    fn strand(thread: u32, root: Option<u64>, begin: u64, end: u64) -> Strand {
        Strand {
            class: 0,
            runs: Runs::Thread,
            first: 0,
            len: 0,
            root_start_ns: root,
            observed_begin_ns: begin,
            observed_end_ns: end,
            site: None,
            thread,
        }
    }

    /// Appends a strand whose ops begin at the given times.
    fn push(g: &mut ExecGraph, s: Strand, ops: &[(u64, Op)]) -> StrandId {
        let o: Vec<Op> = ops.iter().map(|x| x.1).collect();
        let id = g.push_strand(s, &o);
        let n = g.op_begin.len();
        for (k, (b, _)) in ops.iter().enumerate() {
            g.op_begin[n - ops.len() + k] = *b;
        }
        id
    }

    fn speedups(sections: &[(u64, u64)], threads: u32) -> Speedups {
        let mut sp = weft_analysis::speedups::compute(&Default::default(), None);
        sp.status = Status::Ok;
        sp.threads = threads;
        sp.sections = sections
            .iter()
            .map(|&(s, e)| Section {
                start_ns: s,
                end_ns: e,
                threads: 2,
                load_balance: 1.0,
                lock_contention: 1.0,
                busiest_ns: e - s,
            })
            .collect();
        sp.sections_total = sp.sections.len();
        sp.lines = Limitation::ALL
            .iter()
            .map(|&l| Line {
                remove: l,
                time_ns: None,
                closed_form_gain: None,
                possible_speedup: None,
                simulated_gain: None,
            })
            .collect();
        sp
    }

    /// The gain of a line, on the graph as if recorded exactly as it simulates.
    fn gain(g: &ExecGraph, sp: &Speedups, l: Limitation) -> Result<f64, String> {
        let mut g = g.clone();
        g.observed_ns = simulate(&g, &Overlay::identity(&g), SimParams::default()).makespan_ns;
        simulated_gains(&g, sp)
            .into_iter()
            .find(|x| x.0 == l)
            .map(|x| x.1)
            .unwrap_or_else(|| Err("missing".into()))
    }

    /// main: 400 serial, then two threads of 300 each (joined): 700 on 2 cores.
    fn prologue() -> ExecGraph {
        prologue_with(400, 0, 300)
    }

    /// main computes `serial`, is off the CPU for `gap` (its compute op's stall, when
    /// not 0), then runs two threads of `parallel` each and joins them.
    fn prologue_with(serial: u64, gap: u64, parallel: u64) -> ExecGraph {
        let mut g = ExecGraph {
            cores: 2,
            classes: vec!["main".into()],
            ..ExecGraph::default()
        };
        let (start, end) = (serial + gap, serial + gap + parallel);
        let a = push(
            &mut g,
            strand(1, None, start, end),
            &[(start, Op::Compute(parallel))],
        );
        let b = push(
            &mut g,
            strand(2, None, start, end),
            &[(start, Op::Compute(parallel))],
        );
        let main = push(
            &mut g,
            strand(0, Some(0), 0, end),
            &[
                (0, Op::Compute(serial)),
                (start, Op::Spawn(a)),
                (start, Op::Spawn(b)),
                (start, Op::Await(a)),
                (start, Op::Await(b)),
            ],
        );
        if gap > 0 {
            g.compute_stall_ns = vec![(g.strands[main as usize].first, gap)];
        }
        g
    }

    #[test]
    fn serial_part_split_over_the_team() {
        // Big enough to be split (MIN_SPLIT_NS).
        let g = prologue_with(400_000, 0, 300_000);
        let sp = speedups(&[(400_000, 700_000)], 2);
        // 400 µs serial on 2 threads: 200 + 300 = 500 against 700.
        let gain = gain(&g, &sp, Limitation::Serial).unwrap();
        assert!((gain - 700.0 / 500.0).abs() < 1e-6, "{gain}");
        // A team of thousands of threads (a thread per task) splits it at most
        // MAX_SPLIT_WAYS ways: on 2 cores the same time.
        let many = speedups(&[(400_000, 700_000)], 10_000);
        let gain_many = self::gain(&g, &many, Limitation::Serial).unwrap();
        assert!((gain_many - gain).abs() < 1e-6, "{gain_many}");
        // No lock, a core per thread already: nothing to gain.
        assert_eq!(self::gain(&g, &sp, Limitation::Locks), Ok(1.0));
        assert_eq!(self::gain(&g, &sp, Limitation::Oversubscription), Ok(1.0));
        assert!(self::gain(&g, &sp, Limitation::Gc).is_err());
        assert!(self::gain(&g, &sp, Limitation::Overhead).is_err());
    }

    /// main computes 400 µs, then sleeps 2 ms (its compute op's stall: off the CPU,
    /// nothing recorded), then runs two threads of 300 µs: 2,700 µs. Its 400 µs split
    /// over 2 threads keeps the sleep: 200 + 2,000 + 300 = 2,500 µs, ×1.08. The stall
    /// left at its old op index (before session 26) fell off: ×5.4.
    #[test]
    fn the_serial_split_keeps_each_op_s_stall() {
        let g = prologue_with(400_000, 2_000_000, 300_000);
        assert_eq!(
            simulate(&g, &Overlay::identity(&g), SimParams::default()).makespan_ns,
            2_700_000
        );
        let sp = speedups(&[(2_400_000, 2_700_000)], 2);
        let gain = gain(&g, &sp, Limitation::Serial).unwrap();
        assert!((gain - 2_700.0 / 2_500.0).abs() < 1e-6, "{gain}");
    }

    #[test]
    fn imbalance_balanced_per_section_and_meeting_waits_cut() {
        // Two threads meet at a barrier (anchored waits) each round; the heavy
        // share rotates: round 1 thread 1 does 300 and thread 2 100 (waits 200),
        // round 2 the other way. Balanced: 200 per round, 400 in all, against 600.
        let mut g = ExecGraph {
            cores: 2,
            classes: vec!["w".into()],
            ..ExecGraph::default()
        };
        push(
            &mut g,
            strand(1, Some(0), 0, 600),
            &[
                (0, Op::Compute(300)),
                (300, Op::Compute(100)),
                (400, Op::Delay(200)),
            ],
        );
        push(
            &mut g,
            strand(2, Some(0), 0, 600),
            &[
                (0, Op::Compute(100)),
                (100, Op::Delay(200)),
                (300, Op::Compute(300)),
            ],
        );
        let sp = speedups(&[(0, 300), (300, 600)], 2);
        assert_eq!(
            simulate(&g, &Overlay::identity(&g), SimParams::default()).makespan_ns,
            600
        );
        let gain = gain(&g, &sp, Limitation::Imbalance).unwrap();
        assert!((gain - 600.0 / 400.0).abs() < 1e-6, "{gain}");
    }

    #[test]
    fn imbalance_of_pool_tasks_balanced_task_by_task() {
        // `main` submits 7 tasks of 100 and one of 900 to a pool of 2 (FIFO) and
        // awaits them: the long one starts last, at 300, and ends at 1200 while the
        // other worker idles from 400. Evening out the workers' recorded shares
        // would be undone by the pool (the long task still starts last: ×1.12);
        // tasks of equal work, 1600 / 8 each, end at 800.
        let mut g = ExecGraph {
            cores: 2,
            classes: vec!["main".into(), "short".into(), "long".into()],
            pools: vec![crate::graph::Pool {
                id: "pool-1".into(),
                forkjoin: false,
                threads: 2,
                pickup_ns: 0,
            }],
            ..ExecGraph::default()
        };
        let mut tasks = Vec::new();
        for k in 0..8u64 {
            let (begin, work) = if k < 7 {
                (k / 2 * 100, 100)
            } else {
                (300, 900)
            };
            let s = Strand {
                class: if k < 7 { 1 } else { 2 },
                runs: Runs::Pool(0),
                ..strand(1 + (k % 2) as u32, None, begin, begin + work)
            };
            tasks.push(push(&mut g, s, &[(begin, Op::Compute(work))]));
        }
        let mut ops: Vec<(u64, Op)> = tasks.iter().map(|&t| (0, Op::Spawn(t))).collect();
        ops.extend(tasks.iter().map(|&t| (0, Op::Await(t))));
        push(&mut g, strand(0, Some(0), 0, 1200), &ops);
        assert_eq!(
            simulate(&g, &Overlay::identity(&g), SimParams::default()).makespan_ns,
            1200
        );
        let sp = speedups(&[(0, 1200)], 2);
        let gain = gain(&g, &sp, Limitation::Imbalance).unwrap();
        assert!((gain - 1200.0 / 800.0).abs() < 1e-6, "{gain}");
    }

    #[test]
    fn locks_removed_and_a_core_per_thread() {
        // Two threads each hold one lock for 100 ns, twice: serialised 400 ns;
        // without the lock 200 ns.
        let mut g = ExecGraph {
            cores: 2,
            classes: vec!["w".into()],
            locks: vec![crate::graph::Lock {
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
            }],
            ..ExecGraph::default()
        };
        for t in 1..=2 {
            let ops = [
                (0, Op::Acquire(0)),
                (0, Op::Compute(100)),
                (0, Op::Release(0)),
                (0, Op::Acquire(0)),
                (0, Op::Compute(100)),
                (0, Op::Release(0)),
            ];
            push(&mut g, strand(t, Some(0), 0, 400), &ops);
        }
        let mut sp = speedups(&[(0, 400)], 2);
        let gain = self::gain(&g, &sp, Limitation::Locks).unwrap();
        assert!((gain - 2.0).abs() < 1e-6, "{gain}");
        // A quarter of the parallel active time handed the lock over (H_p/A_p): that
        // work goes with the lock too, as in the closed form: 150 ns a thread.
        sp.quantities.active_parallel = 400.0;
        sp.quantities.lock_handoff_parallel = 100.0;
        let gain = self::gain(&g, &sp, Limitation::Locks).unwrap();
        assert!((gain - 400.0 / 150.0).abs() < 1e-6, "{gain}");
        // Four threads on two cores: a core each halves the time.
        let mut g = prologue();
        g.cores = 1;
        let sp = speedups(&[(400, 700)], 2);
        let gain = self::gain(&g, &sp, Limitation::Oversubscription).unwrap();
        // 400 + 600 on one core against 400 + 300 on two.
        assert!((gain - 1000.0 / 700.0).abs() < 1e-6, "{gain}");
        // Two cores of which a loaded machine gave it one: more cores give nothing.
        g.cores = 2;
        g.cores_effective = 1.0;
        let gain = self::gain(&g, &sp, Limitation::Oversubscription).unwrap();
        assert!((gain - 1.0).abs() < 1e-6, "{gain}");
    }

    #[test]
    fn overhead_scales_work_and_nothing_without_a_parallel_section() {
        let g = prologue();
        let mut sp = speedups(&[(400, 700)], 2);
        sp.efficiencies.serial_overhead = Some(0.5);
        sp.efficiencies.parallel_overhead = Some(0.5);
        // 200 + 150 against 700.
        let gain = gain(&g, &sp, Limitation::Overhead).unwrap();
        assert!((gain - 2.0).abs() < 1e-6, "{gain}");
        let mut sp = speedups(&[], 2);
        sp.status = Status::NoParallelSection;
        fill(&mut sp, &g);
        assert!(sp.lines.iter().all(|l| l.simulated_gain.is_none()));
        // A graph that does not reproduce the recorded time gives no gain, and says so.
        let mut g = prologue();
        g.observed_ns = 2_000;
        let mut sp = speedups(&[(400, 700)], 2);
        fill(&mut sp, &g);
        assert!(sp.lines.iter().all(|l| l.simulated_gain.is_none()));
        assert!(
            sp.notes.iter().any(|n| n.contains("does not reproduce")),
            "{:?}",
            sp.notes
        );
    }
}
