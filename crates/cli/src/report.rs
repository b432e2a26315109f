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
        let analysis = crate::export::load(&args.trace)?;
        crate::export::write_html(&args.trace, &analysis, out)?;
        return Ok(0);
    }
    let text = render(&args.trace, args.json)?;
    crate::files::write_stdout(&text)?;
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
    // WEFT_REPORT_STAGES=1: time and peak memory after each stage, on stderr
    // (bench/report_speed.sh).
    let stages = std::env::var_os("WEFT_REPORT_STAGES").is_some();
    let t0 = std::time::Instant::now();
    let mut stage = |name: &str| {
        if stages {
            eprintln!(
                "weft: stage {name:<14} {:>8.3} s wall {:>8.2} s CPU  peak RSS {}",
                t0.elapsed().as_secs_f64(),
                cpu_seconds().unwrap_or(f64::NAN),
                peak_rss().unwrap_or_else(|| "?".into())
            );
        }
    };
    let model = read_model(trace)?;
    stage("model");
    if stages {
        eprintln!(
            "weft: model: {} events, {} threads",
            model.event_count(),
            model.threads.len()
        );
    }
    let analysis = weft_analysis::analyze_model_staged(model, &mut stage);
    if json {
        let value = weft_views::report_json(&analysis);
        stage("json");
        let mut s = serde_json::to_string_pretty(&value)
            .map_err(|e| CliError::new(format!("cannot encode the report as JSON: {e}")))?;
        s.push('\n');
        Ok(s)
    } else {
        let mut text = weft_views::report_text(&analysis);
        match crate::whatif::for_report(&analysis) {
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
        stage("whatif");
        Ok(text)
    }
}

/// The model of a trace file (docs/model.md): the trace's records are read and
/// turned into the model in one pass, and only the model is kept.
pub fn read_model(trace: &std::path::Path) -> Result<weft_analysis::Model, CliError> {
    let (model, warnings) = weft_analysis::Model::read_with_warnings(trace)
        .map_err(|e| CliError::new(format!("{}: {e}", trace.display())))?;
    // Damage the reader skipped or corrected is also in the report (a loss per
    // skipped block); these lines say it where the user is looking.
    for w in warnings {
        eprintln!("weft: warning: {}: {w}", trace.display());
    }
    Ok(model)
}

/// The process's peak resident set (`VmHWM` of /proc/self/status), as written there.
fn peak_rss() -> Option<String> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line["VmHWM:".len()..].trim().to_string())
}

/// CPU time (user + system) of this process so far, from /proc/self/stat.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) end at its ')'.
    let f: Vec<&str> = s[s.rfind(')')? + 1..].split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}
