//! Fork-join event batches (record tag 36, docs/trace-format.md).
//!
//! The agent's fork-join hooks (java/agent/weft/FjProbe.java) write their events
//! into a per-thread `long[]`; a full buffer is copied into the trace as it is, so
//! that the application thread does no per-event work. The reader turns a batch
//! back into the fork-join records (tags 27–35) here. A buffer's usage ids are
//! `index << 40 | n` for its n-th push, so a push does not store its id: the
//! decoder counts pushes per buffer, across the batches of that buffer (which are
//! in order, as they are in the blocks of one thread).

use std::collections::HashMap;

use crate::record::{Record, ThreadIndex};

/// Event kinds: the low 4 bits of an event's first word.
pub mod kind {
    /// `[k | flags | class << 8] [prev if F_PREV] [ts if F_TS]`: a fork.
    pub const PUSH: u64 = 1;
    /// `[k | class << 8, prev, ts, ident | pool << 32]`: an external submission.
    pub const EXTERNAL: u64 = 2;
    /// `[k | class << 8, usage, ts]`: a run begins (usage 0: a direct execution).
    /// The agent writes it for direct executions only (a usage's run: [`RUN`]).
    pub const RUN_BEGIN: u64 = 3;
    /// `[ts << 4 | k]`: the innermost run ends.
    pub const RUN_END: u64 = 4;
    /// `[k, usage, ts]`
    pub const CANCEL: u64 = 5;
    /// `[k, usage, ts]`
    pub const REINIT: u64 = 6;
    /// `[k, usage, ts]`: a join on a task that was not done begins (written by
    /// earlier agents; now [`JOIN`]).
    pub const JOIN_BEGIN: u64 = 7;
    /// `[ts << 4 | k]`
    pub const JOIN_END: u64 = 8;
    /// `[k | site << 8, usage]`
    pub const SITE: u64 = 9;
    /// `[k | class << 8, pool, parallelism]`: this thread is a pool worker.
    pub const WORKER: u64 = 10;
    /// `[ts << 4 | k, usage]`: a run of a usage begins; its class is its push's.
    pub const RUN: u64 = 11;
    /// `[ts << 4 | k, usage]`: a join on a task that was not done begins.
    pub const JOIN: u64 = 12;
    /// Push flags (bits 4..7 of the first word).
    pub const F_PREV: u64 = 16;
    pub const F_TS: u64 = 32;
}

/// What a batch of one buffer leaves for its next batch.
#[derive(Default)]
struct BufferState {
    pushes: u64,
    /// A push inside a run has no timestamp of its own: it takes the last one.
    last_ts: u64,
    /// Class of the n-th push at n - 1 (a run's class is its push's).
    classes: Vec<u32>,
}

/// Usage ids: `buffer index << 40 | push number`.
const PUSH_NUMBER_BITS: u32 = 40;

/// (buffer index, push number) of a usage id.
fn split_usage(usage: u64) -> (u64, u64) {
    (
        usage >> PUSH_NUMBER_BITS,
        usage & ((1 << PUSH_NUMBER_BITS) - 1),
    )
}

/// Decodes the batches of a whole trace (state per buffer index).
#[derive(Default)]
pub(crate) struct FjEventDecoder {
    buffers: HashMap<u32, BufferState>,
    /// Positions (in the output) of runs whose push was not decoded yet: pushed on
    /// another thread (a steal) whose block comes later in the file.
    unresolved: Vec<usize>,
}

impl BufferState {
    fn class_of(&self, push_number: u64) -> Option<u32> {
        let n = usize::try_from(push_number.checked_sub(1)?).ok()?;
        self.classes.get(n).copied()
    }
}

impl FjEventDecoder {
    /// Appends the records of one batch (`words`: the events, little-endian u64s)
    /// of buffer `index`, recorded on `thread`. Err: what is malformed.
    pub(crate) fn decode(
        &mut self,
        thread: ThreadIndex,
        index: u32,
        words: &[u8],
        out: &mut Vec<(ThreadIndex, Record)>,
    ) -> Result<(), String> {
        if !words.len().is_multiple_of(8) {
            return Err(format!(
                "fork-join batch of {} bytes (not whole words)",
                words.len()
            ));
        }
        let ev: Vec<u64> = words
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]))
            .collect();
        let base = (index as u64) << PUSH_NUMBER_BITS;
        let st = self.buffers.entry(index).or_default();
        let mut i = 0;
        while i < ev.len() {
            let h = ev[i];
            let hi = h >> 8;
            let at = |k: usize| {
                ev.get(i + k)
                    .copied()
                    .ok_or_else(|| format!("fork-join event {} cut short", h & 15))
            };
            let (record, len) = match h & 15 {
                kind::PUSH => {
                    st.pushes += 1;
                    let mut k = 1;
                    let mut prev = 0;
                    if h & kind::F_PREV != 0 {
                        prev = at(k)?;
                        k += 1;
                    }
                    let ts = if h & kind::F_TS != 0 {
                        let t = at(k)?;
                        k += 1;
                        t
                    } else {
                        st.last_ts
                    };
                    st.classes.push(hi as u32);
                    let r = Record::FjPush {
                        ts,
                        usage: base | st.pushes,
                        prev,
                        class_id: hi as u32,
                        external: false,
                        ident: 0,
                        pool: 0,
                    };
                    (r, k)
                }
                kind::EXTERNAL => {
                    st.pushes += 1;
                    st.classes.push(hi as u32);
                    let x = at(3)?;
                    let r = Record::FjPush {
                        ts: at(2)?,
                        usage: base | st.pushes,
                        prev: at(1)?,
                        class_id: hi as u32,
                        external: true,
                        ident: x as u32,
                        pool: (x >> 32) as u32,
                    };
                    (r, 4)
                }
                kind::RUN_BEGIN => {
                    let r = Record::FjRunBegin {
                        ts: at(2)?,
                        usage: at(1)?,
                        class_id: hi as u32,
                    };
                    (r, 3)
                }
                kind::RUN => {
                    let usage = at(1)?;
                    // Class 0 until resolved (its push is in another buffer).
                    let (push_index, push_number) = split_usage(usage);
                    let class_id = if push_index == index as u64 {
                        st.class_of(push_number)
                    } else {
                        None
                    };
                    if class_id.is_none() {
                        self.unresolved.push(out.len());
                    }
                    let r = Record::FjRunBegin {
                        ts: h >> 4,
                        usage,
                        class_id: class_id.unwrap_or(0),
                    };
                    (r, 2)
                }
                kind::JOIN => {
                    let r = Record::FjJoinBegin {
                        ts: h >> 4,
                        usage: at(1)?,
                    };
                    (r, 2)
                }
                kind::RUN_END => (Record::FjRunEnd { ts: h >> 4 }, 1),
                kind::CANCEL => {
                    let r = Record::FjCancel {
                        ts: at(2)?,
                        usage: at(1)?,
                    };
                    (r, 3)
                }
                kind::REINIT => {
                    let r = Record::FjReinit {
                        ts: at(2)?,
                        usage: at(1)?,
                    };
                    (r, 3)
                }
                kind::JOIN_BEGIN => {
                    let r = Record::FjJoinBegin {
                        ts: at(2)?,
                        usage: at(1)?,
                    };
                    (r, 3)
                }
                kind::JOIN_END => (Record::FjJoinEnd { ts: h >> 4 }, 1),
                kind::SITE => {
                    let r = Record::FjSite {
                        usage: at(1)?,
                        site: hi as u32,
                    };
                    (r, 2)
                }
                kind::WORKER => {
                    let r = Record::FjWorker {
                        pool: at(1)? as u32,
                        class_id: hi as u32,
                        parallelism: at(2)? as u32,
                    };
                    (r, 3)
                }
                k => return Err(format!("unknown fork-join event kind {k}")),
            };
            if let Some(ts) = record.ts() {
                st.last_ts = ts;
            }
            out.push((thread, record));
            i += len;
        }
        Ok(())
    }

    /// Forgets the positions of unresolved runs (a streaming reader hands each
    /// block's records on and resolves their classes with [`Self::class_of_usage`]).
    pub(crate) fn forget_unresolved(&mut self) {
        self.unresolved.clear();
    }

    /// The class of a usage's push, once its buffer was decoded.
    pub(crate) fn class_of_usage(&self, usage: u64) -> Option<u32> {
        let (index, push_number) = split_usage(usage);
        u32::try_from(index)
            .ok()
            .and_then(|i| self.buffers.get(&i))
            .and_then(|b| b.class_of(push_number))
    }

    /// Gives the runs decoded before their push (steals) their push's class, once
    /// every block is decoded; a run whose push is not in the trace keeps class 0.
    pub(crate) fn resolve(&mut self, out: &mut [(ThreadIndex, Record)]) {
        for pos in std::mem::take(&mut self.unresolved) {
            if let Some((
                _,
                Record::FjRunBegin {
                    usage, class_id, ..
                },
            )) = out.get_mut(pos)
            {
                let (index, push_number) = split_usage(*usage);
                if let Some(c) = u32::try_from(index)
                    .ok()
                    .and_then(|i| self.buffers.get(&i))
                    .and_then(|b| b.class_of(push_number))
                {
                    *class_id = c;
                }
            }
        }
    }
}
