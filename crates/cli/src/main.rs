//! `weft`: record a Java program with the weft agent, and report on the trace.
//!
//! The CLI is thin: `record` starts the program with the agent, `report`
//! reads a trace, runs the analyses (`weft-analysis`) and prints a view
//! (`weft-views`). It computes nothing itself.

mod attach;
mod child;
mod demo;
mod export;
mod files;
mod live;
mod record;
mod report;
mod speedups;
mod whatif;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "weft", version, about = "A concurrency profiler for Java programs", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a command (java …, or a script that starts java) with the weft agent loaded.
    Record(record::RecordArgs),
    /// Print the report of a trace (text, or --json).
    Report(report::ReportArgs),
    /// How much faster the program could be if one limitation were gone (upper bounds).
    Speedups(speedups::SpeedupsArgs),
    /// Export a trace for other tools: Perfetto, Chrome trace JSON, collapsed stacks, flame graph, HTML.
    Export(export::ExportArgs),
    /// Estimate how much faster the run would be after a change, without running it again.
    Whatif(whatif::WhatIfArgs),
    /// Measured gain between two traces, and the estimate of the change beside it.
    Compare(whatif::CompareArgs),
    /// Record a running JVM for a while (HotSpot attach), then restore it as it was.
    Attach(attach::AttachArgs),
    /// Compile the bundled sample program with javac, record it and print its report.
    Demo {
        /// Where to keep the sample's trace.
        #[arg(short, long, default_value = "weft-demo.weft")]
        output: PathBuf,
    },
}

/// An error for the user: printed as one line `weft: …`, with an exit code.
pub struct CliError {
    pub message: String,
    pub code: u8,
}

impl CliError {
    pub fn new(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: 2,
        }
    }
    pub fn with_code(message: impl Into<String>, code: u8) -> CliError {
        CliError {
            message: message.into(),
            code,
        }
    }
}

/// glibc's allocator as the report's peak memory needs it (a bar: docs/model.md
/// "Cost"): one arena for every thread (the report runs analyses on two threads,
/// and an arena per thread kept ~26 MB freed by one that the other could not
/// reuse), and a fixed mmap threshold (by default it grows to the size of each
/// large block freed, up to 32 MB, after which blocks below it come from the heap
/// and stay there: 40 MB more at the peak).
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn main() -> ExitCode {
    tune_malloc();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are not errors.
            let code = if e.use_stderr() { 2 } else { 0 };
            if e.use_stderr() {
                // clap's own message names the bad option and suggests --help.
                let _ = e.print();
            } else {
                let _ = e.print();
            }
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Record(args) => record::run(args),
        Command::Attach(args) => attach::run(args),
        Command::Report(args) => report::run(args),
        Command::Speedups(args) => speedups::run(args),
        Command::Export(args) => export::run(args),
        Command::Whatif(args) => whatif::run(args),
        Command::Compare(args) => whatif::compare(args),
        Command::Demo { output } => demo::run(&output),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("weft: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}
