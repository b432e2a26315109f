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
        "model": {
            "cores": w.cores,
            "strands": w.strands,
            "ops": w.ops,
            "lost_events": w.lost_records,
            "waits_ns": {"exact": w.waits_exact_ns, "anchored": w.waits_anchored_ns},
            "critical_path_nonexact_share": w.critical_path_anchored_share,
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
    let _ = writeln!(
        out,
        "What-if (model calibration: simulated {} vs recorded {}, {:+.1}%; {} cores, {} strands, {} ops)",
        human_ns(c.simulated_ns),
        human_ns(c.observed_ns),
        (c.simulated_ns as f64 - c.observed_ns as f64) / c.observed_ns.max(1) as f64 * 100.0,
        w.cores,
        w.strands,
        w.ops
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
    if !w.estimates.is_empty() {
        let _ = writeln!(out, "  estimates:");
        for e in &w.estimates {
            row(&mut out, String::new(), e);
        }
    }
    if !w.suggestions.is_empty() {
        let _ = writeln!(out, "  suggestions (ranked by the low end of the gain):");
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
