//! `weft report`: read a trace, analyse it, print a view.

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
        crate::export::check_outputs(&args.trace, &[out])?;
        let (_, analysis) = crate::export::load(&args.trace)?;
        crate::export::write_html(&args.trace, &analysis, out)?;
        return Ok(0);
    }
    let text = render(&args.trace, args.json)?;
    crate::files::write_stdout(&text)?;
    Ok(0)
}

/// The report of a trace as text or JSON.
pub fn render(trace: &std::path::Path, json: bool) -> Result<String, CliError> {
    let (_, analysis) = crate::export::load(trace)?;
    if json {
        let value = weft_views::report_json(&analysis);
        let mut s = serde_json::to_string_pretty(&value)
            .map_err(|e| CliError::new(format!("cannot encode the report as JSON: {e}")))?;
        s.push('\n');
        Ok(s)
    } else {
        Ok(weft_views::report_text(&analysis))
    }
}
