//! Schedules to draw side by side: the recorded run (each strand where and when it
//! ran), its replay by the simulator, and the simulated run after a change. The HTML
//! report shows them on one time axis (docs/whatif.md §Schedules), so a reader sees
//! what the model reproduced and what the change moves.

use crate::edit::Edit;
use crate::graph::{ExecGraph, Runs};
use crate::sim::{simulate_scheduled, Overlay, SimContext, SimParams, SimResult};

/// Most strands drawn per schedule (the longest): a recording can have millions.
pub const MAX_BARS: usize = 1500;

/// One strand's bar: on lane `lane`, from `start_ns` to `end_ns` (from the window's
/// start), `depth` levels inside another strand on that lane (0: outermost).
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub lane: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub depth: u8,
    /// Task class, or thread name of a thread's own program.
    pub class: String,
}

/// A schedule: its lanes (threads), the longest strands as bars, and its length.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// `recorded`, `replay` or `after <edit>`.
    pub label: String,
    pub makespan_ns: u64,
    pub lanes: Vec<String>,
    pub bars: Vec<Bar>,
    /// Strands that ran, of which `bars` are the longest.
    pub strands: usize,
}

/// Keeps the `MAX_BARS` longest bars, then orders them by lane and start.
fn longest(mut bars: Vec<Bar>) -> (Vec<Bar>, usize) {
    let n = bars.len();
    if n > MAX_BARS {
        bars.select_nth_unstable_by_key(MAX_BARS, |b| std::cmp::Reverse(b.end_ns - b.start_ns));
        bars.truncate(MAX_BARS);
    }
    bars.sort_by_key(|b| (b.lane, b.start_ns, b.depth));
    (bars, n)
}

fn class_of(g: &ExecGraph, s: usize) -> String {
    g.classes
        .get(g.strands[s].class as usize)
        .cloned()
        .unwrap_or_default()
}

/// The recorded run: each strand on its recorded thread, at its observed times.
pub fn recorded(g: &ExecGraph) -> Schedule {
    let mut threads: Vec<u32> = g.strands.iter().map(|s| s.thread).collect();
    threads.sort_unstable();
    threads.dedup();
    let lane = |t: u32| threads.binary_search(&t).unwrap_or(0) as u32;
    // Each lane's name, in one pass over the strands: a thread's own program names it;
    // else its first pool (a worker: the graph keeps no thread names).
    let mut program: Vec<Option<usize>> = vec![None; threads.len()];
    let mut pool: Vec<Option<u32>> = vec![None; threads.len()];
    for (i, st) in g.strands.iter().enumerate() {
        let l = lane(st.thread) as usize;
        match st.runs {
            Runs::Thread => {
                program[l].get_or_insert(i);
            }
            Runs::Pool(p) => {
                pool[l].get_or_insert(p);
            }
        }
    }
    let lanes = threads
        .iter()
        .enumerate()
        .map(
            |(l, &t)| match (program[l], pool[l].and_then(|p| g.pools.get(p as usize))) {
                (Some(s), _) => class_of(g, s),
                (None, Some(p)) => format!("{} (thread {t})", p.id),
                (None, None) => format!("thread {t}"),
            },
        )
        .collect();
    // Depth: strands that began inside another one still running on the same thread.
    let mut order: Vec<usize> = (0..g.strands.len()).collect();
    order.sort_by_key(|&s| (g.strands[s].thread, g.strands[s].observed_begin_ns));
    let mut bars = Vec::with_capacity(order.len());
    let mut open: Vec<(u32, u64)> = Vec::new();
    for s in order {
        let st = &g.strands[s];
        open.retain(|&(t, end)| t == st.thread && end > st.observed_begin_ns);
        bars.push(Bar {
            lane: lane(st.thread),
            start_ns: st.observed_begin_ns,
            end_ns: st.observed_end_ns.max(st.observed_begin_ns),
            depth: open.len().min(u8::MAX as usize) as u8,
            class: class_of(g, s),
        });
        open.push((st.thread, st.observed_end_ns));
    }
    let (bars, strands) = longest(bars);
    Schedule {
        label: "recorded".into(),
        makespan_ns: g.observed_ns,
        lanes,
        bars,
        strands,
    }
}

/// A simulated run of `g` (the replay, or an edited graph) as a schedule.
pub fn simulated(g: &ExecGraph, r: &SimResult, label: &str) -> Schedule {
    let lanes = r
        .contexts
        .iter()
        .map(|c| match *c {
            SimContext::Worker { pool, worker } => format!(
                "{} worker {}",
                g.pools.get(pool as usize).map_or("pool", |p| p.id.as_str()),
                worker + 1
            ),
            SimContext::Thread { strand } => class_of(g, strand as usize),
        })
        .collect();
    let bars = r
        .strand_run
        .iter()
        .enumerate()
        .filter_map(|(s, run)| {
            let (lane, start_ns, depth) = (*run)?;
            let end = *r.strand_end_ns.get(s)?;
            (end != u64::MAX).then(|| Bar {
                lane,
                start_ns,
                end_ns: end.max(start_ns),
                depth,
                class: class_of(g, s),
            })
        })
        .collect();
    let (bars, strands) = longest(bars);
    Schedule {
        label: label.into(),
        makespan_ns: r.makespan_ns,
        lanes,
        bars,
        strands,
    }
}

/// The three schedules: recorded, replay, and after `edit` when one is given (and
/// the edited run finishes in the model).
pub fn schedules(g: &ExecGraph, edit: Option<&Edit>) -> Vec<Schedule> {
    let mut out = vec![recorded(g)];
    let replay = simulate_scheduled(g, &Overlay::identity(g), SimParams::default());
    if replay.deadlock {
        return out;
    }
    out.push(simulated(g, &replay, "replay"));
    if let Some(e) = edit {
        if let Ok((graph, ov)) = e.apply_all(g, std::slice::from_ref(e)) {
            let r = simulate_scheduled(&graph, &ov, SimParams::default());
            if !r.deadlock {
                out.push(simulated(&graph, &r, &format!("after {}", e.text)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Op, Pool, Strand};

    /// A strand recorded on `thread` from `at.0` to `at.1`.
    fn strand(runs: Runs, root: Option<u64>, class: u32, thread: u32, at: (u64, u64)) -> Strand {
        Strand {
            thread,
            observed_begin_ns: at.0,
            observed_end_ns: at.1,
            ..crate::sim_tests::strand(runs, root, class)
        }
    }

    /// main submits two tasks of 100 ns to a pool of one worker and waits: recorded on
    /// two threads, replayed on main and the pool's worker, back to back.
    #[test]
    fn schedules_put_each_strand_on_its_thread() {
        let mut g = ExecGraph {
            cores: 2,
            classes: vec!["main".into(), "Task".into()],
            observed_ns: 210,
            ..ExecGraph::default()
        };
        g.pools.push(Pool {
            id: "pool-1".into(),
            forkjoin: false,
            threads: 1,
            pickup_ns: 0,
        });
        let a = g.push_strand(
            strand(Runs::Pool(0), None, 1, 2, (5, 105)),
            &[Op::Compute(100)],
        );
        let b = g.push_strand(
            strand(Runs::Pool(0), None, 1, 2, (105, 205)),
            &[Op::Compute(100)],
        );
        g.push_strand(
            strand(Runs::Thread, Some(0), 0, 1, (0, 210)),
            &[Op::Spawn(a), Op::Spawn(b), Op::Await(a), Op::Await(b)],
        );
        let s = schedules(&g, None);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].label, "recorded");
        assert_eq!(
            s[0].lanes,
            vec!["main".to_string(), "pool-1 (thread 2)".to_string()]
        );
        let tasks: Vec<(u32, u64, u64)> = s[0]
            .bars
            .iter()
            .filter(|b| b.class == "Task")
            .map(|b| (b.lane, b.start_ns, b.end_ns))
            .collect();
        assert_eq!(tasks, vec![(1, 5, 105), (1, 105, 205)]);
        assert_eq!(s[1].label, "replay");
        assert_eq!(s[1].makespan_ns, 200);
        assert_eq!(
            s[1].lanes,
            vec!["pool-1 worker 1".to_string(), "main".to_string()]
        );
        let tasks: Vec<(u32, u64, u64, u8)> = s[1]
            .bars
            .iter()
            .filter(|b| b.class == "Task")
            .map(|b| (b.lane, b.start_ns, b.end_ns, b.depth))
            .collect();
        assert_eq!(tasks, vec![(0, 0, 100, 0), (0, 100, 200, 0)]);
    }

    /// Only the longest strands are kept, ordered by lane and start.
    #[test]
    fn long_runs_keep_the_longest_strands() {
        let bars = (0..MAX_BARS as u64 + 10)
            .map(|i| Bar {
                lane: (i % 3) as u32,
                start_ns: 1000 - i,
                end_ns: 1000,
                depth: 0,
                class: String::new(),
            })
            .collect();
        let (kept, n) = longest(bars);
        assert_eq!(n, MAX_BARS + 10);
        assert_eq!(kept.len(), MAX_BARS);
        assert!(kept.iter().all(|b| b.end_ns - b.start_ns >= 10));
        assert!(kept
            .windows(2)
            .all(|w| (w[0].lane, w[0].start_ns) <= (w[1].lane, w[1].start_ns)));
    }
}
