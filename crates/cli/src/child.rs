//! The recorded command as a process group that `weft record` is responsible for.
//!
//! The command runs in its own process group, so that every process it starts (a
//! script's JVMs) can be signalled together. SIGINT, SIGTERM and SIGHUP sent to weft
//! are forwarded to that group (the JVMs then run their shutdown hooks and finish
//! their traces); a second one kills the group (SIGKILL). weft waits for the command
//! and exits with its status, so nothing is left running, re-parented to init.
//!
//! When weft runs in the foreground of a terminal, the terminal is handed to the
//! command's group (it reads the keyboard, and Ctrl-C reaches it directly, as
//! without weft); a Ctrl-Z that stops the command stops weft too, and `fg` resumes
//! both.

use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// The command's process group (0 until it is started).
static GROUP: AtomicI32 = AtomicI32::new(0);
/// Signals received so far.
static RECEIVED: AtomicU32 = AtomicU32::new(0);
/// A signal received before the group existed.
static EARLY: AtomicI32 = AtomicI32::new(0);

const FORWARDED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn forward(sig: libc::c_int) {
    // Only async-signal-safe calls here: atomics and kill(2).
    let n = RECEIVED.fetch_add(1, Ordering::SeqCst) + 1;
    let group = GROUP.load(Ordering::SeqCst);
    let sig = if n > 1 { libc::SIGKILL } else { sig };
    if group > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe { libc::kill(-group, sig) };
    } else {
        EARLY.store(sig, Ordering::SeqCst);
    }
}

/// The terminal on stdin, when weft is in its foreground process group.
fn foreground_terminal() -> bool {
    // SAFETY: plain queries of fd 0 and of our own process group.
    unsafe { libc::isatty(0) == 1 && libc::tcgetpgrp(0) == libc::getpgrp() }
}

/// Gives the terminal on stdin to `group` (SIGTTOU ignored meanwhile: a process
/// outside the foreground group may not otherwise change it).
fn give_terminal(group: libc::pid_t) {
    // SAFETY: signal disposition of this process and tcsetpgrp on fd 0; both are
    // async-signal-safe (this also runs in the child between fork and exec).
    unsafe {
        let old = libc::signal(libc::SIGTTOU, libc::SIG_IGN);
        libc::tcsetpgrp(0, group);
        libc::signal(libc::SIGTTOU, old);
    }
}

/// Runs `cmd` as the recorded process group and waits for it (see the module doc).
pub fn run(mut cmd: Command) -> std::io::Result<ExitStatus> {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    // Handlers first: a signal between the start and the wait must not kill weft
    // alone and leave the command running. (Exec resets them in the child.) A signal
    // weft was started ignoring (`nohup`, a background job of a script) stays
    // ignored, and the command inherits that as it would without weft.
    let mut handled = Vec::new();
    for sig in FORWARDED {
        // SAFETY: installs a handler that only makes async-signal-safe calls, or
        // puts SIG_IGN back.
        unsafe {
            let old = libc::signal(sig, forward as *const () as libc::sighandler_t);
            if old == libc::SIG_IGN {
                libc::signal(sig, libc::SIG_IGN);
            } else {
                handled.push(sig);
            }
        }
    }
    let terminal = foreground_terminal();
    cmd.process_group(0);
    if terminal {
        // SAFETY: the closure runs between fork and exec and only calls
        // async-signal-safe functions (getpgrp, signal, tcsetpgrp).
        unsafe {
            cmd.pre_exec(|| {
                give_terminal(libc::getpgrp());
                Ok(())
            });
        }
    }
    let child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    GROUP.store(pid, Ordering::SeqCst);
    if terminal {
        give_terminal(pid);
    }
    let early = EARLY.swap(0, Ordering::SeqCst);
    if early != 0 {
        // SAFETY: signals the group this function started.
        unsafe { libc::kill(-pid, early) };
    }
    let flags = if terminal { libc::WUNTRACED } else { 0 };
    let status = loop {
        let mut status = 0;
        // SAFETY: waits for our own child; status is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, flags) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break Err(e);
        }
        if libc::WIFSTOPPED(status) {
            // Ctrl-Z: take the terminal back, stop like the command did, and on
            // `fg` give it back and continue the command.
            // SAFETY: our own process group and the command's.
            unsafe {
                give_terminal(libc::getpgrp());
                libc::raise(libc::SIGTSTP);
                give_terminal(pid);
                libc::kill(-pid, libc::SIGCONT);
            }
            continue;
        }
        break Ok(ExitStatus::from_raw(status));
    };
    if terminal {
        // SAFETY: our own process group.
        give_terminal(unsafe { libc::getpgrp() });
    }
    // The command is gone: its group gets no more signals, and weft's own Ctrl-C
    // while it writes its report ends weft as usual.
    GROUP.store(0, Ordering::SeqCst);
    for sig in handled {
        // SAFETY: restores the default disposition.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    drop(child);
    status
}
