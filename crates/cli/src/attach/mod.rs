//! `weft attach PID`: records a running HotSpot JVM (docs/attach.md). The agent is
//! loaded with the HotSpot attach protocol ([`hotspot`]); the recording ends after
//! `--duration`, at Ctrl-C (SIGINT, SIGTERM, SIGHUP), or when the JVM exits. Ending it
//! is a second `load` of the agent with the option `stop`: the agent puts back every
//! class it changed and closes the trace; the JVM goes on.

pub mod hotspot;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;

use crate::CliError;
use hotspot::{AttachError, Target};

#[derive(Args)]
pub struct AttachArgs {
    /// Process id of the JVM to record.
    #[arg(required_unless_present = "list")]
    pub pid: Option<String>,
    /// List the JVMs weft can attach to (pid and main class), like jps.
    #[arg(long)]
    pub list: bool,
    /// Record this long (e.g. 30s, 500ms); without it, until Ctrl-C.
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Trace file to write.
    #[arg(short, long, default_value = "weft-attach.weft")]
    pub output: PathBuf,
    /// Print lock lines while recording, as `weft record --live`.
    #[arg(long)]
    pub live: bool,
    /// CSP above which --live prints a lock (e.g. 5%, 0.05).
    #[arg(long, default_value = "5%", value_parser = crate::live::parse_threshold)]
    pub live_threshold: f64,
    /// Period of the CPU and context-switch sampler (e.g. 100ms, 1s).
    #[arg(long, default_value = "100ms", value_parser = crate::record::parse_duration_ns)]
    pub interval: u64,
    /// Interval of the lock analysis (CSP per interval, --live lines).
    #[arg(long, default_value = "1s", value_parser = crate::record::parse_duration_ns)]
    pub lock_interval: u64,
    /// Path of the agent library (default: libweft_agent.so next to the weft binary).
    #[arg(long)]
    pub agent: Option<PathBuf>,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let ns = crate::record::parse_ns(s)?;
    if ns < 1_000_000 {
        return Err(format!("`{s}` is shorter than 1ms"));
    }
    Ok(Duration::from_nanos(ns))
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
}

fn catch_stop_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores an atomic.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

/// What an `Agent_OnAttach` result code means (crates/agent/src/attach.rs `code`).
fn agent_refusal(pid: u32, code: i32, text: &str) -> String {
    match code {
        1 => format!("the agent in the JVM {pid} refused its options"),
        2 => format!("the JVM {pid} is already being recorded by another `weft attach`"),
        3 => format!("the JVM {pid} was started with the weft agent: it records itself already"),
        4 => format!("no weft recording runs in the JVM {pid}"),
        5 => format!("the JVM {pid} could not create the trace file (is its directory writable by the JVM's user?)"),
        6 => format!("the JVM {pid} does not let a late agent retransform classes"),
        _ => format!(
            "loading the agent into the JVM {pid} failed (code {code}): {}",
            text.trim().replace('\n', "; ")
        ),
    }
}

fn attach_error(t: &Target, e: AttachError) -> CliError {
    match e {
        AttachError::Failed { code, text } if code > 0 && text.contains("return code:") => {
            CliError::with_code(agent_refusal(t.pid, code, &text), 1)
        }
        e => CliError::with_code(e.to_string(), 1),
    }
}

fn list() -> Result<u8, CliError> {
    let jvms = hotspot::list();
    if jvms.is_empty() {
        eprintln!("weft: no JVM of this user to attach to");
    }
    for t in jvms {
        let place = if t.in_container {
            " (in a container)"
        } else {
            ""
        };
        println!("{} {}{place}", t.pid, t.main);
    }
    Ok(0)
}

pub fn run(args: AttachArgs) -> Result<u8, CliError> {
    if args.list {
        return list();
    }
    let pid_text = args.pid.clone().unwrap_or_default();
    let pid: u32 = pid_text
        .trim()
        .parse()
        .map_err(|_| CliError::new(format!("`{pid_text}` is not a process id")))?;
    let target = hotspot::inspect(pid).map_err(|r| CliError::with_code(r.to_string(), 1))?;
    let output = crate::record::absolute(&args.output)?;
    let text = output.to_string_lossy();
    if text.contains(',') || text.chars().any(char::is_whitespace) {
        return Err(CliError::new(format!(
            "trace path {text} must not contain commas or spaces (they separate agent options)"
        )));
    }
    crate::files::clear_old_trace(&output)?;
    let agent = crate::record::find_agent(args.agent.as_deref())?;
    let placed = Placement::new(&target, &agent, &output)?;
    let options = format!(
        "out={},interval={}us,lockinterval={}us,nosample,quiet",
        placed.trace_in_target.display(),
        args.interval / 1000,
        args.lock_interval / 1000
    );
    catch_stop_signals();
    hotspot::load_agent(&target, &placed.agent_in_target, &options)
        .map_err(|e| attach_error(&target, e))?;
    eprintln!(
        "weft: recording JVM {pid} ({}) to {}; {}",
        if target.main.is_empty() {
            "?"
        } else {
            &target.main
        },
        output.display(),
        match args.duration {
            Some(d) => format!("for {} ms (Ctrl-C ends it earlier)", d.as_millis()),
            None => "Ctrl-C ends it".into(),
        }
    );
    let live = args.live.then(|| {
        crate::live::Live::start(
            &placed.trace_here,
            crate::live::LiveConfig {
                interval_ns: args.lock_interval,
                threshold: args.live_threshold,
            },
        )
    });
    let start = Instant::now();
    let exited = loop {
        if STOP.load(Ordering::SeqCst) || args.duration.is_some_and(|d| start.elapsed() >= d) {
            break false;
        }
        if !hotspot::alive(pid) {
            break true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stopped = if exited {
        Err(AttachError::Exited(pid))
    } else {
        hotspot::load_agent(&target, &placed.agent_in_target, "stop")
    };
    if let Some(l) = live {
        l.finish();
    }
    placed.bring_back(&output);
    match stopped {
        Ok(_) => {}
        Err(AttachError::Exited(_)) => {
            return Err(CliError::with_code(
                format!(
                "the JVM {pid} exited during the recording; {} holds what was recorded until then",
                output.display()
            ),
                1,
            ))
        }
        Err(e) => return Err(attach_error(&target, e)),
    }
    summarize(&output);
    Ok(0)
}

/// One line per thing to know about the recording: where it is, what was put back.
fn summarize(output: &Path) {
    eprintln!("weft: trace written to {}", output.display());
    let Ok(model) = weft_analysis::Model::read(output) else {
        return;
    };
    match model.attach_end {
        Some(e) if e.probed_after == 0 && e.shapes_equal => eprintln!(
            "weft: detached: {} classes restored to their original bytes (no probe left; method digest as before the attach)",
            e.classes
        ),
        Some(e) => eprintln!(
            "weft: detached, but {} methods still call weft's probes (of {} classes restored; digest {})",
            e.probed_after,
            e.classes,
            if e.shapes_equal { "as before" } else { "changed" }
        ),
        None => eprintln!("weft: the trace has no end-of-attach record"),
    }
    for b in &model.blind_spots {
        eprintln!("weft: not seen: {b}");
    }
}

/// Where the agent library and the trace are, seen from the target (a JVM in another
/// mount namespace, a container, sees its own file system: both go through its /tmp).
struct Placement {
    agent_in_target: PathBuf,
    trace_in_target: PathBuf,
    /// The trace as seen from here while recording.
    trace_here: PathBuf,
    /// Copies made in the target's /tmp (removed at the end).
    copied_agent: Option<PathBuf>,
}

impl Placement {
    fn new(t: &Target, agent: &Path, output: &Path) -> Result<Placement, CliError> {
        if t.tmp == Path::new("/tmp") {
            return Ok(Placement {
                agent_in_target: agent.to_path_buf(),
                trace_in_target: output.to_path_buf(),
                trace_here: output.to_path_buf(),
                copied_agent: None,
            });
        }
        let tag = format!("{}-{}", std::process::id(), t.ns_pid);
        let agent_here = t.tmp.join(format!("libweft_agent-{tag}.so"));
        std::fs::copy(agent, &agent_here).map_err(|e| {
            CliError::with_code(
                format!(
                    "cannot copy the agent into the container ({}): {e}",
                    agent_here.display()
                ),
                1,
            )
        })?;
        let trace_name = format!("weft-attach-{tag}.weft");
        Ok(Placement {
            agent_in_target: PathBuf::from("/tmp").join(agent_here.file_name().unwrap_or_default()),
            trace_in_target: PathBuf::from("/tmp").join(&trace_name),
            trace_here: t.tmp.join(trace_name),
            copied_agent: Some(agent_here),
        })
    }

    /// Moves a trace written inside a container to `output`.
    fn bring_back(&self, output: &Path) {
        if let Some(a) = &self.copied_agent {
            let _ = std::fs::remove_file(a);
            if std::fs::copy(&self.trace_here, output).is_ok() {
                let _ = std::fs::remove_file(&self.trace_here);
            }
        }
    }
}
