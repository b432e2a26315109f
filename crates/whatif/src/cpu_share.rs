//! The on-CPU share of a thread's compute ops between two schedstat readings
//! (docs/whatif.md §Durations: CPU demand).
//!
//! Between two readings the kernel gives the thread's on-CPU time `C` and its
//! run-queue time `R`; the graph gives the wall of its compute ops there, `W`.
//! A compute op's wall is CPU plus run-queue time (plus any wait nothing
//! recorded), so its CPU demand is its wall times `C / (C + Rc)`, where `Rc` is
//! the run-queue time spent inside compute ops. A thread that parks and is woken
//! also waits in the run queue *inside its waits*: between the unpark and the
//! return of the park (a hand-off wake-up, 10–100 µs on a VM, thousands of times
//! a second in a pipeline). Charging that to compute deflated the outer stages of
//! the pipeline validation case to 0.59 of their compute wall (getrusage: 0.77). So the
//! run-queue time inside compute is at most what the compute wall leaves beside
//! the on-CPU time: `Rc = min(R, max(0, W − C))`; the rest was spent in waits.
//! With no such excess (`C + R ≤ W`) this is the plain `C / (C + R)`, applied to the
//! part of the wall that was on a CPU or in the run queue: the rest, `W − C − Rc`,
//! was blocking nothing recorded (a `Thread.sleep`, socket I/O), latency off the
//! cores (`off`; before session 17 it was CPU demand, and a pool of 2 threads whose
//! tasks sleep 10 ms was estimated ×1.16 with 4 threads, ×2.0 measured). And the waits
//! cannot hold more run-queue time than their wall (the rest of the interval, `O`):
//! `Rc ≥ R − O`. With exact readings that never binds; readings are taken a little
//! after their timestamps, and a thread that computed all along (2 threads on 1 CPU)
//! could read `C + R` above the interval and be credited CPU it did not get.

use weft_analysis::SchedPoint;

/// One interval between consecutive readings with the share its compute ops get.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShareInterval {
    pub from_ns: u64,
    pub to_ns: u64,
    /// CPU demand per ns of compute wall in the interval (0..=1); `None` when the
    /// kernel reported no on-CPU time (no schedstats) while the thread computed.
    pub share: Option<f64>,
    /// Part of the compute wall the thread spent neither on a CPU nor in the run
    /// queue (0..=1): blocking no probe recorded (`Thread.sleep`, socket I/O, a page
    /// fault). Latency, not CPU demand: [`share`](Self::share) applies to the rest.
    pub off: f64,
}

/// The intervals between a thread's readings and their compute shares.
/// `compute` is the thread's compute walls `(from, to)` in the readings' clock.
pub fn share_intervals(sched: &[SchedPoint], compute: &[(u64, u64)]) -> Vec<ShareInterval> {
    let mut out: Vec<ShareInterval> = sched
        .windows(2)
        .filter(|w| w[1].ts_ns > w[0].ts_ns)
        .map(|w| ShareInterval {
            from_ns: w[0].ts_ns,
            to_ns: w[1].ts_ns,
            share: None,
            off: 0.0,
        })
        .collect();
    let mut wall = vec![0u64; out.len()];
    for &(a, b) in compute {
        for_overlaps(&out, a, b, |j, ns| wall[j] += ns);
    }
    let mut j = 0;
    for w in sched.windows(2) {
        if w[1].ts_ns <= w[0].ts_ns {
            continue;
        }
        let c = w[1].on_cpu_ns.saturating_sub(w[0].on_cpu_ns) as f64;
        let r = w[1].runq_ns.saturating_sub(w[0].runq_ns) as f64;
        // What the compute wall cannot hold was in the waits, and the waits (the
        // rest of the interval) cannot hold more than their wall.
        let other = (w[1].ts_ns - w[0].ts_ns).saturating_sub(wall[j]) as f64;
        let rc = r.min((wall[j] as f64 - c).max(0.0)).max(r - other);
        if wall[j] > 0 && c > 0.0 {
            out[j].off = ((wall[j] as f64 - c - rc) / wall[j] as f64).clamp(0.0, 1.0);
        }
        out[j].share = if c > 0.0 {
            Some(c / (c + rc))
        } else if wall[j] == 0 {
            // Nothing computed and nothing ran: no evidence either way.
            Some(1.0)
        } else {
            None
        };
        j += 1;
    }
    out
}

/// What a compute op's wall was, from the measured intervals it lies in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpShare {
    /// CPU demand per ns of the part that was on a CPU or runnable
    /// ([`ShareInterval::share`]).
    pub cpu: f64,
    /// The part neither running nor runnable ([`ShareInterval::off`]).
    pub off: f64,
}

/// Calls `f(interval index, overlap ns)` for each interval overlapping `[a, b)`.
fn for_overlaps(iv: &[ShareInterval], a: u64, b: u64, mut f: impl FnMut(usize, u64)) {
    let mut j = iv.partition_point(|x| x.to_ns <= a);
    while j < iv.len() && iv[j].from_ns < b {
        let ns = b.min(iv[j].to_ns).saturating_sub(a.max(iv[j].from_ns));
        if ns > 0 {
            f(j, ns);
        }
        j += 1;
    }
}

/// The CPU share and the off-CPU part of a compute op `[a, b)`: the overlap-weighted
/// [`ShareInterval::off`] of the measured intervals it lies in, and their
/// [`ShareInterval::share`] weighted by the part of the overlap that was not off
/// (the share applies to that part only: a thread that slept through one interval
/// (share ~1, nothing runnable) and waited 385 ms for a CPU in the next (share
/// 0.003) read 0.4 of its non-sleeping wall as CPU demand, 35× what it used: 300
/// threads simulated 8 s for 0.74 s); `None` when no measured interval covers any of it.
pub fn share_over(iv: &[ShareInterval], a: u64, b: u64) -> Option<OpShare> {
    let (mut cpu, mut on, mut off, mut covered) = (0f64, 0f64, 0f64, 0u64);
    for_overlaps(iv, a, b, |j, ns| {
        if let Some(k) = iv[j].share {
            let not_off = (1.0 - iv[j].off) * ns as f64;
            cpu += k * not_off;
            on += not_off;
            off += iv[j].off * ns as f64;
            covered += ns;
        }
    });
    (covered > 0).then(|| OpShare {
        cpu: if on > 0.0 { cpu / on } else { 1.0 },
        off: off / covered as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ts_ns: u64, on_cpu_ns: u64, runq_ns: u64) -> SchedPoint {
        SchedPoint {
            ts_ns,
            on_cpu_ns,
            runq_ns,
            timeslices: 0,
        }
    }

    #[test]
    fn run_queue_time_beyond_the_compute_wall_was_spent_in_waits() {
        // 0..100: ran 60, run queue 30, compute ops 70 of wall (30 waiting in a
        // park, of which 20 after the unpark in the run queue): Rc = 70 - 60 = 10.
        let s = share_intervals(&[at(0, 0, 0), at(100, 60, 30)], &[(0, 40), (60, 90)]);
        assert_eq!(s.len(), 1);
        let k = s[0].share.unwrap();
        assert!((k - 60.0 / 70.0).abs() < 1e-12, "{k}");
        // The ops' CPU adds up to the on-CPU time.
        let cpu =
            40.0 * share_over(&s, 0, 40).unwrap().cpu + 30.0 * share_over(&s, 60, 90).unwrap().cpu;
        assert!((cpu - 60.0).abs() < 1e-9, "{cpu}");
    }

    #[test]
    fn without_excess_run_queue_time_the_share_is_on_cpu_over_runnable() {
        // Compute wall 100 = 50 on CPU + 30 in the run queue + 20 nothing recorded:
        // 50 / 80 of the 80 that was runnable; the 20 is blocking (off), not demand.
        let s = share_intervals(&[at(0, 0, 0), at(100, 50, 30)], &[(0, 100)]);
        assert!((s[0].share.unwrap() - 50.0 / 80.0).abs() < 1e-12);
        assert!((s[0].off - 0.2).abs() < 1e-12);
        assert!((share_over(&s, 0, 100).unwrap().off - 0.2).abs() < 1e-12);
        // A task that sleeps 98 of its 100 (2 on a CPU): 0.98 off, demand 2.
        let s = share_intervals(&[at(0, 0, 0), at(100, 2, 0)], &[(0, 100)]);
        let demand = 100.0 * (1.0 - s[0].off) * s[0].share.unwrap();
        assert!((demand - 2.0).abs() < 1e-9, "{demand}");
        // Ran all the time it computed: 1.
        let s = share_intervals(&[at(0, 0, 0), at(100, 40, 0)], &[(0, 40)]);
        assert_eq!(s[0].share, Some(1.0));
    }

    #[test]
    fn waits_hold_no_more_run_queue_time_than_their_wall() {
        // Computed all of 0..100, readings a little late: 60 on CPU + 50 run queue.
        // No wait to hold the excess: all 50 was in compute, 60 / 110 (not 60 / 100).
        let s = share_intervals(&[at(0, 0, 0), at(100, 60, 50)], &[(0, 100)]);
        assert!((s[0].share.unwrap() - 60.0 / 110.0).abs() < 1e-12);
        // 20 of waits: the compute wall (80) leaves 20 beside the 60 on CPU, but the
        // waits hold at most 20 of the 50: Rc = max(20, 50 - 20) = 30, 60 / 90.
        let s = share_intervals(&[at(0, 0, 0), at(100, 60, 50)], &[(0, 80)]);
        assert!((s[0].share.unwrap() - 60.0 / 90.0).abs() < 1e-12);
    }

    #[test]
    fn an_op_across_readings_takes_each_interval_s_share() {
        // 0..100: share 1/2 (50 on CPU, 50 run queue, all compute); 100..200: share 1.
        let s = share_intervals(
            &[at(0, 0, 0), at(100, 50, 50), at(200, 150, 50)],
            &[(0, 200)],
        );
        assert_eq!(s[0].share, Some(0.5));
        assert_eq!(s[1].share, Some(1.0));
        // 50..150: 50 ns at 1/2 and 50 ns at 1.
        assert!((share_over(&s, 50, 150).unwrap().cpu - 0.75).abs() < 1e-12);
        // Outside the readings: nothing measured.
        assert_eq!(share_over(&s, 200, 300), None);
        // No schedstats (on-CPU 0 while computing): no share.
        let s = share_intervals(&[at(0, 0, 0), at(100, 0, 0)], &[(0, 100)]);
        assert_eq!(s[0].share, None);
    }

    #[test]
    fn a_sleeping_interval_s_share_weighs_only_its_runnable_part() {
        // One op over two readings: 0..100 slept 98 and ran 2 (share 1, off 0.98);
        // 100..200 ran 1 and waited 99 for a CPU (share 1/100, off 0). The op's CPU
        // demand is what it ran, 3: the share of its not-off part (102) is 3/102, not
        // the wall-weighted mean of 1 and 1/100 (0.505: a demand of 51.5).
        let s = share_intervals(&[at(0, 0, 0), at(100, 2, 0), at(200, 3, 99)], &[(0, 200)]);
        let o = share_over(&s, 0, 200).unwrap();
        let blocked = 200.0 * o.off;
        let demand = (200.0 - blocked) * o.cpu;
        assert!((blocked - 98.0).abs() < 1e-9, "{blocked}");
        assert!((demand - 3.0).abs() < 1e-9, "{demand}");
        // All of it off: no runnable part to weigh, the share is moot.
        let s = share_intervals(&[at(0, 0, 0), at(100, 0, 0)], &[]);
        assert_eq!(share_over(&s, 0, 100).map(|o| o.cpu), Some(1.0));
    }
}
