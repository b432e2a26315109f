//! The HTML report of several JVMs ([`weft_analysis::jvms::Jvms`]): the JVM
//! list, one timeline with each JVM's threads as a group (placed on the
//! wall-clock line the JVMs were aligned on), the totals across JVMs, then each
//! JVM's findings and task classes. One JVM renders as its plain HTML report.

use std::fmt::Write;

use serde_json::{json, Value};
use weft_analysis::human_ns;
use weft_analysis::jvms::Jvms;

use crate::html::{esc, page_data, push_stat, CSS, JS, MAX_CLASS_ROWS, TIMELINE_CANVASES};

/// Lane ids of JVM `j`: its thread indices, above those of the JVMs before it
/// (thread indices are per trace; a JSON number holds 2^53 exactly).
fn lane_id(j: usize, thread: &Value) -> Value {
    json!((j as u64) << 32 | thread.as_u64().unwrap_or(0))
}

fn shifted(v: &Value, by: u64) -> Value {
    json!(v.as_u64().unwrap_or(0) + by)
}

/// An index into a list that was appended after `offset` entries (-1: none).
fn reindexed(v: &Value, offset: usize) -> Value {
    match v.as_i64() {
        Some(i) if i >= 0 => json!(i + offset as i64),
        _ => json!(-1),
    }
}

fn array_mut<'a>(v: &'a mut Value, key: &str) -> &'a mut Vec<Value> {
    if !v[key].is_array() {
        v[key] = json!([]);
    }
    v[key].as_array_mut().expect("made an array")
}

/// The timeline data of every JVM in one page: lanes grouped by JVM (`g`), times
/// shifted by each JVM's start, class, site and string indices shifted past the
/// JVMs before it. Bucket cells (drawn when executions were sampled) are moved
/// onto the widest JVM's bucket width: a cell may be drawn up to one bucket late.
fn merged_page_data(all: &Jvms) -> Value {
    let parts: Vec<Value> = all.jvms.iter().map(|j| page_data(&j.analysis)).collect();
    let width = parts
        .iter()
        .filter_map(|p| p["bucket_ns"].as_u64())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut out = json!({
        "dur": all.totals.span_ns.max(1),
        "bucket_ns": width,
        "lanes": [], "classes": [], "sites": [], "gc": [], "cpu": [],
        "ex": {"t": [], "b": [], "d": [], "s": [], "c": [], "l": [], "q": [], "cs": [], "ss": [], "f": []},
        "waits": {"t": [], "b": [], "d": [], "k": [], "n": [], "o": [], "s": [], "strs": [], "total": 0, "blocked": 0},
        "tasks_total": 0, "tasks_shown": 0,
        "cpus": 0, "cpus_known": true,
    });
    for (j, (jvm, p)) in all.jvms.iter().zip(&parts).enumerate() {
        let at = jvm.start_ns;
        let label = jvm.label();
        let class_off = out["classes"].as_array().map_or(0, Vec::len);
        let site_off = out["sites"].as_array().map_or(0, Vec::len);
        let str_off = out["waits"]["strs"].as_array().map_or(0, Vec::len);
        let own_width = p["bucket_ns"].as_u64().unwrap_or(1).max(1);
        for l in p["lanes"].as_array().into_iter().flatten() {
            let mut l = l.clone();
            l["t"] = lane_id(j, &l["t"]);
            l["s"] = shifted(&l["s"], at);
            l["e"] = shifted(&l["e"], at);
            l["g"] = json!(j);
            l["name"] = json!(format!("{label} · {}", l["name"].as_str().unwrap_or("?")));
            let cells: Vec<Value> = l["cells"]
                .as_array()
                .map(|c| {
                    c.chunks(4)
                        .flat_map(|cell| {
                            let bucket = cell[0].as_u64().unwrap_or(0);
                            [
                                json!((at + bucket * own_width) / width),
                                cell[1].clone(),
                                cell[2].clone(),
                                reindexed(&cell[3], class_off),
                            ]
                        })
                        .collect()
                })
                .unwrap_or_default();
            l["cells"] = json!(cells);
            array_mut(&mut out, "lanes").push(l);
        }
        for c in p["classes"].as_array().into_iter().flatten() {
            array_mut(&mut out, "classes").push(c.clone());
        }
        for s in p["sites"].as_array().into_iter().flatten() {
            array_mut(&mut out, "sites").push(s.clone());
        }
        for g in p["gc"].as_array().into_iter().flatten() {
            array_mut(&mut out, "gc").push(shifted(g, at));
        }
        // CPU points: start, end, utilisation, context switches.
        for (k, v) in p["cpu"].as_array().into_iter().flatten().enumerate() {
            let v = if k % 4 < 2 { shifted(v, at) } else { v.clone() };
            array_mut(&mut out, "cpu").push(v);
        }
        let ex = &p["ex"];
        for key in ["d", "s", "l", "q", "f"] {
            for v in ex[key].as_array().into_iter().flatten() {
                array_mut(&mut out["ex"], key).push(v.clone());
            }
        }
        for v in ex["t"].as_array().into_iter().flatten() {
            array_mut(&mut out["ex"], "t").push(lane_id(j, v));
        }
        for v in ex["b"].as_array().into_iter().flatten() {
            array_mut(&mut out["ex"], "b").push(shifted(v, at));
        }
        for v in ex["c"].as_array().into_iter().flatten() {
            array_mut(&mut out["ex"], "c").push(reindexed(v, class_off));
        }
        for key in ["cs", "ss"] {
            for v in ex[key].as_array().into_iter().flatten() {
                array_mut(&mut out["ex"], key).push(reindexed(v, site_off));
            }
        }
        let w = &p["waits"];
        for key in ["d", "k"] {
            for v in w[key].as_array().into_iter().flatten() {
                array_mut(&mut out["waits"], key).push(v.clone());
            }
        }
        for v in w["t"].as_array().into_iter().flatten() {
            array_mut(&mut out["waits"], "t").push(lane_id(j, v));
        }
        for v in w["b"].as_array().into_iter().flatten() {
            array_mut(&mut out["waits"], "b").push(shifted(v, at));
        }
        for key in ["n", "o", "s"] {
            for v in w[key].as_array().into_iter().flatten() {
                array_mut(&mut out["waits"], key).push(reindexed(v, str_off));
            }
        }
        for s in w["strs"].as_array().into_iter().flatten() {
            array_mut(&mut out["waits"], "strs").push(s.clone());
        }
        for key in ["total", "blocked"] {
            out["waits"][key] =
                json!(out["waits"][key].as_u64().unwrap_or(0) + w[key].as_u64().unwrap_or(0));
        }
        for key in ["tasks_total", "tasks_shown"] {
            out[key] = json!(out[key].as_u64().unwrap_or(0) + p[key].as_u64().unwrap_or(0));
        }
        out["cpus"] = json!(out["cpus"]
            .as_u64()
            .unwrap_or(0)
            .max(p["cpus"].as_u64().unwrap_or(0)));
        out["cpus_known"] = json!(
            out["cpus_known"].as_bool().unwrap_or(true)
                && p["cpus_known"].as_bool().unwrap_or(false)
        );
    }
    out
}

/// The HTML report of one or several JVMs.
pub fn report_html_jvms(all: &Jvms, title: &str) -> String {
    if let [only] = all.jvms.as_slice() {
        return crate::report_html(&only.analysis, title);
    }
    let t = &all.totals;
    let data = merged_page_data(all).to_string().replace("</", "<\\/");
    let mut h = String::with_capacity(1 << 20);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>weft — {}</title>\n<style>\n{CSS}\n</style></head><body>\n\
<header><h1>weft <span class=\"sub\">concurrency report · {} JVMs</span></h1><div class=\"file\">{}</div></header>\n<section class=\"summary\">",
        esc(title),
        all.jvms.len(),
        esc(title)
    );
    let mut stat = |k: &str, v: String| push_stat(&mut h, k, &v);
    stat("JVMs", all.jvms.len().to_string());
    stat("first start to last end", human_ns(t.span_ns));
    stat("threads", t.threads.to_string());
    stat(
        "task executions",
        if t.aggregated > 0 {
            format!("{} (+{} aggregated)", t.executions, t.aggregated)
        } else {
            t.executions.to_string()
        },
    );
    h.push_str("</section>\n");
    for n in &all.notes {
        let _ = write!(h, "<p class=\"muted\">NOTE: {}</p>", esc(n));
    }

    // ---- the JVMs ----
    h.push_str("<section id=\"jvms\"><h2>JVMs</h2><table class=\"grid\"><thead><tr><th>JVM</th><th>start</th><th>duration</th><th>threads</th><th>task executions</th><th>findings</th><th>command line</th><th>trace</th></tr></thead><tbody>");
    for j in &all.jvms {
        let a = &j.analysis;
        let tasks: u64 = a.tasks.classes.iter().map(|c| c.executions).sum();
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">+{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"site\">{}</td><td class=\"site\">{}</td></tr>",
            esc(&j.label()),
            human_ns(j.start_ns),
            human_ns(j.duration_ns()),
            a.model.threads.values().filter(|t| !t.virtual_thread).count(),
            tasks,
            a.findings.len(),
            esc(&j.command_line),
            esc(&j.trace_file)
        );
    }
    h.push_str("</tbody></table></section>\n");

    // ---- one timeline, each JVM's threads as a group (drawn by the script) ----
    h.push_str("<section id=\"timeline-section\"><h2>Timeline</h2><p class=\"muted small\">All JVMs on one wall-clock time line; each JVM's threads are one group (lane names start with the JVM). CPU utilisation: each JVM's own, drawn where it ran.</p>");
    h.push_str(TIMELINE_CANVASES);

    // ---- totals across JVMs ----
    h.push_str("<section id=\"classes\"><h2>Task classes, all JVMs</h2><table class=\"grid\"><thead><tr><th>class</th><th>kind</th><th>executions</th><th>aggregated</th><th>submitted</th><th>total self</th><th>JVMs (executions)</th></tr></thead><tbody>");
    for c in t.classes.iter().take(MAX_CLASS_ROWS) {
        let per: Vec<String> = c
            .per_jvm
            .iter()
            .map(|(i, n)| format!("{} ({n})", all.jvms[*i].label()))
            .collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"site\">{}</td></tr>",
            esc(&c.class),
            c.kind.as_str(),
            c.executions,
            c.aggregated,
            c.submitted,
            human_ns(c.self_ns),
            esc(&per.join(", "))
        );
    }
    h.push_str("</tbody></table></section>\n");
    h.push_str("<section id=\"locks\"><h2>Contended locks, all JVMs</h2>");
    if t.locks.is_empty() {
        h.push_str("<p class=\"muted\">No contended lock in any JVM.</p>");
    } else {
        h.push_str("<table class=\"grid\"><thead><tr><th>lock class</th><th>kind</th><th>contended</th><th>blocked</th><th>JVMs (CSP)</th></tr></thead><tbody>");
        for l in &t.locks {
            let per: Vec<String> = l
                .per_jvm
                .iter()
                .map(|(i, c)| format!("{} ({c:.2})", all.jvms[*i].label()))
                .collect();
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"site\">{}</td></tr>",
                esc(&l.class),
                esc(l.kind),
                l.contended,
                human_ns(l.blocked_ns),
                esc(&per.join(", "))
            );
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section>\n");

    // ---- each JVM: findings and its task classes ----
    for j in &all.jvms {
        let a = &j.analysis;
        let _ = write!(
            h,
            "<section class=\"jvm\"><h2>{}</h2><p class=\"muted small\">{} · {}</p><h3>Findings</h3>",
            esc(&j.label()),
            esc(&j.command_line),
            esc(&j.trace_file)
        );
        if a.findings.is_empty() {
            h.push_str("<p class=\"muted\">No findings.</p>");
        }
        for f in &a.findings {
            h.push_str(&crate::html::finding_html(f));
        }
        h.push_str("<h3>Task classes</h3><table class=\"grid\"><thead><tr><th>class</th><th>kind</th><th>executions</th><th>aggregated</th><th>total self</th><th>median</th><th>p90</th><th>threads</th></tr></thead><tbody>");
        for c in a.tasks.classes.iter().take(MAX_CLASS_ROWS) {
            let g = &c.granularity_ns;
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&c.class),
                c.kind.as_str(),
                c.executions,
                c.aggregated,
                human_ns(g.total),
                human_ns(g.p50),
                human_ns(g.p90),
                c.threads
            );
        }
        h.push_str("</tbody></table></section>\n");
    }
    h.push_str("<footer class=\"muted small\">Generated by weft. Self-contained: no network access needed.</footer>\n<div id=\"weft-status\" hidden></div>\n");
    let _ = write!(
        h,
        "<script type=\"application/json\" id=\"weft-data\">{data}</script>\n<script>\n{JS}\n</script>\n</body></html>\n"
    );
    h
}
