//! The edits of `weft whatif --edit` (grammar fixed by issue 17) and their
//! overlays on a graph.

use std::borrow::Cow;

use crate::graph::{recorded, ExecGraph, Op, Runs, Strand, StrandId};
use crate::sim::{LockMode, Overlay};

/// What an edit changes.
#[derive(Debug, Clone, PartialEq)]
pub enum EditKind {
    LockRemove(String),
    /// Fraction removed (0.3 = 30% shorter).
    LockShorten(String, f64),
    LockSplit(String, u32),
    Inline(String),
    FjCoarsen(String, u32),
    FjRefine(String, u32),
    Pool(String, u32),
    Cores(u32),
    /// Fraction removed from the target's self time.
    Faster(String, f64),
}

/// An edit as given (`text`) and parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub text: String,
    pub kind: EditKind,
}

const GRAMMAR: &str = "lock:LOCK:remove, lock:LOCK:shorten=P%, lock:LOCK:split=N, inline:CLASS, \
fj-coarsen:CLASS:levels=N, fj-refine:CLASS:levels=N, pool:POOL=N, cores:N, faster:TARGET:P%";

fn err(text: &str, why: &str) -> String {
    format!("edit `{text}`: {why} (expected one of {GRAMMAR})")
}

fn percent(text: &str, p: &str) -> Result<f64, String> {
    let v = p
        .strip_suffix('%')
        .and_then(|n| n.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0 && *v < 100.0)
        .ok_or_else(|| {
            err(
                text,
                &format!("`{p}` is not a percentage P% with 0 <= P < 100"),
            )
        })?;
    Ok(v / 100.0)
}

fn count(text: &str, p: &str, what: &str) -> Result<u32, String> {
    p.parse::<u32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
        err(
            text,
            &format!("`{p}` is not a {what} (a whole number >= 1)"),
        )
    })
}

/// Splits `NAME:param` at the last `:` (names may contain `:`, e.g. lambdas).
fn split_param<'a>(text: &str, rest: &'a str, what: &str) -> Result<(&'a str, &'a str), String> {
    match rest.rsplit_once(':') {
        Some((name, p)) if !name.is_empty() => Ok((name, p)),
        _ => Err(err(text, &format!("missing {what}"))),
    }
}

impl Edit {
    pub fn parse(text: &str) -> Result<Edit, String> {
        let kind = if let Some(rest) = text.strip_prefix("lock:") {
            let (lock, p) = split_param(text, rest, "`:remove`, `:shorten=P%` or `:split=N`")?;
            let lock = lock.to_string();
            if p == "remove" {
                EditKind::LockRemove(lock)
            } else if let Some(v) = p.strip_prefix("shorten=") {
                EditKind::LockShorten(lock, percent(text, v)?)
            } else if let Some(v) = p.strip_prefix("split=") {
                EditKind::LockSplit(lock, count(text, v, "stripe count")?)
            } else {
                return Err(err(text, &format!("unknown lock change `{p}`")));
            }
        } else if let Some(rest) = text.strip_prefix("inline:") {
            if rest.is_empty() {
                return Err(err(text, "missing the task class"));
            }
            EditKind::Inline(rest.to_string())
        } else if let Some((rest, refine)) = text
            .strip_prefix("fj-coarsen:")
            .map(|r| (r, false))
            .or_else(|| text.strip_prefix("fj-refine:").map(|r| (r, true)))
        {
            let (class, p) = split_param(text, rest, "`:levels=N`")?;
            let n = match p.strip_prefix("levels=") {
                Some(v) => count(text, v, "level count")?,
                None => return Err(err(text, &format!("`{p}` is not `levels=N`"))),
            };
            if refine {
                EditKind::FjRefine(class.to_string(), n)
            } else {
                EditKind::FjCoarsen(class.to_string(), n)
            }
        } else if let Some(rest) = text.strip_prefix("pool:") {
            match rest.rsplit_once('=') {
                Some((pool, n)) if !pool.is_empty() => {
                    EditKind::Pool(pool.to_string(), count(text, n, "thread count")?)
                }
                _ => return Err(err(text, "expected pool:POOL=N")),
            }
        } else if let Some(n) = text.strip_prefix("cores:") {
            EditKind::Cores(count(text, n, "core count")?)
        } else if let Some(rest) = text.strip_prefix("faster:") {
            let (target, p) = split_param(text, rest, "`:P%`")?;
            EditKind::Faster(target.to_string(), percent(text, p)?)
        } else {
            return Err(err(text, "unknown kind"));
        };
        Ok(Edit {
            text: text.to_string(),
            kind,
        })
    }

    /// Whether the edit adds structure the trace never showed (estimates are then low confidence).
    pub fn synthesised(&self) -> bool {
        matches!(self.kind, EditKind::FjRefine(..))
    }

    /// The graph to simulate (the recorded one, or a copy with synthesised
    /// structure for fj-refine) and the overlay. Errors name the edit and what exists.
    pub fn apply<'g>(&self, g: &'g ExecGraph) -> Result<(Cow<'g, ExecGraph>, Overlay), String> {
        self.apply_all(g, std::slice::from_ref(self))
    }

    /// Several edits together (`--combine`).
    pub fn apply_all<'g>(
        &self,
        g: &'g ExecGraph,
        edits: &[Edit],
    ) -> Result<(Cow<'g, ExecGraph>, Overlay), String> {
        let mut graph: Cow<'g, ExecGraph> = Cow::Borrowed(g);
        for e in edits {
            if let EditKind::FjRefine(class, n) = &e.kind {
                let c = fj_class(g, class).ok_or_else(|| e.no_fj_class(g, class))?;
                graph = Cow::Owned(refine(&graph, c, *n));
            }
        }
        let mut ov = Overlay::identity(&graph);
        for e in edits {
            e.overlay_into(&graph, &mut ov)?;
        }
        Ok((graph, ov))
    }

    fn no_fj_class(&self, g: &ExecGraph, class: &str) -> String {
        let mut names: Vec<&str> = fj_classes(g);
        names.truncate(10);
        format!(
            "edit `{}`: `{class}` is not a fork-join task class of this trace (fork-join classes: {})",
            self.text,
            list(&names)
        )
    }

    fn overlay_into(&self, g: &ExecGraph, ov: &mut Overlay) -> Result<(), String> {
        match &self.kind {
            EditKind::LockRemove(l) | EditKind::LockShorten(l, _) | EditKind::LockSplit(l, _) => {
                let ids: Vec<usize> = (0..g.locks.len())
                    .filter(|&i| g.locks[i].id == *l || g.locks[i].class == *l)
                    .collect();
                if ids.is_empty() {
                    let names: Vec<&str> = g.locks.iter().take(10).map(|l| l.id.as_str()).collect();
                    return Err(format!(
                        "edit `{}`: no contended lock `{l}` in this trace (a lock id from `weft report --json` locks.locks[].id, or a lock class; locks: {})",
                        self.text,
                        list(&names)
                    ));
                }
                for i in ids {
                    ov.lock_mode[i] = match self.kind {
                        EditKind::LockRemove(_) => LockMode::Removed,
                        EditKind::LockShorten(_, x) => LockMode::Shorten(1.0 - x),
                        EditKind::LockSplit(_, n) => LockMode::Split(n),
                        _ => LockMode::Normal,
                    };
                }
            }
            EditKind::Inline(class) => {
                let mut any = false;
                for (i, s) in g.strands.iter().enumerate() {
                    if matches!(s.runs, Runs::Pool(p) if !g.pools[p as usize].forkjoin)
                        && g.classes[s.class as usize] == *class
                    {
                        ov.inline[i] = true;
                        any = true;
                    }
                }
                if !any {
                    let mut names: Vec<&str> = g
                        .strands
                        .iter()
                        .filter(
                            |s| matches!(s.runs, Runs::Pool(p) if !g.pools[p as usize].forkjoin),
                        )
                        .map(|s| g.classes[s.class as usize].as_str())
                        .collect();
                    names.sort_unstable();
                    names.dedup();
                    names.truncate(10);
                    return Err(format!(
                        "edit `{}`: no task of class `{class}` was submitted to a pool (submitted classes: {})",
                        self.text,
                        list(&names)
                    ));
                }
            }
            EditKind::FjCoarsen(class, n) => {
                let c = fj_class(g, class).ok_or_else(|| self.no_fj_class(g, class))?;
                let h = heights(g);
                for (i, s) in g.strands.iter().enumerate() {
                    if s.class == c && h[i] < *n {
                        ov.inline[i] = true;
                    }
                }
            }
            EditKind::FjRefine(..) => {} // applied to the graph
            EditKind::Pool(p, n) => match g.pools.iter().position(|x| x.id == *p) {
                Some(i) => ov.pool_threads[i] = Some(*n),
                None => {
                    let names: Vec<&str> = g.pools.iter().map(|x| x.id.as_str()).collect();
                    return Err(format!(
                        "edit `{}`: no pool `{p}` (pools: {})",
                        self.text,
                        list(&names)
                    ));
                }
            },
            EditKind::Cores(n) => ov.cores = Some(*n as f64),
            EditKind::Faster(t, x) => match g.classes.iter().position(|c| c == t) {
                Some(i) => ov.class_factor[i] *= 1.0 - x,
                None => {
                    let names: Vec<&str> = g.classes.iter().take(10).map(String::as_str).collect();
                    return Err(format!(
                        "edit `{}`: no task class `{t}` (classes: {})",
                        self.text,
                        list(&names)
                    ));
                }
            },
        }
        Ok(())
    }
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

fn is_fj(g: &ExecGraph, s: &Strand) -> bool {
    matches!(s.runs, Runs::Pool(p) if g.pools[p as usize].forkjoin)
}

fn fj_classes(g: &ExecGraph) -> Vec<&str> {
    let mut v: Vec<&str> = g
        .strands
        .iter()
        .filter(|s| is_fj(g, s))
        .map(|s| g.classes[s.class as usize].as_str())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn fj_class(g: &ExecGraph, class: &str) -> Option<u32> {
    let c = g.classes.iter().position(|c| c == class)? as u32;
    g.strands
        .iter()
        .any(|s| s.class == c && is_fj(g, s))
        .then_some(c)
}

/// Height of each strand's spawn tree (0 = spawns nothing).
pub fn heights(g: &ExecGraph) -> Vec<u32> {
    let n = g.strands.len();
    let mut h = vec![0u32; n];
    // Children are spawned by their parent; iterate to a fixed point in reverse
    // creation order, with an explicit post-order to stay linear.
    let mut done = vec![false; n];
    for root in 0..n {
        if done[root] {
            continue;
        }
        let mut stack: Vec<(StrandId, bool)> = vec![(root as StrandId, false)];
        while let Some((s, post)) = stack.pop() {
            if done[s as usize] {
                continue;
            }
            let kids = g.ops_of(s).iter().filter_map(|o| match o {
                Op::Spawn(c) => Some(*c),
                _ => None,
            });
            if post {
                let mut m = 0;
                let mut any = false;
                for c in kids {
                    any = true;
                    m = m.max(h[c as usize]);
                }
                h[s as usize] = if any { m + 1 } else { 0 };
                done[s as usize] = true;
            } else {
                stack.push((s, true));
                for c in kids {
                    if !done[c as usize] {
                        stack.push((c, false));
                    }
                }
            }
        }
    }
    h
}

/// A copy of the graph where each leaf strand of `class` (one that spawns
/// nothing) becomes a balanced binary fork-join tree of depth `levels` over its
/// compute: fork both halves, join them (synthesised structure).
fn refine(g: &ExecGraph, class: u32, levels: u32) -> ExecGraph {
    let mut out = g.clone();
    let leaves: Vec<StrandId> = (0..g.strands.len() as StrandId)
        .filter(|&s| {
            let st = &g.strands[s as usize];
            // A leaf computes; it may also unpark a waiter (its joiner) on the way.
            st.class == class
                && is_fj(g, st)
                && g.ops_of(s)
                    .iter()
                    .all(|o| matches!(o, Op::Compute(_) | Op::Signal(_)))
        })
        .collect();
    for s in leaves {
        let work: u64 = g
            .ops_of(s)
            .iter()
            .map(|o| if let Op::Compute(n) = o { *n } else { 0 })
            .sum();
        // Its stalls (docs/whatif.md §Durations) go to the synthesised leaves, in
        // proportion to their compute.
        let st = &g.strands[s as usize];
        let stall: u64 = (st.first..st.first + st.len)
            .filter_map(|i| recorded(&g.compute_stall_ns, i))
            .sum();
        let proto = g.strands[s as usize].clone();
        let mut ops = subtree(&mut out, &proto, (work, stall), levels);
        // Its unparks go at the end of the refined tree (they are the completion's).
        ops.extend(g.ops_of(s).iter().filter(|o| matches!(o, Op::Signal(_))));
        let st = &mut out.strands[s as usize];
        st.first = out.ops.len() as u32;
        st.len = ops.len() as u32;
        let at = st.observed_begin_ns;
        out.ops.extend_from_slice(&ops);
        out.op_begin.extend(std::iter::repeat_n(at, ops.len()));
    }
    out
}

/// The ops of a synthesised node over `(compute, stall)`; its synthesised leaves'
/// stalls are added to the graph's (appended ops: the list stays sorted).
fn subtree(g: &mut ExecGraph, proto: &Strand, (work, stall): (u64, u64), levels: u32) -> Vec<Op> {
    if levels == 0 {
        return vec![Op::Compute(work)];
    }
    let half = (work / 2, stall / 2);
    let mut kids = [0; 2];
    for (k, w) in [half, (work - half.0, stall - half.1)]
        .into_iter()
        .enumerate()
    {
        let ops = subtree(g, proto, w, levels - 1);
        kids[k] = g.push_strand(proto.clone(), &ops);
        if levels == 1 && w.1 > 0 {
            let first = g.strands[kids[k] as usize].first;
            g.compute_stall_ns.push((first, w.1));
        }
    }
    vec![
        Op::Spawn(kids[0]),
        Op::Spawn(kids[1]),
        Op::Await(kids[1]),
        Op::Await(kids[0]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_parses_every_kind() {
        let k = |s: &str| Edit::parse(s).map(|e| e.kind);
        assert_eq!(
            k("lock:Foo@12:remove"),
            Ok(EditKind::LockRemove("Foo@12".into()))
        );
        assert_eq!(
            k("lock:Foo:shorten=30%"),
            Ok(EditKind::LockShorten("Foo".into(), 0.3))
        );
        assert_eq!(
            k("lock:Foo:split=4"),
            Ok(EditKind::LockSplit("Foo".into(), 4))
        );
        assert_eq!(
            k("inline:Outer$$Lambda[main:42]"),
            Ok(EditKind::Inline("Outer$$Lambda[main:42]".into()))
        );
        assert_eq!(
            k("fj-coarsen:Outer$$Lambda[main:42]:levels=2"),
            Ok(EditKind::FjCoarsen("Outer$$Lambda[main:42]".into(), 2))
        );
        assert_eq!(
            k("fj-refine:Fib:levels=3"),
            Ok(EditKind::FjRefine("Fib".into(), 3))
        );
        assert_eq!(k("pool:pool-1=4"), Ok(EditKind::Pool("pool-1".into(), 4)));
        assert_eq!(k("cores:1"), Ok(EditKind::Cores(1)));
        assert_eq!(
            k("faster:a.B:25%"),
            Ok(EditKind::Faster("a.B".into(), 0.25))
        );
    }

    #[test]
    fn malformed_edits_are_one_line_errors_naming_the_edit() {
        for bad in [
            "lock:Foo",
            "lock:Foo:shorten=x%",
            "lock:Foo:split=0",
            "inline:",
            "fj-coarsen:Fib:2",
            "pool:p",
            "cores:zero",
            "faster:X:150%",
            "speed:X",
        ] {
            let e = Edit::parse(bad).expect_err(bad);
            assert!(e.contains(&format!("`{bad}`")) && !e.contains('\n'), "{e}");
        }
    }
}
