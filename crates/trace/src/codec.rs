//! Byte encoding of records and blocks (see docs/trace-format.md).
//!
//! A record is `tag:u8 [ts_delta:zigzag-varint if tag & 0x80] len:varint payload`.
//! Every record carries its own length so that a reader skips kinds it does not
//! know, and the timestamp sits outside the payload so that skipping a record
//! never breaks the delta chain of the timestamps after it.

use crate::record::Record;
use crate::Header;

pub const MAGIC: &[u8; 8] = b"WEFTTRC\0";
pub const FORMAT_VERSION: u16 = 2;

pub(crate) const HAS_TS: u8 = 0x80;

pub(crate) mod tag {
    pub const CLASS_DEF: u8 = 1;
    pub const PROBE_DEF: u8 = 2;
    pub const SITE_DEF: u8 = 3;
    pub const THREAD_START: u8 = 10;
    pub const THREAD_END: u8 = 11;
    pub const TASK_BEGIN: u8 = 20;
    pub const TASK_END: u8 = 21;
    pub const SUBMIT: u8 = 22;
    pub const CREATED: u8 = 23;
    pub const FORK: u8 = 24;
    pub const JOIN_BEGIN: u8 = 25;
    pub const JOIN_END: u8 = 26;
    pub const FJ_PUSH: u8 = 27;
    pub const FJ_RUN_BEGIN: u8 = 28;
    pub const FJ_RUN_END: u8 = 29;
    pub const FJ_CANCEL: u8 = 30;
    pub const FJ_REINIT: u8 = 31;
    pub const FJ_JOIN_BEGIN: u8 = 32;
    pub const FJ_JOIN_END: u8 = 33;
    pub const FJ_SITE: u8 = 34;
    pub const FJ_WORKER: u8 = 35;
    pub const FJ_EVENTS: u8 = 36;
    pub const GC_START: u8 = 40;
    pub const GC_END: u8 = 41;
    pub const SAMPLE: u8 = 42;
    pub const CALIBRATION: u8 = 43;
    pub const LOSS: u8 = 44;
    pub const END: u8 = 45;
    pub const WINDOW_ENTER: u8 = 46;
    pub const WINDOW_EXIT: u8 = 47;
    pub const THREAD_SCHED: u8 = 50;
    pub const VT_START: u8 = 90;
    pub const VT_END: u8 = 91;
    pub const VT_MOUNT: u8 = 92;
    pub const VT_UNMOUNT: u8 = 93;
    pub const VT_PINNED: u8 = 94;
    pub const UNPARK: u8 = 100;
    pub const MONITOR_ENTER: u8 = 101;
    pub const MONITOR_ENTERED: u8 = 102;
    pub const MONITOR_EXIT: u8 = 103;
    pub const MONITOR_NOTIFY: u8 = 104;
    pub const ATTACH_END: u8 = 120;
    pub const LOCK_DEF: u8 = 60;
    pub const LOCK_BLOCK: u8 = 61;
    pub const LOCK_ACQUIRED: u8 = 62;
    pub const WAIT_BEGIN: u8 = 63;
    pub const WAIT_END: u8 = 64;
    pub const APP_START: u8 = 65;
    pub const LOCK_GAVE_UP: u8 = 66;
    pub const FRAME_DEF: u8 = 80;
    pub const STACK_DEF: u8 = 81;
    pub const STACK_SAMPLE: u8 = 82;
    pub const WAIT_DETAIL: u8 = 110;
    pub const THREAD_SEEN: u8 = 83;
}

#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, v: u64) {
    out.varint(v);
}

fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub(crate) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    string(out, s);
}

/// CRC-32 of a payload: detects torn or corrupted blocks.
pub(crate) fn checksum(bytes: &[u8]) -> u32 {
    // CRC-32 (IEEE), hardware-assisted where the CPU has it: every block is summed
    // on the thread that hands it over, ~30 MB per million fork-join tasks.
    crc32fast::hash(bytes)
}

/// Bytes that start a trace file: magic, version, header.
pub fn encode_file_header(header: &Header) -> Vec<u8> {
    let mut payload = Vec::new();
    put_varint(&mut payload, header.entries.len() as u64);
    for (k, v) in &header.entries {
        put_str(&mut payload, k);
        put_str(&mut payload, v);
    }
    let mut out = Vec::with_capacity(payload.len() + 18);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&checksum(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// Packs one thread's records into a block: `len:u32 checksum:u32 payload`,
/// payload = `thread:varint record*`. Timestamps are delta-encoded within the block.
pub struct BlockEncoder {
    thread: u32,
    buf: Vec<u8>,
    times: Times,
    records: u64,
}

/// The block's timestamps: the delta base and the first one (for loss records).
#[derive(Clone, Copy)]
struct Times {
    last_ts: u64,
    first_ts: Option<u64>,
}

const BLOCK_HEADER: usize = 8;

impl BlockEncoder {
    pub fn new(thread: u32, capacity: usize) -> BlockEncoder {
        let mut enc = BlockEncoder {
            thread,
            buf: Vec::with_capacity(capacity.max(64)),
            times: Times {
                last_ts: 0,
                first_ts: None,
            },
            records: 0,
        };
        enc.reset();
        enc
    }

    fn reset(&mut self) {
        self.buf.clear();
        self.buf.extend_from_slice(&[0u8; BLOCK_HEADER]);
        put_varint(&mut self.buf, self.thread as u64);
        self.times = Times {
            last_ts: 0,
            first_ts: None,
        };
        self.records = 0;
    }

    pub fn thread(&self) -> u32 {
        self.thread
    }

    /// Records written since the last [`take_block`](Self::take_block).
    pub fn records(&self) -> u64 {
        self.records
    }

    /// First and last timestamps in the current block (for loss records).
    pub fn time_range(&self) -> Option<(u64, u64)> {
        self.times.first_ts.map(|f| (f, self.times.last_ts))
    }

    /// Encoded size of the current block so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Appends `record`, encoded straight into the block (no scratch copy): into a
    /// zeroed window of [`FAST_WINDOW`] bytes at its end, where a byte costs a store
    /// and an index compare (a `Vec::push` per byte also stored the length each
    /// time). A record that does not fit (names, stacks) is encoded again through
    /// `Vec` pushes.
    #[inline]
    pub fn push(&mut self, record: &Record) {
        let start = self.buf.len();
        let saved = self.times;
        self.buf.resize(start + FAST_WINDOW, 0);
        let mut w = Window {
            buf: &mut self.buf[start..],
            n: 0,
            full: false,
        };
        let at = encode(&mut w, &mut self.times, record);
        let (n, full) = (w.n, w.full);
        // In the window the payload's length fits its one-byte placeholder (< 128).
        if !full && n - at - 1 < 0x80 {
            self.buf[start + at] = (n - at - 1) as u8;
            self.buf.truncate(start + n);
        } else {
            self.buf.truncate(start);
            self.times = saved;
            let at = encode(&mut self.buf, &mut self.times, record);
            let n = self.buf.len() - at - 1;
            if n < 0x80 {
                self.buf[at] = n as u8;
            } else {
                // The length takes more than its one byte.
                let mut len = Vec::with_capacity(4);
                put_varint(&mut len, n as u64);
                self.buf.splice(at..at + 1, len);
            }
        }
        self.records += 1;
    }

    /// Appends a batch of fork-join events of buffer `index` (tag 36): `words`
    /// are the agent's event words, little-endian (crate::fjevents has the layout).
    pub fn push_fj_events(&mut self, index: u32, words: &[u8]) {
        self.buf.push(tag::FJ_EVENTS);
        put_varint(
            &mut self.buf,
            (varint_len(index as u64) + words.len()) as u64,
        );
        put_varint(&mut self.buf, index as u64);
        self.buf.extend_from_slice(words);
        self.records += 1;
    }

    /// The finished block, framed and checksummed; the encoder starts a new one.
    pub fn take_block(&mut self) -> Vec<u8> {
        self.take_block_reusing(None)
    }

    /// [`take_block`](Self::take_block), continuing in `spare` (a written block given
    /// back, its contents dropped) instead of a new allocation when there is one.
    pub fn take_block_reusing(&mut self, spare: Option<Vec<u8>>) -> Vec<u8> {
        let payload_len = (self.buf.len() - BLOCK_HEADER) as u32;
        let sum = checksum(&self.buf[BLOCK_HEADER..]);
        self.buf[0..4].copy_from_slice(&payload_len.to_le_bytes());
        self.buf[4..8].copy_from_slice(&sum.to_le_bytes());
        let next = spare.unwrap_or_else(|| Vec::with_capacity(self.buf.capacity()));
        let block = std::mem::replace(&mut self.buf, next);
        self.reset();
        block
    }
}

/// Bytes of the block's end a record is first encoded into (the largest record
/// without names or lists takes 48).
const FAST_WINDOW: usize = 64;

/// Where a record is encoded: the block itself (`Vec<u8>`) or its [`Window`].
trait Put {
    fn byte(&mut self, b: u8);
    #[inline(always)]
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.byte((v as u8) | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }
    fn bytes(&mut self, b: &[u8]);
    /// Bytes written so far.
    fn pos(&self) -> usize;
}

impl Put for Vec<u8> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.push(b);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }
    #[inline(always)]
    fn pos(&self) -> usize {
        self.len()
    }
}

/// A fixed window at the end of the block; `full` when a record did not fit.
struct Window<'a> {
    buf: &'a mut [u8],
    n: usize,
    full: bool,
}

impl Put for Window<'_> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        match self.buf.get_mut(self.n) {
            Some(slot) => {
                *slot = b;
                self.n += 1;
            }
            None => self.full = true,
        }
    }
    fn bytes(&mut self, b: &[u8]) {
        match self.buf.get_mut(self.n..self.n + b.len()) {
            Some(dst) => {
                dst.copy_from_slice(b);
                self.n += b.len();
            }
            None => self.full = true,
        }
    }
    /// One room check for the varint's up to 10 bytes, not one per byte.
    #[inline(always)]
    fn varint(&mut self, mut v: u64) {
        let Some(dst) = self.buf.get_mut(self.n..self.n + 10) else {
            self.full = true;
            return;
        };
        let mut i = 0;
        while v >= 0x80 && i < 9 {
            dst[i] = (v as u8) | 0x80;
            v >>= 7;
            i += 1;
        }
        dst[i] = v as u8;
        self.n += i + 1;
    }
    #[inline(always)]
    fn pos(&self) -> usize {
        self.n
    }
}

fn string<W: Put>(w: &mut W, s: &str) {
    w.varint(s.len() as u64);
    w.bytes(s.as_bytes());
}

/// Writes a record's tag, its time delta, and a one-byte placeholder for its
/// payload's length; returns the placeholder's offset.
#[inline(always)]
fn head<W: Put>(w: &mut W, t: &mut Times, tag: u8, ts: Option<u64>) -> usize {
    match ts {
        Some(ts) => {
            w.byte(tag | HAS_TS);
            w.varint(zigzag(ts.wrapping_sub(t.last_ts) as i64));
            t.last_ts = ts;
            if t.first_ts.is_none() {
                t.first_ts = Some(ts);
            }
        }
        None => w.byte(tag),
    }
    w.byte(0);
    w.pos() - 1
}

/// Writes `record` (head, length placeholder, payload) into `out`; returns the
/// offset of the placeholder.
#[inline(always)]
fn encode<W: Put>(out: &mut W, t: &mut Times, record: &Record) -> usize {
    use Record::*;
    let v = |out: &mut W, x: u64| out.varint(x);
    match record {
        ClassDef { id, name } => {
            let at = head(out, t, tag::CLASS_DEF, None);
            v(out, *id as u64);
            string(out, name);
            at
        }
        ProbeDef {
            id,
            kind,
            class,
            method,
            descriptor,
        } => {
            let at = head(out, t, tag::PROBE_DEF, None);
            v(out, *id as u64);
            out.byte(kind.code());
            string(out, class);
            string(out, method);
            string(out, descriptor);
            at
        }
        SiteDef { id, frames } => {
            let at = head(out, t, tag::SITE_DEF, None);
            v(out, *id as u64);
            v(out, frames.len() as u64);
            for f in frames {
                string(out, f);
            }
            at
        }
        ThreadStart {
            ts,
            name,
            java_id,
            os_tid,
            daemon,
            class_id,
            target_class_id,
            target_ident,
            ident,
        } => {
            let at = head(out, t, tag::THREAD_START, Some(*ts));
            string(out, name);
            v(out, *java_id);
            v(out, *os_tid as u64);
            out.byte(*daemon as u8);
            v(out, *class_id as u64);
            v(out, *target_class_id as u64);
            v(out, *target_ident as u64);
            v(out, *ident as u64);
            at
        }
        ThreadEnd {
            ts,
            cpu_ns,
            voluntary_cs,
            involuntary_cs,
        } => {
            let at = head(out, t, tag::THREAD_END, Some(*ts));
            v(out, *cpu_ns);
            v(out, *voluntary_cs);
            v(out, *involuntary_cs);
            at
        }
        TaskBegin {
            ts,
            probe,
            class_id,
            ident,
            inner_class_id,
            inner_ident,
        } => {
            let at = head(out, t, tag::TASK_BEGIN, Some(*ts));
            v(out, *probe as u64);
            v(out, *class_id as u64);
            v(out, *ident as u64);
            v(out, *inner_class_id as u64);
            v(out, *inner_ident as u64);
            at
        }
        TaskEnd { ts, probe, ident } => {
            let at = head(out, t, tag::TASK_END, Some(*ts));
            v(out, *probe as u64);
            v(out, *ident as u64);
            at
        }
        Submit {
            ts,
            probe,
            executor_class_id,
            task_class_id,
            task_ident,
            inner_class_id,
            inner_ident,
            site,
        } => {
            let at = head(out, t, tag::SUBMIT, Some(*ts));
            v(out, *probe as u64);
            v(out, *executor_class_id as u64);
            v(out, *task_class_id as u64);
            v(out, *task_ident as u64);
            v(out, *inner_class_id as u64);
            v(out, *inner_ident as u64);
            v(out, *site as u64);
            at
        }
        Created {
            ts,
            class_id,
            ident,
            site,
        } => {
            let at = head(out, t, tag::CREATED, Some(*ts));
            v(out, *class_id as u64);
            v(out, *ident as u64);
            v(out, *site as u64);
            at
        }
        Fork {
            ts,
            class_id,
            ident,
            site,
        } => {
            let at = head(out, t, tag::FORK, Some(*ts));
            v(out, *class_id as u64);
            v(out, *ident as u64);
            v(out, *site as u64);
            at
        }
        JoinBegin {
            ts,
            probe,
            target_class_id,
            target_ident,
        } => {
            let at = head(out, t, tag::JOIN_BEGIN, Some(*ts));
            v(out, *probe as u64);
            v(out, *target_class_id as u64);
            v(out, *target_ident as u64);
            at
        }
        JoinEnd { ts, probe } => {
            let at = head(out, t, tag::JOIN_END, Some(*ts));
            v(out, *probe as u64);
            at
        }
        FjPush {
            ts,
            usage,
            prev,
            class_id,
            external,
            ident,
            pool,
        } => {
            let at = head(out, t, tag::FJ_PUSH, Some(*ts));
            v(out, *usage);
            v(out, *prev);
            v(out, *class_id as u64);
            out.byte(*external as u8);
            v(out, *ident as u64);
            v(out, *pool as u64);
            at
        }
        FjRunBegin {
            ts,
            usage,
            class_id,
        } => {
            let at = head(out, t, tag::FJ_RUN_BEGIN, Some(*ts));
            v(out, *usage);
            v(out, *class_id as u64);
            at
        }
        FjRunEnd { ts } => head(out, t, tag::FJ_RUN_END, Some(*ts)),
        FjCancel { ts, usage } => {
            let at = head(out, t, tag::FJ_CANCEL, Some(*ts));
            v(out, *usage);
            at
        }
        FjReinit { ts, usage } => {
            let at = head(out, t, tag::FJ_REINIT, Some(*ts));
            v(out, *usage);
            at
        }
        FjJoinBegin { ts, usage } => {
            let at = head(out, t, tag::FJ_JOIN_BEGIN, Some(*ts));
            v(out, *usage);
            at
        }
        FjJoinEnd { ts } => head(out, t, tag::FJ_JOIN_END, Some(*ts)),
        FjSite { usage, site } => {
            let at = head(out, t, tag::FJ_SITE, None);
            v(out, *usage);
            v(out, *site as u64);
            at
        }
        FjWorker {
            pool,
            class_id,
            parallelism,
        } => {
            let at = head(out, t, tag::FJ_WORKER, None);
            v(out, *pool as u64);
            v(out, *class_id as u64);
            v(out, *parallelism as u64);
            at
        }
        GcStart { ts } => head(out, t, tag::GC_START, Some(*ts)),
        GcEnd { ts } => head(out, t, tag::GC_END, Some(*ts)),
        Sample {
            ts,
            process_cpu_ns,
            voluntary_cs,
            involuntary_cs,
            live_threads,
            machine_idle_ns,
        } => {
            let at = head(out, t, tag::SAMPLE, Some(*ts));
            v(out, *process_cpu_ns);
            v(out, *voluntary_cs);
            v(out, *involuntary_cs);
            v(out, *live_threads as u64);
            if let Some(idle) = machine_idle_ns {
                v(out, *idle);
            }
            at
        }
        ThreadSched {
            ts,
            thread,
            on_cpu_ns,
            runq_ns,
            timeslices,
        } => {
            let at = head(out, t, tag::THREAD_SCHED, Some(*ts));
            v(out, *thread as u64);
            v(out, *on_cpu_ns);
            v(out, *runq_ns);
            v(out, *timeslices);
            at
        }
        VtStart {
            ts,
            vt,
            carrier,
            class_id,
            ident,
        } => {
            let at = head(out, t, tag::VT_START, Some(*ts));
            v(out, *vt);
            v(out, *carrier as u64);
            v(out, *class_id as u64);
            v(out, *ident as u64);
            at
        }
        VtEnd { ts, vt, carrier } => {
            let at = head(out, t, tag::VT_END, Some(*ts));
            v(out, *vt);
            v(out, *carrier as u64);
            at
        }
        VtMount { ts, vt, carrier } => {
            let at = head(out, t, tag::VT_MOUNT, Some(*ts));
            v(out, *vt);
            v(out, *carrier as u64);
            at
        }
        VtUnmount { ts, vt, carrier } => {
            let at = head(out, t, tag::VT_UNMOUNT, Some(*ts));
            v(out, *vt);
            v(out, *carrier as u64);
            at
        }
        VtPinned {
            ts,
            site,
            monitor_site,
        } => {
            let at = head(out, t, tag::VT_PINNED, Some(*ts));
            v(out, *site as u64);
            // Written only when known (the bytes of earlier agents otherwise).
            if *monitor_site != 0 {
                v(out, *monitor_site as u64);
            }
            at
        }
        Unpark { ts, target, ns } => {
            let at = head(out, t, tag::UNPARK, Some(*ts));
            v(out, *target);
            v(out, *ns);
            at
        }
        MonitorEnter { ts, lock } => {
            let at = head(out, t, tag::MONITOR_ENTER, Some(*ts));
            v(out, *lock as u64);
            at
        }
        MonitorEntered { ts } => head(out, t, tag::MONITOR_ENTERED, Some(*ts)),
        MonitorExit { ts } => head(out, t, tag::MONITOR_EXIT, Some(*ts)),
        MonitorNotify { ts, lock, all } => {
            let at = head(out, t, tag::MONITOR_NOTIFY, Some(*ts));
            v(out, *lock as u64);
            v(out, u64::from(*all));
            at
        }
        Calibration { ts, mono_ns } => {
            let at = head(out, t, tag::CALIBRATION, Some(*ts));
            v(out, *mono_ns);
            at
        }
        Loss {
            thread,
            from_ts,
            to_ts,
            records,
            reason,
        } => {
            let at = head(out, t, tag::LOSS, Some(*from_ts));
            v(out, *thread as u64);
            v(out, to_ts.saturating_sub(*from_ts));
            v(out, *records);
            out.byte(reason.code());
            at
        }
        End { ts } => head(out, t, tag::END, Some(*ts)),
        AttachEnd {
            ts,
            classes,
            probed_during,
            probed_after,
            shape_before,
            shape_after,
        } => {
            let at = head(out, t, tag::ATTACH_END, Some(*ts));
            v(out, *classes as u64);
            v(out, *probed_during as u64);
            v(out, *probed_after as u64);
            v(out, *shape_before);
            v(out, *shape_after);
            at
        }
        LockDef {
            id,
            kind,
            class,
            ident,
            fair,
        } => {
            let at = head(out, t, tag::LOCK_DEF, None);
            v(out, *id as u64);
            out.byte(*kind);
            string(out, class);
            v(out, *ident as u64);
            // Written only when set: most locks are monitors or unfair.
            if *fair {
                out.byte(1);
            }
            at
        }
        LockBlock {
            ts,
            lock,
            flags,
            owner,
            site,
        } => {
            let at = head(out, t, tag::LOCK_BLOCK, Some(*ts));
            v(out, *lock as u64);
            out.byte(*flags);
            v(out, *owner);
            v(out, *site as u64);
            at
        }
        LockAcquired { ts, lock, parked } => {
            let at = head(out, t, tag::LOCK_ACQUIRED, Some(*ts));
            v(out, *lock as u64);
            out.byte(*parked as u8);
            at
        }
        LockGaveUp { ts, lock } => {
            let at = head(out, t, tag::LOCK_GAVE_UP, Some(*ts));
            v(out, *lock as u64);
            at
        }
        WaitBegin { ts, kind, lock } => {
            let at = head(out, t, tag::WAIT_BEGIN, Some(*ts));
            out.byte(*kind);
            v(out, *lock as u64);
            at
        }
        WaitEnd { ts, timed_out } => {
            let at = head(out, t, tag::WAIT_END, Some(*ts));
            // Written only when set: most waits are notified (or parks, never timed out).
            if *timed_out {
                out.byte(1);
            }
            at
        }
        WaitDetail { class_id, site } => {
            let at = head(out, t, tag::WAIT_DETAIL, None);
            v(out, *class_id as u64);
            v(out, *site as u64);
            at
        }
        AppStart { ts } => head(out, t, tag::APP_START, Some(*ts)),
        FrameDef {
            id,
            kind,
            line,
            class,
            method,
        } => {
            let at = head(out, t, tag::FRAME_DEF, None);
            v(out, *id as u64);
            out.byte(*kind);
            v(out, zigzag(*line as i64));
            string(out, class);
            string(out, method);
            at
        }
        StackDef { id, frames } => {
            let at = head(out, t, tag::STACK_DEF, None);
            v(out, *id as u64);
            v(out, frames.len() as u64);
            for f in frames {
                v(out, *f as u64);
            }
            at
        }
        StackSample {
            ts,
            thread,
            stack,
            mode_state,
        } => {
            let at = head(out, t, tag::STACK_SAMPLE, Some(*ts));
            v(out, *thread as u64);
            v(out, *stack as u64);
            out.byte(*mode_state);
            at
        }
        ThreadSeen {
            ts,
            name,
            java_id,
            os_tid,
            daemon,
        } => {
            let at = head(out, t, tag::THREAD_SEEN, Some(*ts));
            string(out, name);
            v(out, *java_id);
            v(out, *os_tid as u64);
            out.byte(*daemon as u8);
            at
        }
        WindowEnter { ts } => head(out, t, tag::WINDOW_ENTER, Some(*ts)),
        WindowExit { ts } => head(out, t, tag::WINDOW_EXIT, Some(*ts)),
    }
}
