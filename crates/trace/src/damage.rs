//! Reading blocks around damage, shared by the in-memory reader and the stream.
//!
//! A damaged block (its checksum does not match, its length runs past the end of
//! the file with whole blocks after it, or its records do not decode) is skipped:
//! the reader looks for the next offset where a whole block with a matching
//! checksum starts and reads on. Each skipped stretch becomes a `Loss` record
//! (reason [`LossReason::Corrupt`]) of the thread the damaged block names, from
//! that thread's last timestamp before the damage to its first after it, and one
//! warning line. A checksum mismatch in the last block, or a file that ends inside
//! a block with nothing readable after it, is truncation (a torn write).

use std::collections::HashMap;

use crate::codec::checksum;
use crate::reader::Cursor;
use crate::record::{LossReason, Record, ThreadIndex, GLOBAL_THREAD};
use crate::TraceError;

/// Largest block the reader looks for when it resynchronises (the agent's blocks
/// are ~32 KiB, a fork-join batch ~64 KiB).
const MAX_RESYNC_BLOCK: u64 = 1 << 20;

/// Bytes a block source can read at any offset: a file, or a file in memory.
pub(crate) trait Source {
    /// Reads `out.len()` bytes at `offset` (the caller checked they exist).
    fn read_at(&self, out: &mut [u8], offset: u64) -> std::io::Result<()>;
}

impl Source for [u8] {
    fn read_at(&self, out: &mut [u8], offset: u64) -> std::io::Result<()> {
        let start = offset as usize;
        out.copy_from_slice(&self[start..start + out.len()]);
        Ok(())
    }
}

impl Source for std::fs::File {
    fn read_at(&self, out: &mut [u8], offset: u64) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, out, offset)
    }
}

pub(crate) enum Next {
    /// A whole block; its payload is in `Blocks::buf`.
    Block {
        offset: u64,
    },
    /// Bytes skipped: `offset`, `bytes`, the thread its first bytes name, what was wrong.
    Damaged {
        offset: u64,
        bytes: u64,
        thread: Option<ThreadIndex>,
        what: String,
    },
    /// The file ends inside a block, or its last block is torn.
    Truncated,
    End,
}

/// The blocks of a file, in order, read around damage.
pub(crate) struct Blocks<'s, S: Source + ?Sized> {
    src: &'s S,
    /// File offset of the next block.
    pub(crate) pos: u64,
    len: u64,
    pub(crate) buf: Vec<u8>,
}

fn io(e: std::io::Error) -> TraceError {
    TraceError::Io("trace".into(), e)
}

/// The thread index at the start of a block payload, if it reads as one.
fn first_varint(payload: &[u8]) -> Option<ThreadIndex> {
    let mut c = Cursor {
        bytes: payload,
        pos: 0,
        base: 0,
    };
    c.u32v().ok()
}

impl<'s, S: Source + ?Sized> Blocks<'s, S> {
    pub(crate) fn new(src: &'s S, first: u64, len: u64) -> Self {
        Blocks {
            src,
            pos: first,
            len,
            buf: Vec::new(),
        }
    }

    fn head(&self, at: u64) -> Result<(u64, u32), TraceError> {
        let mut h = [0u8; 8];
        self.src.read_at(&mut h, at).map_err(io)?;
        Ok((
            u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as u64,
            u32::from_le_bytes([h[4], h[5], h[6], h[7]]),
        ))
    }

    pub(crate) fn next(&mut self) -> Result<Next, TraceError> {
        if self.pos >= self.len {
            return Ok(Next::End);
        }
        if self.len - self.pos < 8 {
            return Ok(Next::Truncated);
        }
        let offset = self.pos;
        let (len, sum) = self.head(offset)?;
        let end = offset + 8 + len;
        let fits = end <= self.len;
        let mut thread = None;
        if fits {
            self.buf.resize(len as usize, 0);
            self.src.read_at(&mut self.buf, offset + 8).map_err(io)?;
            if checksum(&self.buf) == sum {
                self.pos = end;
                return Ok(Next::Block { offset });
            }
            thread = first_varint(&self.buf);
        }
        let next = self.resync(offset + 1)?;
        if next.is_none() && (!fits || end == self.len) {
            self.pos = self.len;
            return Ok(Next::Truncated);
        }
        let next = next.unwrap_or(self.len);
        self.pos = next;
        Ok(Next::Damaged {
            offset,
            bytes: next - offset,
            thread,
            what: if fits {
                "block checksum mismatch".into()
            } else {
                "block length past the end of the file".into()
            },
        })
    }

    /// The next offset at or after `from` where a whole block with a matching
    /// checksum starts.
    fn resync(&mut self, from: u64) -> Result<Option<u64>, TraceError> {
        const WINDOW: u64 = 64 * 1024;
        let mut window = Vec::new();
        let mut p = from;
        let mut payload = Vec::new();
        while p + 8 <= self.len {
            let n = (self.len - p).min(WINDOW + 8);
            window.resize(n as usize, 0);
            self.src.read_at(&mut window, p).map_err(io)?;
            for i in 0..(n - 7).min(WINDOW) {
                let w = &window[i as usize..];
                let len = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as u64;
                let at = p + i;
                if len == 0 || len > MAX_RESYNC_BLOCK || at + 8 + len > self.len {
                    continue;
                }
                let sum = u32::from_le_bytes([w[4], w[5], w[6], w[7]]);
                payload.resize(len as usize, 0);
                self.src.read_at(&mut payload, at + 8).map_err(io)?;
                if checksum(&payload) == sum {
                    return Ok(Some(at));
                }
            }
            p += WINDOW;
        }
        Ok(None)
    }
}

/// A skipped stretch, waiting for its thread's next timestamp.
struct Skipped {
    offset: u64,
    bytes: u64,
    thread: Option<ThreadIndex>,
    what: String,
    from: Option<u64>,
    to: Option<u64>,
}

/// Follows the records read (their raw timestamps) to place skipped stretches in
/// time, and makes their `Loss` records and warnings at the end.
#[derive(Default)]
pub(crate) struct DamageTracker {
    skipped: Vec<Skipped>,
    last_ts: HashMap<ThreadIndex, u64>,
    /// The last record's thread and time, not yet in `last_ts` (a block's records
    /// are one thread's: one map write per change of thread, not per record).
    current: Option<(ThreadIndex, u64)>,
    good_bytes: u64,
    records: u64,
}

impl DamageTracker {
    fn good_block(&mut self, len: usize) {
        self.good_bytes += len as u64;
    }

    /// A record as read (its timestamp in ticks, before conversion).
    pub(crate) fn saw(&mut self, thread: ThreadIndex, ts: Option<u64>) {
        self.records += 1;
        let Some(ts) = ts else { return };
        if !self.skipped.is_empty() {
            for s in &mut self.skipped {
                if s.thread == Some(thread) && s.to.is_none() {
                    s.to = Some(ts);
                }
            }
        }
        match &mut self.current {
            Some((t, last)) if *t == thread => *last = ts,
            _ => {
                self.settle();
                self.current = Some((thread, ts));
            }
        }
    }

    /// Puts the pending last time into `last_ts`.
    fn settle(&mut self) {
        if let Some((t, ts)) = self.current.take() {
            self.last_ts.insert(t, ts);
        }
    }

    pub(crate) fn damaged(
        &mut self,
        offset: u64,
        bytes: u64,
        thread: Option<ThreadIndex>,
        what: String,
    ) {
        self.settle();
        let from = thread.and_then(|t| self.last_ts.get(&t).copied());
        self.skipped.push(Skipped {
            offset,
            bytes,
            thread,
            what,
            from,
            to: None,
        });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.skipped.is_empty()
    }

    /// The `Loss` records (times in ticks, on the global thread) and one warning
    /// per skipped stretch; `to_secs` converts ticks for the warnings.
    pub(crate) fn finish(
        mut self,
        start_ticks: u64,
        to_secs: impl Fn(u64) -> String,
    ) -> (Vec<(ThreadIndex, Record)>, Vec<String>) {
        self.settle();
        let per_record = (self.good_bytes / self.records.max(1)).max(1);
        let mut losses = Vec::new();
        let mut warnings = Vec::new();
        for s in self.skipped {
            // A thread index read from damaged bytes counts if the trace has it.
            let thread = s.thread.filter(|t| self.last_ts.contains_key(t));
            let from = s.from.unwrap_or(start_ticks);
            let to = s.to.unwrap_or(from).max(from);
            let estimate = (s.bytes / per_record).max(1);
            warnings.push(format!(
                "skipped {} bytes of damaged trace at byte {} ({}): {}, about {estimate} records lost",
                s.bytes,
                s.offset,
                s.what,
                match thread {
                    Some(t) => format!("thread #{t} between {} and {}", to_secs(from), to_secs(to)),
                    None => "thread unknown".into(),
                }
            ));
            losses.push((
                GLOBAL_THREAD,
                Record::Loss {
                    thread: thread.unwrap_or(GLOBAL_THREAD),
                    from_ts: from,
                    to_ts: to,
                    records: estimate,
                    reason: LossReason::Corrupt,
                },
            ));
        }
        (losses, warnings)
    }
}

impl DamageTracker {
    /// The outcome of decoding the whole block at `offset` (payload `payload`): a
    /// decoding error inside a checksummed block is a skipped stretch, the rest of
    /// the block from the error on (what decoded before it is kept).
    pub(crate) fn decoded(&mut self, result: Result<(), TraceError>, offset: u64, payload: &[u8]) {
        let start = offset + 8;
        let end = start + payload.len() as u64;
        match result {
            Ok(()) => self.good_block(payload.len()),
            Err(e) => {
                let (at, what) = match e {
                    TraceError::Corrupt { offset, what } => (offset as u64, what),
                    other => (start, other.to_string()),
                };
                let at = at.clamp(start, end);
                let what = format!("{what} at byte {at}");
                self.damaged(offset, end - at, first_varint(payload), what);
            }
        }
    }
}
