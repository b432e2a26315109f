//! Per-thread record buffers, the global block, and the writer thread.
//!
//! Each Java thread encodes its records into its own [`BlockEncoder`] (behind
//! an uncontended mutex registered in a global registry). A block is handed to
//! the writer when it exceeds 32 KiB, when its thread ends, when it is older
//! than ~200 ms (the writer takes it), and at VMDeath. Blocks are handed over
//! while the buffer's lock is held, so one thread's blocks reach the file in
//! order. The writer is a plain Rust thread, never attached to the JVM.
//!
//! Written blocks go back to a small pool that threads take their next block
//! from, instead of a new allocation per block handed over (a block per 64 KB of
//! fork-join events: the allocator's fresh pages were faulted in by the program's
//! threads).
//!
//! Handing a block over does not wake the writer: it drains the queue every
//! 50 ms, or when more than [`WAKE_BYTES`] are waiting. A wake-up per block cost
//! ~2,700 extra context switches per million fork-join tasks, each one taking a
//! CPU from the program on a machine with few.

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use weft_trace::{BlockEncoder, LossReason, Record, GLOBAL_THREAD};

use crate::clock;

const BLOCK_FLUSH_BYTES: usize = 32 * 1024;
const MAX_QUEUED_BYTES: usize = 64 * 1024 * 1024;
const WAKE_BYTES: usize = 8 * 1024 * 1024;
const STALE_MS: u64 = 200;
/// Written blocks kept for reuse (a writer cycle at a million fork-join tasks per
/// second hands back ~20 blocks of ~72 KB).
const SPARE_BLOCKS: usize = 64;
/// Larger blocks are freed, not kept.
const SPARE_MAX_CAPACITY: usize = 256 * 1024;

pub struct Buf {
    enc: BlockEncoder,
    /// Tick of the first record of the current block (0: empty).
    since: u64,
    ended: bool,
}

impl Buf {
    fn new(thread: u32) -> Buf {
        Buf {
            enc: BlockEncoder::new(thread, BLOCK_FLUSH_BYTES + 4096),
            since: 0,
            ended: false,
        }
    }
}

enum Msg {
    /// Many bytes are waiting in the queue.
    Wake,
    Stop(SyncSender<()>),
}

pub struct Sink {
    /// Replaced when an attach session starts a new writer ([`reopen`]).
    tx: Mutex<Sender<Msg>>,
    /// Blocks handed over, in order, not yet written.
    pending: Mutex<Vec<Vec<u8>>>,
    /// Written blocks, for the next ones.
    spare: Mutex<Vec<Vec<u8>>>,
    queued: AtomicUsize,
    registry: Mutex<Vec<Arc<Mutex<Buf>>>>,
    global: Arc<Mutex<Buf>>,
    next_thread: AtomicU32,
    rx: Mutex<Option<Receiver<Msg>>>,
    ticks_per_ms: AtomicU64,
}

static SINK: OnceLock<Sink> = OnceLock::new();
/// Records from program threads are accepted (cleared at VMDeath and on disable).
static RECORDING: AtomicBool = AtomicBool::new(false);
/// The writer gave up (write error); nothing more is written.
static WRITE_FAILED: AtomicBool = AtomicBool::new(false);

pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

pub fn set_recording(on: bool) {
    RECORDING.store(on, Ordering::SeqCst);
}

/// Creates the sink (at OnLoad). Blocks queue up until [`start_writer`].
pub fn init(ticks_per_sec: f64) {
    let (tx, rx) = channel();
    let _ = SINK.set(Sink {
        tx: Mutex::new(tx),
        pending: Mutex::new(Vec::new()),
        spare: Mutex::new(Vec::new()),
        queued: AtomicUsize::new(0),
        registry: Mutex::new(Vec::new()),
        global: Arc::new(Mutex::new(Buf::new(GLOBAL_THREAD))),
        next_thread: AtomicU32::new(0),
        rx: Mutex::new(None),
        ticks_per_ms: AtomicU64::new((ticks_per_sec / 1000.0).max(1.0) as u64),
    });
    if let Some(s) = SINK.get() {
        *s.rx.lock().unwrap_or_else(|e| e.into_inner()) = Some(rx);
    }
}

/// A duration in ticks as ns, at the rate measured at start (within a few
/// percent: for short durations the agent records in ns, read on the hot path
/// without a clock_gettime).
pub fn ticks_to_ns(ticks: u64) -> u64 {
    let per_ms = SINK
        .get()
        .map_or(1_000_000, |s| s.ticks_per_ms.load(Ordering::Relaxed).max(1));
    (ticks as u128 * 1_000_000 / per_ms as u128) as u64
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Sink {
    /// Hands a block to the writer, or drops it with a Loss record when the queue is full.
    /// Called with the buffer's lock held (keeps a thread's blocks in order).
    fn send(&self, b: &mut Buf) {
        if b.enc.is_empty() {
            return;
        }
        let thread = b.enc.thread();
        let range = b.enc.time_range().unwrap_or((0, 0));
        let n = b.enc.records();
        let spare = lock(&self.spare).pop();
        let block = b.enc.take_block_reusing(spare);
        b.since = 0;
        if WRITE_FAILED.load(Ordering::Relaxed) {
            return;
        }
        let len = block.len();
        if self.queued.load(Ordering::Relaxed) + len > MAX_QUEUED_BYTES {
            if thread != GLOBAL_THREAD {
                let loss = Record::Loss {
                    thread,
                    from_ts: range.0,
                    to_ts: range.1,
                    records: n,
                    reason: LossReason::BufferOverflow,
                };
                push_global_force(&loss);
            }
            return;
        }
        let before = self.queued.fetch_add(len, Ordering::Relaxed);
        lock(&self.pending).push(block);
        if before < WAKE_BYTES && before + len >= WAKE_BYTES {
            let _ = lock(&self.tx).send(Msg::Wake);
        }
    }

    /// Takes the blocks waiting to be written (the writer thread).
    fn take_pending(&self) -> Vec<Vec<u8>> {
        let blocks = std::mem::take(&mut *lock(&self.pending));
        let n: usize = blocks.iter().map(Vec::len).sum();
        self.queued.fetch_sub(n, Ordering::Relaxed);
        blocks
    }

    /// Keeps written blocks for reuse (the writer thread).
    fn recycle(&self, blocks: Vec<Vec<u8>>) {
        let mut spare = lock(&self.spare);
        for b in blocks {
            if spare.len() >= SPARE_BLOCKS {
                break;
            }
            if b.capacity() <= SPARE_MAX_CAPACITY {
                spare.push(b);
            }
        }
    }

    fn push(&self, buf: &Mutex<Buf>, r: &Record) {
        self.push_locked(&mut lock(buf), r);
    }

    /// [`Self::push`] with the buffer's lock held.
    fn push_locked(&self, b: &mut Buf, r: &Record) {
        if b.since == 0 {
            b.since = clock::now().max(1);
        }
        b.enc.push(r);
        if b.enc.len() >= BLOCK_FLUSH_BYTES {
            self.send(b);
        }
    }
}

/// A new channel for the next writer (an attach session after an earlier one
/// stopped its writer with [`finish`]).
pub fn reopen() {
    let Some(s) = SINK.get() else { return };
    let (tx, rx) = channel();
    *lock(&s.tx) = tx;
    *lock(&s.rx) = Some(rx);
    WRITE_FAILED.store(false, Ordering::SeqCst);
}

/// The recording session (0: the agent was loaded at start-up; 1, 2, …: attach
/// sessions). A thread's state from an earlier session is reset at its first record
/// in a new one.
pub static SESSION: AtomicU32 = AtomicU32::new(0);

/// Per-thread agent state.
pub struct Local {
    buf: Arc<Mutex<Buf>>,
    /// The session this state belongs to.
    session: u32,
    /// A ThreadStart was recorded for this thread.
    pub started: bool,
    /// CPU ns and voluntary / involuntary context switches of the thread when its
    /// ThreadStart was recorded: the main thread boots the JVM before VMInit, and
    /// that time is not part of its recorded lifetime.
    pub usage_at_start: (u64, u64, u64),
    pub last_created: (u32, u32),
}

struct Holder(Option<Local>);

impl Drop for Holder {
    fn drop(&mut self) {
        if let (Some(l), Some(s)) = (self.0.take(), SINK.get()) {
            let mut b = lock(&l.buf);
            b.ended = true;
            s.send(&mut b);
        }
    }
}

thread_local! {
    static LOCAL: RefCell<Holder> = const { RefCell::new(Holder(None)) };
}

/// Runs `f` on this thread's state, creating it (with a new thread index) on first use.
/// Returns None when there is no sink or the thread is exiting.
pub fn with_local<R>(f: impl FnOnce(&mut Local) -> R) -> Option<R> {
    let s = SINK.get()?;
    LOCAL
        .try_with(|cell| {
            let mut h = cell.try_borrow_mut().ok()?;
            let session = SESSION.load(Ordering::Relaxed);
            if let Some(l) = h.0.as_mut().filter(|l| l.session != session) {
                l.session = session;
                l.started = false;
                l.last_created = (0, 0);
                crate::attach::adopt_thread(l);
            }
            if h.0.is_none() {
                // A thread recorded from outside before its first hook keeps its index.
                let adopted = adopt_foreign();
                let started = adopted.is_some();
                let buf = adopted.unwrap_or_else(|| {
                    let index = s.next_thread.fetch_add(1, Ordering::Relaxed);
                    let buf = Arc::new(Mutex::new(Buf::new(index)));
                    lock(&s.registry).push(buf.clone());
                    buf
                });
                crate::schedstat::track_current(lock(&buf).enc.thread());
                let mut l = Local {
                    buf,
                    session,
                    started,
                    usage_at_start: (0, 0, 0),
                    last_created: (0, 0),
                };
                if session != 0 && !l.started {
                    crate::attach::adopt_thread(&mut l);
                }
                h.0 = Some(l);
            }
            h.0.as_mut().map(f)
        })
        .ok()
        .flatten()
}

/// Threads recorded from outside (started before the agent's hooks: see
/// [`record_foreign_thread`]), by OS thread id, until they make their first hook call.
static FOREIGN: Mutex<Vec<(u32, Arc<Mutex<Buf>>)>> = Mutex::new(Vec::new());

/// Records a thread that is not the current one and has no state yet (it was
/// started before the agent's hooks): a new thread index whose block starts with
/// `start` (its ThreadStart). If the thread later calls a hook, it continues on
/// this index. Returns the index.
pub fn record_foreign_thread(os_tid: u32, start: &Record) -> Option<u32> {
    let s = SINK.get()?;
    if !recording() {
        return None;
    }
    let index = s.next_thread.fetch_add(1, Ordering::Relaxed);
    let buf = Arc::new(Mutex::new(Buf::new(index)));
    s.push(&buf, start);
    lock(&s.registry).push(buf.clone());
    let mut f = lock(&FOREIGN);
    f.retain(|(t, _)| *t != os_tid);
    f.push((os_tid, buf));
    Some(index)
}

/// The buffer recorded from outside for the current thread, if any (taken once).
fn adopt_foreign() -> Option<Arc<Mutex<Buf>>> {
    let mut f = lock(&FOREIGN);
    if f.is_empty() {
        return None;
    }
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as u32;
    let i = f.iter().position(|(t, _)| *t == tid)?;
    Some(f.swap_remove(i).1)
}

/// This thread's index in the trace (its buffer is created if it has none).
pub fn current_thread_index() -> Option<u32> {
    with_local(|l| lock(&l.buf).enc.thread())
}

/// Forgets this thread's state after its ThreadEnd (its buffer was flushed):
/// another Java thread later run by the same OS thread gets a new index.
pub fn end_local() {
    let _ = LOCAL.try_with(|cell| {
        if let Ok(mut h) = cell.try_borrow_mut() {
            let old = Holder(h.0.take());
            drop(h);
            drop(old);
        }
    });
}

/// Appends a record to this thread's block (if recording).
pub fn emit(r: &Record) {
    if !recording() {
        return;
    }
    let Some(s) = SINK.get() else { return };
    // Pure Rust inside: no JNI while the thread's state is borrowed.
    with_local(|l| s.push(&l.buf, r));
}

/// Appends the records `make` builds from this thread's index (pure Rust), taking
/// the thread's buffer lock once: the virtual-thread callbacks took it once for the
/// carrier's index and again for each record.
pub fn emit_with_index(make: impl FnOnce(u32) -> (Record, Option<Record>)) {
    if !recording() {
        return;
    }
    let Some(s) = SINK.get() else { return };
    with_local(|l| {
        let mut b = lock(&l.buf);
        let (first, second) = make(b.enc.thread());
        s.push_locked(&mut b, &first);
        if let Some(r) = second {
            s.push_locked(&mut b, &r);
        }
    });
}

/// Appends a record to a thread state's own block (pure Rust: inside [`with_local`]).
pub fn push_local(l: &Local, r: &Record) {
    if let Some(s) = SINK.get() {
        s.push(&l.buf, r);
    }
}

/// This thread's buffer (created on first use), for a batch writer that may run
/// on another thread later (the fork-join event buffers, crates/agent/src/forkjoin.rs).
pub fn local_buf() -> Option<Arc<Mutex<Buf>>> {
    with_local(|l| l.buf.clone())
}

/// Lets `f` append records straight into a given thread buffer's block encoder (if
/// recording), under one lock; `f` is called until it returns false, and the block is
/// handed to the writer whenever it is full.
pub fn with_encoder(buf: &Mutex<Buf>, mut f: impl FnMut(&mut weft_trace::BlockEncoder) -> bool) {
    if !recording() {
        return;
    }
    let Some(s) = SINK.get() else { return };
    let mut b = lock(buf);
    if b.since == 0 {
        b.since = clock::now().max(1);
    }
    loop {
        let more = f(&mut b.enc);
        if b.enc.len() >= BLOCK_FLUSH_BYTES {
            s.send(&mut b);
            b.since = clock::now().max(1);
        }
        if !more {
            break;
        }
    }
    if b.ended {
        s.send(&mut b);
    }
}

/// This thread's trace index (creating its state on first use).
pub fn local_index() -> Option<u32> {
    with_local(|l| lock(&l.buf).enc.thread())
}

/// Appends a record to this thread's block and hands the block to the writer.
pub fn emit_and_flush(r: &Record) {
    let Some(s) = SINK.get() else { return };
    let Some(buf) = with_local(|l| l.buf.clone()) else {
        return;
    };
    let mut b = lock(&buf);
    if recording() {
        if b.since == 0 {
            b.since = clock::now().max(1);
        }
        b.enc.push(r);
    }
    s.send(&mut b);
}

/// Appends a record to the global block (if recording).
pub fn emit_global(r: &Record) {
    if recording() {
        push_global_force(r);
    }
}

/// Appends a record to the global block even when recording is off (Loss, End).
pub fn push_global_force(r: &Record) {
    if let Some(s) = SINK.get() {
        s.push(&s.global, r);
    }
}

/// Hands every non-empty buffer to the writer (`stale_only`: those older than ~200 ms).
fn flush_buffers(s: &Sink, stale_only: bool) {
    let bufs: Vec<Arc<Mutex<Buf>>> = {
        let mut reg = lock(&s.registry);
        // Forget buffers of ended threads once they are empty.
        reg.retain(|b| match b.try_lock() {
            Ok(g) => !(g.ended && g.enc.is_empty()),
            Err(_) => true,
        });
        let mut v = reg.clone();
        v.push(s.global.clone());
        v
    };
    let limit = clock::now().saturating_sub(STALE_MS * s.ticks_per_ms.load(Ordering::Relaxed));
    for b in bufs {
        let guard = if stale_only {
            b.try_lock().ok()
        } else {
            Some(lock(&b))
        };
        if let Some(mut g) = guard {
            if !g.enc.is_empty() && (!stale_only || g.since <= limit) {
                s.send(&mut g);
            }
        }
    }
}

/// Hands every buffer to the writer and waits (up to 5 s) until it has written them.
pub fn finish() {
    let Some(s) = SINK.get() else { return };
    if lock(&s.rx).is_some() {
        // No writer was started (VMInit failed before it): nothing would answer.
        return;
    }
    flush_buffers(s, false);
    let (ack_tx, ack_rx) = std::sync::mpsc::sync_channel(1);
    let sent = lock(&s.tx).send(Msg::Stop(ack_tx)).is_ok();
    if sent {
        let _ = ack_rx.recv_timeout(Duration::from_secs(5));
    }
}

pub struct WriterConfig {
    pub file: File,
    pub path: String,
    pub interval: Duration,
}

/// Starts the writer thread (after the header is written).
pub fn start_writer(cfg: WriterConfig) -> std::io::Result<()> {
    let Some(s) = SINK.get() else { return Ok(()) };
    let Some(rx) = lock(&s.rx).take() else {
        return Ok(());
    };
    let (ready, started) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("weft-writer".into())
        .spawn(move || {
            note_agent_thread();
            let _ = ready.send(());
            writer_main(s, rx, cfg)
        })?;
    // Known before it can be taken for a Java thread (see [`is_agent_thread`]).
    let _ = started.recv_timeout(Duration::from_secs(1));
    Ok(())
}

/// OS ids of the agent's own threads (writer, sampler): plain threads that run
/// no Java code. Until such a thread has named itself, the kernel shows it with
/// its creator's name (`java` for the main thread), so the sampler must not
/// take it for a Java thread by its name.
static AGENT_TIDS: [AtomicU32; 4] = [const { AtomicU32::new(0) }; 4];

/// Records the calling thread as one of the agent's own.
pub fn note_agent_thread() {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as u32;
    for t in &AGENT_TIDS {
        if t.compare_exchange(0, tid, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

/// Whether `tid` is one of the agent's own threads.
pub fn is_agent_thread(tid: u32) -> bool {
    AGENT_TIDS.iter().any(|t| t.load(Ordering::SeqCst) == tid)
}

fn writer_main(s: &'static Sink, rx: Receiver<Msg>, mut cfg: WriterConfig) {
    let tick = Duration::from_millis(50).min(cfg.interval);
    let start = Instant::now();
    let mut next_sample = start + cfg.interval;
    let mut next_calib = start + Duration::from_secs(1);
    let mut next_stale = start + Duration::from_millis(100);
    loop {
        let msg = rx.recv_timeout(tick);
        let blocks = s.take_pending();
        for b in &blocks {
            write_block(&mut cfg, b);
        }
        s.recycle(blocks);
        match msg {
            Ok(Msg::Wake) | Err(RecvTimeoutError::Timeout) => {}
            Ok(Msg::Stop(ack)) => {
                for b in s.take_pending() {
                    write_block(&mut cfg, &b);
                }
                let _ = cfg.file.flush();
                let _ = ack.send(());
                return;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
        let now = Instant::now();
        if now >= next_sample {
            next_sample = now + cfg.interval;
            emit_global(&sample());
            crate::schedstat::tick();
        }
        if now >= next_calib {
            next_calib = now + Duration::from_secs(1);
            emit_global(&calibration());
        }
        if now >= next_stale {
            next_stale = now + Duration::from_millis(100);
            flush_buffers(s, true);
        }
    }
}

fn write_block(cfg: &mut WriterConfig, b: &[u8]) {
    if WRITE_FAILED.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = cfg.file.write_all(b) {
        WRITE_FAILED.store(true, Ordering::SeqCst);
        set_recording(false);
        eprintln!(
            "weft: cannot write trace {}: {e}; recording stopped",
            cfg.path
        );
    }
}

pub fn calibration() -> Record {
    Record::Calibration {
        ts: clock::now(),
        mono_ns: clock::mono_ns(),
    }
}

fn live_threads() -> u32 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 1..];
            // Fields after the command: state is field 3, num_threads is field 20.
            rest.split_whitespace().nth(17)?.parse().ok()
        })
        .unwrap_or(0)
}

pub fn rusage(who: libc::c_int) -> (u64, u64, u64) {
    // SAFETY: all-zero is a valid rusage value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer; `who` is RUSAGE_SELF or RUSAGE_THREAD.
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (
        tv(ru.ru_utime) + tv(ru.ru_stime),
        ru.ru_nvcsw as u64,
        ru.ru_nivcsw as u64,
    )
}

pub fn sample() -> Record {
    let (cpu, vcs, ics) = rusage(libc::RUSAGE_SELF);
    Record::Sample {
        ts: clock::now(),
        process_cpu_ns: cpu,
        voluntary_cs: vcs,
        involuntary_cs: ics,
        live_threads: live_threads(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_threads() {
        assert!(live_threads() >= 1);
        let (cpu, _, _) = rusage(libc::RUSAGE_SELF);
        assert!(cpu > 0);
    }
}
