//! `weft report`: read a trace, analyse it, print a view.

use std::path::PathBuf;

use clap::Args;

use crate::CliError;

#[derive(Args)]
pub struct ReportArgs {
    /// The trace file(s) written by `weft record`; several (e.g. `app*.weft`, one per
    /// JVM) give one report aligned on wall-clock time.
    #[arg(required = true, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// Write the HTML report (one self-contained file) to FILE instead of printing.
    #[arg(long, value_name = "FILE", conflicts_with = "json")]
    pub html: Option<PathBuf>,
    /// Report only from this time of the recording on (e.g. 1.5s, 200ms).
    #[arg(long, value_name = "DUR", value_parser = parse_offset_ns)]
    pub from: Option<u64>,
    /// Report only up to this time of the recording (e.g. 3s).
    #[arg(long, value_name = "DUR", value_parser = parse_offset_ns)]
    pub to: Option<u64>,
    /// With a trace recorded with --window: each call of the window method is its
    /// own window (default: from the first entry to the last exit).
    #[arg(long)]
    pub window_all: bool,
}

impl ReportArgs {
    fn selection(&self) -> weft_analysis::window::Selection {
        weft_analysis::window::Selection {
            from_ns: self.from,
            to_ns: self.to,
            each_call: self.window_all,
        }
    }
}

/// Parses a time of the recording: `1.5s`, `200ms`, `300us`, `2m`, `5000ns` (a
/// plain number is seconds).
pub fn parse_offset_ns(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "s" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        "m" | "min" => 60e9,
        _ => return Err(format!("`{s}` is not a time (examples: 1.5s, 200ms, 2m)")),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a time (examples: 1.5s, 200ms, 2m)"))?;
    let ns = v * scale;
    if !ns.is_finite() || ns >= 1e19 {
        return Err(format!("`{s}` is too long"));
    }
    Ok(ns.round() as u64)
}

pub fn run(args: ReportArgs) -> Result<u8, CliError> {
    if let Some(out) = &args.html {
        let [trace] = args.traces.as_slice() else {
            return html_jvms(&args.traces, &args.selection(), out);
        };
        crate::export::check_outputs(trace, &[out])?;
        let (analysis, _) = crate::export::load(trace, &args.selection())?;
        crate::export::write_html(trace, analysis, out)?;
        return Ok(0);
    }
    let text = render(&args.traces, &args.selection(), args.json)?;
    crate::files::write_stdout(&text)?;
    Ok(0)
}

/// The HTML report of several traces (one per JVM): one timeline with each JVM's
/// threads as a group, the totals across JVMs, each JVM's findings and classes.
fn html_jvms(
    traces: &[PathBuf],
    sel: &weft_analysis::window::Selection,
    out: &std::path::Path,
) -> Result<u8, CliError> {
    for trace in traces {
        crate::export::check_outputs(trace, &[out])?;
    }
    let (all, _) = load_jvms(traces, sel, |_| {})?;
    let title = format!("{} traces", traces.len());
    let html = weft_views::report_html_jvms(&all, &title);
    crate::files::write_file(out, html.as_bytes(), "the report")?;
    eprintln!("weft: wrote {} ({} bytes)", out.display(), html.len());
    Ok(0)
}

/// The execution graph of a one-trace report (the what-if search's input), or
/// why there is none.
type ReportGraph = Result<weft_whatif::ExecGraph, String>;

/// Each trace analysed as one JVM of a report, placed on one time line
/// (`stage(name)` after the model and each analysis of each trace), with the
/// possible speedups' simulated gains filled; the graph comes back for one trace.
fn load_jvms(
    traces: &[PathBuf],
    sel: &weft_analysis::window::Selection,
    stage: impl Fn(&str) + Copy,
) -> Result<(weft_analysis::jvms::Jvms, Option<ReportGraph>), CliError> {
    use weft_analysis::jvms;
    let mut list = Vec::with_capacity(traces.len());
    let mut graph = None;
    for path in traces {
        let (mut analysis, header) = crate::export::load_staged(path, sel, stage)?;
        // One graph per trace: the possible speedups' simulated gains, and (one
        // trace, text) the what-if search.
        let g = crate::whatif::report_graph(&analysis);
        crate::whatif::simulate_speedups(&mut analysis, g.as_ref());
        stage("simulated speedups");
        if traces.len() == 1 {
            graph = g;
        }
        list.push(jvms::Jvm::new(
            path.display().to_string(),
            &header,
            analysis,
        ));
    }
    jvms::check_versions(&list).map_err(CliError::new)?;
    Ok((jvms::combine(list), graph))
}

/// The report of one or several traces (one per JVM) as text or JSON.
pub fn render(
    traces: &[PathBuf],
    sel: &weft_analysis::window::Selection,
    json: bool,
) -> Result<String, CliError> {
    // WEFT_REPORT_STAGES=1: time and peak memory after each stage, on stderr.
    let stages = std::env::var_os("WEFT_REPORT_STAGES").is_some();
    let t0 = std::time::Instant::now();
    let stage = |name: &str| {
        if stages {
            eprintln!(
                "weft: stage {name:<14} {:>8.3} s wall {:>8.2} s CPU ({:.2} s this thread)  peak RSS {}  now {}",
                t0.elapsed().as_secs_f64(),
                cpu_seconds("/proc/self/stat").unwrap_or(f64::NAN),
                cpu_seconds("/proc/thread-self/stat").unwrap_or(f64::NAN),
                proc_status("VmHWM:").unwrap_or_else(|| "?".into()),
                proc_status("VmRSS:").unwrap_or_else(|| "?".into())
            );
        }
    };
    let (all, graph) = load_jvms(traces, sel, stage)?;
    if json {
        let value = weft_views::report_json_jvms(&all);
        stage("json");
        let mut s = serde_json::to_string_pretty(&value)
            .map_err(|e| CliError::new(format!("cannot encode the report as JSON: {e}")))?;
        s.push('\n');
        Ok(s)
    } else {
        let mut text = weft_views::report_text_jvms(&all);
        if let [_only] = all.jvms.as_slice() {
            match crate::whatif::for_report(graph.as_ref()) {
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
        }
        Ok(text)
    }
}

/// A field of /proc/self/status as written there (`VmHWM:` the peak resident
/// set, `VmRSS:` the current one).
fn proc_status(field: &str) -> Option<String> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    Some(line[field.len()..].trim().to_string())
}

/// CPU time (user + system) so far of this process (`/proc/self/stat`) or of the
/// calling thread (`/proc/thread-self/stat`).
fn cpu_seconds(stat: &str) -> Option<f64> {
    let s = std::fs::read_to_string(stat).ok()?;
    // Fields after the command name (which may hold spaces) end at its ')'.
    let f: Vec<&str> = s[s.rfind(')')? + 1..].split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_of_the_recording() {
        use super::parse_offset_ns as p;
        assert_eq!(p("1.5s"), Ok(1_500_000_000));
        assert_eq!(p("200ms"), Ok(200_000_000));
        assert_eq!(p("2"), Ok(2_000_000_000));
        assert_eq!(p("2m"), Ok(120_000_000_000));
        assert_eq!(p("0"), Ok(0));
        assert!(p("soon").is_err() && p("1h").is_err() && p("-1s").is_err());
    }
}
