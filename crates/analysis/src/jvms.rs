//! Several JVMs in one report: the analyses of each JVM's trace, placed on one
//! wall-clock time line (each trace's `start.wall_ns`), and the totals across
//! JVMs where they add up (executions, threads, lock blocking by class name).
//!
//! Each JVM is analysed on its own ([`crate::analyze_window`]); nothing here reads
//! a record. Per-JVM numbers that do not add up (medians, CSP) stay per JVM.

use std::collections::BTreeMap;

use weft_trace::{header_keys, Header};

use crate::Analysis;

/// One recorded JVM.
#[derive(Debug, Clone)]
pub struct Jvm {
    pub pid: Option<u64>,
    /// The JVM's command line (header `jvm.command_line`; empty in older traces).
    pub command_line: String,
    /// The trace file, as given.
    pub trace_file: String,
    /// Wall-clock start of recording, ns since the Unix epoch (0: unknown).
    pub start_wall_ns: u64,
    /// Start of recording relative to the earliest JVM's, ns.
    pub start_ns: u64,
    /// The weft version that recorded it.
    pub agent_version: Option<String>,
    pub analysis: Analysis,
}

impl Jvm {
    /// A JVM from its trace's file name and header, and its analysis.
    pub fn new(trace_file: String, h: &Header, analysis: Analysis) -> Jvm {
        Jvm {
            pid: h.get_u64(header_keys::PID),
            command_line: h.get(header_keys::COMMAND_LINE).unwrap_or("").to_string(),
            trace_file,
            start_wall_ns: h.get_u64(header_keys::START_WALL_NS).unwrap_or(0),
            start_ns: 0,
            agent_version: h.get(header_keys::AGENT_VERSION).map(str::to_string),
            analysis,
        }
    }

    /// Length of what the report covers for this JVM (its recording, or its window).
    pub fn duration_ns(&self) -> u64 {
        self.analysis.model.duration_ns
    }

    /// A short name: `pid N`, or the trace file.
    pub fn label(&self) -> String {
        match self.pid {
            Some(p) => format!("pid {p}"),
            None => self.trace_file.clone(),
        }
    }
}

/// A task class summed over the JVMs that ran it (by class name and kind).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassTotal {
    pub class: String,
    pub kind: crate::TaskKind,
    pub executions: u64,
    pub aggregated: u64,
    pub submitted: u64,
    /// Total self time of the reported executions.
    pub self_ns: u64,
    /// (index into [`Jvms::jvms`], executions there), in JVM order.
    pub per_jvm: Vec<(usize, u64)>,
}

/// A lock class summed over the JVMs where it was contended (locks are objects of
/// one JVM; across JVMs only their class is shared).
#[derive(Debug, Clone, PartialEq)]
pub struct LockTotal {
    pub class: String,
    pub kind: &'static str,
    pub contended: u64,
    pub blocked_ns: u64,
    /// (index into [`Jvms::jvms`], that JVM's CSP of its locks of this class).
    pub per_jvm: Vec<(usize, f64)>,
}

/// Totals across JVMs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub executions: u64,
    pub aggregated: u64,
    pub threads: u64,
    /// By total self time, descending.
    pub classes: Vec<ClassTotal>,
    /// By blocked time, descending.
    pub locks: Vec<LockTotal>,
    /// From the earliest JVM's start to the latest one's end (wall clock).
    pub span_ns: u64,
}

/// The JVMs of one report, in order of their start.
#[derive(Debug, Clone)]
pub struct Jvms {
    pub jvms: Vec<Jvm>,
    pub totals: Totals,
    /// What the reader must know about the set (truncated traces, unknown starts).
    pub notes: Vec<String>,
}

/// Why traces cannot be reported together.
pub fn check_versions(jvms: &[Jvm]) -> Result<(), String> {
    let mut seen: Option<(&str, &str)> = None;
    for j in jvms {
        let v = j.agent_version.as_deref().unwrap_or("unknown");
        match seen {
            None => seen = Some((v, &j.trace_file)),
            Some((v0, f0)) if v0 != v => {
                return Err(format!(
                    "{f0} was recorded by weft {v0} and {} by weft {v}: traces of different weft \
                     versions cannot be reported together (report them one by one)",
                    j.trace_file
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Places the JVMs on one time line and sums what adds up.
pub fn combine(mut jvms: Vec<Jvm>) -> Jvms {
    let mut notes = Vec::new();
    let unknown: Vec<&str> = jvms
        .iter()
        .filter(|j| j.start_wall_ns == 0)
        .map(|j| j.trace_file.as_str())
        .collect();
    if !unknown.is_empty() && jvms.len() > 1 {
        notes.push(format!(
            "{} has no wall-clock start: placed at the earliest start",
            unknown.join(", ")
        ));
    }
    let earliest = jvms
        .iter()
        .map(|j| j.start_wall_ns)
        .filter(|&w| w > 0)
        .min()
        .unwrap_or(0);
    for j in jvms.iter_mut() {
        j.start_ns = j.start_wall_ns.saturating_sub(earliest);
    }
    jvms.sort_by_key(|j| (j.start_ns, j.pid));
    for j in &jvms {
        if j.analysis.model.truncated && jvms.len() > 1 {
            notes.push(format!(
                "{} ({}) is truncated: that JVM's recording did not end normally, its numbers \
                 miss the end of its run",
                j.trace_file,
                j.label()
            ));
        }
    }
    let totals = totals(&jvms);
    Jvms {
        jvms,
        totals,
        notes,
    }
}

fn totals(jvms: &[Jvm]) -> Totals {
    let mut t = Totals::default();
    let mut classes: BTreeMap<(String, &'static str), ClassTotal> = BTreeMap::new();
    let mut locks: BTreeMap<String, LockTotal> = BTreeMap::new();
    for (i, j) in jvms.iter().enumerate() {
        let a = &j.analysis;
        t.threads += a.model.threads.len() as u64;
        t.span_ns = t.span_ns.max(j.start_ns + j.duration_ns());
        for c in &a.tasks.classes {
            t.executions += c.executions;
            t.aggregated += c.aggregated;
            let e = classes
                .entry((c.class.clone(), c.kind.as_str()))
                .or_insert_with(|| ClassTotal {
                    class: c.class.clone(),
                    kind: c.kind,
                    executions: 0,
                    aggregated: 0,
                    submitted: 0,
                    self_ns: 0,
                    per_jvm: Vec::new(),
                });
            e.executions += c.executions;
            e.aggregated += c.aggregated;
            e.submitted += c.submitted;
            e.self_ns += c.granularity_ns.total;
            match e.per_jvm.last_mut() {
                Some((k, n)) if *k == i => *n += c.executions,
                _ => e.per_jvm.push((i, c.executions)),
            }
        }
        for l in &a.locks.locks {
            let e = locks.entry(l.class.clone()).or_insert_with(|| LockTotal {
                class: l.class.clone(),
                kind: l.kind,
                contended: 0,
                blocked_ns: 0,
                per_jvm: Vec::new(),
            });
            e.contended += l.contended;
            e.blocked_ns += l.blocked_ns;
            match e.per_jvm.last_mut() {
                Some((k, csp)) if *k == i => *csp += l.csp,
                _ => e.per_jvm.push((i, l.csp)),
            }
        }
    }
    t.classes = classes.into_values().collect();
    t.classes
        .sort_by(|a, b| b.self_ns.cmp(&a.self_ns).then(a.class.cmp(&b.class)));
    t.locks = locks.into_values().collect();
    t.locks
        .sort_by(|a, b| b.blocked_ns.cmp(&a.blocked_ns).then(a.class.cmp(&b.class)));
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{C_THREAD, C_WORK, C_WORKER, P_WORKER_RUN, P_WORK_RUN, TB};
    use weft_trace::Record;

    fn jvm(pid: u64, wall: u64, tasks: u32, version: &str) -> Jvm {
        let mut tb = TB::new();
        tb.header.set(header_keys::PID, pid.to_string());
        tb.header.set(header_keys::START_WALL_NS, wall.to_string());
        tb.header.set(header_keys::AGENT_VERSION, version);
        // A pool worker running `tasks` Work tasks submitted by thread 0.
        tb.start(1, 0, C_THREAD, (C_WORKER, 2001));
        tb.begin(1, 1, P_WORKER_RUN, C_WORKER, 2001);
        for i in 0..tasks {
            tb.submit(0, 5 + 10 * i as u64, (C_WORK, i), 0);
            tb.run(
                1,
                10 + 10 * i as u64,
                15 + 10 * i as u64,
                P_WORK_RUN,
                C_WORK,
                i,
            );
        }
        tb.end(1, 998, P_WORKER_RUN, 2001);
        tb.thread_end(1, 999);
        tb.global(Record::End { ts: 1000 });
        let t = tb.trace();
        let a = crate::analyze(&t);
        Jvm::new(format!("{pid}.weft"), &t.header, a)
    }

    #[test]
    fn totals_add_up_and_jvms_are_aligned() {
        let j = combine(vec![
            jvm(2, 5_000, 3, "0.1.0"),
            jvm(1, 2_000, 2, "0.1.0"),
            jvm(3, 9_000, 0, "0.1.0"),
        ]);
        let pids: Vec<_> = j.jvms.iter().map(|j| j.pid).collect();
        assert_eq!(pids, vec![Some(1), Some(2), Some(3)]);
        let starts: Vec<_> = j.jvms.iter().map(|j| j.start_ns).collect();
        assert_eq!(starts, vec![0, 3_000, 7_000]);
        let work = j.totals.classes.iter().find(|c| c.class == "demo.Work");
        let work = work.unwrap_or_else(|| panic!("{:?}", j.totals.classes));
        assert_eq!(work.executions, 5, "{:?}", j.totals.classes);
        assert_eq!(work.per_jvm, vec![(0, 2), (1, 3)]);
        assert_eq!(j.totals.executions, 5 + 3, "and one worker thread per JVM");
        assert_eq!(j.totals.span_ns, 8_000);
        assert!(j.notes.is_empty());
    }

    #[test]
    fn different_versions_and_truncated_traces_are_said() {
        let a = jvm(1, 1, 1, "0.1.0");
        let b = jvm(2, 2, 1, "0.2.0");
        let e = check_versions(&[a.clone(), b]).unwrap_err();
        assert!(e.contains("0.1.0") && e.contains("0.2.0"), "{e}");
        let mut c = jvm(3, 3, 1, "0.1.0");
        c.analysis.model.truncated = true;
        assert!(check_versions(&[a.clone(), c.clone()]).is_ok());
        let j = combine(vec![a, c]);
        assert_eq!(j.notes.len(), 1);
        assert!(j.notes[0].contains("truncated"));
    }
}
