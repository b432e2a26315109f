//! Reports over several JVMs ([`weft_analysis::jvms::Jvms`]): the JVM list, the
//! totals across JVMs, then each JVM's own report. One JVM renders as its plain
//! report with a `jvms` list of one.

use std::fmt::Write;

use serde_json::{json, Value};
use weft_analysis::human_ns;
use weft_analysis::jvms::{Jvm, Jvms};

fn jvm_json(j: &Jvm) -> Value {
    json!({
        "pid": j.pid,
        "command_line": j.command_line,
        "trace": j.trace_file,
        "start_wall_ns": j.start_wall_ns,
        "start_ns": j.start_ns,
        "duration_ns": j.duration_ns(),
        "truncated": j.analysis.model.truncated,
        "agent_version": j.agent_version,
    })
}

/// Tags each entry of `report[section][list]` with the JVM it comes from.
fn tag_entries(report: &mut Value, section: &str, list: &str, pid: Option<u64>) {
    if let Some(entries) = report[section][list].as_array_mut() {
        for e in entries {
            if let Some(o) = e.as_object_mut() {
                o.insert("jvms".into(), json!([pid]));
            }
        }
    }
}

/// The JSON report of one or several JVMs. One JVM: its report plus `jvms`.
/// Several: `jvms` (each with its own full `report`), and `tasks.classes`,
/// `locks.locks` and `totals` across them, each entry naming its JVMs (pids).
pub fn report_json_jvms(all: &Jvms) -> Value {
    let jvms: Vec<Value> = all.jvms.iter().map(jvm_json).collect();
    if let [only] = all.jvms.as_slice() {
        let mut v = crate::report_json(&only.analysis);
        tag_entries(&mut v, "tasks", "classes", only.pid);
        tag_entries(&mut v, "locks", "locks", only.pid);
        v["jvms"] = json!(jvms);
        return v;
    }
    let pid = |i: usize| all.jvms[i].pid;
    let t = &all.totals;
    let classes: Vec<Value> = t
        .classes
        .iter()
        .map(|c| {
            json!({
                "class": c.class,
                "kind": c.kind.as_str(),
                "executions": c.executions,
                "aggregated": c.aggregated,
                "submitted": c.submitted,
                "self_ns_total": c.self_ns,
                "jvms": c.per_jvm.iter().map(|(i, _)| pid(*i)).collect::<Vec<_>>(),
                "per_jvm": c.per_jvm.iter().map(|(i, n)| json!({ "pid": pid(*i), "executions": n })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let locks: Vec<Value> = t
        .locks
        .iter()
        .map(|l| {
            json!({
                "class": l.class,
                "kind": l.kind,
                "contended": l.contended,
                "blocked_ns": l.blocked_ns,
                "jvms": l.per_jvm.iter().map(|(i, _)| pid(*i)).collect::<Vec<_>>(),
                "per_jvm": l.per_jvm.iter().map(|(i, c)| json!({ "pid": pid(*i), "csp": c })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let jvms: Vec<Value> = all
        .jvms
        .iter()
        .zip(jvms)
        .map(|(j, mut v)| {
            v["report"] = crate::report_json(&j.analysis);
            v
        })
        .collect();
    json!({
        "weft_report_version": crate::REPORT_VERSION,
        "jvms": jvms,
        "duration_ns": t.span_ns,
        "notes": all.notes,
        "totals": {
            "jvms": all.jvms.len(),
            "executions": t.executions,
            "aggregated": t.aggregated,
            "threads": t.threads,
        },
        "tasks": { "classes": classes },
        "locks": { "locks": locks },
    })
}

/// The text report of one or several JVMs.
pub fn report_text_jvms(all: &Jvms) -> String {
    if let [only] = all.jvms.as_slice() {
        return crate::report_text(&only.analysis);
    }
    let t = &all.totals;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "weft: {} JVMs over {} (wall clock), {} task executions, {} threads",
        all.jvms.len(),
        human_ns(t.span_ns),
        t.executions,
        t.threads
    );
    for n in &all.notes {
        let _ = writeln!(out, "NOTE: {n}.");
    }
    let _ = writeln!(out, "\nJVMs (aligned on wall-clock time)");
    let _ = writeln!(
        out,
        "  {:<12} {:>9} {:>9} {:>8}  trace / command",
        "jvm", "start", "length", "tasks"
    );
    for j in &all.jvms {
        let tasks: u64 = j.analysis.tasks.classes.iter().map(|c| c.executions).sum();
        let _ = writeln!(
            out,
            "  {:<12} {:>9} {:>9} {:>8}  {}{}",
            j.label(),
            human_ns(j.start_ns),
            human_ns(j.duration_ns()),
            tasks,
            j.trace_file,
            if j.command_line.is_empty() {
                String::new()
            } else {
                format!(": {}", shorten(&j.command_line, 80))
            }
        );
    }
    let _ = writeln!(out, "\nTask classes, all JVMs (by total self time)");
    let _ = writeln!(
        out,
        "  {:<46} {:<10} {:>8} {:>8} {:>10}  jvms",
        "class", "kind", "execs", "aggr", "self"
    );
    for c in &t.classes {
        let per: Vec<String> = c
            .per_jvm
            .iter()
            .map(|(i, n)| format!("{} {n}", all.jvms[*i].label()))
            .collect();
        let _ = writeln!(
            out,
            "  {:<46} {:<10} {:>8} {:>8} {:>10}  {}",
            c.class,
            c.kind.as_str(),
            c.executions,
            c.aggregated,
            human_ns(c.self_ns),
            per.join(", ")
        );
    }
    if !t.locks.is_empty() {
        let _ = writeln!(out, "\nLocks, all JVMs (by blocked time; CSP per JVM)");
        for l in &t.locks {
            let per: Vec<String> = l
                .per_jvm
                .iter()
                .map(|(i, c)| format!("{} {:.0}%", all.jvms[*i].label(), c * 100.0))
                .collect();
            let _ = writeln!(
                out,
                "  {:<40} {:<15} {:>6} contended, {:>9} blocked  {}",
                l.class,
                l.kind,
                l.contended,
                human_ns(l.blocked_ns),
                per.join(", ")
            );
        }
    }
    for j in &all.jvms {
        let _ = writeln!(
            out,
            "\n=== JVM {} ({}), from {} ===",
            j.label(),
            j.trace_file,
            human_ns(j.start_ns)
        );
        out.push_str(&crate::report_text(&j.analysis));
    }
    out
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}
