//! CPU utilisation and context-switch rate over time, from the sampler's
//! cumulative process counters, and their means over chosen time windows.
//!
//! Utilisation is a fraction of the machine (1.0 = all `cpus` busy). This
//! module does not know about tasks; callers pass the intervals they care about.

use crate::model::Model;

/// One interval between two consecutive samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuPoint {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Process CPU time ÷ (interval × cpus).
    pub utilisation: f64,
    /// Context switches (voluntary + involuntary) per 100 ms.
    pub cs_per_100ms: f64,
    /// Part of the interval spent in GC pauses.
    pub gc_ns: u64,
    /// The whole machine's busy share of its CPUs (other processes included), when
    /// the sampler read the machine's idle time.
    pub machine_busy: Option<f64>,
}

impl CpuPoint {
    /// How much of this interval the disjoint `intervals` cover.
    fn overlap_with(&self, intervals: &[(u64, u64)]) -> u64 {
        intervals
            .iter()
            .map(|&(s, e)| overlap(self.start_ns, self.end_ns, s, e))
            .sum()
    }
}

/// Mean utilisation and context-switch rate over some time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowStats {
    pub utilisation: f64,
    pub cs_per_100ms: f64,
    /// How much sampled time the means are over.
    pub covered_ns: u64,
}

impl WindowStats {
    /// The CPUs left idle on average, of `cpus`.
    pub fn idle_cpus(&self, cpus: u64) -> f64 {
        (1.0 - self.utilisation).max(0.0) * cpus as f64
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuProfile {
    /// CPUs used to normalise utilisation (header `cpus`, else 1).
    pub cpus: u32,
    /// The header gave `cpus`; when false, utilisation is in units of one CPU.
    pub cpus_known: bool,
    pub points: Vec<CpuPoint>,
}

impl CpuProfile {
    pub fn build(model: &Model) -> CpuProfile {
        let cpus = model.cpus.unwrap_or(1).max(1);
        let mut points = Vec::new();
        for w in model.samples.windows(2) {
            let (a, b) = (w[0], w[1]);
            let dt = b.ts_ns.saturating_sub(a.ts_ns);
            if dt == 0 {
                continue;
            }
            let cpu = b.process_cpu_ns.saturating_sub(a.process_cpu_ns) as f64;
            let cs = (b.voluntary_cs.saturating_add(b.involuntary_cs))
                .saturating_sub(a.voluntary_cs.saturating_add(a.involuntary_cs))
                as f64;
            let gc_ns = model
                .gc_pauses
                .iter()
                .map(|g| overlap(a.ts_ns, b.ts_ns, g.start_ns, g.end_ns))
                .sum();
            let machine_busy = match (a.machine_idle_ns, b.machine_idle_ns) {
                (Some(ia), Some(ib)) => Some(
                    1.0 - (ib.saturating_sub(ia) as f64 / (dt as f64 * cpus as f64))
                        .clamp(0.0, 1.0),
                ),
                _ => None,
            };
            points.push(CpuPoint {
                start_ns: a.ts_ns,
                end_ns: b.ts_ns,
                machine_busy,
                // Never above 100%: the process CPU counter and the sample's
                // clock are read a few µs apart, which can overshoot by a hair.
                utilisation: (cpu / (dt as f64 * cpus as f64)).min(1.0),
                cs_per_100ms: cs * 100e6 / dt as f64,
                gc_ns,
            });
        }
        CpuProfile {
            cpus,
            cpus_known: model.cpus.is_some(),
            points,
        }
    }

    /// Mean over the whole recording (`None` without two samples).
    pub fn mean(&self) -> Option<WindowStats> {
        self.window(0, u64::MAX)
    }

    /// Highest utilisation of any sample interval.
    pub fn peak_utilisation(&self) -> Option<f64> {
        self.points.iter().map(|p| p.utilisation).reduce(f64::max)
    }

    /// Time-weighted means over `[from, to)`.
    pub fn window(&self, from: u64, to: u64) -> Option<WindowStats> {
        self.weighted(|p| overlap(p.start_ns, p.end_ns, from, to))
    }

    /// Time-weighted means inside the union of `intervals` and outside it.
    pub fn inside_outside(
        &self,
        intervals: &[(u64, u64)],
    ) -> (Option<WindowStats>, Option<WindowStats>) {
        let merged = merge_intervals(intervals);
        let ins = self.weighted(|p| p.overlap_with(&merged));
        let outs =
            self.weighted(|p| (p.end_ns - p.start_ns).saturating_sub(p.overlap_with(&merged)));
        (ins, outs)
    }

    /// The machine's busy share over the union of `intervals` (merged, sorted),
    /// time-weighted, and the sampled time it covers; None without the machine's
    /// idle readings there.
    pub fn machine_busy_inside(&self, intervals: &[(u64, u64)]) -> Option<(f64, u64)> {
        let (mut w, mut busy) = (0u64, 0f64);
        for p in &self.points {
            let Some(m) = p.machine_busy else {
                continue;
            };
            let x = p.overlap_with(intervals);
            w += x;
            busy += m * x as f64;
        }
        (w > 0).then(|| (busy / w as f64, w))
    }

    fn weighted(&self, weight: impl Fn(&CpuPoint) -> u64) -> Option<WindowStats> {
        let (mut w, mut u, mut c) = (0u64, 0f64, 0f64);
        for p in &self.points {
            let x = weight(p);
            if x == 0 {
                continue;
            }
            w += x;
            u += p.utilisation * x as f64;
            c += p.cs_per_100ms * x as f64;
        }
        (w > 0).then(|| WindowStats {
            utilisation: u / w as f64,
            cs_per_100ms: c / w as f64,
            covered_ns: w,
        })
    }
}

/// Length of the overlap of `[a0, a1)` and `[b0, b1)`.
pub fn overlap(a0: u64, a1: u64, b0: u64, b1: u64) -> u64 {
    a1.min(b1).saturating_sub(a0.max(b0))
}

/// Sorted, disjoint union of intervals (empty ones dropped).
pub fn merge_intervals(intervals: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = intervals.iter().copied().filter(|(s, e)| e > s).collect();
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// `(thread, start, end)` intervals gathered per thread, each thread's merged
/// ([`merge_intervals`]): for [`covers`] lookups of a thread at a time.
pub fn merged_by_thread(
    intervals: impl IntoIterator<Item = (weft_trace::ThreadIndex, u64, u64)>,
) -> std::collections::HashMap<weft_trace::ThreadIndex, Vec<(u64, u64)>> {
    let mut by: std::collections::HashMap<weft_trace::ThreadIndex, Vec<(u64, u64)>> =
        std::collections::HashMap::new();
    for (t, s, e) in intervals {
        by.entry(t).or_default().push((s, e));
    }
    for v in by.values_mut() {
        *v = merge_intervals(v);
    }
    by
}

/// Whether `t` lies in one of `merged` (sorted, disjoint: [`merge_intervals`]).
pub fn covers(merged: &[(u64, u64)], t: u64) -> bool {
    let k = merged.partition_point(|iv| iv.0 <= t);
    k > 0 && merged[k - 1].1 > t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TB;
    use weft_trace::Record;

    #[test]
    fn utilisation_cs_and_windows() {
        let mut tb = TB::new();
        tb.header.set("cpus", "4");
        // 0–100 ms: 2 CPUs busy, 50 cs; 100–200 ms: 1 CPU, 10 cs.
        for (ts, cpu, cs) in [
            (0, 0, 0),
            (100_000_000, 200_000_000, 50),
            (200_000_000, 300_000_000, 60),
        ] {
            tb.global(Record::Sample {
                ts,
                process_cpu_ns: cpu,
                voluntary_cs: cs,
                involuntary_cs: 0,
                live_threads: 3,
                machine_idle_ns: None,
            });
        }
        tb.global(Record::GcStart { ts: 150_000_000 });
        tb.global(Record::GcEnd { ts: 160_000_000 });
        let m = Model::build(&tb.trace());
        let p = CpuProfile::build(&m);
        assert!(p.cpus_known);
        assert_eq!(p.points.len(), 2);
        assert!((p.points[0].utilisation - 0.5).abs() < 1e-9);
        assert!((p.points[1].utilisation - 0.25).abs() < 1e-9);
        assert!((p.points[0].cs_per_100ms - 50.0).abs() < 1e-9);
        assert_eq!(p.points[1].gc_ns, 10_000_000);
        let mean = p.mean().unwrap();
        assert!((mean.utilisation - 0.375).abs() < 1e-9);
        assert!((mean.cs_per_100ms - 30.0).abs() < 1e-9);
        let w = p.window(50_000_000, 150_000_000).unwrap();
        assert!((w.utilisation - 0.375).abs() < 1e-9);
        assert_eq!(p.peak_utilisation(), Some(0.5));
        let (i, o) = p.inside_outside(&[(0, 50_000_000), (25_000_000, 100_000_000)]);
        assert!((i.unwrap().utilisation - 0.5).abs() < 1e-9);
        assert!((o.unwrap().cs_per_100ms - 10.0).abs() < 1e-9);
        assert_eq!(m.gc_total_ns(), 10_000_000);
    }

    #[test]
    fn no_samples_no_stats() {
        let m = Model::build(&TB::new().trace());
        let p = CpuProfile::build(&m);
        assert!(p.mean().is_none() && p.peak_utilisation().is_none());
        assert!(!p.cpus_known);
    }
}
