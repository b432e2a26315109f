//! The JSON report (schema version [`REPORT_VERSION`]): the stable,
//! machine-readable form of an analysis. Times are ns since the start of recording.

use serde_json::{json, Map, Value};
use weft_analysis::model::loss_reason_str;
use weft_analysis::{Analysis, Distribution, FieldValue};

pub const REPORT_VERSION: u64 = 1;

fn dist(d: &Distribution) -> Value {
    json!({ "total": d.total, "min": d.min, "p50": d.p50, "p90": d.p90, "max": d.max })
}

/// The whole analysis as a JSON value.
pub fn report_json(a: &Analysis) -> Value {
    let m = &a.model;
    // Virtual threads are in `virtual_threads` (there can be millions).
    let threads: Vec<Value> = m
        .threads
        .values()
        .filter(|t| !t.virtual_thread)
        .map(|t| {
            json!({
                "index": t.index,
                "name": t.display_name(),
                "start_ns": t.start_ns.unwrap_or(t.first_ns),
                "start_observed": t.start_ns.is_some(),
                "end_ns": t.end_ns,
                "cpu_ns": t.cpu_ns,
                "daemon": t.daemon,
            })
        })
        .collect();
    // Ranked by running time, as in the text and HTML reports.
    let classes: Vec<Value> = a
        .activity
        .order
        .iter()
        .map(|&ci| {
            let c = &a.tasks.classes[ci];
            let time_split = a.activity.classes.get(ci).map(|x| {
                json!({
                    "running_ns": x.split.running_ns,
                    "blocked_ns": x.split.blocked_ns,
                    "waiting_ns": x.split.waiting_ns,
                    "off_cpu_ns": x.split.off_cpu_ns,
                    "unmeasured_ns": x.split.unmeasured_ns,
                    "cpu_measured": x.cpu_measured,
                    "busy_p50_ns": x.busy_ns.p50,
                    "runnable_ns": x.split.runnable_ns,
                    "activity": x.activity.as_str(),
                    "what": x.idle_label(c.kind),
                    "waits": x.waits.iter().map(|(k, ns, n)| json!({ "kind": k, "ns": ns, "count": n })).collect::<Vec<_>>(),
                })
            });
            json!({
                "class": c.class,
                "kind": c.kind.as_str(),
                "executions": c.executions,
                "aggregated": c.aggregated,
                "submitted": c.submitted,
                "incomplete": c.incomplete,
                "threads": c.threads,
                "granularity_ns": dist(&c.granularity_ns),
                "queue_wait_ns": c.queue_wait_ns.map(|q| json!({ "p50": q.p50, "p90": q.p90 })),
                "sites": c.sites.iter().map(|(s, n)| json!({
                    "created": s.created,
                    "submitted": s.submitted,
                    "count": n,
                })).collect::<Vec<_>>(),
                "time_split": time_split,
            })
        })
        .collect();
    let losses: Vec<Value> = m
        .losses
        .iter()
        .map(|l| {
            json!({
                "thread": l.thread,
                "from_ns": l.from_ns,
                "to_ns": l.to_ns,
                "records": l.records,
                "reason": loss_reason_str(l.reason),
            })
        })
        .collect();
    let mean = a.cpu.mean();
    let samples: Vec<Value> = a
        .cpu
        .points
        .iter()
        .map(|p| {
            json!({
                "start_ns": p.start_ns,
                "end_ns": p.end_ns,
                "utilisation": p.utilisation,
                "cs_per_100ms": p.cs_per_100ms,
                "gc_ns": p.gc_ns,
            })
        })
        .collect();
    let findings: Vec<Value> = a
        .findings
        .iter()
        .map(|f| {
            let mut o = Map::new();
            for (k, v) in &f.fields {
                let v = match v {
                    FieldValue::Int(i) => json!(i),
                    FieldValue::Float(x) => json!(x),
                    FieldValue::Text(s) => json!(s),
                    FieldValue::Bool(b) => json!(b),
                };
                o.insert((*k).to_string(), v);
            }
            o.insert("kind".into(), json!(f.kind.as_str()));
            o.insert("class".into(), json!(f.class));
            o.insert("message".into(), json!(f.message));
            o.insert("cost_ns".into(), json!(f.cost_ns));
            o.insert("site".into(), json!(f.site));
            o.insert("stack".into(), json!(f.stack));
            Value::Object(o)
        })
        .collect();
    json!({
        "weft_report_version": REPORT_VERSION,
        "jvm": {
            "pid": m.pid.unwrap_or(0),
            "java_version": m.java_version.clone().unwrap_or_default(),
            "vendor": m.jvm_vendor,
        },
        "duration_ns": m.duration_ns,
        "window": a.window.as_ref().map(|w| json!({
            "method": w.method,
            "each_call": w.each_call,
            "calls": w.calls,
            "from_ns": w.from_ns,
            "to_ns": w.to_ns,
            "ranges": w.ranges.iter().map(|(s, e)| json!([s, e])).collect::<Vec<_>>(),
            "covered_ns": w.covered_ns(),
            "recording_ns": w.recording_ns,
            "notes": w.notes,
            "description": crate::text::window_line(w),
        })),
        "trace": {
            "truncated": m.truncated,
            "blind_spots": m.blind_spots,
            "losses": losses,
            "lost_records": m.lost_records(),
            "unknown_records": m.unknown_records,
            "incomplete_executions": a.tasks.incomplete,
            "unmatched_ends": a.tasks.unmatched_ends,
            "unmatched_submissions": a.tasks.unmatched_submissions,
            // `weft attach` (docs/attach.md): the classes put back at detach.
            "attach": m.attach_end.map(|e| json!({
                "classes_restored": e.classes,
                "probed_methods_while_recording": e.probed_during,
                "probed_methods_after": e.probed_after,
                "method_digest_unchanged": e.shapes_equal,
            })),
        },
        "threads": threads,
        "virtual_threads": virtual_threads_json(&a.virtual_threads),
        "gc": { "pauses": m.gc_pauses.len(), "total_ns": m.gc_total_ns() },
        "cpu": {
            "cpus": a.cpu.cpus,
            "cpus_known": a.cpu.cpus_known,
            "mean_utilisation": mean.map_or(0.0, |w| w.utilisation),
            "peak_utilisation": a.cpu.peak_utilisation(),
            "mean_cs_per_100ms": mean.map(|w| w.cs_per_100ms),
            "samples": samples,
        },
        "tasks": { "classes": classes, "edges": edges_json(&a.tasks.edges) },
        "findings": findings,
        "locks": locks_json(a),
        "forkjoin": crate::forkjoin_json::forkjoin_json(a),
        "speedups": crate::speedups_json::speedups_json(&a.speedups),
        "profile": crate::sampled::profile_json(&a.profile),
    })
}

/// Counts of the happens-before edges (docs/task-model.md §Edges).
pub fn edges_json(e: &weft_analysis::edges::Edges) -> Value {
    use weft_analysis::edges::EdgeKind as K;
    json!({
        "submit": e.count(K::Submit),
        "thread_start": e.count(K::ThreadStart),
        "join": e.count(K::ThreadJoin) + e.count(K::FutureGet),
        "thread_join": e.count(K::ThreadJoin),
        "future_get": e.count(K::FutureGet),
        "unresolved_starts": e.unresolved_starts,
        "unresolved_joins": e.unresolved_joins,
    })
}

/// The `locks` object (docs/locks.md).
pub fn locks_json(a: &Analysis) -> Value {
    let l = &a.locks;
    let groups: Vec<Value> = a
        .lock_groups
        .iter()
        .map(|g| {
            json!({
                "class": g.class,
                "kind": g.kind,
                "site": g.site,
                "instances": g.locks.iter().map(|&i| l.locks[i].id.clone()).collect::<Vec<_>>(),
                "csp": g.csp,
                "max_phase_csp": g.max_phase_csp,
                "max_phase_start_ns": g.max_phase_start_ns,
                "peak_csp": g.peak_csp,
                "peak_start_ns": g.peak_start_ns,
                "phases": g.phases.iter().map(|(s, c)| json!({ "start_ns": s, "csp": c })).collect::<Vec<_>>(),
                "contended": g.contended,
                "slow_acquisitions": g.slow_acquisitions,
                "gave_up": g.gave_up,
                "blocked_ns": g.blocked_ns,
                "max_blocked_ns": g.max_blocked_ns,
                "shared_blocked_ns": g.shared_blocked_ns,
                "threads": g.threads,
                "blocked_ns_per_thread": g.blocked_per_thread.iter().map(|(t, d)| json!({ "thread": t, "ns": d })).collect::<Vec<_>>(),
                "owners": g.owners.iter().map(|(o, _)| o.clone()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let locks: Vec<Value> = l
        .locks
        .iter()
        .map(|k| {
            json!({
                "id": k.id,
                "class": k.class,
                "kind": k.kind,
                "identity_hash": k.ident,
                "csp": k.csp,
                "max_phase_csp": k.max_phase_csp,
                "max_phase_start_ns": k.max_phase_start_ns,
                "peak_csp": k.peak_csp,
                "peak_start_ns": k.peak_start_ns,
                "phases": k.phases.iter().map(|(s, c)| json!({ "start_ns": s, "csp": c })).collect::<Vec<_>>(),
                "contended": k.contended,
                "slow_acquisitions": k.slow_acquisitions,
                "gave_up": k.gave_up,
                "blocked_ns": k.blocked_ns,
                "max_blocked_ns": k.max_blocked_ns,
                "shared_blocked_ns": k.shared_blocked_ns,
                "blocked_ns_per_thread": k.blocked_per_thread.iter().map(|(t, d)| json!({ "thread": t, "ns": d })).collect::<Vec<_>>(),
                "sites": k.sites.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>(),
                "owners": k.owners.iter().map(|(o, _)| o.clone()).collect::<Vec<_>>(),
                "fair": k.fair,
                "holder_wall_samples": k.holder_wall_samples,
                "holder_off_cpu_samples": k.holder_off_cpu_samples,
                "holder_off_cpu_frames": k.holder_off_cpu_frames.iter().map(|(f, n)| json!({ "frame": f, "samples": n })).collect::<Vec<_>>(),
                "holder_held_ns": k.holder_waits.held_ns,
                "holder_waiting_ns": k.holder_waits.waiting_ns,
                "holder_waits": k.holder_waits.groups.iter().map(|(g, ns)| json!({ "wait_group": g, "ns": ns })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let phases: Vec<Value> = l
        .phases
        .iter()
        .map(|p| {
            json!({
                "lock": l.locks[p.lock].id,
                "start_ns": p.start_ns,
                "end_ns": p.end_ns,
                "csp": p.csp,
                "site": p.site,
                "owner": p.owner,
            })
        })
        .collect();
    let waits: Vec<Value> = l
        .waits
        .iter()
        .map(|w| {
            json!({
                "kind": w.kind,
                "count": w.count,
                "total_ns": w.total_ns,
                "max_ns": w.max_ns,
                "threads": w.threads.iter().map(|(t, d)| json!({ "thread": t, "ns": d })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let wait_groups: Vec<Value> = l
        .wait_groups
        .iter()
        .map(|g| {
            json!({
                "kind": g.kind,
                "class": g.class,
                "site": g.site,
                "stack": g.stack,
                "count": g.count,
                "total_ns": g.total_ns,
                "mean_ns": g.mean_ns(),
                "max_ns": g.max_ns,
                "site_inferred": g.site_inferred,
                "timed_out": g.timed_out,
                "threads": g.threads.iter().map(|(t, d)| json!({ "thread": t, "ns": d })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "interval_ns": l.interval_ns,
        "csp": l.total_csp(),
        "running_ns": l.running_ns,
        "blocked_ns": l.blocked_ns,
        "counted_threads": l.counted_threads,
        "excluded_threads": l.excluded_threads,
        "locks": locks,
        "groups": groups,
        "dominant_phases": phases,
        "waits": waits,
        "wait_groups": wait_groups,
    })
}

fn virtual_threads_json(vt: &weft_analysis::vthreads::VirtualThreadAnalysis) -> Value {
    json!({
        "count": vt.count,
        "carriers": vt.carriers,
        "mounted_ns": vt.mounted_ns,
        "unmounted_ns": vt.unmounted_ns,
        "remounts": vt.remounts,
        "carrier_changes": vt.carrier_changes,
        "synchronized_pins": vt.synchronized_pins,
        "weft_pinned_ns": vt.weft_pinned_ns,
        "pinned": vt.pinned.iter().map(|p| json!({
            "site": p.site,
            "count": p.count,
            "blocked_ns": p.blocked_ns,
            "max_ns": p.max_ns,
            "carriers_saturated_ns": p.carriers_saturated_ns,
            "synchronized_site": p.synchronized_at,
            "how": p.how,
        })).collect::<Vec<_>>(),
    })
}
