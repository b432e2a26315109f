//! Per-thread scheduler statistics: how long each recorded thread was on a CPU
//! and how long it was runnable but waiting for one (WHATIF.md §1.5 R14).
//!
//! The kernel keeps both per thread in `/proc/self/task/<tid>/schedstat`
//! ("on-CPU ns, run-queue ns, time slices"). The writer thread reads every
//! tracked thread's file at each sampler tick (~1 µs each with the file kept
//! open), and a thread reads its own when it is first seen and once more at its
//! end, so the analyses can
//! split wall time into running, runnable and off-CPU without touching the hot
//! path: nothing here runs in a probe.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

use weft_trace::{Record, ThreadIndex};

use crate::{clock, sink};

/// A recorded thread whose schedstat the sampler reads.
struct Tracked {
    thread: ThreadIndex,
    tid: u32,
    /// Opened at the first read (the thread's own, when it is tracked).
    file: Option<File>,
}

static TRACKED: Mutex<Vec<Tracked>> = Mutex::new(Vec::new());

fn tracked() -> std::sync::MutexGuard<'static, Vec<Tracked>> {
    TRACKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts tracking the calling OS thread as trace thread `thread` (called once,
/// when the thread gets its buffer), with a first reading now: the sampler's
/// readings come ~100 ms apart, and without one at the start a thread's first
/// interval (all of a short thread's life) read as off-CPU time.
pub fn track_current(thread: ThreadIndex) {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as u32;
    let mut entry = Tracked {
        thread,
        tid,
        file: None,
    };
    if let Some(r) = read(&mut entry) {
        sink::emit_global(&r);
    }
    tracked().push(entry);
}

/// Records the calling thread's final statistics and stops tracking it (at its
/// ThreadEnd, before its buffer is flushed).
pub fn finish_current(thread: ThreadIndex) {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as u32;
    let entry = {
        let mut t = tracked();
        t.iter()
            .position(|e| e.thread == thread)
            .map(|i| t.swap_remove(i))
    };
    let Some(mut entry) = entry else { return };
    if entry.tid != tid {
        return;
    }
    if let Some(r) = read(&mut entry) {
        sink::emit_global(&r);
    }
}

/// Reads every tracked thread (the writer thread, at each sampler tick); threads
/// whose file is gone (they ended without a ThreadEnd event) are dropped.
pub fn tick() {
    let mut t = tracked();
    let mut records = Vec::with_capacity(t.len());
    t.retain_mut(|e| match read(e) {
        Some(r) => {
            records.push(r);
            true
        }
        None => false,
    });
    drop(t);
    for r in &records {
        sink::emit_global(r);
    }
}

fn read(e: &mut Tracked) -> Option<Record> {
    if e.file.is_none() {
        e.file = File::open(format!("/proc/self/task/{}/schedstat", e.tid)).ok();
    }
    let file = e.file.as_ref()?;
    let mut buf = [0u8; 96];
    let n = file.read_at(&mut buf, 0).ok()?;
    let (on_cpu_ns, runq_ns, timeslices) = parse(&buf[..n])?;
    Some(Record::ThreadSched {
        ts: clock::now(),
        thread: e.thread,
        on_cpu_ns,
        runq_ns,
        timeslices,
    })
}

/// Parses "on_cpu_ns runq_ns timeslices\n".
fn parse(bytes: &[u8]) -> Option<(u64, u64, u64)> {
    let s = std::str::from_utf8(bytes).ok()?;
    let mut it = s.split_ascii_whitespace().map(|f| f.parse::<u64>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernel_format() {
        assert_eq!(parse(b"123 45 6\n"), Some((123, 45, 6)));
        assert_eq!(parse(b"123 45\n"), None);
        assert_eq!(parse(b"x 45 6\n"), None);
    }

    #[test]
    fn reads_this_thread() {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() } as u32;
        let mut e = Tracked {
            thread: 7,
            tid,
            file: None,
        };
        // Burn CPU until on-CPU time is above zero: the kernel adds a running
        // thread's time at a tick or a switch, so a short burn can still read 0.
        let mut x = 0u64;
        let t0 = std::time::Instant::now();
        loop {
            for i in 0..1_000_000u64 {
                x = x.wrapping_mul(31).wrapping_add(i);
            }
            let on_cpu = match read(&mut e) {
                Some(Record::ThreadSched { on_cpu_ns, .. }) => on_cpu_ns,
                _ => 0,
            };
            if on_cpu > 0 || t0.elapsed() > std::time::Duration::from_secs(5) {
                break;
            }
        }
        assert!(x != 1);
        match read(&mut e) {
            Some(Record::ThreadSched {
                thread, on_cpu_ns, ..
            }) => {
                assert_eq!(thread, 7);
                assert!(on_cpu_ns > 0);
            }
            other => panic!("no schedstat for this thread: {other:?}"),
        }
    }
}
