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
#[inline]
pub fn tsc() -> u64 {
    // SAFETY: rdtsc is available on every x86_64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
pub fn tsc() -> u64 {
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

/// Whether ticks are TSC cycles (else CLOCK_MONOTONIC ns).
pub fn uses_tsc() -> bool {
    USE_TSC.load(Ordering::Relaxed)
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

/// The clock source and its rate. The TSC rate is measured over the JVM's own
/// start-up: [`begin`] at OnLoad's start takes the first point, [`Begun::finish`]
/// at its end checks the rate over at least ~0.2 ms (OnLoad's own work, so nothing
/// waits), [`Calibration::ticks_per_sec`] at VMInit takes the second point, ~30 ms
/// later, so nothing spins for long (a 3 ms busy wait was a fifth of weft's
/// start-up cost).
pub struct Calibration {
    pub source: &'static str,
    t0: u64,
    m0: u64,
    /// The rate from the sanity check.
    pub rough: f64,
}

pub fn start() -> Calibration {
    begin().finish()
}

/// The first point of the calibration, taken early (OnLoad's start): the sanity
/// check in [`Begun::finish`] then waits only for what is left of its ~0.2 ms,
/// usually nothing, as OnLoad's other work takes longer.
pub struct Begun {
    /// (t0, m0), when the TSC is invariant and starts near zero.
    point: Option<(u64, u64)>,
}

pub fn begin() -> Begun {
    if !tsc_is_invariant() {
        return Begun { point: None };
    }
    let (t0, m0) = (tsc(), mono_ns());
    // Fork-join events keep a tick in 60 bits (FjProbe: `ts << 4 | kind`); a TSC
    // that starts far from zero (some hypervisors) is not used.
    Begun {
        point: (t0 < 1 << 58).then_some((t0, m0)),
    }
}

impl Begun {
    /// Chooses the clock source (the TSC if its rate over at least 0.2 ms is sane).
    pub fn finish(self) -> Calibration {
        let monotonic = Calibration {
            source: "monotonic",
            t0: 0,
            m0: 0,
            rough: 1e9,
        };
        let Some((t0, m0)) = self.point else {
            USE_TSC.store(false, Ordering::Relaxed);
            return monotonic;
        };
        let rough = rate_since(t0, m0, 200_000);
        if !(1e6..1e11).contains(&rough) {
            return monotonic;
        }
        USE_TSC.store(true, Ordering::Relaxed);
        Calibration {
            source: "tsc",
            t0,
            m0,
            rough,
        }
    }
}

/// Ticks per second since (t0, m0), waiting until at least `min_ns` have passed.
fn rate_since(t0: u64, m0: u64, min_ns: u64) -> f64 {
    let mut m1 = mono_ns();
    while m1.saturating_sub(m0) < min_ns {
        m1 = mono_ns();
    }
    let t1 = tsc();
    t1.wrapping_sub(t0) as f64 * 1e9 / (m1 - m0) as f64
}

impl Calibration {
    /// The rate measured from [`start`] until now (at least 1 ms).
    pub fn ticks_per_sec(&self) -> f64 {
        if self.source != "tsc" {
            return 1e9;
        }
        let tps = rate_since(self.t0, self.m0, 1_000_000);
        // A wild value (a suspended VM?) falls back to the sanity check's.
        if (tps / self.rough - 1.0).abs() < 0.05 {
            tps
        } else {
            self.rough
        }
    }
}
