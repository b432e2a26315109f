//! `weft whatif` and `weft compare` (docs/whatif.md).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use weft_analysis::window::Window;
use weft_whatif::Edit;

use crate::CliError;

#[derive(Args)]
pub struct WhatIfArgs {
    /// The trace file written by `weft record`.
    pub trace: PathBuf,
    /// An edit to estimate (repeatable): lock:LOCK:remove, lock:LOCK:shorten=P%,
    /// lock:LOCK:split=N, inline:CLASS, fj-coarsen:CLASS:levels=N,
    /// fj-refine:CLASS:levels=N, pool:POOL=N, cores:N, faster:TARGET:P%.
    /// Without --edit, weft searches the candidates itself.
    #[arg(long = "edit", value_name = "EDIT")]
    pub edits: Vec<String>,
    /// Also estimate all the given edits together.
    #[arg(long)]
    pub combine: bool,
    /// Print one JSON object (a `whatif` member).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub window: WindowArgs,
}

/// The part of the recording to analyse (as `weft report`; `weft whatif`, `weft
/// compare`, `weft speedups`): a trace recorded with `--window` is read over its
/// window by default.
#[derive(Args, Clone, Copy, Default)]
pub struct WindowArgs {
    /// Only from this time of the recording on (e.g. 1.5s, 200ms).
    #[arg(long, value_name = "DUR", value_parser = crate::report::parse_offset_ns)]
    pub from: Option<u64>,
    /// Only up to this time of the recording (e.g. 3s).
    #[arg(long, value_name = "DUR", value_parser = crate::report::parse_offset_ns)]
    pub to: Option<u64>,
    /// With a trace recorded with --window: each call of the window method is its
    /// own window, laid end to end (default: from the first entry to the last exit).
    #[arg(long)]
    pub window_all: bool,
}

impl WindowArgs {
    pub fn selection(self) -> weft_analysis::window::Selection {
        weft_analysis::window::Selection {
            from_ns: self.from,
            to_ns: self.to,
            each_call: self.window_all,
        }
    }
}

#[derive(Args)]
pub struct CompareArgs {
    /// The trace before the change.
    pub before: PathBuf,
    /// The trace after the change.
    pub after: PathBuf,
    /// The edit the change made (repeatable; all together): the estimate on BEFORE
    /// is printed beside the measured gain, with the error.
    #[arg(long = "edit", value_name = "EDIT")]
    pub edits: Vec<String>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Applies to both traces: with `--window` recordings, each one's window.
    #[command(flatten)]
    pub window: WindowArgs,
}

/// Largest graph `weft report` searches the candidates of (each candidate is
/// several simulations); above it the report points to `weft whatif`.
const REPORT_SEARCH_MAX_OPS: usize = 300_000;

/// The execution graph a report simulates: `None` when the run has nothing to
/// simulate, an error when it is too large to simulate in a report's time (the
/// same guard for the what-if search and the simulated possible speedups).
pub fn report_graph(
    analysis: &weft_analysis::Analysis,
) -> Option<Result<weft_whatif::ExecGraph, String>> {
    // Each strand gives a few ops: a run with this many executions is too large to
    // search, and not worth building the graph for in a report.
    let strands = analysis.tasks.executions.len() + analysis.forkjoin.usages.len();
    if strands > REPORT_SEARCH_MAX_OPS / 3 {
        return Some(Err(format!(
            "{strands} task executions are too many to simulate in the report; run `weft whatif TRACE`"
        )));
    }
    let g = weft_whatif::build::build(analysis);
    if g.strands.is_empty() {
        return None;
    }
    if g.ops.len() > REPORT_SEARCH_MAX_OPS {
        return Some(Err(format!(
            "{} ops are too many to simulate in the report; run `weft whatif TRACE`",
            g.ops.len()
        )));
    }
    Some(Ok(g))
}

/// The what-if section of `weft report`: the searched suggestions on the graph
/// of [`report_graph`].
pub fn for_report(
    graph: Option<&Result<weft_whatif::ExecGraph, String>>,
) -> Option<Result<weft_whatif::WhatIf, String>> {
    match graph? {
        Ok(g) => Some(Ok(weft_whatif::whatif(g, &[], false, true))),
        Err(msg) => Some(Err(format!("What-if: {msg}"))),
    }
}

/// The possible speedups' simulated gains (docs/speedups.md §Simulated gains),
/// from the graph of [`report_graph`]; when there is none, a note says why.
pub fn simulate_speedups(
    analysis: &mut weft_analysis::Analysis,
    graph: Option<&Result<weft_whatif::ExecGraph, String>>,
) {
    let sp = &mut analysis.speedups;
    match graph {
        Some(Ok(g)) => weft_whatif::speedups::fill(sp, g),
        Some(Err(msg)) if sp.status == weft_analysis::speedups::Status::Ok => {
            sp.notes.push(format!("simulated gains: none ({msg})"))
        }
        _ => {}
    }
    // The findings that need the simulated gains.
    weft_analysis::findings::add_load_imbalance(analysis);
}

fn parse_edits(texts: &[String]) -> Result<Vec<Edit>, CliError> {
    texts
        .iter()
        .map(|t| Edit::parse(t).map_err(CliError::new))
        .collect()
}

/// The execution graph of a trace within the selected window, and that window.
fn graph_of(
    path: &Path,
    window: WindowArgs,
) -> Result<(weft_whatif::ExecGraph, Option<Window>), CliError> {
    let (analysis, _) = crate::export::load(path, &window.selection())?;
    if let Some(w) = &analysis.window {
        if w.ranges.is_empty() {
            return Err(CliError::new(format!(
                "{}: the window is empty ({}): nothing to estimate",
                path.display(),
                weft_views::window_line(w)
            )));
        }
    }
    let g = weft_whatif::build::build(&analysis);
    if g.strands.is_empty() {
        return Err(CliError::new(format!(
            "{}: no thread or task activity to estimate",
            path.display()
        )));
    }
    Ok((g, analysis.window))
}

fn window_json(w: &Option<Window>) -> serde_json::Value {
    match w {
        Some(w) => serde_json::json!({
            "method": w.method,
            "ranges": w.ranges.iter().map(|(s, e)| serde_json::json!([s, e])).collect::<Vec<_>>(),
            "covered_ns": w.covered_ns(),
            "description": weft_views::window_line(w),
        }),
        None => serde_json::Value::Null,
    }
}

fn print(s: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(s.as_bytes());
    let _ = out.flush();
}

fn to_json(v: &serde_json::Value) -> Result<String, CliError> {
    let mut s = serde_json::to_string_pretty(v)
        .map_err(|e| CliError::new(format!("cannot encode JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

pub fn run(args: WhatIfArgs) -> Result<u8, CliError> {
    let edits = parse_edits(&args.edits)?;
    let (g, window) = graph_of(&args.trace, args.window)?;
    // An edit that names nothing in the trace is an error, before any simulation.
    for e in &edits {
        e.apply(&g).map_err(CliError::new)?;
    }
    let w = weft_whatif::whatif(&g, &edits, args.combine, edits.is_empty());
    if args.json {
        let mut v = weft_views::whatif_json(&w);
        if let Some(o) = v.as_object_mut() {
            o.insert("window".into(), window_json(&window));
        }
        print(&to_json(&serde_json::json!({ "whatif": v }))?);
    } else {
        if let Some(w) = &window {
            print(&format!("{}\n", weft_views::window_line(w)));
        }
        print(&weft_views::whatif_text(&w, 10));
    }
    Ok(0)
}

pub fn compare(args: CompareArgs) -> Result<u8, CliError> {
    let edits = parse_edits(&args.edits)?;
    let (before, before_window) = graph_of(&args.before, args.window)?;
    let (after, after_window) = graph_of(&args.after, args.window)?;
    let measured = before.observed_ns as f64 / after.observed_ns.max(1) as f64;
    let est = if edits.is_empty() {
        None
    } else {
        edits[0].apply_all(&before, &edits).map_err(CliError::new)?;
        let label = args.edits.join(" + ");
        let w = weft_whatif::whatif(&before, &[], false, false);
        let base = weft_whatif::search::Baseline::of(&before, &w.critical_path);
        Some(weft_whatif::estimate(&before, &base, &edits, &label))
    };
    let error = est
        .as_ref()
        .and_then(|e| e.gain)
        .map(|g| (g - measured).abs() / measured);
    if args.json {
        let v = serde_json::json!({ "compare": {
            "before_ns": before.observed_ns,
            "after_ns": after.observed_ns,
            "measured_gain": measured,
            "edit": args.edits.join(" + "),
            "estimated_gain": est.as_ref().and_then(|e| e.gain),
            "gain_lo": est.as_ref().and_then(|e| e.gain_lo),
            "gain_hi": est.as_ref().and_then(|e| e.gain_hi),
            "confidence": est.as_ref().map(|e| e.confidence.as_str()),
            "reasons": est.as_ref().map(|e| e.reasons.clone()).unwrap_or_default(),
            "error": error,
            "before_window": window_json(&before_window),
            "after_window": window_json(&after_window),
        }});
        print(&to_json(&v)?);
        return Ok(0);
    }
    let mut s = format!(
        "before {} , after {}: measured ×{measured:.3}\n",
        weft_analysis::human_ns(before.observed_ns),
        weft_analysis::human_ns(after.observed_ns)
    );
    if let Some(e) = &est {
        match (e.gain, error) {
            (Some(g), Some(err)) => s.push_str(&format!(
                "estimated ×{g:.3} [{:.3}–{:.3}] ({}), measured ×{measured:.3}, error {:.1}%\n",
                e.gain_lo.unwrap_or(g),
                e.gain_hi.unwrap_or(g),
                e.confidence.as_str(),
                err * 100.0
            )),
            _ => s.push_str(&format!(
                "no estimate for {}: {}\n",
                e.edit,
                e.reasons.first().map_or("unknown reason", String::as_str)
            )),
        }
    }
    print(&s);
    Ok(0)
}
