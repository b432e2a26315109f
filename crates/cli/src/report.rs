//! `weft report`: read a trace, analyse it, print a view.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::CliError;

#[derive(Args)]
pub struct ReportArgs {
    /// The trace file written by `weft record`.
    pub trace: PathBuf,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// Write the HTML report (one self-contained file) to FILE instead of printing.
    #[arg(long, value_name = "FILE", conflicts_with = "json")]
    pub html: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> Result<u8, CliError> {
    if let Some(out) = &args.html {
        let (data, analysis) = crate::export::load(&args.trace)?;
        crate::export::write_html(&args.trace, &data, &analysis, out)?;
        return Ok(0);
    }
    let text = render(&args.trace, args.json)?;
    let mut out = std::io::stdout().lock();
    // A closed pipe (`weft report x | head`) is not an error worth a message.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    Ok(0)
}

/// The report of a trace as text or JSON.
pub fn render(trace: &std::path::Path, json: bool) -> Result<String, CliError> {
    if !trace.exists() {
        return Err(CliError::new(format!(
            "trace {} does not exist (record one with `weft record -o {} -- java …`)",
            trace.display(),
            trace.display()
        )));
    }
    let trace_data = weft_trace::read_trace(trace)
        .map_err(|e| CliError::new(format!("{}: {e}", trace.display())))?;
    let analysis = weft_analysis::analyze(&trace_data);
    if json {
        let value = weft_views::report_json(&analysis);
        let mut s = serde_json::to_string_pretty(&value)
            .map_err(|e| CliError::new(format!("cannot encode the report as JSON: {e}")))?;
        s.push('\n');
        Ok(s)
    } else {
        let mut text = weft_views::report_text(&analysis);
        match crate::whatif::for_report(&trace_data, &analysis) {
            Some(Ok(w)) => {
                text.push('\n');
                text.push_str(&weft_views::whatif_text(&w, 3));
            }
            Some(Err(msg)) => {
                text.push('\n');
                text.push_str(&msg);
                text.push('\n');
            }
            None => {}
        }
        Ok(text)
    }
}
