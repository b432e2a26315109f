//! Diagnostics of the agent's fixed per-run cost (`WEFT_STARTUP_LOG=1`): the CPU
//! time of OnLoad, VMInit (with its steps), the class hook, the thread callbacks
//! and VMDeath. Off by default: each entry point is then one relaxed load.
//!
//! Times are the calling thread's CPU time (on a machine shared with other work,
//! wall time inside a callback mostly measures waiting for a CPU); `to_vminit`
//! and `onload_to_end` are wall times. At the end of VMDeath one line goes to
//! stderr (and the VMInit steps before it, as they happen):
//! `weft-startup: onload=0.46ms to_vminit=27.1ms vminit=3.74ms hook=242/5/1.24ms
//! changed_hook=0.39ms threads=6/0.47ms thread_ends=4/0.44ms vmdeath=0.06ms
//! onload_to_end=85.0ms process_cpu=74.7ms` (hook: calls / classes changed / CPU;
//! threads: callbacks / CPU). BENCHMARKS.md, "Session 11: the fixed per-run cost".

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static ON: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy)]
pub enum Phase {
    OnLoad,
    VmInit,
    VmDeath,
    ThreadStart,
    ThreadEnd,
}

const PHASES: usize = 5;
/// CPU ns and calls per phase.
static PHASE_NS: [AtomicU64; PHASES] = [const { AtomicU64::new(0) }; PHASES];
static PHASE_N: [AtomicU64; PHASES] = [const { AtomicU64::new(0) }; PHASES];
static ONLOAD_ENTRY_MONO: AtomicU64 = AtomicU64::new(0);
static ONLOAD_ENTRY_CPU: AtomicU64 = AtomicU64::new(0);
static ONLOAD_EXIT_MONO: AtomicU64 = AtomicU64::new(0);
/// Wall ns from OnLoad's exit to VMInit's entry (the JVM's own start-up).
static TO_VMINIT_NS: AtomicU64 = AtomicU64::new(0);
/// Class-hook calls, classes changed, CPU ns in the hook, CPU ns of the changed ones.
static HOOK: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

thread_local! {
    /// This thread's CPU time at its last [`step`].
    static LAST_STEP: Cell<u64> = const { Cell::new(0) };
}

pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

fn cpu_now() -> u64 {
    crate::clock::thread_cpu_ns().max(1)
}

/// At OnLoad's entry: reads the switch.
pub fn onload_entry() {
    if std::env::var_os("WEFT_STARTUP_LOG").is_none_or(|v| v.is_empty() || v == "0") {
        return;
    }
    ON.store(true, Ordering::Relaxed);
    ONLOAD_ENTRY_MONO.store(crate::clock::mono_ns(), Ordering::Relaxed);
    ONLOAD_ENTRY_CPU.store(cpu_now(), Ordering::Relaxed);
}

pub fn onload_exit() {
    if !on() {
        return;
    }
    ONLOAD_EXIT_MONO.store(crate::clock::mono_ns(), Ordering::Relaxed);
    // A second copy of the agent in the same JVM adds its own (short) OnLoad.
    let d = cpu_now().saturating_sub(ONLOAD_ENTRY_CPU.load(Ordering::Relaxed));
    PHASE_NS[Phase::OnLoad as usize].fetch_add(d, Ordering::Relaxed);
    PHASE_N[Phase::OnLoad as usize].fetch_add(1, Ordering::Relaxed);
}

/// A start time for [`phase_end`] / [`hook_end`] (0 when off).
pub fn start() -> u64 {
    if on() {
        cpu_now()
    } else {
        0
    }
}

/// [`start`] for VMInit, which also begins its steps.
pub fn vm_init_entry() -> u64 {
    if !on() {
        return 0;
    }
    let wall = crate::clock::mono_ns().saturating_sub(ONLOAD_EXIT_MONO.load(Ordering::Relaxed));
    TO_VMINIT_NS.store(wall, Ordering::Relaxed);
    let t = start();
    LAST_STEP.with(|c| c.set(t));
    t
}

pub fn phase_end(p: Phase, t0: u64) {
    if t0 != 0 {
        let d = cpu_now().saturating_sub(t0);
        PHASE_N[p as usize].fetch_add(1, Ordering::Relaxed);
        PHASE_NS[p as usize].fetch_add(d, Ordering::Relaxed);
    }
}

pub fn hook_end(t0: u64, changed: bool) {
    if t0 == 0 {
        return;
    }
    let d = cpu_now().saturating_sub(t0);
    HOOK[0].fetch_add(1, Ordering::Relaxed);
    HOOK[2].fetch_add(d, Ordering::Relaxed);
    if changed {
        HOOK[1].fetch_add(1, Ordering::Relaxed);
        HOOK[3].fetch_add(d, Ordering::Relaxed);
    }
}

/// A step inside a phase: prints this thread's CPU time since its previous step.
pub fn step(what: &str) {
    if !on() {
        return;
    }
    let now = cpu_now();
    let last = LAST_STEP.with(|c| c.replace(now));
    if last != 0 {
        let ms = now.saturating_sub(last) as f64 / 1e6;
        eprintln!("weft-startup:   {what}: {ms:.3}ms");
    }
}

/// The line, at the end of VMDeath.
pub fn report() {
    if !on() {
        return;
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    let p = |x: Phase| ms(PHASE_NS[x as usize].load(Ordering::Relaxed));
    let n = |x: Phase| PHASE_N[x as usize].load(Ordering::Relaxed);
    let h = |i: usize| HOOK[i].load(Ordering::Relaxed);
    let to_end = crate::clock::mono_ns().saturating_sub(ONLOAD_ENTRY_MONO.load(Ordering::Relaxed));
    let (cpu, _, _) = crate::sink::rusage(libc::RUSAGE_SELF);
    eprintln!(
        "weft-startup: onload={:.2}ms to_vminit={:.2}ms vminit={:.2}ms hook={}/{}/{:.2}ms \
         changed_hook={:.2}ms threads={}/{:.2}ms thread_ends={}/{:.2}ms vmdeath={:.2}ms \
         onload_to_end={:.2}ms process_cpu={:.2}ms",
        p(Phase::OnLoad),
        ms(TO_VMINIT_NS.load(Ordering::Relaxed)),
        p(Phase::VmInit),
        h(0),
        h(1),
        ms(h(2)),
        ms(h(3)),
        n(Phase::ThreadStart),
        p(Phase::ThreadStart),
        n(Phase::ThreadEnd),
        p(Phase::ThreadEnd),
        p(Phase::VmDeath),
        ms(to_end),
        ms(cpu),
    );
}
