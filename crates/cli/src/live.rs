//! `weft record --live`: while the program runs, prints at the end of each lock
//! interval one short line per lock whose CSP in that interval is above a threshold
//! (Free Lunch's in-vivo reports; docs/locks.md).
//!
//! Design: the agent already hands every thread's records to its writer at least
//! every ~200 ms, so the CLI tails the growing trace file: every 250 ms it reads the
//! blocks appended since its last look ([`weft_trace::TraceTail`]; a block still
//! being written is read next time), runs the lock analysis on the records it
//! still needs ([`Carry`]) and prints the intervals that ended at least [`LAG_NS`]
//! before the newest record. What it keeps is the records of the intervals not
//! printed yet plus the definitions, live threads' starts and open blocks and waits,
//! so a look costs the same at the end of a long run as at its start
//! (BENCHMARKS.md). The agent does no extra work in live mode. Lines go to stderr,
//! so the program's stdout is unchanged.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use weft_analysis::locks::{analyze_locks_with, LockAnalysis};
use weft_analysis::Model;
use weft_trace::{Record, ThreadIndex, Trace, TraceTail};

/// An interval is printed once the trace holds records this much later than its end
/// (the agent's flush period plus the writer's tick).
pub const LAG_NS: u64 = 350_000_000;
const POLL: Duration = Duration::from_millis(250);

#[derive(Clone, Copy, Debug)]
pub struct LiveConfig {
    pub interval_ns: u64,
    /// 0..1
    pub threshold: f64,
}

pub struct Live {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Watch>>,
    path: PathBuf,
    cfg: LiveConfig,
}

/// Parses `5%` or `0.05`.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let v = match s.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => s.parse::<f64>(),
    }
    .map_err(|_| format!("`{s}` is not a threshold (examples: 5%, 0.05)"))?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("`{s}` must be between 0% and 100%"));
    }
    Ok(v)
}

/// The records the lock analysis of the intervals not printed yet needs.
#[derive(Default)]
struct Carry {
    records: Vec<(ThreadIndex, Record)>,
}

impl Carry {
    /// Adds the newly read records and analyses everything kept; returns the analysis
    /// and the newest time seen.
    fn analyze(
        &mut self,
        tail: &TraceTail,
        new: Vec<(ThreadIndex, Record)>,
        interval_ns: u64,
    ) -> Option<(LockAnalysis, u64)> {
        self.records.extend(new);
        let trace = Trace {
            header: tail.header()?.clone(),
            records: std::mem::take(&mut self.records),
            truncated: true,
            unknown_records: 0,
            clock: weft_trace::Clock::new(0, 1.0),
        };
        let model = Model::build(&trace);
        let horizon = model.duration_ns;
        let a = analyze_locks_with(&model, interval_ns);
        self.records = trace.records;
        Some((a, horizon))
    }

    /// Drops what intervals from `cut` on do not need: records before `cut` except
    /// definitions, the program's start, the starts of threads that had not ended
    /// by `cut`, and lock blocks and waits still open.
    fn prune(&mut self, cut: u64) {
        let recs = std::mem::take(&mut self.records);
        let mut keep = vec![false; recs.len()];
        let mut ended_before: std::collections::HashSet<ThreadIndex> = Default::default();
        // Open blocks and waits per thread: indices of their begin records.
        let mut open: std::collections::HashMap<ThreadIndex, (Vec<usize>, Vec<usize>)> =
            Default::default();
        // Begins whose end comes at or after `cut` (the span crosses it).
        let mut crossing = Vec::new();
        for (i, (th, r)) in recs.iter().enumerate() {
            let o = open.entry(*th).or_default();
            let late = r.ts().is_some_and(|ts| ts >= cut);
            match r {
                Record::LockBlock { .. } => o.0.push(i),
                Record::LockAcquired { .. } | Record::LockGaveUp { .. } => {
                    crossing.extend(o.0.pop().filter(|_| late))
                }
                Record::WaitBegin { .. } => o.1.push(i),
                Record::WaitEnd { .. } => crossing.extend(o.1.pop().filter(|_| late)),
                Record::ThreadEnd { ts, .. } if *ts < cut => {
                    ended_before.insert(*th);
                }
                _ => {}
            }
            keep[i] = match r.ts() {
                None => true,
                Some(ts) => ts >= cut || matches!(r, Record::AppStart { .. }),
            };
        }
        for (blocks, waits) in open.values() {
            for &i in blocks.iter().chain(waits) {
                keep[i] = true;
            }
        }
        for i in crossing {
            keep[i] = true;
        }
        for (i, (th, r)) in recs.iter().enumerate() {
            if matches!(r, Record::ThreadStart { .. }) && !ended_before.contains(th) {
                keep[i] = true;
            }
        }
        self.records = recs
            .into_iter()
            .zip(keep)
            .filter_map(|(r, k)| k.then_some(r))
            .collect();
    }
}

/// The lines of interval `k` (CSP above the threshold), for the locks of `a`.
pub fn lines_for(a: &LockAnalysis, k: usize, threshold: f64) -> Vec<String> {
    let i = a.interval_ns;
    let start = k as u64 * i;
    let mut rows: Vec<(f64, String)> = Vec::new();
    for l in &a.locks {
        let Some(&csp) = l.csp_per_interval.get(k) else {
            continue;
        };
        if csp <= threshold {
            continue;
        }
        let mut s = format!(
            "weft: [{:.1}–{:.1} s] CSP {:>3.0}% {} ({})",
            start as f64 / 1e9,
            (start + i) as f64 / 1e9,
            csp * 100.0,
            l.class,
            l.kind
        );
        if let Some((site, _)) = l.sites.first() {
            s.push_str(&format!(" at {site}"));
        }
        if let Some((o, _)) = l.owners.first() {
            s.push_str(&format!(", held by {o}"));
        }
        rows.push((csp, s));
    }
    rows.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    rows.into_iter().map(|r| r.1).collect()
}

/// Reads what was appended and prints intervals `next..` that are complete (or all
/// of them when `all`); returns the new `next`.
fn print_ready(
    tail: &mut TraceTail,
    carry: &mut Carry,
    cfg: LiveConfig,
    mut next: u64,
    all: bool,
) -> u64 {
    let Ok(new) = tail.poll() else {
        return next;
    };
    let Some((a, horizon)) = carry.analyze(tail, new, cfg.interval_ns) else {
        return next;
    };
    let i = a.interval_ns;
    loop {
        let end = (next + 1) * i;
        let ready = if all {
            next * i < horizon
        } else {
            end + LAG_NS <= horizon
        };
        if !ready {
            break;
        }
        for line in lines_for(&a, next as usize, cfg.threshold) {
            eprintln!("{line}");
        }
        next += 1;
    }
    carry.prune(next * i);
    next
}

/// The state of a live view between looks.
struct Watch {
    tail: Option<TraceTail>,
    carry: Carry,
    next: u64,
}

impl Watch {
    fn look(&mut self, path: &Path, cfg: LiveConfig, all: bool) {
        if self.tail.is_none() && path.is_file() {
            self.tail = TraceTail::open(path).ok();
        }
        if let Some(t) = self.tail.as_mut() {
            self.next = print_ready(t, &mut self.carry, cfg, self.next, all);
        }
    }
}

impl Live {
    pub fn start(path: &Path, cfg: LiveConfig) -> Live {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let p = path.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("weft-live".into())
            .spawn(move || {
                let mut w = Watch {
                    tail: None,
                    carry: Carry::default(),
                    next: 0,
                };
                while !s.load(Ordering::Relaxed) {
                    std::thread::sleep(POLL);
                    w.look(&p, cfg, false);
                }
                w
            })
            .ok();
        Live {
            stop,
            thread,
            path: path.to_path_buf(),
            cfg,
        }
    }

    /// After the program ended: prints the intervals not printed yet (the last one partial).
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let mut w = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or(Watch {
                tail: None,
                carry: Carry::default(),
                next: 0,
            });
        w.look(&self.path, self.cfg, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds() {
        assert_eq!(parse_threshold("5%").unwrap(), 0.05);
        assert_eq!(parse_threshold("0.2").unwrap(), 0.2);
        assert!(parse_threshold("150%").is_err());
        assert!(parse_threshold("x").is_err());
    }

    /// Pruning keeps what later intervals need and drops the rest.
    #[test]
    fn prune_keeps_what_later_intervals_need() {
        let wait = |ts| Record::WaitBegin {
            ts,
            kind: 2,
            lock: 0,
        };
        let start = |ts| Record::ThreadStart {
            ts,
            name: "t".into(),
            java_id: 1,
            os_tid: 1,
            daemon: false,
            class_id: 0,
            target_class_id: 0,
            target_ident: 0,
            ident: 0,
        };
        let end = |ts| Record::ThreadEnd {
            ts,
            cpu_ns: 0,
            voluntary_cs: 0,
            involuntary_cs: 0,
        };
        let mut c = Carry {
            records: vec![
                (
                    0,
                    Record::ClassDef {
                        id: 1,
                        name: "x".into(),
                    },
                ),
                (1, start(0)),
                (1, wait(10)),
                (
                    1,
                    Record::WaitEnd {
                        ts: 20,
                        timed_out: false,
                    },
                ),
                (1, wait(30)), // still open at the cut
                (2, start(5)),
                (2, end(40)), // ended before the cut
                (3, start(6)),
                (3, end(120)),
                (
                    1,
                    Record::WaitEnd {
                        ts: 150,
                        timed_out: false,
                    },
                ),
            ],
        };
        c.prune(100);
        let kept: Vec<(ThreadIndex, Option<u64>)> =
            c.records.iter().map(|(t, r)| (*t, r.ts())).collect();
        assert_eq!(
            kept,
            vec![
                (0, None),
                (1, Some(0)),
                (1, Some(30)),
                (3, Some(6)),
                (3, Some(120)),
                (1, Some(150))
            ]
        );
    }
}
