//! Per-thread record buffers, the global block, and the writer thread.
//!
//! Each Java thread encodes its records into its own [`BlockEncoder`] (a
//! [`ThreadBuf`] registered in a global registry). A block is handed to the
//! writer when it exceeds 32 KiB, when its thread ends, when it is older than
//! ~200 ms (the writer takes it), and at VMDeath. Blocks are handed over while
//! the buffer is held, so one thread's blocks reach the file in order. The
//! writer is a plain Rust thread, never attached to the JVM.
//!
//! The owner thread writes its buffer without a lock: the uncontended mutex it
//! took per record cost two locked instructions, each a full fence that waited
//! for the JIT code's pending stores (~85% of the push in a perf profile).
//! Another thread (the writer taking a stale block, VMDeath, a fork-join flush
//! from another thread) *claims* the buffer instead: see [`ThreadBuf`].
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

use std::cell::{RefCell, UnsafeCell};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{
    compiler_fence, fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
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

/// A thread's buffer, written by its owner (the thread whose [`Local`] holds it)
/// without a lock, and taken by other threads through a claim.
///
/// The two sides are Dekker's: the owner sets `busy`, then reads `claimed`; a
/// claimer sets `claimed`, then reads `busy`. Each side needs a full fence between
/// its store and its load, or both can miss the other. The owner's fence is only a
/// compiler fence when the kernel's `membarrier` (private expedited) is available:
/// the claimer's membarrier makes every running thread of the process execute a
/// full fence (and a thread that is not running passed one in its context
/// switch), which orders the owner's store before its load wherever it is
/// (the asymmetric fence of userspace RCU). Without membarrier both sides fence.
/// So either the claimer sees `busy` (and waits until the owner leaves) or the
/// owner sees `claimed` (and goes through `lock`, which the claimer holds).
pub struct ThreadBuf {
    /// The thread's index in the trace (fixed).
    thread: u32,
    /// The owner is writing without the lock.
    busy: AtomicBool,
    /// A claimer holds `lock` and the buffer: the owner takes `lock` too.
    claimed: AtomicBool,
    /// Claimers, and the owner while `claimed`, hold this.
    lock: Mutex<()>,
    /// [`Buf::since`] as of the last access, for the writer's stale check
    /// without a claim.
    since: AtomicU64,
    /// The thread ended and its last block was handed over.
    ended: AtomicBool,
    buf: UnsafeCell<Buf>,
}

// SAFETY: `buf` is only reached through [`ThreadBuf::owned`] (the owner thread,
// exclusive by the busy/claimed protocol above) and [`ThreadBuf::claim`] (under
// `lock`, after the owner is seen out of its unlocked access and before it can
// enter another), so no two threads ever hold a reference to it at once.
unsafe impl Sync for ThreadBuf {}

/// Whether the owner's side of the [`ThreadBuf`] protocol may be a compiler fence
/// (membarrier registered). Unset, both sides use full fences; it is set once, when
/// no claim can be in progress ([`settle_fence_mode`] at VMInit, [`asymmetric`] at
/// an attach's start), so every claim after it sees the mode owners may use.
static ASYMMETRIC: OnceLock<bool> = OnceLock::new();

fn register_membarrier() -> bool {
    if std::env::var_os("WEFT_NO_MEMBARRIER").is_some() {
        return false;
    }
    // SAFETY: membarrier takes plain integers; an unknown command returns an error.
    let cmds = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) };
    if cmds < 0 || cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED == 0 {
        return false;
    }
    // SAFETY: as above.
    let r = unsafe {
        libc::syscall(
            libc::SYS_membarrier,
            MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
            0,
            0,
        )
    };
    r == 0
}

const MEMBARRIER_CMD_QUERY: libc::c_long = 0;
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

/// Registers for membarrier now and fixes the fence mode (an attach session: its
/// thread is not the program's, so the registration's wait does not delay it).
pub fn asymmetric() -> bool {
    *ASYMMETRIC.get_or_init(register_membarrier)
}

/// The membarrier registration started by [`register_in_background`]: 0 running,
/// 1 registered, 2 not available.
static REGISTRATION: AtomicU32 = AtomicU32::new(0);

/// Starts the membarrier registration on a thread of its own (at OnLoad). It
/// waits for an RCU grace period when the process has several threads (10–22 ms
/// measured here, no CPU): on the main thread that was wall time added to every run.
/// Until [`settle_fence_mode`] both sides use full fences.
pub fn register_in_background() {
    let spawned = std::thread::Builder::new()
        .name("weft-membarrier".into())
        .spawn(|| {
            let ok = register_membarrier();
            REGISTRATION.store(if ok { 1 } else { 2 }, Ordering::SeqCst);
        });
    if spawned.is_err() {
        REGISTRATION.store(2, Ordering::SeqCst);
    }
}

/// Fixes the fence mode (at VMInit, before the writer starts and before any
/// other thread can claim a buffer, so no claim straddles the switch): the
/// asymmetric one only if the background registration has finished by now, else
/// full fences for the whole run (never a wait here).
pub fn settle_fence_mode() {
    let _ = ASYMMETRIC.set(REGISTRATION.load(Ordering::SeqCst) == 1);
}

/// The owner's fence between setting `busy` and reading `claimed`.
#[inline(always)]
fn owner_fence() {
    if ASYMMETRIC.get().copied().unwrap_or(false) {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The claimer's fence between setting `claimed` and reading `busy`.
fn claimer_fence() {
    fence(Ordering::SeqCst);
    if ASYMMETRIC.get().copied().unwrap_or(false) {
        // SAFETY: plain integers; registered at init, so it cannot fail with EPERM.
        let r =
            unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) };
        if r != 0 {
            // Not expected after registration; the owner's side would be unfenced.
            set_recording(false);
            eprintln!("weft: membarrier failed; recording stopped");
        }
    }
}

/// A flag (`busy`, `claimed`) cleared when dropped, also when unwinding from a panic
/// the agent's guard catches: a flag left set would stall the other side.
struct ClearOnDrop<'a>(&'a AtomicBool);

impl Drop for ClearOnDrop<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl ThreadBuf {
    fn new(thread: u32) -> ThreadBuf {
        ThreadBuf {
            thread,
            busy: AtomicBool::new(false),
            claimed: AtomicBool::new(false),
            lock: Mutex::new(()),
            since: AtomicU64::new(0),
            ended: AtomicBool::new(false),
            buf: UnsafeCell::new(Buf::new(thread)),
        }
    }

    pub fn thread(&self) -> u32 {
        self.thread
    }

    /// Runs `f` on the buffer. Only its owner thread may call this, never from
    /// inside `f` of this buffer (no re-entry).
    #[inline]
    fn owned<R>(&self, f: impl FnOnce(&mut Buf) -> R) -> R {
        self.busy.store(true, Ordering::Relaxed);
        owner_fence();
        if self.claimed.load(Ordering::Acquire) {
            self.busy.store(false, Ordering::Release);
            let _g = lock(&self.lock);
            // SAFETY: under `lock`: no claimer holds the buffer, and the owner (this
            // thread) is not in an unlocked access.
            return self.access(unsafe { &mut *self.buf.get() }, f);
        }
        let _busy = ClearOnDrop(&self.busy);
        // SAFETY: `busy` is set and no claim was visible after the fence: a claimer
        // that comes now sees `busy` and waits (ThreadBuf's protocol).
        self.access(unsafe { &mut *self.buf.get() }, f)
    }

    /// Runs `f` on the buffer from any thread, waiting for the owner to leave an
    /// access; `wait: false` gives up (None) instead of waiting. Never called by
    /// the owner from inside [`Self::owned`].
    fn claim<R>(&self, wait: bool, f: impl FnOnce(&mut Buf) -> R) -> Option<R> {
        let _g = if wait {
            lock(&self.lock)
        } else {
            match self.lock.try_lock() {
                Ok(g) => g,
                Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => return None,
            }
        };
        self.claimed.store(true, Ordering::Relaxed);
        claimer_fence();
        let mut spins = 0u32;
        while self.busy.load(Ordering::Acquire) {
            // The owner's unlocked access is a record's encoding (or a block's hand-over):
            // it ends soon unless its thread was descheduled. Give up after ~2 s.
            spins += 1;
            if !wait || spins > 20_000 {
                self.claimed.store(false, Ordering::Release);
                return None;
            }
            if spins < 100 {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        let _claimed = ClearOnDrop(&self.claimed);
        // SAFETY: under `lock`, the owner seen out of its unlocked access after the
        // fences, and `claimed` keeps it out until `_claimed` clears it.
        Some(self.access(unsafe { &mut *self.buf.get() }, f))
    }

    #[inline(always)]
    fn access<R>(&self, b: &mut Buf, f: impl FnOnce(&mut Buf) -> R) -> R {
        let before = b.since;
        let r = f(b);
        if b.since != before {
            self.since.store(b.since, Ordering::Relaxed);
        }
        r
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
    registry: Mutex<Vec<Arc<ThreadBuf>>>,
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
    buf: Arc<ThreadBuf>,
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
            l.buf.owned(|b| {
                b.ended = true;
                s.send(b);
            });
            l.buf.ended.store(true, Ordering::Release);
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
                    let buf = Arc::new(ThreadBuf::new(index));
                    lock(&s.registry).push(buf.clone());
                    buf
                });
                crate::schedstat::track_current(buf.thread());
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
static FOREIGN: Mutex<Vec<(u32, Arc<ThreadBuf>)>> = Mutex::new(Vec::new());

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
    let buf = Arc::new(ThreadBuf::new(index));
    buf.claim(true, |b| s.push_locked(b, start));
    lock(&s.registry).push(buf.clone());
    let mut f = lock(&FOREIGN);
    f.retain(|(t, _)| *t != os_tid);
    f.push((os_tid, buf));
    Some(index)
}

/// The buffer recorded from outside for the current thread, if any (taken once).
fn adopt_foreign() -> Option<Arc<ThreadBuf>> {
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
    with_local(|l| l.buf.thread())
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
    with_local(|l| l.buf.owned(|b| s.push_locked(b, r)));
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
        let (first, second) = make(l.buf.thread());
        l.buf.owned(|b| {
            s.push_locked(b, &first);
            if let Some(r) = second {
                s.push_locked(b, &r);
            }
        })
    });
}

/// Appends a record to a thread state's own block (pure Rust: inside [`with_local`]).
pub fn push_local(l: &Local, r: &Record) {
    if let Some(s) = SINK.get() {
        l.buf.owned(|b| s.push_locked(b, r));
    }
}

/// This thread's buffer (created on first use), for a batch writer that may run
/// on another thread later (the fork-join event buffers, crates/agent/src/forkjoin.rs).
pub fn local_buf() -> Option<Arc<ThreadBuf>> {
    with_local(|l| l.buf.clone())
}

/// Lets `f` append records straight into a given thread buffer's block encoder (if
/// recording), in one access; `f` is called until it returns false, and the block is
/// handed to the writer whenever it is full. From the buffer's owner without a lock,
/// from another thread through a claim.
pub fn with_encoder(buf: &ThreadBuf, f: impl FnMut(&mut weft_trace::BlockEncoder) -> bool) {
    if !recording() {
        return;
    }
    let Some(s) = SINK.get() else { return };
    if is_own(buf) {
        buf.owned(|b| encode_into(s, b, f));
    } else {
        buf.claim(true, |b| encode_into(s, b, f));
    }
}

/// Whether `buf` is the current thread's own buffer (its state is not created).
fn is_own(buf: &ThreadBuf) -> bool {
    LOCAL
        .try_with(|cell| {
            cell.try_borrow().ok().is_some_and(|h| {
                h.0.as_ref()
                    .is_some_and(|l| std::ptr::eq(Arc::as_ptr(&l.buf), buf))
            })
        })
        .unwrap_or(false)
}

fn encode_into(s: &Sink, b: &mut Buf, mut f: impl FnMut(&mut weft_trace::BlockEncoder) -> bool) {
    if b.since == 0 {
        b.since = clock::now().max(1);
    }
    loop {
        let more = f(&mut b.enc);
        if b.enc.len() >= BLOCK_FLUSH_BYTES {
            s.send(b);
            b.since = clock::now().max(1);
        }
        if !more {
            break;
        }
    }
    if b.ended {
        s.send(b);
    }
}

/// This thread's trace index (creating its state on first use).
pub fn local_index() -> Option<u32> {
    with_local(|l| l.buf.thread())
}

/// Appends a record to this thread's block and hands the block to the writer.
pub fn emit_and_flush(r: &Record) {
    let Some(s) = SINK.get() else { return };
    let Some(buf) = with_local(|l| l.buf.clone()) else {
        return;
    };
    buf.owned(|b| {
        if recording() {
            if b.since == 0 {
                b.since = clock::now().max(1);
            }
            b.enc.push(r);
        }
        s.send(b);
    });
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
    let bufs: Vec<Arc<ThreadBuf>> = {
        let mut reg = lock(&s.registry);
        // Forget buffers of ended threads once they are empty.
        reg.retain(|b| !(b.ended.load(Ordering::Acquire) && b.since.load(Ordering::Relaxed) == 0));
        reg.clone()
    };
    let limit = clock::now().saturating_sub(STALE_MS * s.ticks_per_ms.load(Ordering::Relaxed));
    let hand_over = |g: &mut Buf| {
        if !g.enc.is_empty() && (!stale_only || g.since <= limit) {
            s.send(g);
        }
    };
    for b in bufs {
        // A buffer's `since` is set with its first record: an empty one is not claimed.
        let since = b.since.load(Ordering::Relaxed);
        if since == 0 || (stale_only && since > limit) {
            continue;
        }
        b.claim(!stale_only, hand_over);
    }
    let global = if stale_only {
        s.global.try_lock().ok()
    } else {
        Some(lock(&s.global))
    };
    if let Some(mut g) = global {
        hand_over(&mut g);
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

/// The whole machine's cumulative idle time in ns: idle + iowait of the `cpu` line of
/// `/proc/stat` (all CPUs, in clock ticks). `None` when unreadable.
fn machine_idle_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    let line = s.lines().next()?.strip_prefix("cpu ")?;
    let mut f = line.split_whitespace().map(|x| x.parse::<u64>().ok());
    // user nice system idle iowait …
    let idle = f.nth(3)??;
    let iowait = f.next()??;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| (idle + iowait).saturating_mul(1_000_000_000 / hz as u64))
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
        machine_idle_ns: machine_idle_ns(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The owner writes without a lock while another thread keeps claiming the
    /// buffer and taking its block: every record lands in exactly one block.
    #[test]
    fn claims_take_whole_records_from_a_writing_owner() {
        const N: u64 = 300_000;
        // The membarrier mode where the kernel has it (WEFT_NO_MEMBARRIER=1: fences).
        asymmetric();
        let buf = Arc::new(ThreadBuf::new(3));
        let done = Arc::new(AtomicBool::new(false));
        let claims = Arc::new(AtomicU32::new(0));
        let taker = {
            let (buf, done, claims) = (buf.clone(), done.clone(), claims.clone());
            std::thread::spawn(move || {
                let mut records = 0u64;
                loop {
                    let finished = done.load(Ordering::Acquire);
                    let c = claims.load(Ordering::Relaxed);
                    // Alternate waiting and giving-up claims, as VMDeath and the writer do.
                    if let Some(n) = buf.claim(c % 2 == 0, |b| {
                        let n = b.enc.records();
                        let block = b.enc.take_block();
                        assert!(n == 0 || block.len() > 8);
                        n
                    }) {
                        records += n;
                        claims.fetch_add(1, Ordering::Relaxed);
                    }
                    if finished {
                        return records;
                    }
                    std::thread::yield_now();
                }
            })
        };
        let (mut own, mut pushed) = (0, 0u64);
        // Until N records and 200 claims that took the buffer from the writing owner.
        while pushed < N || claims.load(Ordering::Relaxed) < 200 {
            buf.owned(|b| {
                b.enc.push(&Record::TaskEnd {
                    ts: pushed,
                    probe: 1,
                    ident: pushed as u32,
                });
                if b.enc.len() >= 4096 {
                    own += b.enc.records();
                    b.enc.take_block();
                }
            });
            pushed += 1;
        }
        done.store(true, Ordering::Release);
        let taken = taker.join().unwrap();
        let left = buf.owned(|b| b.enc.records());
        assert_eq!(own + taken + left, pushed);
    }

    /// A panic inside an access (caught by the agent's guard) leaves neither side's
    /// flag set: the next claim and the owner's next access go through at once.
    #[test]
    fn a_panic_inside_an_access_releases_the_buffer() {
        let buf = ThreadBuf::new(4);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            buf.owned(|_| panic!("owner"));
        }));
        assert!(r.is_err());
        assert_eq!(buf.claim(false, |b| b.enc.records()), Some(0));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            buf.claim(true, |_| panic!("claimer"));
        }));
        assert!(r.is_err());
        assert!(!buf.claimed.load(Ordering::Relaxed) && !buf.busy.load(Ordering::Relaxed));
        assert_eq!(buf.owned(|b| b.enc.records()), 0);
    }

    #[test]
    fn proc_stat_threads() {
        assert!(live_threads() >= 1);
        let (cpu, _, _) = rusage(libc::RUSAGE_SELF);
        assert!(cpu > 0);
    }
}
