//! Locks grouped by class, kind and site (the method of the acquisition: the
//! line of one contended `synchronized` differs between interpreted and
//! compiled frames): a program that creates one lock per
//! row, entry or connection (Derby's lock table: thousands of `ReentrantLock`
//! instances at one site) has one contention problem, not thousands. A group's
//! CSP is the sum of its instances' (they share the denominator), per interval
//! and for the whole run. Groups are ranked like locks: by blocked time (CSP).

use std::collections::HashMap;

use crate::locks::LockAnalysis;

#[derive(Debug, Clone, PartialEq)]
pub struct LockGroup {
    pub class: String,
    pub kind: &'static str,
    /// The instances' most sampled site (`None`: no acquisition's stack was sampled).
    pub site: Option<String>,
    /// Indices into [`LockAnalysis::locks`], in its (CSP) order.
    pub locks: Vec<usize>,
    pub csp: f64,
    /// (interval start, CSP of the group), intervals with blocking.
    pub phases: Vec<(u64, f64)>,
    pub max_phase_csp: f64,
    pub max_phase_start_ns: u64,
    /// Highest CSP of the group over any interval-long window (`LockAnalysis::peak_csp`).
    pub peak_csp: f64,
    pub peak_start_ns: u64,
    pub contended: u64,
    pub slow_acquisitions: u64,
    /// Slow paths that gave up without the lock (`LockStats::gave_up`).
    pub gave_up: u64,
    pub blocked_ns: u64,
    pub max_blocked_ns: u64,
    /// The largest `LockStats::release_spread_ns` of its instances.
    pub release_spread_ns: u64,
    pub shared_blocked_ns: u64,
    /// (thread, blocked ns), largest first.
    pub blocked_per_thread: Vec<(String, u64)>,
    /// (owner thread, sampled contentions), most first.
    pub owners: Vec<(String, u64)>,
    /// Threads that blocked on the group.
    pub threads: usize,
    /// Σ `LockStats::holder_wall_samples` / `holder_off_cpu_samples` of its
    /// instances, and their off-CPU frames merged (most first).
    pub holder_wall_samples: u64,
    pub holder_off_cpu_samples: u64,
    pub holder_off_cpu_frames: Vec<(String, u64)>,
    /// Its instances' `LockStats::holder_waits`, added.
    pub holder_waits: crate::locks::HolderWaits,
    /// Some instance is a fair j.u.c. lock.
    pub fair: bool,
}

impl LockGroup {
    /// `class@hash` of a single instance, else `class (N instances)`.
    pub fn label(&self, la: &LockAnalysis) -> String {
        match self.locks.as_slice() {
            [one] => la.locks[*one].id.clone(),
            many => format!("{} ({} instances)", self.class, many.len()),
        }
    }
}

fn ranked(m: HashMap<String, u64>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = m.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// The groups of a lock analysis, largest blocked time first.
pub fn group(la: &LockAnalysis) -> Vec<LockGroup> {
    // The agent samples acquisition stacks (docs/locks.md §Sites), so some
    // instances have no site: they join their class's group when the class was
    // seen at one site only.
    let method = |s: &'_ str| -> String { s.rsplit_once(':').map_or(s, |(m, _)| m).to_string() };
    let mut sites_of: HashMap<(&str, &str), Vec<String>> = HashMap::new();
    for l in &la.locks {
        if let Some((s, _)) = l.sites.first() {
            let v = sites_of.entry((l.class.as_str(), l.kind)).or_default();
            let m = method(s);
            if !v.contains(&m) {
                v.push(m);
            }
        }
    }
    let mut index: HashMap<(&str, &str, Option<String>), usize> = HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, l) in la.locks.iter().enumerate() {
        let only = || match sites_of.get(&(l.class.as_str(), l.kind)).map(Vec::as_slice) {
            Some([one]) => Some(one.clone()),
            _ => None,
        };
        let key = (
            l.class.as_str(),
            l.kind,
            l.sites.first().map(|s| method(&s.0)).or_else(only),
        );
        let g = *index.entry(key).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[g].push(i);
    }
    let mut out: Vec<LockGroup> = members
        .into_iter()
        .map(|locks| {
            let first = &la.locks[locks[0]];
            let mut phases: std::collections::BTreeMap<u64, f64> = Default::default();
            let (mut per_thread, mut owners) = (HashMap::new(), HashMap::new());
            // The most sampled full site (with its line) of the instances.
            let mut counts: HashMap<&str, u64> = HashMap::new();
            for &i in &locks {
                for (s, n) in &la.locks[i].sites {
                    *counts.entry(s.as_str()).or_default() += n;
                }
            }
            let site = counts
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
                .map(|(s, _)| s.to_string());
            let mut g = LockGroup {
                class: first.class.clone(),
                kind: first.kind,
                site,
                locks: locks.clone(),
                csp: 0.0,
                phases: Vec::new(),
                max_phase_csp: 0.0,
                max_phase_start_ns: 0,
                peak_csp: 0.0,
                peak_start_ns: 0,
                contended: 0,
                slow_acquisitions: 0,
                gave_up: 0,
                blocked_ns: 0,
                max_blocked_ns: 0,
                release_spread_ns: 0,
                shared_blocked_ns: 0,
                blocked_per_thread: Vec::new(),
                owners: Vec::new(),
                threads: 0,
                holder_wall_samples: 0,
                holder_off_cpu_samples: 0,
                holder_off_cpu_frames: Vec::new(),
                holder_waits: Default::default(),
                fair: false,
            };
            let mut off_frames: HashMap<String, u64> = HashMap::new();
            for &i in &locks {
                let l = &la.locks[i];
                g.csp += l.csp;
                g.contended += l.contended;
                g.slow_acquisitions += l.slow_acquisitions;
                g.gave_up += l.gave_up;
                g.blocked_ns += l.blocked_ns;
                g.max_blocked_ns = g.max_blocked_ns.max(l.max_blocked_ns);
                g.release_spread_ns = g.release_spread_ns.max(l.release_spread_ns);
                g.shared_blocked_ns += l.shared_blocked_ns;
                g.holder_wall_samples += l.holder_wall_samples;
                g.holder_off_cpu_samples += l.holder_off_cpu_samples;
                g.fair |= l.fair;
                g.holder_waits.add(&l.holder_waits);
                for (f, n) in &l.holder_off_cpu_frames {
                    *off_frames.entry(f.clone()).or_default() += n;
                }
                for &(s, c) in &l.phases {
                    *phases.entry(s).or_default() += c;
                }
                for (t, d) in &l.blocked_per_thread {
                    *per_thread.entry(t.clone()).or_default() += d;
                }
                for (o, c) in &l.owners {
                    *owners.entry(o.clone()).or_default() += c;
                }
            }
            g.phases = phases.into_iter().collect();
            for &(s, c) in &g.phases {
                if c > g.max_phase_csp {
                    (g.max_phase_start_ns, g.max_phase_csp) = (s, c);
                }
            }
            (g.peak_start_ns, g.peak_csp) = la.peak_csp(&g.locks);
            g.threads = per_thread.len();
            g.blocked_per_thread = ranked(per_thread);
            g.owners = ranked(owners);
            g.holder_off_cpu_frames = ranked(off_frames);
            g
        })
        .collect();
    out.sort_by(|a, b| {
        b.blocked_ns
            .cmp(&a.blocked_ns)
            .then(a.locks[0].cmp(&b.locks[0]))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::LockStats;

    fn lock(i: u32, class: &str, site: Option<&str>, blocked: u64) -> LockStats {
        LockStats {
            lock: i,
            id: format!("{class}@{i:x}"),
            class: class.into(),
            kind: "reentrant_lock",
            ident: i,
            csp: blocked as f64 / 1000.0,
            max_phase_csp: 0.0,
            max_phase_start_ns: 0,
            peak_csp: 0.0,
            peak_start_ns: 0,
            phases: vec![(0, blocked as f64 / 1000.0)],
            csp_per_interval: vec![blocked as f64 / 1000.0],
            contended: 1,
            slow_acquisitions: 2,
            gave_up: 0,
            blocked_ns: blocked,
            max_blocked_ns: blocked,
            release_spread_ns: 0,
            shared_blocked_ns: 0,
            blocked_per_thread: vec![(format!("t{}", i % 2), blocked)],
            sites: site.map(|s| vec![(s.to_string(), 1)]).unwrap_or_default(),
            owners: vec![],
            holder_wall_samples: 0,
            holder_off_cpu_samples: 0,
            holder_off_cpu_frames: Vec::new(),
            holder_waits: Default::default(),
            fair: false,
        }
    }

    #[test]
    fn instances_at_one_site_are_one_group() {
        let mut la = LockAnalysis::default();
        for i in 0..2000 {
            la.locks.push(lock(i, "L", Some("a.B.lock:3"), 1));
        }
        la.locks.push(lock(5000, "L", Some("a.C.other:9"), 100));
        // The same method at another line (a compiled frame): same group.
        la.locks.push(lock(5003, "L", Some("a.B.lock:4"), 1));
        la.locks.push(lock(5001, "M", None, 50));
        // Not sampled, of a class seen at one site: joins that site's group.
        la.locks.push(lock(5002, "M", Some("a.D.m:1"), 10));
        let g = group(&la);
        assert_eq!(g.len(), 3);
        assert_eq!(g[2].locks.len(), 2);
        assert_eq!(g[2].site.as_deref(), Some("a.D.m:1"));
        assert_eq!(g[0].locks.len(), 2001);
        assert_eq!(g[0].site.as_deref(), Some("a.B.lock:3"));
        assert_eq!(g[0].blocked_ns, 2001);
        assert_eq!(g[0].contended, 2001);
        assert_eq!(g[0].threads, 2);
        assert!((g[0].csp - 2.001).abs() < 1e-9);
        assert!((g[0].max_phase_csp - 2.001).abs() < 1e-9);
        assert_eq!(g[0].label(&la), "L (2001 instances)");
        assert_eq!(g[1].site.as_deref(), Some("a.C.other:9"));
        assert_eq!(g[1].label(&la), "L@1388");
    }
}
