//! Time stamps: the TSC when it is invariant (constant_tsc and nonstop_tsc),
//! otherwise CLOCK_MONOTONIC in ns.

use std::sync::atomic::{AtomicBool, Ordering};

static USE_TSC: AtomicBool = AtomicBool::new(false);

pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(target_arch = "x86_64")]
fn tsc() -> u64 {
    // SAFETY: rdtsc is available on every x86_64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc() -> u64 {
    mono_ns()
}

/// Current time in ticks.
#[inline]
pub fn now() -> u64 {
    if USE_TSC.load(Ordering::Relaxed) {
        tsc()
    } else {
        mono_ns()
    }
}

fn tsc_is_invariant() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return false;
    };
    info.lines()
        .find(|l| l.starts_with("flags"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.contains(&"constant_tsc") && f.contains(&"nonstop_tsc")
        })
        .unwrap_or(false)
}

/// Chooses the clock source and estimates ticks per second (a ~3 ms busy interval
/// for the TSC). Returns (source name, ticks per second).
pub fn init() -> (&'static str, f64) {
    if !tsc_is_invariant() {
        USE_TSC.store(false, Ordering::Relaxed);
        return ("monotonic", 1e9);
    }
    let (t0, m0) = (tsc(), mono_ns());
    let mut m1 = m0;
    while m1 - m0 < 3_000_000 {
        m1 = mono_ns();
    }
    let t1 = tsc();
    let tps = (t1.wrapping_sub(t0)) as f64 * 1e9 / (m1 - m0) as f64;
    if !(1e6..1e11).contains(&tps) {
        return ("monotonic", 1e9);
    }
    USE_TSC.store(true, Ordering::Relaxed);
    ("tsc", tps)
}
