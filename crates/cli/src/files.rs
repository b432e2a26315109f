//! Files a user owns: how weft writes its outputs and clears an old trace.
//!
//! weft runs as root on servers, in directories others can write to. So it never
//! writes through a symbolic link (a planted `report.html -> /etc/passwd` must not
//! be followed), never truncates a file in place (an output is written to a new
//! temporary file beside it, created with `O_EXCL | O_NOFOLLOW`, and renamed over
//! it), never writes over its own input, and never removes a trace that a running
//! recording holds (the agent keeps an exclusive `flock` on the trace it writes).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::CliError;

/// Refuses a path weft must not write: a symbolic link, or anything but a regular
/// file (a device, FIFO, socket or directory). A missing path is fine.
pub fn check_writable_target(path: &Path, what: &str) -> Result<(), CliError> {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let ft = m.file_type();
    if ft.is_symlink() {
        return Err(CliError::new(format!(
            "cannot write {what} to {}: it is a symbolic link (weft never writes through one; give the path it points to)",
            path.display()
        )));
    }
    if ft.is_dir() {
        return Err(CliError::new(format!(
            "cannot write {what} to {}: it is a directory",
            path.display()
        )));
    }
    if !ft.is_file() {
        return Err(CliError::new(format!(
            "cannot write {what} to {}: not a regular file",
            path.display()
        )));
    }
    Ok(())
}

/// Refuses to write `out` when it is the file `input` (also through another name).
pub fn check_not_input(out: &Path, input: &Path) -> Result<(), CliError> {
    let same = match (std::fs::metadata(out), std::fs::metadata(input)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    };
    if same {
        return Err(CliError::new(format!(
            "refusing to write {} over the trace it is made from",
            out.display()
        )));
    }
    Ok(())
}

/// A name for a temporary file beside `path` that no one else picks.
fn temp_beside(path: &Path, attempt: u32) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "weft".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    path.with_file_name(format!(
        ".{name}.{}-{nanos:x}-{attempt}.tmp",
        std::process::id()
    ))
}

/// Writes `bytes` to `path` as a new file: into a temporary file beside it (created
/// exclusively, never through a link), flushed to disk, then renamed over `path`.
/// A reader of `path` sees the old file or the whole new one, never a part.
pub fn write_file(path: &Path, bytes: &[u8], what: &str) -> Result<(), CliError> {
    check_writable_target(path, what)?;
    let err = |e: std::io::Error| {
        CliError::new(format!("cannot write {what} to {}: {e}", path.display()))
    };
    let mut last = None;
    for attempt in 0..8 {
        let tmp = temp_beside(path, attempt);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o666)
            .open(&tmp);
        let mut file = match file {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                last = Some(e);
                continue;
            }
            Err(e) => return Err(err(e)),
        };
        let written = file
            .write_all(bytes)
            .and_then(|_| file.sync_all())
            .and_then(|_| std::fs::rename(&tmp, path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(err(e));
        }
        return Ok(());
    }
    Err(err(last.unwrap_or_else(|| {
        std::io::Error::other("no free temporary name")
    })))
}

/// Takes the recording lock of an existing trace without waiting: Err(true) when a
/// running recording holds it.
fn try_lock(file: &File) -> Result<(), bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor this File owns.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r == 0 {
        return Ok(());
    }
    Err(std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK))
}

/// Clears the way for a new trace at `path`: refuses a link, a non-regular file,
/// a missing directory, and a trace that a running recording is writing (a second
/// `weft record` with the same `-o` must not destroy the first's trace); removes
/// an old trace otherwise (the agent creates its file exclusively, and would write
/// `<stem>.<pid>.weft` beside a stale one).
pub fn clear_old_trace(path: &Path) -> Result<(), CliError> {
    check_writable_target(path, "trace")?;
    let parent = path.parent().unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(CliError::new(format!(
            "cannot write trace to {}: directory {} does not exist",
            path.display(),
            parent.display()
        )));
    }
    let err =
        |e: std::io::Error| CliError::new(format!("cannot write trace to {}: {e}", path.display()));
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return check_dir_writable(parent).map_err(err);
        }
        Err(e) => return Err(err(e)),
    };
    match try_lock(&file) {
        Ok(()) => {}
        Err(true) => {
            return Err(CliError::new(format!(
                "{} is the trace of a recording that is still running; choose another -o (it is left as it is)",
                path.display()
            )))
        }
        // No locks here (some network file systems): nothing to check against.
        Err(false) => {}
    }
    // Remove the file we locked, not one put in its place since.
    let ours = file.metadata().map_err(err)?;
    let now = std::fs::symlink_metadata(path).map_err(err)?;
    if ours.dev() == now.dev() && ours.ino() == now.ino() {
        std::fs::remove_file(path).map_err(err)?;
    }
    Ok(())
}

/// Fails like the agent's `open` would when the trace's directory is not writable.
fn check_dir_writable(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Writes a report to stdout. A closed pipe (`weft report x | head`) is not worth
/// a message; any other write error (`> /dev/full`) is an error.
pub fn write_stdout(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::new(format!(
            "cannot write the report to standard output: {e}"
        ))),
    }
}

/// A fresh private directory (mode 0700, a name no one could plant in advance).
pub struct PrivateDir(PathBuf);

impl PrivateDir {
    pub fn new(prefix: &str) -> Result<PrivateDir, CliError> {
        use std::os::unix::ffi::OsStringExt;
        let template = std::env::temp_dir().join(format!("{prefix}XXXXXX"));
        let mut bytes = template.into_os_string().into_vec();
        bytes.push(0);
        // SAFETY: a NUL-terminated, writable template ending in XXXXXX.
        let p = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if p.is_null() {
            return Err(CliError::new(format!(
                "cannot create a private temporary directory: {}",
                std::io::Error::last_os_error()
            )));
        }
        bytes.pop();
        Ok(PrivateDir(PathBuf::from(std::ffi::OsString::from_vec(
            bytes,
        ))))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
