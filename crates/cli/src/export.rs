//! `weft export`: write a trace's analysis in other tools' formats (Perfetto,
//! Chrome trace JSON, collapsed stacks, flame graph SVG) and, shared with
//! `weft report --html`, the HTML report. See docs/views.md.

use std::path::{Path, PathBuf};

use clap::Args;
use weft_analysis::profile::{Mode, SampleFilter};
use weft_analysis::Analysis;

use crate::CliError;

#[derive(Args)]
pub struct ExportArgs {
    /// The trace file written by `weft record`.
    pub trace: PathBuf,
    /// Perfetto trace (TrackEvent protobuf; open in ui.perfetto.dev).
    #[arg(long, value_name = "FILE")]
    pub perfetto: Option<PathBuf>,
    /// Chrome trace-event JSON (chrome://tracing, Perfetto, speedscope).
    #[arg(long, value_name = "FILE")]
    pub chrome: Option<PathBuf>,
    /// Collapsed stacks of task self time (`frame;frame value`, ns).
    #[arg(long, value_name = "FILE")]
    pub collapsed: Option<PathBuf>,
    /// Flame graph of task self time (SVG).
    #[arg(long, value_name = "FILE")]
    pub flamegraph: Option<PathBuf>,
    /// The HTML report (same as `weft report --html FILE`).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Sampled stacks instead of task nesting for --collapsed and --flamegraph:
    /// `cpu` or `wall` (docs/sampling.md).
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub profile: Option<Mode>,
    /// speedscope JSON of the sampled stacks (of --profile, default cpu).
    #[arg(long, value_name = "FILE")]
    pub speedscope: Option<PathBuf>,
    /// Frames with their source line (`Class.method:line`) in sampled-stack exports.
    #[arg(long)]
    pub lines: bool,
    /// Only samples of this thread (its name) in sampled-stack exports.
    #[arg(long, value_name = "NAME")]
    pub thread: Option<String>,
    /// Only samples taken inside executions of this task class (full or simple name).
    #[arg(long, value_name = "CLASS")]
    pub task_class: Option<String>,
    /// Only samples tied to this lock (its id `class@hash`, or its class): with
    /// `--profile cpu`, what its holders ran while others were blocked on it; with
    /// `--profile wall`, where the threads blocked on it were.
    #[arg(long, value_name = "LOCK")]
    pub lock: Option<String>,
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    match s {
        "cpu" => Ok(Mode::Cpu),
        "wall" => Ok(Mode::Wall),
        _ => Err(format!("`{s}` is not a profile (use cpu or wall)")),
    }
}

/// Reads a trace into its model and analyses it, within the window `sel` selects
/// (the trace's own window method by default; docs/views.md §Window), with the
/// CLI's error messages; the trace's header comes along (several-JVM reports).
pub fn load(
    trace: &Path,
    sel: &weft_analysis::window::Selection,
) -> Result<(Analysis, weft_trace::Header), CliError> {
    load_staged(trace, sel, |_| {})
}

/// [`load`], calling `stage(name)` after the model and after each analysis
/// (`WEFT_REPORT_STAGES=1`: the benchmark's per-stage time and memory).
pub fn load_staged(
    trace: &Path,
    sel: &weft_analysis::window::Selection,
    mut stage: impl FnMut(&str),
) -> Result<(Analysis, weft_trace::Header), CliError> {
    if !trace.exists() {
        return Err(CliError::new(format!(
            "trace {} does not exist (record one with `weft record -o {} -- java …`)",
            trace.display(),
            trace.display()
        )));
    }
    let (model, window, header, warnings) = weft_analysis::window::read_model(trace, sel)
        .map_err(|e| CliError::new(format!("{}: {e}", trace.display())))?;
    // Damage the reader skipped or corrected is also in the report (a loss per
    // skipped block); these lines say it where the user is looking.
    for w in warnings {
        eprintln!("weft: warning: {}: {w}", trace.display());
    }
    if std::env::var_os("WEFT_REPORT_STAGES").is_some() {
        let events: usize = model.events.iter().map(|e| e.len()).sum();
        eprintln!("weft: model: {events} events");
    }
    stage("model");
    Ok((
        weft_analysis::analyze_model_staged(model, window, stage),
        header,
    ))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    crate::files::write_file(path, bytes, "the export")?;
    eprintln!("weft: wrote {} ({} bytes)", path.display(), bytes.len());
    Ok(())
}

/// Refuses outputs that would overwrite the input trace, or each other.
pub fn check_outputs(trace: &Path, outputs: &[&Path]) -> Result<(), CliError> {
    for (i, out) in outputs.iter().enumerate() {
        crate::files::check_not_input(out, trace)?;
        crate::files::check_writable_target(out, "the export")?;
        if outputs[..i].iter().any(|o| o == out) {
            return Err(CliError::new(format!(
                "{} is given for two exports",
                out.display()
            )));
        }
    }
    Ok(())
}

/// Writes the HTML report of an analysed trace (simulating its execution graph
/// for the what-if section and the possible speedups' simulated gains).
pub fn write_html(trace: &Path, mut analysis: Analysis, out: &Path) -> Result<(), CliError> {
    let title = trace.file_name().map_or_else(
        || trace.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let graph = crate::whatif::report_graph(&analysis);
    crate::whatif::simulate_speedups(&mut analysis, graph.as_ref());
    let analysis = &analysis;
    let w = crate::whatif::for_report(graph.as_ref()).and_then(Result::ok);
    write(
        out,
        weft_views::report_html_with(analysis, &title, w.as_ref()).as_bytes(),
    )
}

pub fn run(args: ExportArgs) -> Result<u8, CliError> {
    if args.perfetto.is_none()
        && args.chrome.is_none()
        && args.collapsed.is_none()
        && args.flamegraph.is_none()
        && args.html.is_none()
        && args.speedscope.is_none()
    {
        return Err(CliError::new(
            "nothing to export: give --perfetto, --chrome, --collapsed, --flamegraph, --speedscope or --html FILE",
        ));
    }
    let outputs: Vec<&Path> = [
        &args.perfetto,
        &args.chrome,
        &args.collapsed,
        &args.flamegraph,
        &args.html,
    ]
    .into_iter()
    .filter_map(|o| o.as_deref())
    .collect();
    check_outputs(&args.trace, &outputs)?;
    let (analysis, _) = load(&args.trace, &Default::default())?;
    if let Some(p) = &args.perfetto {
        write(p, &weft_views::perfetto_trace(&analysis))?;
    }
    if let Some(p) = &args.chrome {
        write(p, weft_views::chrome_trace(&analysis).as_bytes())?;
    }
    let filter = SampleFilter {
        thread: args.thread.clone(),
        task_class: args.task_class.clone(),
        lock: args.lock.clone(),
    };
    match args.profile {
        Some(mode) => {
            if let Some(p) = &args.collapsed {
                let s = weft_views::profile_collapsed(&analysis, mode, args.lines, &filter);
                write(p, s.as_bytes())?;
            }
            if let Some(p) = &args.flamegraph {
                let title = format!("weft — {} samples ({})", mode.name(), args.trace.display());
                let svg =
                    weft_views::profile_flamegraph(&analysis, mode, args.lines, &filter, &title)
                        .map_err(CliError::new)?;
                write(p, &svg)?;
            }
        }
        None => {
            if let Some(p) = &args.collapsed {
                write(p, weft_views::collapsed_stacks(&analysis).as_bytes())?;
            }
            if let Some(p) = &args.flamegraph {
                let title = format!(
                    "weft — task self time by kind, class and site ({})",
                    args.trace.display()
                );
                write(p, weft_views::flamegraph_svg(&analysis, &title).as_bytes())?;
            }
        }
    }
    if let Some(p) = &args.speedscope {
        let mode = args.profile.unwrap_or(Mode::Cpu);
        let s = weft_views::profile_speedscope(&analysis, mode, args.lines, &filter);
        write(p, s.as_bytes())?;
    }
    if let Some(p) = &args.html {
        write_html(&args.trace, analysis, p)?;
    }
    Ok(0)
}
