//! Virtual threads (JDK 21+): how many ran, on how many carriers, how long they
//! were mounted, and where they blocked while pinned to their carrier.
//!
//! A virtual thread that blocks while pinned (inside `synchronized` on JDK
//! 21-23, or under a native frame on any version) keeps its carrier: the small
//! carrier pool (one per CPU by default) can run nothing else meanwhile. The
//! agent marks such a block with `VtPinned` (a park that reached the carrier,
//! which an unpinned virtual thread never does) and its site; a contended
//! monitor entered by a virtual thread on JDK 21-23 pins it too.
//!
//! Input: each virtual thread's own stream (the reader demultiplexes carriers,
//! weft_trace::VIRTUAL_THREAD_BASE). Output: counts and times per pinning site.

use std::collections::{BTreeMap, BTreeSet};

use weft_trace::{is_virtual_thread, ThreadIndex};

use crate::events::EventKind;
use crate::tasks::overlap_ns;

use crate::model::Model;

/// One place where virtual threads blocked while pinned.
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedSite {
    /// `Class.method:line` of the first frame outside the JDK, or the lock's
    /// class for a contended monitor without a captured site.
    pub site: String,
    /// Pinned blocks at this site.
    pub count: u64,
    /// Total time blocked while pinned.
    pub blocked_ns: u64,
    pub max_ns: u64,
    /// Of `blocked_ns`, the time during which every carrier was occupied (no
    /// carrier free for other virtual threads): the pinning's real cost.
    pub carriers_saturated_ns: u64,
    /// `park` (a park on the carrier), `monitor` (a contended `synchronized`) or
    /// `wait` (an `Object.wait`, JDK 21-23: the scheduler compensates with a carrier).
    pub how: &'static str,
    /// For a park: the frame that entered the innermost monitor the virtual thread
    /// held (where `synchronized` pins it, JDK 21-23), when it is not `site` itself
    /// (the blocking call in a helper: `Cache.load` under `synchronized Cache.get`).
    pub synchronized_at: Option<String>,
}

/// (site, site of the monitor held) of a `VtPinned`.
type SiteHeld = (u32, u32);
/// (site, class of the object waited on) of an `Object.wait`.
type SiteClass = (u32, u32);

/// One pinned block of a virtual thread, before grouping by site.
struct PinnedBlock {
    from: u64,
    to: u64,
    /// Its captured site (first frame outside the JDK).
    site: Option<String>,
    /// The contended monitor's lock id (a `monitor` block).
    lock: Option<u32>,
    how: &'static str,
    /// The frame that entered the monitor it held (a `park` block).
    held_at: Option<String>,
}

/// What the virtual threads of a run did (empty when there were none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VirtualThreadAnalysis {
    /// Virtual threads seen (with a start in the trace or not).
    pub count: u64,
    /// Distinct carrier threads they were mounted on.
    pub carriers: u64,
    /// Total time mounted on a carrier, and unmounted (parked, or waiting for a
    /// free carrier), over all virtual threads.
    pub mounted_ns: u64,
    pub unmounted_ns: u64,
    /// Re-mounts (a virtual thread came back after parking) and how many of
    /// them were on a different carrier than it left.
    pub remounts: u64,
    pub carrier_changes: u64,
    /// Each virtual thread's stretches unmounted (from a `VtUnmount` to its next
    /// mount), by time: not its executions' self time. The time split (activity.rs)
    /// leaves them out and the what-if graph takes them as waits.
    pub unmounted: BTreeMap<ThreadIndex, Vec<(u64, u64)>>,
    /// By carrier, the virtual threads that ended on it: (their first `VtEnd`, the
    /// virtual thread), by time. A join of a virtual thread is woken by its carrier
    /// right after that end (the what-if graph's join edges).
    pub ended_on: BTreeMap<ThreadIndex, Vec<(u64, ThreadIndex)>>,
    /// Each virtual thread's stretches mounted: (from, to, the carrier), by time. Its
    /// CPU is its carriers' (the what-if takes a virtual thread's on-CPU share from
    /// the carrier's schedstat readings: a virtual thread has none).
    pub mounts: BTreeMap<ThreadIndex, Vec<(u64, u64, ThreadIndex)>>,
    /// Pinning sites, most blocked time first.
    pub pinned: Vec<PinnedSite>,
    /// Pinned blocking inside weft's own helper classes (`weft.Probe` registering
    /// a class it sees for the first time): the profiler's cost, not the
    /// program's, so not among `pinned` (docs/virtual-threads.md).
    pub weft_pinned_ns: u64,
    /// The JDK's `synchronized` pins virtual threads (JDK 21-23; JEP 491 removed
    /// it in 24). `None` when the trace does not say the Java version.
    pub synchronized_pins: Option<bool>,
}

/// The Java feature version of the traced JVM ("21.0.8" -> 21).
fn java_feature(model: &Model) -> Option<u32> {
    model
        .java_version
        .as_deref()?
        .split(['.', '-', '+'])
        .next()?
        .parse()
        .ok()
}

pub fn analyze_virtual_threads(model: &Model) -> VirtualThreadAnalysis {
    let mut out = VirtualThreadAnalysis {
        synchronized_pins: java_feature(model).map(|v| v < 24),
        ..VirtualThreadAnalysis::default()
    };
    let mut carriers: BTreeMap<ThreadIndex, Vec<(u64, u64)>> = BTreeMap::new();
    let mut blocks: Vec<PinnedBlock> = Vec::new();
    let lock_pins = out.synchronized_pins.unwrap_or(false);
    let mut count = 0u64;
    for ev in model.events.iter().filter(|e| is_virtual_thread(e.thread)) {
        count += 1;
        let mut mounted: Option<(u64, ThreadIndex)> = None;
        let mut unmounted_at: Option<u64> = None;
        let mut left_carrier: Option<ThreadIndex> = None;
        // (site, monitor_site) of the last VtPinned.
        let mut pin: Option<(u32, u32)> = None;
        // (begin, the pin before it, (site, class) of an `Object.wait` that pins).
        let mut wait_begin: Option<(u64, Option<SiteHeld>, Option<SiteClass>)> = None;
        let mut lock_begin: Option<(u64, u32, u32)> = None;
        // The site of this thread's last sampled `Object.wait` per object class: a
        // thread waits at one place (sites are sampled per class).
        let mut wait_sites: BTreeMap<u32, u32> = BTreeMap::new();
        let mut ended = false;
        for e in ev.iter() {
            match e.kind {
                EventKind::VtStart | EventKind::VtMount => {
                    if let Some(from) = unmounted_at.take() {
                        out.unmounted_ns += e.ts.saturating_sub(from);
                        if e.ts > from {
                            out.unmounted
                                .entry(ev.thread)
                                .or_default()
                                .push((from, e.ts));
                        }
                        out.remounts += 1;
                        if left_carrier.is_some_and(|c| c != e.c) {
                            out.carrier_changes += 1;
                        }
                    }
                    if mounted.is_none() {
                        mounted = Some((e.ts, e.c));
                    }
                }
                EventKind::VtUnmount | EventKind::VtEnd => {
                    if e.kind == EventKind::VtEnd && !ended {
                        ended = true;
                        out.ended_on.entry(e.c).or_default().push((e.ts, ev.thread));
                    }
                    if let Some((from, carrier)) = mounted.take() {
                        out.mounted_ns += e.ts.saturating_sub(from);
                        carriers.entry(carrier).or_default().push((from, e.ts));
                        out.mounts
                            .entry(ev.thread)
                            .or_default()
                            .push((from, e.ts, carrier));
                        left_carrier = Some(carrier);
                    }
                    unmounted_at = (e.kind == EventKind::VtUnmount).then_some(e.ts);
                }
                EventKind::VtPinned => pin = Some((e.c, e.a as u32)),
                EventKind::WaitBegin => {
                    // On JDK 21-23 an `Object.wait` keeps its virtual thread on the
                    // carrier (the scheduler adds a carrier meanwhile to compensate).
                    let object_wait = (lock_pins && e.flag == weft_trace::wait_kind::OBJECT_WAIT)
                        .then(|| {
                            let class = e.a as u32;
                            let site = if e.c != 0 {
                                wait_sites.insert(class, e.c);
                                e.c
                            } else {
                                wait_sites.get(&class).copied().unwrap_or(0)
                            };
                            (site, class)
                        });
                    wait_begin = Some((e.ts, pin.take(), object_wait))
                }
                EventKind::WaitEnd => match wait_begin.take() {
                    Some((from, Some((site, held)), _)) => blocks.push(PinnedBlock {
                        from,
                        to: e.ts,
                        site: model.site_frame(site),
                        lock: None,
                        how: "park",
                        held_at: model.site_frame(held),
                    }),
                    Some((from, None, Some((site, class)))) => blocks.push(PinnedBlock {
                        from,
                        to: e.ts,
                        site: model.site_frame(site),
                        // The waited-on object's class stands for the lock: its waits'
                        // sites are sampled per class (below).
                        lock: Some(class),
                        how: "wait",
                        held_at: None,
                    }),
                    _ => {}
                },
                // A contended `synchronized` (a monitor) pins; a j.u.c. lock parks
                // and unmounts (its LockBlock/LockAcquired pair spans the unmount).
                EventKind::LockBlock
                    if lock_pins
                        && model
                            .lock_defs
                            .get(&e.b)
                            .is_none_or(|d| d.kind == weft_trace::lock_kind::MONITOR) =>
                {
                    lock_begin = Some((e.ts, e.b, e.c))
                }
                EventKind::LockAcquired if lock_pins => {
                    if let Some((from, lock, site)) = lock_begin.take() {
                        blocks.push(PinnedBlock {
                            from,
                            to: e.ts,
                            site: model.site_frame(site),
                            lock: Some(lock),
                            how: "monitor",
                            held_at: None,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    for v in carriers.values_mut() {
        v.sort_unstable();
    }
    out.count = count;
    out.carriers = carriers.len() as u64;
    for v in out.ended_on.values_mut() {
        v.sort_unstable();
    }
    let saturated = saturated_intervals(&carriers);
    // A contended monitor's blocks whose site was not captured (the agent samples
    // sites) take the lock's site when its other blocks show only one.
    let mut lock_sites: BTreeMap<(&str, u32), BTreeSet<&str>> = BTreeMap::new();
    for b in &blocks {
        if let (Some(site), Some(lock)) = (&b.site, b.lock) {
            lock_sites.entry((b.how, lock)).or_default().insert(site);
        }
    }
    let mut by_site: BTreeMap<(String, &'static str), PinnedSite> = BTreeMap::new();
    for b in &blocks {
        let only_site = b
            .lock
            .and_then(|l| lock_sites.get(&(b.how, l)))
            .filter(|sites| sites.len() == 1)
            .and_then(|sites| sites.first());
        let site = match (&b.site, only_site) {
            (Some(s), _) => s.clone(),
            (None, Some(s)) => s.to_string(),
            (None, None) if b.how == "wait" => "(unknown site)".into(),
            (None, None) => unsampled_site(model, b.lock),
        };
        let d = b.to.saturating_sub(b.from);
        if is_agent_frame(&site) {
            out.weft_pinned_ns += d;
            continue;
        }
        let e = by_site
            .entry((site.clone(), b.how))
            .or_insert_with(|| PinnedSite {
                site,
                count: 0,
                blocked_ns: 0,
                max_ns: 0,
                carriers_saturated_ns: 0,
                how: b.how,
                synchronized_at: None,
            });
        if e.synchronized_at.is_none() {
            e.synchronized_at = b.held_at.clone().filter(|h| *h != e.site);
        }
        e.count += 1;
        e.blocked_ns += d;
        e.max_ns = e.max_ns.max(d);
        e.carriers_saturated_ns += overlap_ns(&saturated, b.from, b.to);
    }
    out.pinned = by_site.into_values().collect();
    out.pinned
        .sort_by(|a, b| b.blocked_ns.cmp(&a.blocked_ns).then(a.site.cmp(&b.site)));
    out
}

/// A block whose site was not captured: the lock's class, or `(unknown site)`.
fn unsampled_site(model: &Model, lock: Option<u32>) -> String {
    match lock.and_then(|l| model.lock_defs.get(&l)).map(|d| &d.class) {
        Some(class) => format!("synchronized ({class})"),
        None => "(unknown site)".into(),
    }
}

/// A frame of weft's own helper classes (package `weft`, no subpackage).
fn is_agent_frame(frame: &str) -> bool {
    frame
        .strip_prefix("weft.")
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| c.is_ascii_uppercase())
}

/// The stretches during which every carrier had a virtual thread mounted.
fn saturated_intervals(carriers: &BTreeMap<ThreadIndex, Vec<(u64, u64)>>) -> Vec<(u64, u64)> {
    let n = carriers.len() as i64;
    if n == 0 {
        return Vec::new();
    }
    let mut edges: Vec<(u64, i64)> = carriers
        .values()
        .flatten()
        .flat_map(|&(a, b)| [(a, 1), (b, -1)])
        .collect();
    // Ends before begins at the same instant: a hand-over is not saturation.
    edges.sort_unstable_by_key(|&(t, d)| (t, d));
    let mut out = Vec::new();
    let mut busy = 0i64;
    let mut since = 0u64;
    for (t, d) in edges {
        let was = busy >= n;
        busy += d;
        if !was && busy >= n {
            since = t;
        } else if was && busy < n && t > since {
            out.push((since, t));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_frames_are_told_from_the_programs() {
        assert!(is_agent_frame("weft.Probe.classIdOf:161"));
        assert!(!is_agent_frame("weft.workloads.VirtualTasks$Pinner.run:53"));
        assert!(!is_agent_frame("com.example.Cache.get:42"));
    }

    #[test]
    fn saturation_is_when_every_carrier_is_busy() {
        let mut c = BTreeMap::new();
        c.insert(0, vec![(0, 10), (12, 30)]);
        c.insert(1, vec![(5, 20)]);
        // Both busy: 5..10 and 12..20.
        assert_eq!(saturated_intervals(&c), vec![(5, 10), (12, 20)]);
        assert_eq!(overlap_ns(&saturated_intervals(&c), 0, 15), 5 + 3);
    }
}
