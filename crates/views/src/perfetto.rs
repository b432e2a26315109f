//! Perfetto's native trace format (TrackEvent protobuf), written by hand: one
//! track per thread with every task execution as a nested slice, GC pauses on
//! their own track, a flow from each submission (an instant on the submitting
//! thread) to its execution, a counter track of running tasks, and each stack
//! sample (docs/sampling.md) as an instant on its thread's track: named by its
//! innermost method, category `cpu sample` or `wall sample`, the stack root
//! first in its `stack` annotation.
//!
//! Field numbers are those of perfetto/protos/perfetto/trace: `trace.proto`,
//! `trace_packet.proto`, `track_event/track_event.proto`,
//! `track_event/track_descriptor.proto`, `thread_descriptor.proto`,
//! `process_descriptor.proto`, `counter_descriptor.proto`, `debug_annotation.proto`.

use weft_analysis::{timeline, Analysis};
/// A thread (block) index of the trace (`weft_trace::ThreadIndex`).
type ThreadIndex = u32;

// Trace
const TRACE_PACKET: u32 = 1;
// TracePacket
const PKT_TIMESTAMP: u32 = 8;
const PKT_SEQUENCE_ID: u32 = 10; // trusted_packet_sequence_id
const PKT_TRACK_EVENT: u32 = 11;
const PKT_SEQUENCE_FLAGS: u32 = 13;
const PKT_TRACK_DESCRIPTOR: u32 = 60;
const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
// TrackDescriptor
const TD_UUID: u32 = 1;
const TD_NAME: u32 = 2;
const TD_PROCESS: u32 = 3;
const TD_THREAD: u32 = 4;
const TD_PARENT_UUID: u32 = 5;
const TD_COUNTER: u32 = 8;
// ProcessDescriptor
const PD_PID: u32 = 1;
const PD_PROCESS_NAME: u32 = 6;
// ThreadDescriptor
const THD_PID: u32 = 1;
const THD_TID: u32 = 2;
const THD_THREAD_NAME: u32 = 5;
// TrackEvent
const TE_DEBUG_ANNOTATIONS: u32 = 4;
const TE_TYPE: u32 = 9;
const TE_TRACK_UUID: u32 = 11;
const TE_CATEGORIES: u32 = 22;
const TE_NAME: u32 = 23;
const TE_COUNTER_VALUE: u32 = 30;
const TE_DOUBLE_COUNTER_VALUE: u32 = 44;
const TE_FLOW_IDS: u32 = 47;
const TE_TERMINATING_FLOW_IDS: u32 = 48;
pub const TYPE_SLICE_BEGIN: u64 = 1;
pub const TYPE_SLICE_END: u64 = 2;
pub const TYPE_INSTANT: u64 = 3;
pub const TYPE_COUNTER: u64 = 4;
// DebugAnnotation
const DA_UINT_VALUE: u32 = 3;
const DA_STRING_VALUE: u32 = 6;
const DA_NAME: u32 = 10;

const SEQUENCE: u64 = 1;
const PROCESS_UUID: u64 = 1;
const GC_UUID: u64 = 2;
const ACTIVE_UUID: u64 = 3;
/// CSP counter tracks of the top locks: `CSP_UUID_BASE + rank`.
const CSP_UUID_BASE: u64 = 16;
/// Locks that get a CSP counter track.
pub const CSP_TRACKS: usize = 5;
/// Thread `i` has track uuid `THREAD_UUID_BASE + i`.
const THREAD_UUID_BASE: u64 = 1 << 20;
/// Innermost frames kept in a stack sample's `stack` annotation.
const SAMPLE_FRAMES: usize = 64;
/// Flow ids of forks (submission flows use the execution index + 1).
const FORK_FLOW_BASE: u64 = 1 << 40;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, ((field as u64) << 3) | wire as u64);
}

fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
    key(out, field, 0);
    varint(out, v);
}

fn fixed64(out: &mut Vec<u8>, field: u32, v: u64) {
    key(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn message(out: &mut Vec<u8>, field: u32, build: impl FnOnce(&mut Vec<u8>)) {
    let mut m = Vec::new();
    build(&mut m);
    bytes(out, field, &m);
}

fn packet(out: &mut Vec<u8>, build: impl FnOnce(&mut Vec<u8>)) {
    message(out, TRACE_PACKET, |p| {
        uint(p, PKT_SEQUENCE_ID, SEQUENCE);
        build(p);
    });
}

fn annotation_str(ev: &mut Vec<u8>, name: &str, value: &str) {
    message(ev, TE_DEBUG_ANNOTATIONS, |d| {
        bytes(d, DA_NAME, name.as_bytes());
        bytes(d, DA_STRING_VALUE, value.as_bytes());
    });
}

fn annotation_uint(ev: &mut Vec<u8>, name: &str, value: u64) {
    message(ev, TE_DEBUG_ANNOTATIONS, |d| {
        bytes(d, DA_NAME, name.as_bytes());
        uint(d, DA_UINT_VALUE, value);
    });
}

/// Begin and end of each execution as drawn: the recorded times, clamped so
/// that slices on a thread nest strictly (a child inside its parent, siblings
/// in order). With a well-formed analysis nothing is clamped.
pub(crate) fn nested_times(a: &Analysis) -> Vec<(u64, u64)> {
    let ex = &a.tasks.executions;
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ex.len());
    // Last time used on the current thread, and the thread.
    let mut last: Option<(ThreadIndex, u64)> = None;
    for e in ex {
        let floor = match last {
            Some((t, ts)) if t == e.thread => ts,
            _ => 0,
        };
        let mut b = e.begin_ns.max(floor);
        let mut end = e.end_ns.max(b);
        if let Some(p) = e.parent().filter(|&p| p < out.len()) {
            let (pb, pe) = out[p];
            b = b.clamp(pb, pe);
            end = end.clamp(b, pe);
        }
        out.push((b, end));
        last = Some((e.thread, b));
    }
    // Siblings: a slice must end before the next slice that is not inside it begins.
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..ex.len() {
        while let Some(&top) = stack.last() {
            if ex[top].thread == ex[i].thread && ex[i].parent() == Some(top) {
                break;
            }
            stack.pop();
            if ex[top].thread == ex[i].thread && out[top].1 > out[i].0 {
                out[top].1 = out[top].1.min(out[i].0).max(out[top].0);
            }
        }
        stack.push(i);
    }
    out
}

/// A lock-wait or wait slice as drawn on a thread track.
pub(crate) struct LockSlice {
    pub thread: ThreadIndex,
    pub begin: u64,
    pub end: u64,
    /// Index into `LockAnalysis::blocked` (a blocked period) or `wait_intervals`.
    pub blocked: Option<usize>,
    pub wait: Option<usize>,
}

/// The blocked periods and waits of `LockAnalysis` (`a.locks.blocked`,
/// `a.locks.wait_intervals`) as leaf slices on their threads' tracks, clamped so
/// that they nest with the executions drawn at `times` (see [`nested_times`]):
/// each ends 1 ns before the next execution boundary or slice on its thread that
/// begins after it. With a well-formed trace nothing is clamped (a blocked thread
/// begins and ends no execution).
pub(crate) fn lock_slices(a: &Analysis, times: &[(u64, u64)]) -> Vec<LockSlice> {
    use std::collections::HashMap;
    let mut bounds: HashMap<ThreadIndex, Vec<u64>> = HashMap::new();
    for (e, &(b, end)) in a.tasks.executions.iter().zip(times) {
        let v = bounds.entry(e.thread).or_default();
        v.push(b);
        v.push(end);
    }
    for v in bounds.values_mut() {
        v.sort_unstable();
    }
    let l = &a.locks;
    let mut raw: Vec<LockSlice> = l
        .blocked
        .iter()
        .enumerate()
        .map(|(i, b)| LockSlice {
            thread: b.thread,
            begin: b.start_ns,
            end: b.end_ns,
            blocked: Some(i),
            wait: None,
        })
        .chain(l.wait_intervals.iter().enumerate().map(|(i, w)| LockSlice {
            thread: w.thread,
            begin: w.start_ns,
            end: w.end_ns,
            blocked: None,
            wait: Some(i),
        }))
        .collect();
    raw.sort_by_key(|s| (s.thread, s.begin, s.end));
    let mut out = Vec::with_capacity(raw.len());
    for i in 0..raw.len() {
        let s = &raw[i];
        let mut end = s.end;
        if let Some(v) = bounds.get(&s.thread) {
            let k = v.partition_point(|&t| t <= s.begin);
            if let Some(&nb) = v.get(k) {
                if nb <= end {
                    end = nb - 1;
                }
            }
        }
        if let Some(n) = raw.get(i + 1).filter(|n| n.thread == s.thread) {
            if n.begin <= end {
                end = n.begin.saturating_sub(1);
            }
        }
        if end > s.begin {
            out.push(LockSlice {
                thread: s.thread,
                begin: s.begin,
                end,
                blocked: s.blocked,
                wait: s.wait,
            });
        }
    }
    out
}

struct Ev {
    ts: u64,
    body: Vec<u8>,
}

/// The analysis as a Perfetto trace (`.pftrace`), with a submission flow for each
/// submitted execution (from the thread that submitted it, kept by the task model).
pub fn perfetto_trace(a: &Analysis) -> Vec<u8> {
    let m = &a.model;
    let pid = m.pid.unwrap_or(1);
    let mut out = Vec::new();
    // Descriptors first; the first packet clears incremental state.
    packet(&mut out, |p| {
        uint(p, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
        message(p, PKT_TRACK_DESCRIPTOR, |t| {
            uint(t, TD_UUID, PROCESS_UUID);
            message(t, TD_PROCESS, |pd| {
                uint(pd, PD_PID, pid);
                let name = format!("java (pid {pid})");
                bytes(pd, PD_PROCESS_NAME, name.as_bytes());
            });
        });
    });
    for t in m.threads.values() {
        packet(&mut out, |p| {
            message(p, PKT_TRACK_DESCRIPTOR, |d| {
                uint(d, TD_UUID, THREAD_UUID_BASE + t.index as u64);
                uint(d, TD_PARENT_UUID, PROCESS_UUID);
                message(d, TD_THREAD, |th| {
                    uint(th, THD_PID, pid);
                    uint(th, THD_TID, t.os_tid.map_or(t.index as u64 + 1, u64::from));
                    bytes(th, THD_THREAD_NAME, t.display_name().as_bytes());
                });
            });
        });
    }
    let top_locks: Vec<(u64, String)> = a
        .locks
        .locks
        .iter()
        .take(CSP_TRACKS)
        .enumerate()
        .map(|(i, l)| {
            (
                CSP_UUID_BASE + i as u64,
                format!("CSP {} ({})", l.id, l.kind),
            )
        })
        .collect();
    let mut tracks: Vec<(u64, &str, bool)> = vec![
        (GC_UUID, "GC pauses", false),
        (ACTIVE_UUID, "running tasks", true),
    ];
    tracks.extend(top_locks.iter().map(|(u, n)| (*u, n.as_str(), true)));
    for (uuid, name, counter) in tracks {
        packet(&mut out, |p| {
            message(p, PKT_TRACK_DESCRIPTOR, |d| {
                uint(d, TD_UUID, uuid);
                uint(d, TD_PARENT_UUID, PROCESS_UUID);
                bytes(d, TD_NAME, name.as_bytes());
                if counter {
                    message(d, TD_COUNTER, |_| {});
                }
            });
        });
    }

    // Events are generated per track in a valid order with non-decreasing
    // times, then merged by a stable sort on time alone, which keeps each
    // track's order.
    let mut evs: Vec<Ev> = Vec::new();
    let ex = &a.tasks.executions;
    let times = nested_times(a);
    let end_ev = |thread: ThreadIndex| {
        let mut b = Vec::new();
        uint(&mut b, TE_TYPE, TYPE_SLICE_END);
        uint(&mut b, TE_TRACK_UUID, THREAD_UUID_BASE + thread as u64);
        b
    };
    let mut stack: Vec<usize> = Vec::new();
    for (i, e) in ex.iter().enumerate() {
        while let Some(&top) = stack.last() {
            if ex[top].thread == e.thread && e.parent() == Some(top) {
                break;
            }
            stack.pop();
            evs.push(Ev {
                ts: times[top].1,
                body: end_ev(ex[top].thread),
            });
        }
        let mut b = Vec::new();
        uint(&mut b, TE_TYPE, TYPE_SLICE_BEGIN);
        uint(&mut b, TE_TRACK_UUID, THREAD_UUID_BASE + e.thread as u64);
        bytes(&mut b, TE_CATEGORIES, e.kind.as_str().as_bytes());
        bytes(&mut b, TE_NAME, a.tasks.class(e).as_bytes());
        annotation_uint(&mut b, "self_ns", e.self_ns);
        annotation_str(
            &mut b,
            "execution",
            if e.reported() {
                "reported"
            } else {
                "aggregated"
            },
        );
        if let Some(q) = e.queue_wait_ns() {
            annotation_uint(&mut b, "queue_wait_ns", q);
        }
        if let Some(s) = e.created_site() {
            annotation_str(&mut b, "created_at", s);
        }
        if let Some(s) = e.submitted_site() {
            annotation_str(&mut b, "submitted_at", s);
        }
        if e.incomplete() {
            annotation_str(&mut b, "incomplete", "closed by weft");
        }
        if let (Some(from), Some(ts)) = (e.submit_thread(), e.submit_ns()) {
            let flow = i as u64 + 1;
            fixed64(&mut b, TE_TERMINATING_FLOW_IDS, flow);
            let mut s = Vec::new();
            uint(&mut s, TE_TYPE, TYPE_INSTANT);
            uint(&mut s, TE_TRACK_UUID, THREAD_UUID_BASE + from as u64);
            bytes(&mut s, TE_CATEGORIES, b"submit");
            bytes(
                &mut s,
                TE_NAME,
                format!("submit {}", a.tasks.class(e)).as_bytes(),
            );
            fixed64(&mut s, TE_FLOW_IDS, flow);
            evs.push(Ev { ts, body: s });
        }
        evs.push(Ev {
            ts: times[i].0,
            body: b,
        });
        stack.push(i);
    }
    while let Some(top) = stack.pop() {
        evs.push(Ev {
            ts: times[top].1,
            body: end_ev(ex[top].thread),
        });
    }
    let mut gc_last = 0u64;
    for g in &a.model.gc_pauses {
        let s = g.start_ns.max(gc_last);
        let e = g.end_ns.max(s);
        gc_last = e;
        let mut b = Vec::new();
        uint(&mut b, TE_TYPE, TYPE_SLICE_BEGIN);
        uint(&mut b, TE_TRACK_UUID, GC_UUID);
        bytes(&mut b, TE_NAME, b"GC pause");
        evs.push(Ev { ts: s, body: b });
        let mut b = Vec::new();
        uint(&mut b, TE_TYPE, TYPE_SLICE_END);
        uint(&mut b, TE_TRACK_UUID, GC_UUID);
        evs.push(Ev { ts: e, body: b });
    }
    for (ts, n) in timeline::active_tasks(&a.tasks) {
        let mut b = Vec::new();
        uint(&mut b, TE_TYPE, TYPE_COUNTER);
        uint(&mut b, TE_TRACK_UUID, ACTIVE_UUID);
        uint(&mut b, TE_COUNTER_VALUE, n as u64);
        evs.push(Ev { ts, body: b });
    }
    // Lock waits and other waits: leaf slices on the thread tracks (after the
    // executions' events, so that at equal times they nest inside them).
    let la = &a.locks;
    for s in lock_slices(a, &times) {
        let track = THREAD_UUID_BASE + s.thread as u64;
        let mut b = Vec::new();
        uint(&mut b, TE_TYPE, TYPE_SLICE_BEGIN);
        uint(&mut b, TE_TRACK_UUID, track);
        if let Some(i) = s.blocked {
            let bl = &la.blocked[i];
            let lock = &la.locks[bl.lock];
            bytes(&mut b, TE_CATEGORIES, b"lock");
            bytes(
                &mut b,
                TE_NAME,
                format!("blocked on {}", lock.class).as_bytes(),
            );
            annotation_str(&mut b, "lock", &lock.id);
            annotation_str(&mut b, "kind", lock.kind);
            if let Some(o) = &bl.owner {
                annotation_str(&mut b, "owner", o);
            }
            if let Some(site) = &bl.site {
                annotation_str(&mut b, "site", site);
            }
            if bl.shared {
                annotation_str(&mut b, "side", "shared");
            }
        } else if let Some(i) = s.wait {
            bytes(&mut b, TE_CATEGORIES, b"wait");
            bytes(&mut b, TE_NAME, la.wait_intervals[i].kind.as_bytes());
        }
        evs.push(Ev {
            ts: s.begin,
            body: b,
        });
        evs.push(Ev {
            ts: s.end,
            body: end_ev(s.thread),
        });
    }
    // CSP per interval of the top locks (0 in intervals without blocking).
    for (rank, l) in la.locks.iter().take(CSP_TRACKS).enumerate() {
        for (k, &csp) in l.csp_per_interval.iter().enumerate() {
            let start = k as u64 * la.interval_ns;
            let mut b = Vec::new();
            uint(&mut b, TE_TYPE, TYPE_COUNTER);
            uint(&mut b, TE_TRACK_UUID, CSP_UUID_BASE + rank as u64);
            fixed64(&mut b, TE_DOUBLE_COUNTER_VALUE, csp.to_bits());
            evs.push(Ev { ts: start, body: b });
        }
    }
    // Fork-join: a flow from each fork (an instant on the forking thread) to the
    // start of the usage's run (an instant on the running thread).
    for (k, u) in a.forkjoin.usages.iter().enumerate() {
        let Some(run_thread) = u.run_thread() else {
            continue;
        };
        if u.external {
            continue;
        }
        let flow = FORK_FLOW_BASE + k as u64;
        let class = a.model.class_name(u.class_id);
        let mut f = Vec::new();
        uint(&mut f, TE_TYPE, TYPE_INSTANT);
        uint(
            &mut f,
            TE_TRACK_UUID,
            THREAD_UUID_BASE + u.push_thread as u64,
        );
        bytes(&mut f, TE_CATEGORIES, b"fork");
        bytes(&mut f, TE_NAME, format!("fork {class}").as_bytes());
        fixed64(&mut f, TE_FLOW_IDS, flow);
        evs.push(Ev {
            ts: u.push_ns,
            body: f,
        });
        let mut r = Vec::new();
        uint(&mut r, TE_TYPE, TYPE_INSTANT);
        uint(&mut r, TE_TRACK_UUID, THREAD_UUID_BASE + run_thread as u64);
        bytes(&mut r, TE_CATEGORIES, b"fork");
        bytes(&mut r, TE_NAME, format!("run {class}").as_bytes());
        fixed64(&mut r, TE_TERMINATING_FLOW_IDS, flow);
        evs.push(Ev {
            ts: u.begin_ns.max(u.push_ns),
            body: r,
        });
    }
    // Stack samples: instants on the thread tracks.
    let p = &a.profile;
    let mut stack_text: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    for smp in &p.samples {
        if !m.threads.contains_key(&smp.thread) {
            continue;
        }
        let text = stack_text.entry(smp.stack).or_insert_with(|| {
            let names = p.stack_names(smp.stack, true);
            let from = names.len().saturating_sub(SAMPLE_FRAMES);
            names[from..].join("\n")
        });
        let mut b = Vec::new();
        uint(&mut b, TE_TYPE, TYPE_INSTANT);
        uint(&mut b, TE_TRACK_UUID, THREAD_UUID_BASE + smp.thread as u64);
        let (category, state) = match smp.mode {
            weft_analysis::profile::Mode::Cpu => (&b"cpu sample"[..], None),
            weft_analysis::profile::Mode::Wall => (
                &b"wall sample"[..],
                Some(weft_analysis::profile::Profile::state_name(smp)),
            ),
        };
        bytes(&mut b, TE_CATEGORIES, category);
        bytes(&mut b, TE_NAME, p.leaf_method(smp.stack).as_bytes());
        annotation_str(&mut b, "stack", text);
        if let Some(st) = state {
            annotation_str(&mut b, "state", st);
        }
        evs.push(Ev {
            ts: smp.ts_ns,
            body: b,
        });
    }
    evs.sort_by_key(|e| e.ts); // stable
    for e in evs {
        packet(&mut out, |p| {
            uint(p, PKT_TIMESTAMP, e.ts);
            bytes(p, PKT_TRACK_EVENT, &e.body);
        });
    }
    out
}
