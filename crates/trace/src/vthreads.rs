//! Virtual threads get a stream of their own.
//!
//! The agent's buffers are per OS thread, so a virtual thread's records land
//! in the block of whichever carrier it was mounted on, between a
//! `VtStart`/`VtMount` and the next `VtUnmount`/`VtEnd` of that carrier. This
//! pass, run once by the reader, moves those records (the brackets included)
//! to the virtual thread's own index, `VIRTUAL_THREAD_BASE + n` in order of
//! first appearance: every later stage sees a virtual thread as a thread whose
//! records are in program order, even when it moved between carriers.

use std::collections::HashMap;

use crate::record::{Record, ThreadIndex, GLOBAL_THREAD};

/// Thread indices at or above this are virtual threads (agents number platform
/// threads from 0 up; `GLOBAL_THREAD` is `u32::MAX`).
pub const VIRTUAL_THREAD_BASE: ThreadIndex = 0x8000_0000;

/// Whether a thread index is a virtual thread's stream.
pub fn is_virtual_thread(thread: ThreadIndex) -> bool {
    (VIRTUAL_THREAD_BASE..GLOBAL_THREAD).contains(&thread)
}

/// Moves every virtual thread's records to its own stream (see the module doc),
/// then puts each stream in time order: a virtual thread that moved from carrier
/// A to carrier B may have its later records in a block of B written before
/// A's block with the earlier ones.
pub(crate) fn demux(records: &mut [(ThreadIndex, Record)]) {
    if assign_streams(records) {
        order_streams(records);
    }
}

/// Sorts the records of virtual-thread streams by time, in the slots they
/// already occupy (records of other threads keep their places). A record
/// without a time (a definition) keeps the time of its stream's previous one.
fn order_streams(records: &mut [(ThreadIndex, Record)]) {
    let mut last: HashMap<ThreadIndex, u64> = HashMap::new();
    let mut slots: Vec<usize> = Vec::new();
    let mut keyed: Vec<(u64, usize)> = Vec::new();
    for (i, (thread, rec)) in records.iter().enumerate() {
        if !is_virtual_thread(*thread) {
            continue;
        }
        let ts = match rec.ts() {
            Some(ts) => {
                last.insert(*thread, ts);
                ts
            }
            None => last.get(thread).copied().unwrap_or(0),
        };
        slots.push(i);
        keyed.push((ts, i));
    }
    keyed.sort_unstable();
    let moved: Vec<(ThreadIndex, Record)> = keyed
        .iter()
        .map(|&(_, i)| std::mem::replace(&mut records[i], (GLOBAL_THREAD, Record::End { ts: 0 })))
        .collect();
    for (slot, rec) in slots.into_iter().zip(moved) {
        records[slot] = rec;
    }
}

/// Gives virtual threads' records their stream index; true if there were any.
fn assign_streams(records: &mut [(ThreadIndex, Record)]) -> bool {
    let mut demux = VirtualThreadDemux::default();
    for (thread, rec) in records.iter_mut() {
        *thread = demux.thread_of(*thread, rec);
    }
    demux.any()
}

/// The streaming form of the demultiplexing: the stream a record belongs to,
/// given the records of its block's thread seen before it (records must come
/// in file order). A streaming reader must still put each virtual thread's
/// stream in time order itself (the model does, at its end).
#[derive(Debug, Default)]
pub struct VirtualThreadDemux {
    index_of: HashMap<u64, ThreadIndex>,
    /// carrier -> the virtual thread mounted on it
    mounted: HashMap<ThreadIndex, ThreadIndex>,
    next: u32,
}

impl VirtualThreadDemux {
    /// Whether any virtual thread was seen.
    pub fn any(&self) -> bool {
        self.next > 0
    }

    /// The thread index `rec`, written in the block of `thread`, belongs to.
    pub fn thread_of(&mut self, thread: ThreadIndex, rec: &Record) -> ThreadIndex {
        if thread == GLOBAL_THREAD || is_virtual_thread(thread) {
            return thread;
        }
        match rec {
            Record::VtStart { vt, .. } | Record::VtMount { vt, .. } => {
                let next = &mut self.next;
                let v = *self.index_of.entry(*vt).or_insert_with(|| {
                    let v =
                        VIRTUAL_THREAD_BASE + (*next).min(GLOBAL_THREAD - 1 - VIRTUAL_THREAD_BASE);
                    *next += 1;
                    v
                });
                self.mounted.insert(thread, v);
                v
            }
            Record::VtEnd { vt, .. } | Record::VtUnmount { vt, .. } => {
                self.mounted.remove(&thread);
                self.index_of.get(vt).copied().unwrap_or(thread)
            }
            // Most traces mount no virtual thread: no lookup per record then.
            _ if self.mounted.is_empty() => thread,
            _ => self.mounted.get(&thread).copied().unwrap_or(thread),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(ts: u64) -> Record {
        Record::TaskBegin {
            ts,
            probe: 1,
            class_id: 2,
            ident: 3,
            inner_class_id: 0,
            inner_ident: 0,
        }
    }

    #[test]
    fn a_virtual_thread_that_moves_between_carriers_is_one_stream() {
        let v = VIRTUAL_THREAD_BASE;
        let mut recs = vec![
            (0, task(1)), // carrier 0's own work
            (
                0,
                Record::VtStart {
                    ts: 2,
                    vt: 77,
                    carrier: 0,
                    class_id: 5,
                    ident: 6,
                },
            ),
            (0, task(3)),
            (1, task(3)), // carrier 1, nothing mounted
            (
                0,
                Record::VtUnmount {
                    ts: 4,
                    vt: 77,
                    carrier: 0,
                },
            ),
            (0, task(5)),
            (
                1,
                Record::VtMount {
                    ts: 6,
                    vt: 77,
                    carrier: 1,
                },
            ),
            (
                1,
                Record::TaskEnd {
                    ts: 7,
                    probe: 1,
                    ident: 3,
                },
            ),
            (GLOBAL_THREAD, Record::GcStart { ts: 7 }),
            (
                1,
                Record::VtEnd {
                    ts: 8,
                    vt: 77,
                    carrier: 1,
                },
            ),
            (1, task(9)),
        ];
        demux(&mut recs);
        let threads: Vec<ThreadIndex> = recs.iter().map(|(t, _)| *t).collect();
        assert_eq!(
            threads,
            vec![0, v, v, 1, v, 0, v, v, GLOBAL_THREAD, v, 1],
            "{recs:?}"
        );
        assert!(is_virtual_thread(v) && !is_virtual_thread(0) && !is_virtual_thread(GLOBAL_THREAD));
    }

    #[test]
    fn a_stream_is_put_in_time_order_when_a_later_carrier_block_comes_first() {
        let v = VIRTUAL_THREAD_BASE;
        // Carrier 1's block (the second half of vt 5's run) was written before
        // carrier 0's block (its first half).
        let mut recs = vec![
            (
                1,
                Record::VtMount {
                    ts: 30,
                    vt: 5,
                    carrier: 1,
                },
            ),
            (
                1,
                Record::TaskEnd {
                    ts: 31,
                    probe: 1,
                    ident: 3,
                },
            ),
            (
                1,
                Record::VtEnd {
                    ts: 32,
                    vt: 5,
                    carrier: 1,
                },
            ),
            (1, task(33)),
            (
                0,
                Record::VtStart {
                    ts: 10,
                    vt: 5,
                    carrier: 0,
                    class_id: 1,
                    ident: 2,
                },
            ),
            (0, task(11)),
            (
                0,
                Record::VtUnmount {
                    ts: 12,
                    vt: 5,
                    carrier: 0,
                },
            ),
        ];
        demux(&mut recs);
        let stream: Vec<u64> = recs
            .iter()
            .filter(|(t, _)| *t == v)
            .filter_map(|(_, r)| r.ts())
            .collect();
        assert_eq!(stream, vec![10, 11, 12, 30, 31, 32]);
        assert_eq!(recs[3], (1, task(33)));
    }
}
