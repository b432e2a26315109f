//! `weft speedups`: the possible speedups of a trace (docs/speedups.md), with
//! the overhead terms when a baseline trace is given.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::CliError;

#[derive(Args)]
pub struct SpeedupsArgs {
    /// The trace file written by `weft record`.
    pub trace: PathBuf,
    /// A trace of the same program run with one worker (or sequentially): gives
    /// the serial and parallel overhead terms.
    #[arg(long, value_name = "BASELINE.weft")]
    pub baseline: Option<PathBuf>,
    /// Print the `speedups` JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub window: crate::whatif::WindowArgs,
}

pub fn run(args: SpeedupsArgs) -> Result<u8, CliError> {
    // Over the trace's own window when it was recorded with --window (and
    // --from/--to); the baseline over its own window method only.
    let sel = args.window.selection();
    let (mut analysis, _) = crate::export::load(&args.trace, &sel)?;
    if let Some(b) = &args.baseline {
        let base_sel = weft_analysis::window::Selection {
            each_call: args.window.window_all,
            ..Default::default()
        };
        let (base, _) = crate::export::load(b, &base_sel)?;
        analysis = analysis.with_baseline(&base);
    }
    let graph = crate::whatif::report_graph(&analysis);
    crate::whatif::simulate_speedups(&mut analysis, graph.as_ref());
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&weft_views::speedups_json(&analysis.speedups))
            .map_err(|e| CliError::new(format!("cannot encode the speedups as JSON: {e}")))?;
        s.push('\n');
        s
    } else {
        weft_views::speedups_full_text(&analysis.speedups)
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    Ok(0)
}
