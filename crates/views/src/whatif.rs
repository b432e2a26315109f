//! The what-if section (docs/whatif.md): JSON (`weft whatif --json`) and text.
//! Formatting only: every number comes from `weft-whatif`.

use std::fmt::Write as _;

use serde_json::{json, Value};
use weft_analysis::human_ns;
use weft_whatif::search::{Estimate, WhatIf};

fn estimate_json(e: &Estimate, rank: Option<usize>) -> Value {
    let mut v = json!({
        "edit": e.edit,
        "estimated_ns": e.estimated_ns,
        "gain": e.gain,
        "gain_lo": e.gain_lo,
        "gain_hi": e.gain_hi,
        "confidence": e.confidence.as_str(),
        "reasons": e.reasons,
        "threads": e.peak_busy.iter().map(|(p, b, a)| json!({"pool": p, "peak_busy_before": b, "peak_busy": a})).collect::<Vec<_>>(),
    });
    if let Some(r) = rank {
        v["rank"] = json!(r);
        v["kind"] = json!(e.kind);
        v["target"] = json!(e.target);
        v["sites"] = json!(e.sites);
        v["verify"] = json!(e.verify);
    }
    v
}

/// The `whatif` member of `weft whatif --json`.
pub fn whatif_json(w: &WhatIf) -> Value {
    json!({
        "calibration": {
            "observed_ns": w.calibration.observed_ns,
            "simulated_ns": w.calibration.simulated_ns,
            "error": w.calibration.error,
        },
        "estimates": w.estimates.iter().map(|e| estimate_json(e, None)).collect::<Vec<_>>(),
        "suggestions": w.suggestions.iter().enumerate().map(|(i, e)| estimate_json(e, Some(i + 1))).collect::<Vec<_>>(),
        "pools": w.pools.iter().map(|(id, kind, threads, classes)| json!({
            "id": id, "kind": kind, "threads": threads, "classes": classes,
        })).collect::<Vec<_>>(),
        "critical_path": w.critical_path.iter().map(|p| json!({
            "kind": p.kind.as_str(), "target": p.target, "ns": p.ns,
        })).collect::<Vec<_>>(),
        "schedules": w.schedules.iter().map(|s| json!({
            "label": s.label, "makespan_ns": s.makespan_ns, "strands": s.strands,
            "lanes": s.lanes,
        })).collect::<Vec<_>>(),
        "model": {
            "cores": w.cores,
            "capacity": {
                "cores": w.capacity.cores,
                "jvm_threads_cpus": w.capacity.jvm_threads,
                "other_processes_cpus": w.capacity.other_processes,
            },
            "strands": w.strands,
            "ops": w.ops,
            "lost_events": w.lost_records,
            "waits_ns": {"exact": w.waits_exact_ns, "anchored": w.waits_anchored_ns, "unpark": w.waits_unpark_ns},
            "critical_path_nonexact_share": w.critical_path_anchored_share,
            "lock_sections": {
                "recorded": w.lock_sections.0,
                "inferred": w.lock_sections.1,
                "assumed": w.lock_sections.2,
            },
            "lock_detail_advised": w.lock_detail_advised,
            "jdk_monitors_inferred": w.jdk_monitors_inferred,
        },
    })
}

fn gain_str(e: &Estimate) -> String {
    match (e.gain, e.gain_lo, e.gain_hi) {
        (Some(g), Some(lo), Some(hi)) => format!("×{g:.2} [{lo:.2}–{hi:.2}]"),
        _ => "no estimate".to_string(),
    }
}

fn row(out: &mut String, rank: String, e: &Estimate) {
    let est = e.estimated_ns.map(human_ns).unwrap_or_else(|| "—".into());
    let _ = writeln!(
        out,
        " {rank:>2} {:<52} {:>9}  {:<22} {}",
        e.edit,
        est,
        gain_str(e),
        e.confidence.as_str()
    );
    if let Some(r) = e.reasons.first() {
        let _ = writeln!(out, "      {r}");
    }
    if let Some(s) = e.sites.first() {
        let _ = writeln!(out, "      where: {s}");
    }
}

/// The what-if section as text; `top` limits the suggestions shown.
pub fn whatif_text(w: &WhatIf, top: usize) -> String {
    let mut out = String::new();
    let c = &w.calibration;
    // 0: the recorded run could not finish in the model (no baseline to compare with).
    let calibration = if c.simulated_ns == 0 {
        format!(
            "the recorded {} cannot be replayed in the model: no estimate",
            human_ns(c.observed_ns)
        )
    } else {
        format!(
            "simulated {} vs recorded {}, {:+.1}%",
            human_ns(c.simulated_ns),
            human_ns(c.observed_ns),
            (c.simulated_ns as f64 - c.observed_ns as f64) / c.observed_ns.max(1) as f64 * 100.0
        )
    };
    let _ = writeln!(
        out,
        "What-if (model calibration: {calibration}; {} cores, {} strands, {} ops)",
        w.cores, w.strands, w.ops
    );
    if !w.critical_path.is_empty() {
        let total: u64 = w.critical_path.iter().map(|p| p.ns).sum();
        let parts: Vec<String> = w
            .critical_path
            .iter()
            .take(5)
            .map(|p| {
                format!(
                    "{} {} {:.0}%",
                    p.kind.as_str(),
                    p.target,
                    p.ns as f64 / total.max(1) as f64 * 100.0
                )
            })
            .collect();
        let _ = writeln!(out, "  critical path: {}", parts.join(", "));
    }
    if w.lock_detail_advised {
        let _ = writeln!(
            out,
            "  locks: a monitor's critical sections are inferred from its hand-offs (uncontended and spun acquisitions are unseen); for lock estimates, record again with `weft record --lock-detail`"
        );
    }
    if w.jdk_monitors_inferred {
        let _ = writeln!(
            out,
            "  locks: the critical path's monitors are the JDK's, which `--lock-detail` does not record: their critical sections are inferred from their hand-offs (uncontended and spun acquisitions are unseen)"
        );
    }
    if !w.estimates.is_empty() {
        let _ = writeln!(out, "  estimates:");
        for e in &w.estimates {
            row(&mut out, String::new(), e);
        }
    }
    if !w.suggestions.is_empty() {
        let _ = writeln!(
            out,
            "  suggestions (medium and high confidence first, then by the low end of the gain):"
        );
        for (i, e) in w.suggestions.iter().take(top).enumerate() {
            row(&mut out, format!("{}", i + 1), e);
        }
        let _ = writeln!(
            out,
            "  verify: make one change, record again, then: weft compare before.weft after.weft --edit EDIT"
        );
    }
    out
}

/// Colours of the what-if section (critical path parts, schedule bars by class).
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// The what-if section of the HTML report: calibration, the critical path's
/// composition as a bar, the top suggestions and the schedules.
pub fn whatif_html(w: &WhatIf) -> String {
    use crate::html::esc;
    let mut h = String::new();
    let c = &w.calibration;
    let _ = write!(
        h,
        "<section id=\"whatif\"><h2>What-if</h2><p class=\"muted small\">Model calibration: simulated {} vs recorded {} ({:+.1}%). \
Estimates are ratios against the simulated run; every one carries its range and confidence (docs/whatif.md).</p>",
        esc(&human_ns(c.simulated_ns)),
        esc(&human_ns(c.observed_ns)),
        (c.simulated_ns as f64 - c.observed_ns as f64) / c.observed_ns.max(1) as f64 * 100.0
    );
    let total: u64 = w.critical_path.iter().map(|p| p.ns).sum();
    if total > 0 {
        h.push_str("<h3>Critical path</h3><div style=\"display:flex;height:22px;width:100%;border:1px solid #ccc\">");
        for (i, p) in w.critical_path.iter().take(6).enumerate() {
            let pct = p.ns as f64 / total as f64 * 100.0;
            let _ = write!(
                h,
                "<div title=\"{} {} {} ({:.1}%)\" style=\"width:{pct:.2}%;background:{}\"></div>",
                p.kind.as_str(),
                esc(&p.target),
                esc(&human_ns(p.ns)),
                pct,
                PALETTE[i % PALETTE.len()]
            );
        }
        h.push_str("</div><ul class=\"small\">");
        for (i, p) in w.critical_path.iter().take(6).enumerate() {
            let _ = write!(
                h,
                "<li><span style=\"color:{}\">■</span> {} {}: {} ({:.1}%)</li>",
                PALETTE[i % PALETTE.len()],
                p.kind.as_str(),
                esc(&p.target),
                esc(&human_ns(p.ns)),
                p.ns as f64 / total as f64 * 100.0
            );
        }
        h.push_str("</ul>");
    }
    if !w.suggestions.is_empty() {
        h.push_str("<h3>Suggestions</h3><table class=\"grid\"><thead><tr><th>#</th><th>change</th><th>estimated</th><th>gain [range]</th><th>confidence</th><th>why not high</th><th>site</th></tr></thead><tbody>");
        for (i, e) in w.suggestions.iter().take(5).enumerate() {
            let _ = write!(
                h,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                i + 1,
                esc(&e.edit),
                esc(&e.estimated_ns.map(human_ns).unwrap_or_default()),
                esc(&gain_str(e)),
                e.confidence.as_str(),
                esc(e.reasons.first().map_or("", String::as_str)),
                esc(e.sites.first().map_or("", String::as_str))
            );
        }
        h.push_str("</tbody></table><p class=\"muted small\">Verify: make one change, record again, then <code>weft compare before.weft after.weft --edit EDIT</code>.</p>");
    }
    schedules_html(w, &mut h);
    h.push_str("</section>\n");
    h
}

/// A lane's label in the gutter: the end of a long name (its class, not its package).
fn short_label(l: &str) -> String {
    let n = l.chars().count();
    if n <= 30 {
        l.to_string()
    } else {
        format!("…{}", l.chars().skip(n - 29).collect::<String>())
    }
}

/// The recorded run, its replay and the run after a change, one SVG each on one time
/// axis (the longest strands of each: `weft_whatif::schedule::MAX_BARS`).
fn schedules_html(w: &WhatIf, h: &mut String) {
    use crate::html::esc;
    const LANE_PX: f64 = 14.0;
    const GUTTER_PX: f64 = 190.0;
    const PLOT_PX: f64 = 760.0;
    const MAX_LANES: usize = 64;
    if w.schedules.len() < 2 {
        return;
    }
    let span = w
        .schedules
        .iter()
        .flat_map(|s| s.bars.iter().map(|b| b.end_ns).chain([s.makespan_ns]))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let colour = |class: &str| {
        let h = class
            .bytes()
            .fold(0u32, |a, b| a.wrapping_mul(31).wrapping_add(b as u32));
        PALETTE[h as usize % PALETTE.len()]
    };
    let _ = write!(
        h,
        "<h3>Schedules</h3><p class=\"muted small\">The recorded run, the simulator's replay of it, and the run after the change, on one time axis ({} across): each bar is a task or a thread's own code on the thread that ran it (the longest {} of each run; nested runs drawn lower). Hover a bar for its class and times.</p>",
        esc(&human_ns(span as u64)),
        weft_whatif::schedule::MAX_BARS
    );
    for s in &w.schedules {
        let lanes = s.lanes.len().min(MAX_LANES);
        let height = lanes as f64 * LANE_PX + 18.0;
        let _ = write!(
            h,
            "<div class=\"small\"><b>{}</b>: {} ({} strands{})</div><svg width=\"{}\" height=\"{height}\" style=\"font:10px sans-serif\">",
            esc(&s.label),
            esc(&human_ns(s.makespan_ns)),
            s.strands,
            if s.lanes.len() > MAX_LANES {
                format!(", first {MAX_LANES} of {} threads", s.lanes.len())
            } else {
                String::new()
            },
            GUTTER_PX + PLOT_PX + 10.0
        );
        for (i, l) in s.lanes.iter().take(lanes).enumerate() {
            let _ = write!(
                h,
                "<text x=\"0\" y=\"{:.1}\">{}</text>",
                i as f64 * LANE_PX + 11.0,
                esc(&short_label(l))
            );
        }
        for b in s.bars.iter().filter(|b| (b.lane as usize) < lanes) {
            let x = GUTTER_PX + b.start_ns as f64 / span * PLOT_PX;
            let wd = ((b.end_ns - b.start_ns) as f64 / span * PLOT_PX).max(0.5);
            let d = f64::from(b.depth.min(3));
            let y = b.lane as f64 * LANE_PX + 1.0 + d * 3.0;
            let _ = write!(
                h,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{wd:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{} {}–{} ({})</title></rect>",
                LANE_PX - 2.0 - d * 3.0,
                colour(&b.class),
                esc(&b.class),
                esc(&human_ns(b.start_ns)),
                esc(&human_ns(b.end_ns)),
                esc(&human_ns(b.end_ns - b.start_ns))
            );
        }
        let axis_y = lanes as f64 * LANE_PX + 2.0;
        let end_x = GUTTER_PX + s.makespan_ns as f64 / span * PLOT_PX;
        let _ = write!(
            h,
            "<line x1=\"{GUTTER_PX}\" y1=\"{axis_y:.1}\" x2=\"{end_x:.1}\" y2=\"{axis_y:.1}\" stroke=\"#333\"/><text x=\"{end_x:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text></svg>",
            axis_y + 12.0,
            esc(&human_ns(s.makespan_ns))
        );
    }
}
