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
}

pub fn run(args: SpeedupsArgs) -> Result<u8, CliError> {
    // Over the trace's own window when it was recorded with --window.
    let (mut analysis, _) = crate::export::load(&args.trace, &Default::default())?;
    if let Some(b) = &args.baseline {
        let (base, _) = crate::export::load(b, &Default::default())?;
        analysis = analysis.with_baseline(&base);
    }
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
