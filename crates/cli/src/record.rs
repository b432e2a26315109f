//! `weft record`: run a command with the weft agent loaded into every JVM it starts.
//!
//! A direct `java …` command gets `-agentpath:` as its first argument; any
//! other command (a script, a launcher) gets it through `JAVA_TOOL_OPTIONS`,
//! which every HotSpot JVM started below it reads. Each JVM writes its own
//! trace: the first one the path asked for, the others `<stem>.<pid>.weft`
//! beside it (the agent picks the name; see docs/agent.md).

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Args;

use crate::CliError;

/// The agent's `CHILD_AGENT_ENV` (crates/agent/src/lib.rs): the agent argument the
/// recorded JVM passes on to the JVMs it starts.
const CHILD_AGENT_ENV: &str = "WEFT_CHILD_AGENT";

#[derive(Args)]
pub struct RecordArgs {
    /// Trace file to write.
    #[arg(short, long, default_value = "weft.weft")]
    pub output: PathBuf,
    /// Period of the CPU and context-switch sampler (e.g. 100ms, 1s).
    #[arg(long, default_value = "100ms", value_parser = parse_duration_ns)]
    pub interval: u64,
    /// Path of the agent library (default: libweft_agent.so next to the weft binary).
    #[arg(long)]
    pub agent: Option<PathBuf>,
    /// Print, at the end of each lock interval while the program runs, one line (on
    /// stderr) per lock whose CSP in that interval is above --live-threshold.
    #[arg(long)]
    pub live: bool,
    /// CSP above which --live prints a lock (e.g. 5%, 0.05).
    #[arg(long, default_value = "5%", value_parser = crate::live::parse_threshold)]
    pub live_threshold: f64,
    /// Interval of the lock analysis (CSP per interval, --live lines), e.g. 1s, 250ms.
    #[arg(long, default_value = "1s", value_parser = parse_duration_ns)]
    pub lock_interval: u64,
    /// Stack sampling periods: `cpu=10ms,wall=50ms` (either may be `off`; docs/sampling.md).
    #[arg(long, value_name = "SPEC", default_value = "cpu=10ms,wall=50ms", value_parser = parse_sample_spec)]
    pub sample: String,
    /// No stack sampling (same as --sample cpu=off,wall=off).
    #[arg(long)]
    pub no_sample: bool,
    /// Measured window: record each entry and exit of this method (pkg.Class.method,
    /// every overload, on any thread); reports then cover only the time from its
    /// first entry to its last exit.
    #[arg(long, value_name = "CLASS.METHOD")]
    pub window: Option<String>,
    /// With --window: each call is its own window (reports cover the calls only).
    #[arg(long, requires = "window")]
    pub window_all: bool,
    /// Record every acquisition and release of `synchronized` blocks and methods of the
    /// application's classes (not only contended ones), for `weft whatif` lock edits
    /// (docs/whatif.md §Recording: lock detail). Costs ~0.2 µs per acquisition (BENCHMARKS.md).
    #[arg(long)]
    pub lock_detail: bool,
    /// The command to run, after `--`: `java …` or a script that starts java.
    #[arg(last = true, required = true, num_args = 1..)]
    pub command: Vec<OsString>,
}

/// Parses `100ms`, `1s`, `500us` or a plain number of milliseconds into ns.
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let ns = parse_ns(s)?;
    if !(1_000_000..=60_000_000_000).contains(&ns) {
        return Err(format!("`{}` must be between 1ms and 60s", s.trim()));
    }
    Ok(ns)
}

/// `100ms`, `1s`, `500us` or a plain number of milliseconds, in ns (no range check).
pub fn parse_ns(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1_000_000u64)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1_000)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1_000_000_000)
    } else {
        (s, 1_000_000)
    };
    let v: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (examples: 100ms, 1s, 500us)"))?;
    v.checked_mul(mult)
        .ok_or_else(|| format!("`{s}` is too long"))
}

/// `cpu=10ms,wall=50ms` -> the agent's `cpusample=10000us,wallsample=50000us`.
pub fn parse_sample_spec(s: &str) -> Result<String, String> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| format!("`{item}`: expected cpu=PERIOD or wall=PERIOD"))?;
        let key = match k {
            "cpu" => "cpusample",
            "wall" => "wallsample",
            _ => return Err(format!("`{k}` is not a sampling mode (use cpu or wall)")),
        };
        let v = if v == "off" {
            "off".to_string()
        } else {
            let ns = parse_sample_period(v)?;
            format!("{}us", ns / 1000)
        };
        out.push(format!("{key}={v}"));
    }
    Ok(out.join(","))
}

/// A sampling period: 100us..10s.
fn parse_sample_period(s: &str) -> Result<u64, String> {
    let ns = parse_ns(s)?;
    if !(100_000..=10_000_000_000).contains(&ns) {
        return Err(format!("`{s}` must be between 100us and 10s"));
    }
    Ok(ns)
}

/// The agent library shipped next to the `weft` binary.
pub fn find_agent(explicit: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(p) = explicit {
        return p
            .canonicalize()
            .map_err(|e| CliError::new(format!("agent library {} not usable: {e}", p.display())));
    }
    if let Some(p) = std::env::var_os("WEFT_AGENT") {
        let p = PathBuf::from(p);
        return p
            .canonicalize()
            .map_err(|e| CliError::new(format!("WEFT_AGENT={} not usable: {e}", p.display())));
    }
    let exe = std::env::current_exe()
        .map_err(|e| CliError::new(format!("cannot locate the weft binary: {e}")))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    // `cargo build` puts the library beside the binary; `cargo test` leaves the
    // one it builds in target/<profile>/deps without copying it up. When both
    // exist, the newer one is the library built with this binary.
    let newest = [
        dir.join("libweft_agent.so"),
        dir.join("deps/libweft_agent.so"),
        dir.join("../libweft_agent.so"),
    ]
    .into_iter()
    .filter_map(|c| {
        let modified = std::fs::metadata(&c).ok()?.modified().ok()?;
        Some((modified, c.canonicalize().ok()?))
    })
    .max_by_key(|(modified, _)| *modified);
    if let Some((_, path)) = newest {
        return Ok(path);
    }
    Err(CliError::new(format!(
        "agent library libweft_agent.so not found next to {} (build it with `cargo build --release`, or pass --agent PATH)",
        exe.display()
    )))
}

pub fn absolute(path: &Path) -> Result<PathBuf, CliError> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::new(format!("cannot read the current directory: {e}")))?;
    Ok(cwd.join(path))
}

fn is_java_launcher(program: &OsString) -> bool {
    Path::new(program).file_name().is_some_and(|n| n == "java")
}

pub fn run(args: RecordArgs) -> Result<u8, CliError> {
    let output = absolute(&args.output)?;
    let text = output.to_string_lossy();
    if text.contains(',') || text.chars().any(char::is_whitespace) {
        return Err(CliError::new(format!(
            "trace path {text} must not contain commas or spaces (they separate agent options)"
        )));
    }
    crate::files::clear_old_trace(&output)?;
    let agent = find_agent(args.agent.as_deref())?;
    // The agent writes the lock interval into the trace header (docs/locks.md).
    let sample = if args.no_sample {
        "nosample".to_string()
    } else {
        args.sample.clone()
    };
    let mut agent_arg = format!(
        "-agentpath:{}=out={},interval={}us,lockinterval={}us,{sample}",
        agent.display(),
        output.display(),
        args.interval / 1000,
        args.lock_interval / 1000
    );
    if let Some(w) = &args.window {
        // The agent checks the name (one `weft:` line and no JVM when malformed).
        if w.contains(',') || w.chars().any(char::is_whitespace) {
            return Err(CliError::new(format!(
                "--window {w}: expected pkg.Class.method (e.g. com.example.Main.solve)"
            )));
        }
        agent_arg.push_str(&format!(",window={w}"));
        if args.window_all {
            agent_arg.push_str(",windowcalls");
        }
    }
    if args.lock_detail {
        agent_arg.push_str(",lockdetail");
    }
    let live = args.live.then(|| {
        crate::live::Live::start(
            &output,
            crate::live::LiveConfig {
                interval_ns: args.lock_interval,
                threshold: args.live_threshold,
            },
        )
    });
    // Traces of other JVMs (`<stem>.<pid>.weft`) count if written from now on (less
    // a second: file times come from a coarse clock); older ones are earlier runs'.
    let since = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    let status = launch(&args.command, &agent_arg);
    if let Some(l) = live {
        l.finish();
    }
    let status = status?;
    report_traces(&output, since);
    Ok(exit_code_of(status))
}

/// Starts the command with the agent and waits for it (signals forwarded to it:
/// crates/cli/src/child.rs).
pub fn launch(command: &[OsString], agent_arg: &str) -> Result<std::process::ExitStatus, CliError> {
    let Some((program, rest)) = command.split_first() else {
        return Err(CliError::new("no command given after `--`"));
    };
    let mut cmd = Command::new(program);
    if is_java_launcher(program) {
        // The JVMs it starts get the agent through JAVA_TOOL_OPTIONS, which the
        // agent puts into this JVM's environment (docs/agent.md §Several JVMs).
        cmd.arg(agent_arg)
            .args(rest)
            .env(CHILD_AGENT_ENV, format!("{agent_arg},quiet"));
    } else {
        let mut opts = std::env::var_os("JAVA_TOOL_OPTIONS").unwrap_or_default();
        if !opts.is_empty() {
            opts.push(" ");
        }
        opts.push(agent_arg);
        cmd.args(rest).env("JAVA_TOOL_OPTIONS", opts);
    }
    crate::child::run(cmd).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            127
        } else {
            126
        };
        CliError::with_code(
            format!("cannot run `{}`: {e}", program.to_string_lossy()),
            code,
        )
    })
}

/// A trace's path and its JVM's main class, as `weft record` lists several.
fn labelled(trace: &Path) -> String {
    match weft_trace::read_header(trace)
        .ok()
        .and_then(|h| h.get(weft_trace::header_keys::JVM_MAIN).map(str::to_string))
    {
        Some(main) => format!("{} ({main})", trace.display()),
        None => trace.display().to_string(),
    }
}

fn exit_code_of(status: std::process::ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return code as u8;
    }
    // Killed by a signal: report it the way a shell does.
    status.signal().map(|s| 128 + s as u8).unwrap_or(1)
}

/// One line on stderr saying where the trace(s) went. An empty trace (the JVM
/// exited before the agent's VMInit, e.g. a bad option or a missing module) is
/// removed and said so.
fn report_traces(output: &Path, since: std::time::SystemTime) {
    let mut candidates = Vec::new();
    if output.is_file() {
        candidates.push(output.to_path_buf());
    }
    if let (Some(dir), Some(stem)) = (output.parent(), output.file_stem()) {
        let prefix = format!("{}.", stem.to_string_lossy());
        if let Ok(entries) = std::fs::read_dir(dir) {
            let mut extra: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                    name.is_some_and(|n| {
                        n.strip_prefix(&prefix)
                            .and_then(|rest| rest.strip_suffix(".weft"))
                            .is_some_and(|pid| {
                                !pid.is_empty() && pid.chars().all(|c| c.is_ascii_digit())
                            })
                    })
                })
                .filter(|p| {
                    std::fs::metadata(p)
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t >= since)
                })
                .collect();
            extra.sort();
            candidates.extend(extra);
        }
    }
    let mut written = Vec::new();
    let mut empty = 0;
    for p in candidates {
        if std::fs::metadata(&p).is_ok_and(|m| m.len() == 0) {
            let _ = std::fs::remove_file(&p);
            empty += 1;
        } else {
            written.push(p);
        }
    }
    if empty > 0 {
        eprintln!(
            "weft: {empty} JVM{} exited before recording started (nothing recorded{})",
            if empty == 1 { "" } else { "s" },
            if empty == 1 {
                "; see its error above"
            } else {
                ""
            }
        );
    }
    match written.len() {
        0 if empty > 0 => {}
        0 => eprintln!(
            "weft: no trace was written to {} (did the command start a JVM?)",
            output.display()
        ),
        1 => eprintln!("weft: trace written to {}", written[0].display()),
        n => eprintln!(
            "weft: {n} JVMs recorded: {}",
            written
                .iter()
                .map(|p| labelled(p))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
