//! Chrome trace-event JSON (`chrome://tracing`, Perfetto's legacy importer,
//! speedscope): one thread per Java thread, each task execution a complete
//! (`X`) event nested in its enclosing execution, GC pauses on a thread of
//! their own, submission → execution flows (`s`/`f`), a counter of running tasks,
//! lock waits (`cat` "lock") and other waits (`cat` "wait") as `X` events nested in
//! the executions they happen in, and a CSP counter per top lock.
//! Times are µs since the start of recording, with ns precision.

use std::fmt::Write as _;

use serde_json::{json, Value};
use weft_analysis::{timeline, Analysis};

use crate::perfetto::{lock_slices, nested_times, CSP_TRACKS};

/// Thread id of the GC pause track (Java threads use their index).
pub const GC_TID: u64 = 1 << 31;

fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// The analysis as a Chrome trace-event JSON document, with a submission flow for
/// each submitted execution (from its submitting thread).
pub fn chrome_trace(a: &Analysis) -> String {
    let m = &a.model;
    let pid = m.pid.unwrap_or(1);
    let mut out = String::with_capacity(a.tasks.executions.len() * 200 + 4096);
    out.push_str("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut first = true;
    let mut line = |out: &mut String, s: &str| {
        if !first {
            out.push_str(",\n");
        }
        first = false;
        out.push_str(s);
    };
    let meta = |name: &str, tid: u64, arg: Value| {
        json!({"ph": "M", "pid": pid, "tid": tid, "name": name, "args": arg}).to_string()
    };
    line(
        &mut out,
        &meta(
            "process_name",
            0,
            json!({"name": format!("java (pid {pid})")}),
        ),
    );
    for t in m.threads.values() {
        let tid = t.index as u64;
        line(
            &mut out,
            &meta("thread_name", tid, json!({"name": t.display_name()})),
        );
        line(
            &mut out,
            &meta("thread_sort_index", tid, json!({"sort_index": t.index})),
        );
    }
    line(
        &mut out,
        &meta("thread_name", GC_TID, json!({"name": "GC pauses"})),
    );
    let times = nested_times(a);
    for (i, e) in a.tasks.executions.iter().enumerate() {
        let (b, end) = times[i];
        let mut args = json!({
            "kind": e.kind.as_str(),
            "self_ns": e.self_ns,
            "execution": if e.reported() { "reported" } else { "aggregated" },
        });
        if let Some(q) = e.queue_wait_ns() {
            args["queue_wait_ns"] = json!(q);
        }
        if let Some(s) = e.created_site() {
            args["created_at"] = json!(s);
        }
        if let Some(s) = e.submitted_site() {
            args["submitted_at"] = json!(s);
        }
        if e.incomplete() {
            args["incomplete"] = json!(true);
        }
        let mut s = String::new();
        let _ = write!(
            s,
            "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":\"{}\",\"args\":{}}}",
            e.thread,
            us(b),
            us(end - b),
            Value::String(a.tasks.class(e).to_string()),
            e.kind.as_str(),
            args
        );
        line(&mut out, &s);
        if let (Some(from), Some(ts)) = (e.submit_thread(), e.submit_ns()) {
            let id = i + 1;
            let s = format!(
                "{{\"ph\":\"s\",\"pid\":{pid},\"tid\":{from},\"ts\":{},\"id\":{id},\"name\":\"submit\",\"cat\":\"submit\"}}",
                us(ts)
            );
            line(&mut out, &s);
            let f = format!(
                "{{\"ph\":\"f\",\"bp\":\"e\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"id\":{id},\"name\":\"submit\",\"cat\":\"submit\"}}",
                e.thread,
                us(b)
            );
            line(&mut out, &f);
        }
    }
    for g in &m.gc_pauses {
        let s = format!(
            "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{GC_TID},\"ts\":{},\"dur\":{},\"name\":\"GC pause\",\"cat\":\"gc\"}}",
            us(g.start_ns),
            us(g.duration_ns())
        );
        line(&mut out, &s);
    }
    for (ts, n) in timeline::active_tasks(&a.tasks) {
        let s = format!(
            "{{\"ph\":\"C\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"name\":\"running tasks\",\"args\":{{\"tasks\":{n}}}}}",
            us(ts)
        );
        line(&mut out, &s);
    }
    let la = &a.locks;
    for sl in lock_slices(a, &times) {
        let (name, cat, args) = if let Some(i) = sl.blocked {
            let bl = &la.blocked[i];
            let lock = &la.locks[bl.lock];
            let mut args = json!({"lock": lock.id, "kind": lock.kind});
            if let Some(o) = &bl.owner {
                args["owner"] = json!(o);
            }
            if let Some(site) = &bl.site {
                args["site"] = json!(site);
            }
            if bl.shared {
                args["side"] = json!("shared");
            }
            (format!("blocked on {}", lock.class), "lock", args)
        } else {
            let w = &la.wait_intervals[sl.wait.unwrap_or(0)];
            (w.kind.to_string(), "wait", json!({}))
        };
        let s = format!(
            "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":\"{cat}\",\"args\":{args}}}",
            sl.thread,
            us(sl.begin),
            us(sl.end - sl.begin),
            Value::String(name),
        );
        line(&mut out, &s);
    }
    for l in la.locks.iter().take(CSP_TRACKS) {
        let name = Value::String(format!("CSP {}", l.id));
        for (k, &csp) in l.csp_per_interval.iter().enumerate() {
            let start = k as u64 * la.interval_ns;
            let s = format!(
                "{{\"ph\":\"C\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"name\":{name},\"args\":{{\"csp\":{csp:.4}}}}}",
                us(start)
            );
            line(&mut out, &s);
        }
    }
    out.push_str("\n]}\n");
    out
}
