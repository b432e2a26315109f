//! The `forkjoin` object of the JSON report (docs/forkjoin.md).

use serde_json::{json, Value};
use weft_analysis::Analysis;

pub fn forkjoin_json(a: &Analysis) -> Value {
    let f = &a.forkjoin;
    let d = |g: &weft_analysis::Distribution| json!({ "total": g.total, "min": g.min, "p50": g.p50, "p90": g.p90, "max": g.max });
    json!({
        "tasks": f.tasks,
        "forks": f.forks,
        "external_submissions": f.external_submissions,
        "steals": f.steals,
        "cancelled": f.cancelled,
        "reinitialized": f.reinitialized,
        "reused": f.reused,
        "never_run": f.never_run,
        "max_depth": f.max_depth,
        "max_nesting": f.max_nesting,
        "direct_executions": f.direct_executions,
        "computations": f.computations.iter().map(|c| json!({
            "root_class": c.root_class,
            "pool": c.pool,
            "tasks": c.tasks,
            "work_ns": c.work_ns,
            "span_ns": c.span_ns,
            "parallelism": c.parallelism,
            "max_depth": c.max_depth,
            "begin_ns": c.begin_ns,
            "end_ns": c.end_ns,
            "helpers": c.helpers,
        })).collect::<Vec<_>>(),
        "threads": f.threads.iter().map(|t| json!({
            "name": t.name,
            "pool": t.pool,
            "executed": t.executed,
            "stolen": t.stolen,
            "busy_ns": t.busy_ns,
            "join_blocked_ns": t.join_blocked_ns,
        })).collect::<Vec<_>>(),
        "classes": f.classes.iter().map(|c| json!({
            "class": c.class,
            "tasks": c.tasks,
            "granularity_ns": d(&c.granularity_ns),
            "fine": c.fine,
            "run_at_once": c.run_at_once,
            "external": c.external,
            "site": c.site,
        })).collect::<Vec<_>>(),
        "pools": f.pools.iter().map(|p| json!({
            "pool": p.pool,
            "class": p.class,
            "parallelism": p.parallelism,
            "threads": p.threads,
            "tasks": p.tasks,
            "steals": p.steals,
            "computations": p.computations,
            "load_balance": f.load_balance(p.pool),
        })).collect::<Vec<_>>(),
        // The fork-join findings of the analysis (the top-level list has them too, with costs).
        "findings": a.findings.iter().filter(|x| crate::forkjoin_text::is_forkjoin(x.kind)).map(|x| x.message.clone()).collect::<Vec<_>>(),
    })
}
