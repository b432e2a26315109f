//! `weft record --live`: while the program runs, prints at the end of each lock
//! interval one short line per lock whose CSP in that interval is above a threshold
//! (Free Lunch's in-vivo reports; docs/locks.md).
//!
//! Design: the agent already hands every thread's records to its writer at least
//! every ~200 ms, so the CLI tails the growing trace file: every 250 ms it reads the
//! file (a torn last block is simply not read yet), runs the lock analysis and prints
//! the intervals that ended at least [`LAG_NS`] before the newest record. The
//! agent does no extra work in live mode. Lines go to stderr, so the program's
//! stdout is unchanged.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use weft_analysis::locks::{analyze_locks_with, LockAnalysis};
use weft_analysis::Model;

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
    thread: Option<JoinHandle<u64>>,
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

fn analyze(path: &Path, interval_ns: u64) -> Option<(LockAnalysis, u64)> {
    let model = Model::read(path).ok()?;
    let horizon = model.duration_ns;
    Some((analyze_locks_with(&model, interval_ns), horizon))
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

/// Prints intervals `next..` that are complete (or all of them when `all`); returns the new `next`.
fn print_ready(path: &Path, cfg: LiveConfig, mut next: u64, all: bool) -> u64 {
    let Some((a, horizon)) = analyze(path, cfg.interval_ns) else {
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
            return next;
        }
        for line in lines_for(&a, next as usize, cfg.threshold) {
            eprintln!("{line}");
        }
        next += 1;
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
                let mut next = 0;
                while !s.load(Ordering::Relaxed) {
                    std::thread::sleep(POLL);
                    if p.is_file() {
                        next = print_ready(&p, cfg, next, false);
                    }
                }
                next
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
        let next = self.thread.take().and_then(|t| t.join().ok()).unwrap_or(0);
        if self.path.is_file() {
            print_ready(&self.path, self.cfg, next, true);
        }
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
}
