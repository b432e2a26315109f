//! The `speedups` member of the JSON report (docs/speedups.md §JSON).

use serde_json::{json, Value};
use weft_analysis::speedups::Speedups;

pub fn speedups_json(s: &Speedups) -> Value {
    let e = &s.efficiencies;
    let q = &s.quantities;
    json!({
        "status": s.status.as_str(),
        "notes": s.notes,
        "upper_bound": "a possible speedup is an upper bound: removing one limitation can raise another",
        "window": { "start_ns": s.window.0, "end_ns": s.window.1, "source": s.window_source },
        "cpus": s.cpus,
        "cpu_source": s.cpu_source.as_str(),
        "baseline": s.baseline,
        "threads": s.threads,
        "threads_effective": s.threads_effective,
        "quantities_ns": {
            "cpu_serial": q.cpu_serial as u64,
            "active_serial": q.active_serial as u64,
            "cpu_parallel": q.cpu_parallel as u64,
            "active_parallel": q.active_parallel as u64,
            "busiest_cpu": q.busiest_cpu as u64,
            "busiest_active": q.busiest_active as u64,
            "lock_blocked_parallel": q.lock_blocked_parallel as u64,
            "lock_handoff_parallel": q.lock_handoff_parallel as u64,
            "gc": q.gc as u64,
            "reference": s.reference_ns as u64,
        },
        "efficiencies": {
            "parallel_fraction": e.parallel_fraction,
            "load_balance": e.load_balance,
            "lock_contention": e.lock_contention,
            "serial_overhead": e.serial_overhead,
            "parallel_overhead": e.parallel_overhead,
            "cores": e.cores,
        },
        "observed_ns": s.observed_ns,
        "baseline_observed_ns": s.baseline_observed_ns,
        "calculated_ns": s.calculated_ns.map(|c| c as u64),
        "residual": s.residual,
        "lines": s.lines.iter().map(|l| json!({
            "remove": l.remove.as_str(),
            "closed_form_gain": l.closed_form_gain,
            "possible_speedup": l.possible_speedup,
            "time_ns": l.time_ns.map(|t| t as u64),
            "simulated_gain": l.simulated_gain,
        })).collect::<Vec<_>>(),
        "per_thread": s.per_thread.iter().map(|(n, act, cpu, blk)| json!({
            "thread": n, "active_ns": *act as u64, "cpu_ns": *cpu as u64, "blocked_ns": *blk as u64,
        })).collect::<Vec<_>>(),
        "sections_total": s.sections_total,
        "sections": s.sections.iter().map(|x| json!({
            "start_ns": x.start_ns,
            "end_ns": x.end_ns,
            "threads": x.threads,
            "load_balance": x.load_balance,
            "lock_contention": x.lock_contention,
        })).collect::<Vec<_>>(),
        "across_cores": s.across_cores.iter().map(|p| {
            let mut o = serde_json::Map::new();
            o.insert("cores".into(), json!(p.cores));
            o.insert("current".into(), json!(p.current));
            for (l, v) in &p.removed {
                o.insert(l.as_str().into(), json!(v));
            }
            o.insert("ideal".into(), json!(p.ideal));
            Value::Object(o)
        }).collect::<Vec<_>>(),
    })
}
