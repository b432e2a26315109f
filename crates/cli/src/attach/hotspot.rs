//! The HotSpot attach protocol, client side (docs/attach.md): checks that a process
//! is a HotSpot JVM of this user that can be attached to, wakes its attach listener
//! (`.attach_pid<pid>` + SIGQUIT), and sends one command over its UNIX socket
//! (`/tmp/.java_pid<pid>`).
//!
//! SIGQUIT kills most processes and makes a JVM started with `-Xrs` dump core, so it
//! is only sent to a process that maps `libjvm.so`, is ours, and catches SIGQUIT.

use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long the attach listener may take to start after SIGQUIT.
const LISTENER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a command (the agent's Agent_OnAttach) may take to answer.
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

/// What is known about a target process before anything is sent to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub pid: u32,
    /// Its pid in its own pid namespace (the socket's name uses it).
    pub ns_pid: u32,
    /// Where its /tmp is seen from here (`/tmp`, or `/proc/PID/root/tmp` in another
    /// mount namespace: a container).
    pub tmp: PathBuf,
    /// Main class or jar (from the command line).
    pub main: String,
    pub in_container: bool,
}

/// Why a process cannot be attached to (each is one line for the user).
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    NoProcess(u32),
    OtherUser { pid: u32, uid: u32 },
    NotJvm { pid: u32, comm: String },
    AttachDisabled { pid: u32, option: String },
    NoSignals(u32),
    NotReady(u32),
    Unreadable { pid: u32, what: String },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NoProcess(p) => write!(f, "no process with pid {p}"),
            Refusal::OtherUser { pid, uid } => write!(
                f,
                "process {pid} belongs to another user (uid {uid}); weft attaches only to JVMs of its own user"
            ),
            Refusal::NotJvm { pid, comm } => write!(
                f,
                "process {pid} ({comm}) is not a HotSpot JVM (no libjvm.so mapped); nothing was sent to it"
            ),
            Refusal::AttachDisabled { pid, option } => {
                write!(f, "the JVM {pid} disallows attach ({option})")
            }
            Refusal::NoSignals(p) => write!(
                f,
                "the JVM {p} runs with -Xrs (it does not handle SIGQUIT): it cannot be attached to"
            ),
            Refusal::NotReady(p) => write!(
                f,
                "the JVM {p} does not handle SIGQUIT yet (still starting?); try again"
            ),
            Refusal::Unreadable { pid, what } => {
                write!(f, "cannot inspect process {pid}: {what}")
            }
        }
    }
}

fn proc_path(pid: u32, file: &str) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/{file}"))
}

/// A `Key:\tvalues` line of /proc/PID/status.
fn status_field<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(str::trim)
}

/// The effective uid and gid of a status text.
fn effective_ids(status: &str) -> Option<(u32, u32)> {
    let second = |k: &str| -> Option<u32> {
        status_field(status, k)?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    Some((second("Uid")?, second("Gid")?))
}

/// The innermost namespace pid (last of `NSpid:`), else the pid itself.
fn ns_pid(status: &str, pid: u32) -> u32 {
    status_field(status, "NSpid")
        .and_then(|v| v.split_whitespace().last()?.parse().ok())
        .unwrap_or(pid)
}

/// Whether bit SIGQUIT is set in `SigCgt:` (caught signals).
fn catches_sigquit(status: &str) -> bool {
    status_field(status, "SigCgt")
        .and_then(|v| u64::from_str_radix(v, 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGQUIT - 1)) != 0)
}

/// The command line's arguments.
fn args_of(cmdline: &[u8]) -> Vec<String> {
    cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// The main class or `-jar` file of a java command line (as `jps` prints it).
pub fn main_of(args: &[String]) -> String {
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "-jar" => return it.next().cloned().unwrap_or_default(),
            "-m" | "--module" => return it.next().cloned().unwrap_or_default(),
            "-cp" | "-classpath" | "--class-path" | "-p" | "--module-path" | "--add-opens"
            | "--add-exports" | "--add-modules" | "--add-reads" | "--patch-module" => {
                it.next();
            }
            s if s.starts_with('-') => {}
            s => return s.to_string(),
        }
    }
    String::new()
}

/// An option in the command line or the JVM's option environment variables that
/// stops attach from working (or makes SIGQUIT fatal).
fn blocking_option(args: &[String], environ: &[u8]) -> Option<(String, bool)> {
    let env_opts: Vec<String> = environ
        .split(|b| *b == 0)
        .filter_map(|kv| {
            let s = String::from_utf8_lossy(kv);
            let (k, v) = s.split_once('=')?;
            ["JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"]
                .contains(&k)
                .then(|| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        })
        .flatten()
        .collect();
    // The last occurrence of a flag wins, as in HotSpot.
    let mut disabled = None;
    let mut reduced = false;
    for a in args.iter().skip(1).chain(env_opts.iter()) {
        match a.as_str() {
            "-XX:+DisableAttachMechanism" => disabled = Some(a.clone()),
            "-XX:-DisableAttachMechanism" => disabled = None,
            "-Xrs" | "-XX:+ReduceSignalUsage" => reduced = true,
            "-XX:-ReduceSignalUsage" => reduced = false,
            _ => {}
        }
    }
    match (disabled, reduced) {
        (Some(o), _) => Some((o, false)),
        (None, true) => Some(("-Xrs".into(), true)),
        (None, false) => None,
    }
}

/// The decision from what /proc says of a process (pure, unit-tested).
pub struct ProcFacts<'a> {
    pub pid: u32,
    pub status: &'a str,
    pub maps_has_libjvm: bool,
    pub cmdline: &'a [u8],
    pub environ: &'a [u8],
    pub same_mount_ns: bool,
    /// Our effective uid and gid.
    pub me: (u32, u32),
}

pub fn judge(f: &ProcFacts) -> Result<Target, Refusal> {
    let pid = f.pid;
    let (uid, gid) = effective_ids(f.status).ok_or_else(|| Refusal::Unreadable {
        pid,
        what: "no Uid/Gid in /proc status".into(),
    })?;
    // HotSpot's listener accepts peers of its effective uid (and root).
    let _ = gid;
    if uid != f.me.0 {
        return Err(Refusal::OtherUser { pid, uid });
    }
    if !f.maps_has_libjvm {
        let comm = status_field(f.status, "Name").unwrap_or("?").to_string();
        return Err(Refusal::NotJvm { pid, comm });
    }
    let args = args_of(f.cmdline);
    if let Some((option, fatal)) = blocking_option(&args, f.environ) {
        return Err(if fatal {
            Refusal::NoSignals(pid)
        } else {
            Refusal::AttachDisabled { pid, option }
        });
    }
    let ns_pid = ns_pid(f.status, pid);
    let tmp = if f.same_mount_ns {
        PathBuf::from("/tmp")
    } else {
        proc_path(pid, "root/tmp")
    };
    Ok(Target {
        pid,
        ns_pid,
        tmp,
        main: main_of(&args),
        in_container: !f.same_mount_ns || ns_pid != pid,
    })
}

fn read_proc(pid: u32, file: &str) -> Result<Vec<u8>, Refusal> {
    std::fs::read(proc_path(pid, file)).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Refusal::NoProcess(pid),
        _ => Refusal::Unreadable {
            pid,
            what: format!("/proc/{pid}/{file}: {e}"),
        },
    })
}

fn same_ns(pid: u32, ns: &str) -> bool {
    match (
        std::fs::read_link(proc_path(pid, &format!("ns/{ns}"))),
        std::fs::read_link(format!("/proc/self/ns/{ns}")),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => true,
    }
}

fn my_ids() -> (u32, u32) {
    // SAFETY: geteuid/getegid have no preconditions.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

/// Checks a process (see [`judge`]).
pub fn inspect(pid: u32) -> Result<Target, Refusal> {
    if pid == 0 || pid > i32::MAX as u32 {
        return Err(Refusal::NoProcess(pid));
    }
    let status = String::from_utf8_lossy(&read_proc(pid, "status")?).into_owned();
    let me = my_ids();
    // Another user's process: say so before /proc refuses to show its maps.
    if let Some((uid, _)) = effective_ids(&status) {
        if uid != me.0 {
            return Err(Refusal::OtherUser { pid, uid });
        }
    }
    let maps = read_proc(pid, "maps")?;
    let maps_has_libjvm = String::from_utf8_lossy(&maps)
        .lines()
        .any(|l| l.ends_with("/libjvm.so"));
    let cmdline = read_proc(pid, "cmdline")?;
    let environ = read_proc(pid, "environ").unwrap_or_default();
    judge(&ProcFacts {
        pid,
        status: &status,
        maps_has_libjvm,
        cmdline: &cmdline,
        environ: &environ,
        same_mount_ns: same_ns(pid, "mnt"),
        me,
    })
}

/// Every process of this user that is a HotSpot JVM weft could attach to, by pid.
pub fn list() -> Vec<Target> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    let me = std::process::id();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        if let Ok(t) = inspect(pid) {
            out.push(t);
        }
    }
    out.sort_by_key(|t| t.pid);
    out
}

/// Why a command could not be sent or failed.
#[derive(Debug)]
pub enum AttachError {
    Refused(Refusal),
    /// The process went away while attaching.
    Exited(u32),
    /// The listener did not start in time.
    NoListener(u32),
    Io(String),
    /// The JVM answered with an error (its code and text).
    Failed {
        code: i32,
        text: String,
    },
}

impl std::fmt::Display for AttachError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttachError::Refused(r) => r.fmt(f),
            AttachError::Exited(p) => write!(f, "the JVM {p} exited while weft attached to it"),
            AttachError::NoListener(p) => write!(
                f,
                "the JVM {p} did not start its attach listener within {} s",
                LISTENER_TIMEOUT.as_secs()
            ),
            AttachError::Io(e) => write!(f, "{e}"),
            AttachError::Failed { code, text } => {
                let text = text.trim().replace('\n', "; ");
                if text.is_empty() {
                    write!(f, "the JVM refused the command (code {code})")
                } else {
                    write!(f, "the JVM refused the command (code {code}): {text}")
                }
            }
        }
    }
}

pub fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(proc_path(pid, "stat"))
            .map(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            })
            .unwrap_or(true)
}

/// The listener's socket, if it exists and belongs to the target's user.
fn socket_path(t: &Target) -> PathBuf {
    t.tmp.join(format!(".java_pid{}", t.ns_pid))
}

fn listener_ready(t: &Target) -> bool {
    std::fs::metadata(socket_path(t)).is_ok_and(|m| m.uid() == my_ids().0)
}

/// Wakes the attach listener (if it is not running yet) and waits for its socket.
fn start_listener(t: &Target) -> Result<(), AttachError> {
    if listener_ready(t) {
        return Ok(());
    }
    // The JVM may not have installed its signal handlers yet (just started): SIGQUIT
    // would then kill it. Wait for them as long as the listener timeout.
    let deadline = Instant::now() + LISTENER_TIMEOUT;
    loop {
        let status = std::fs::read_to_string(proc_path(t.pid, "status"))
            .map_err(|_| AttachError::Exited(t.pid))?;
        if catches_sigquit(&status) {
            break;
        }
        if Instant::now() >= deadline {
            return Err(AttachError::Refused(Refusal::NotReady(t.pid)));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let trigger = t.tmp.join(format!(".attach_pid{}", t.ns_pid));
    std::fs::write(&trigger, b"")
        .map_err(|e| AttachError::Io(format!("cannot create {}: {e}", trigger.display())))?;
    // SAFETY: kill(2) on a pid checked above to be a JVM of ours that catches SIGQUIT.
    let sent = unsafe { libc::kill(t.pid as libc::pid_t, libc::SIGQUIT) } == 0;
    let result = if !sent {
        Err(AttachError::Exited(t.pid))
    } else {
        let mut r = Err(AttachError::NoListener(t.pid));
        while Instant::now() < deadline {
            if listener_ready(t) {
                r = Ok(());
                break;
            }
            if !alive(t.pid) {
                r = Err(AttachError::Exited(t.pid));
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        r
    };
    let _ = std::fs::remove_file(&trigger);
    result
}

/// Sends one command (`load`, `properties`, …) with up to three arguments and returns
/// the listener's answer after its status line (an error for a non-zero status).
pub fn execute(t: &Target, cmd: &str, args: &[&str]) -> Result<String, AttachError> {
    start_listener(t)?;
    let path = socket_path(t);
    let mut s = UnixStream::connect(&path).map_err(|e| {
        if alive(t.pid) {
            AttachError::Io(format!("cannot connect to {}: {e}", path.display()))
        } else {
            AttachError::Exited(t.pid)
        }
    })?;
    let _ = s.set_read_timeout(Some(REPLY_TIMEOUT));
    let mut req = Vec::new();
    for part in std::iter::once("1")
        .chain(std::iter::once(cmd))
        .chain(args.iter().copied().chain(std::iter::repeat("")).take(3))
    {
        req.extend_from_slice(part.as_bytes());
        req.push(0);
    }
    s.write_all(&req)
        .map_err(|e| AttachError::Io(format!("cannot send to the JVM {}: {e}", t.pid)))?;
    let mut reply = Vec::new();
    if let Err(e) = s.read_to_end(&mut reply) {
        return Err(if alive(t.pid) {
            AttachError::Io(format!("no answer from the JVM {}: {e}", t.pid))
        } else {
            AttachError::Exited(t.pid)
        });
    }
    if reply.is_empty() && !alive(t.pid) {
        return Err(AttachError::Exited(t.pid));
    }
    parse_reply(&String::from_utf8_lossy(&reply))
}

/// `<status>\n<text>`; for `load`, the text holds `return code: N` (the agent's
/// Agent_OnAttach result), non-zero meaning the agent failed.
pub fn parse_reply(reply: &str) -> Result<String, AttachError> {
    let (first, rest) = reply.split_once('\n').unwrap_or((reply, ""));
    let code: i32 = first.trim().parse().map_err(|_| AttachError::Failed {
        code: -1,
        text: format!(
            "unexpected answer: {}",
            reply.chars().take(200).collect::<String>()
        ),
    })?;
    if code != 0 {
        return Err(AttachError::Failed {
            code,
            text: rest.to_string(),
        });
    }
    let agent_code = rest.lines().find_map(|l| {
        l.trim()
            .strip_prefix("return code:")?
            .trim()
            .parse::<i32>()
            .ok()
    });
    match agent_code {
        Some(c) if c != 0 => Err(AttachError::Failed {
            code: c,
            text: rest.to_string(),
        }),
        _ => Ok(rest.to_string()),
    }
}

/// Loads an agent library (absolute path) with options into the target.
pub fn load_agent(t: &Target, library: &Path, options: &str) -> Result<String, AttachError> {
    execute(t, "load", &[&library.to_string_lossy(), "true", options])
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\tjava\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t4242\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nNSpid:\t4242\t7\nSigCgt:\t0000000181005ccf\n";

    fn facts<'a>(status: &'a str, me: (u32, u32)) -> ProcFacts<'a> {
        ProcFacts {
            pid: 4242,
            status,
            maps_has_libjvm: true,
            cmdline: b"java\0-cp\0/x\0demo.Main\0arg\0",
            environ: b"HOME=/h\0",
            same_mount_ns: true,
            me,
        }
    }

    #[test]
    fn another_users_jvm_is_refused_before_anything_is_sent() {
        let f = facts(STATUS, (1001, 1001));
        assert_eq!(
            judge(&f),
            Err(Refusal::OtherUser {
                pid: 4242,
                uid: 1000
            })
        );
        assert!(judge(&f).unwrap_err().to_string().contains("another user"));
    }

    #[test]
    fn a_jvm_of_ours_in_a_container() {
        let mut f = facts(STATUS, (1000, 1000));
        f.same_mount_ns = false;
        let t = judge(&f).unwrap();
        assert_eq!(t.ns_pid, 7);
        assert_eq!(t.tmp, PathBuf::from("/proc/4242/root/tmp"));
        assert!(t.in_container);
        assert_eq!(t.main, "demo.Main");
    }

    #[test]
    fn non_jvm_and_disabled_attach_are_refused() {
        let mut f = facts(STATUS, (1000, 1000));
        f.maps_has_libjvm = false;
        assert!(matches!(judge(&f), Err(Refusal::NotJvm { .. })));
        let mut f = facts(STATUS, (1000, 1000));
        f.cmdline = b"java\0-XX:+DisableAttachMechanism\0Main\0";
        assert!(matches!(judge(&f), Err(Refusal::AttachDisabled { .. })));
        let mut f = facts(STATUS, (1000, 1000));
        f.environ = b"JAVA_TOOL_OPTIONS=-Xrs\0";
        assert_eq!(judge(&f), Err(Refusal::NoSignals(4242)));
    }

    #[test]
    fn sigquit_bit_and_main_class() {
        assert!(catches_sigquit(STATUS));
        assert!(!catches_sigquit("SigCgt:\t0000000000000000\n"));
        let a = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(main_of(&a(&["java", "-jar", "app.jar", "x"])), "app.jar");
        assert_eq!(
            main_of(&a(&["java", "-Xmx1g", "-cp", "a:b", "p.Main"])),
            "p.Main"
        );
    }

    #[test]
    fn replies() {
        assert_eq!(
            parse_reply("0\nreturn code: 0\n").unwrap(),
            "return code: 0\n"
        );
        assert!(matches!(
            parse_reply("0\nreturn code: -1\n"),
            Err(AttachError::Failed { code: -1, .. })
        ));
        assert!(matches!(
            parse_reply("101\n"),
            Err(AttachError::Failed { code: 101, .. })
        ));
        assert!(parse_reply("garbage").is_err());
    }
}
