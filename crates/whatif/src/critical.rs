//! Mode R (docs/whatif.md §Replay): the recorded schedule walked backwards from
//! its last end, following what each wait waited for, gives the critical path
//! and its composition.

use std::collections::BTreeMap;

use crate::graph::{recorded, ExecGraph, Op, Runs, StrandId};

/// What a stretch of the critical path was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathKind {
    Compute,
    Lock,
    Queue,
    Delay,
    Wait,
    /// Off the CPU inside a compute op beyond sharing the cores (its stall: a sleep
    /// or a read no probe records, a preemption).
    OffCpu,
}

impl PathKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PathKind::Compute => "compute",
            PathKind::Lock => "lock",
            PathKind::Queue => "queue",
            PathKind::Delay => "delay",
            PathKind::Wait => "wait",
            PathKind::OffCpu => "off-cpu",
        }
    }
}

/// One component of the critical path: kind, target (task class, lock, pool) and time.
#[derive(Debug, Clone, PartialEq)]
pub struct PathPart {
    pub kind: PathKind,
    pub target: String,
    pub ns: u64,
}

/// The recorded critical path, summed by kind and target, largest first.
pub fn critical_path(g: &ExecGraph) -> Vec<PathPart> {
    let mut sum: BTreeMap<(PathKind, String), u64> = BTreeMap::new();
    let mut spawner: Vec<Option<(StrandId, u32)>> = vec![None; g.strands.len()];
    for (s, st) in g.strands.iter().enumerate() {
        for k in 0..st.len {
            if let Op::Spawn(c) = g.ops[(st.first + k) as usize] {
                spawner[c as usize].get_or_insert((s as StrandId, k));
            }
        }
    }
    // Where each signal fired: (strand, op index in it).
    let mut signaller: Vec<Option<(StrandId, u32)>> = vec![None; g.syncs as usize];
    for (s, st) in g.strands.iter().enumerate() {
        for k in 0..st.len {
            if let Op::Signal(x) = g.ops[(st.first + k) as usize] {
                if let Some(slot) = signaller.get_mut(x as usize) {
                    slot.get_or_insert((s as StrandId, k));
                }
            }
        }
    }
    // Strands per recorded thread by begin: a pool task that started when its worker
    // finished the previous one waited for that worker (a resource edge).
    let mut by_thread: std::collections::HashMap<u32, Vec<StrandId>> = Default::default();
    for (s, st) in g.strands.iter().enumerate() {
        if matches!(st.runs, Runs::Pool(_)) {
            by_thread.entry(st.thread).or_default().push(s as StrandId);
        }
    }
    for v in by_thread.values_mut() {
        v.sort_by_key(|&s| (g.strands[s as usize].observed_begin_ns, s));
    }
    let prev_on_worker = |s: StrandId, spawned: u64| -> Option<StrandId> {
        let st = &g.strands[s as usize];
        let v = by_thread.get(&st.thread)?;
        v.iter()
            .rev()
            .filter(|&&p| p != s)
            .map(|&p| (p, &g.strands[p as usize]))
            .find(|(_, p)| {
                p.observed_end_ns <= st.observed_begin_ns
                    && p.observed_begin_ns < st.observed_begin_ns
            })
            .filter(|(_, p)| p.observed_end_ns > spawned)
            .map(|(p, _)| p)
    };
    let Some(last) = (0..g.strands.len()).max_by_key(|&s| (g.strands[s].observed_end_ns, s)) else {
        return Vec::new();
    };
    let mut add = |k: PathKind, t: &str, ns: u64| {
        if ns > 0 {
            *sum.entry((k, t.to_string())).or_default() += ns;
        }
    };
    let mut cur = last as StrandId;
    // Ops of `cur` still to walk: [0, upto).
    let mut upto = g.strands[cur as usize].len;
    let mut end_t = g.strands[cur as usize].observed_end_ns;
    let mut guard = 0usize;
    loop {
        guard += 1;
        if guard > g.ops.len() + g.strands.len() + 10 {
            break; // never loops forever on an inconsistent graph
        }
        let st = &g.strands[cur as usize];
        let class = &g.classes[st.class as usize];
        let mut jumped = false;
        let mut k = upto;
        while k > 0 {
            k -= 1;
            let i = (st.first + k) as usize;
            let b = g.op_begin[i];
            let dur = end_t.saturating_sub(b);
            match g.ops[i] {
                Op::Compute(_) => {
                    // Its stall (off the CPU beyond sharing the cores: a sleep, a read,
                    // a preemption) is no compute: a main thread that slept between
                    // its submissions read "compute main 100%".
                    let off = recorded(&g.compute_stall_ns, i as u32)
                        .unwrap_or(0)
                        .min(dur);
                    add(PathKind::OffCpu, class, off);
                    add(PathKind::Compute, class, dur - off);
                }
                Op::Spawn(_) | Op::Release(_) | Op::Signal(_) => add(PathKind::Compute, class, dur),
                Op::AwaitSignal(x) => {
                    // Woken by an unpark: the path continues on the waker, before it.
                    if let Some((w, wk)) = signaller.get(x as usize).copied().flatten() {
                        let at = g.op_begin[(g.strands[w as usize].first + wk) as usize];
                        if at <= end_t && (w != cur || wk < k) {
                            add(PathKind::Wait, class, end_t.saturating_sub(at));
                            cur = w;
                            upto = wk;
                            end_t = at;
                            jumped = true;
                            break;
                        }
                    }
                    add(PathKind::Wait, class, dur);
                }
                Op::Delay(_) => add(PathKind::Delay, class, dur),
                Op::Acquire(l) => add(PathKind::Lock, &g.locks[l as usize].id, dur),
                Op::Await(c) => {
                    let t = &g.strands[c as usize];
                    // Waited for c (which may record its end a little after the
                    // waiter returned: the result is set before the run's end probe):
                    // the path continues in c at its end.
                    if t.observed_end_ns > b && t.len > 0 {
                        add(
                            PathKind::Wait,
                            class,
                            end_t.saturating_sub(t.observed_end_ns),
                        );
                        cur = c;
                        upto = t.len;
                        end_t = t.observed_end_ns.min(end_t);
                        jumped = true;
                        break;
                    }
                    add(PathKind::Wait, class, dur);
                }
            }
            end_t = end_t.min(b);
        }
        if jumped {
            continue;
        }
        // At the strand's start: back to whoever spawned it, through the queue.
        let begin = st.observed_begin_ns.min(end_t);
        match spawner[cur as usize] {
            Some((p, k)) => {
                let pi = (g.strands[p as usize].first + k) as usize;
                let spawned = g.op_begin[pi];
                let what = match st.runs {
                    Runs::Pool(pool) => g.pools[pool as usize].id.clone(),
                    Runs::Thread => "thread start".to_string(),
                };
                if let Some(w) = prev_on_worker(cur, spawned) {
                    // Queued behind the worker's previous task: the path goes through it.
                    let wend = g.strands[w as usize].observed_end_ns;
                    add(PathKind::Queue, &what, begin.saturating_sub(wend));
                    cur = w;
                    upto = g.strands[w as usize].len;
                    end_t = wend;
                    continue;
                }
                add(PathKind::Queue, &what, begin.saturating_sub(spawned));
                cur = p;
                upto = k;
                end_t = spawned.min(begin);
            }
            None => {
                add(PathKind::Delay, "start", begin);
                break;
            }
        }
    }
    let mut out: Vec<PathPart> = sum
        .into_iter()
        .map(|((kind, target), ns)| PathPart { kind, target, ns })
        .collect();
    out.sort_by(|a, b| b.ns.cmp(&a.ns).then_with(|| a.target.cmp(&b.target)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Pool, Strand};

    #[test]
    fn the_path_follows_the_awaited_task_and_its_queue_wait() {
        // main [0, 100]: compute 0..10, submit t at 10, wait 10..100 for t.
        // t queued 10..30 on pool p, runs 30..100.
        let mut g = ExecGraph {
            classes: vec!["main".into(), "T".into()],
            pools: vec![Pool {
                id: "p".into(),
                forkjoin: false,
                threads: 1,
                pickup_ns: 0,
            }],
            ..ExecGraph::default()
        };
        let mk = |class, runs, b, e| Strand {
            class,
            runs,
            first: 0,
            len: 0,
            root_start_ns: None,
            observed_begin_ns: b,
            observed_end_ns: e,
            site: None,
            thread: 0,
        };
        let t = g.push_strand(mk(1, Runs::Pool(0), 30, 100), &[Op::Compute(70)]);
        let m = g.push_strand(
            mk(0, Runs::Thread, 0, 100),
            &[Op::Compute(10), Op::Spawn(t), Op::Await(t)],
        );
        let mb = g.strands[m as usize].first as usize;
        g.op_begin[mb] = 0;
        g.op_begin[mb + 1] = 10;
        g.op_begin[mb + 2] = 10;
        let p = critical_path(&g);
        let get = |k: PathKind, t: &str| {
            p.iter()
                .find(|x| x.kind == k && x.target == t)
                .map(|x| x.ns)
        };
        assert_eq!(get(PathKind::Compute, "T"), Some(70));
        assert_eq!(get(PathKind::Queue, "p"), Some(20));
        assert_eq!(get(PathKind::Compute, "main"), Some(10));
        assert_eq!(p.iter().map(|x| x.ns).sum::<u64>(), 100);
    }
}
