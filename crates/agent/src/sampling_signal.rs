//! The signal side of the sampling engine (crates/agent/src/sampling.rs): per-thread
//! CPU-time timers, the thread table, the sample ring and the signal handler.
//!
//! Everything reachable from [`on_signal`] is async-signal-safe: atomics, plain
//! stores into memory allocated before the first signal, `gettid`, `ioctl`, the
//! TSC, and AsyncGetCallTrace (HotSpot's walker made for this). No allocation, no
//! lock, no thread-local storage (a first TLS access in a dlopen'ed library may
//! allocate). It is not for resolving names or writing records: that is the
//! sampler thread's job, off the signal path.

use std::ffi::c_void;
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
use std::sync::OnceLock;

use crate::clock;
use crate::compiled_code;

/// The signal of CPU samples (sent by the thread's perf_event timer).
pub const CPU_SIGNAL: i32 = libc::SIGPROF;
/// The signal of wall-clock samples (sent by the sampler thread with tgkill).
pub const WALL_SIGNAL: i32 = libc::SIGVTALRM;

/// Frames kept per sample (deeper stacks lose their outermost frames).
pub const MAX_FRAMES: usize = 192;
/// How often the sampler thread drains the ring at most (it also drains at each wall tick).
pub const DRAIN_NS: u64 = 50_000_000;
/// Threads signalled at one wall tick at most (sampling.rs takes the others in turn).
pub const WALL_BURST: usize = 128;
/// Threads sampled at once (a bigger program has its extra threads unsampled, counted).
const THREAD_SLOTS: usize = 4096;
const FREE: u32 = 0;
const GONE: u32 = u32::MAX;
/// A slot being filled in by `register`.
const CLAIMED: u32 = u32::MAX - 1;

// ---------------------------------------------------------------- AsyncGetCallTrace

/// ASGCT_CallFrame: `lineno` is the bytecode index of a Java frame, -3 for a native one.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CallFrame {
    pub lineno: i32,
    pub method: *mut c_void,
}

#[repr(C)]
struct CallTrace {
    env: *mut c_void,
    num_frames: i32,
    frames: *mut CallFrame,
}

type Agct = unsafe extern "C" fn(*mut CallTrace, i32, *mut c_void);

static AGCT: AtomicUsize = AtomicUsize::new(0);

// crates/agent/src/walk_guard.c (sigsetjmp cannot be written in Rust).
extern "C" {
    fn weft_protected_walk(
        walk: Agct,
        trace: *mut CallTrace,
        depth: i32,
        uc: *mut c_void,
        jb: *mut c_void,
    ) -> i32;
    fn weft_jump_back(jb: *mut c_void) -> !;
    fn weft_jmpbuf_size() -> usize;
    fn weft_faulting_walk(trace: *mut CallTrace, depth: i32, uc: *mut c_void);
}

/// Bytes kept per thread for its sigjmp_buf (glibc x86_64 needs 200).
const JMPBUF_BYTES: usize = 512;

/// Walks that faulted and were recovered from.
pub static FAULTS: AtomicU64 = AtomicU64::new(0);

/// Test hook (agent option `samplefault`): every walk faults, to check recovery.
pub static FAULT_TEST: AtomicBool = AtomicBool::new(false);

/// Finds AsyncGetCallTrace in libjvm.so (exported, not in any header).
pub fn resolve_agct() -> bool {
    let name = c"AsyncGetCallTrace";
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
    let mut p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if p.is_null() {
        // The launcher may have loaded libjvm.so privately: open it again by its path.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        if let Some(path) = maps
            .lines()
            .filter_map(|l| l.split_whitespace().nth(5))
            .find(|p| p.ends_with("/libjvm.so"))
        {
            if let Ok(c) = std::ffi::CString::new(path) {
                // SAFETY: NUL-terminated path; RTLD_NOLOAD only returns an already loaded library.
                let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
                if !h.is_null() {
                    // SAFETY: valid handle and name.
                    p = unsafe { libc::dlsym(h, name.as_ptr()) };
                }
            }
        }
    }
    AGCT.store(p as usize, Ordering::SeqCst);
    !p.is_null()
}

// ---------------------------------------------------------------- thread table

/// One sampled thread. Written by its own thread (register/unregister) and the
/// sampler thread (wall state); read by the signal handler on that thread. Its
/// thread id is in [`TIDS`] at the same index.
pub struct ThreadSlot {
    env: AtomicPtr<c_void>,
    /// Trace thread index of the samples.
    pub index: AtomicU32,
    /// perf_event fd of the CPU timer plus one (0: none), so that a free slot is all
    /// zeros and the 4,096-slot table lies in .bss (no 2 MB of .data to map in).
    fd1: AtomicI32,
    rng: AtomicU64,
    /// OS state read by the sampler thread just before it sent a wall signal.
    pub wall_state: AtomicU8,
    /// The thread's CPU time (ns) at the end of its last wall sample: a thread
    /// that has not run since is not signalled again (its stack is the same).
    pub cpu_after_wall: AtomicU64,
    /// Wall signals sent (by the sampler thread, before each signal) and the
    /// count of the last one whose sample the handler published: a repeat needs
    /// the stack of the last signal, not an older one.
    pub wall_asked: AtomicU64,
    pub wall_done: AtomicU64,
    /// Lock waits and waits the thread began (its hooks count them): a thread
    /// that began one since its last wall sample has run since, however little.
    pub waits: AtomicU64,
    busy: AtomicBool,
    /// The thread is inside the protected walk: a fault jumps back to `jump`.
    in_walk: AtomicBool,
    jump: std::cell::UnsafeCell<[u64; JMPBUF_BYTES / 8]>,
}

// SAFETY: `jump` is only touched by the slot's own thread (its signal handlers);
// every other field is atomic.
unsafe impl Sync for ThreadSlot {}

impl ThreadSlot {
    const fn new() -> ThreadSlot {
        ThreadSlot {
            env: AtomicPtr::new(std::ptr::null_mut()),
            index: AtomicU32::new(0),
            fd1: AtomicI32::new(0),
            rng: AtomicU64::new(0),
            wall_state: AtomicU8::new(0),
            cpu_after_wall: AtomicU64::new(0),
            wall_asked: AtomicU64::new(0),
            wall_done: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            busy: AtomicBool::new(false),
            in_walk: AtomicBool::new(false),
            jump: std::cell::UnsafeCell::new([0; JMPBUF_BYTES / 8]),
        }
    }
}

fn live(tid: u32) -> bool {
    tid != FREE && tid != GONE && tid != CLAIMED
}

static THREADS: [ThreadSlot; THREAD_SLOTS] = [const { ThreadSlot::new() }; THREAD_SLOTS];
/// The thread id of each slot, apart from the slots (each ~600 bytes with its
/// jump buffer): the sampler thread scans these 16 KB at every wall tick, and
/// the handler probes them, without touching 2.4 MB of slots (a scan of the
/// slots themselves cost ~600 page faults and a cache miss per slot per tick).
static TIDS: [AtomicU32; THREAD_SLOTS] = [const { AtomicU32::new(FREE) }; THREAD_SLOTS];

/// The live slots, from position `start` on (wrapping): (position, tid, slot).
pub fn live_threads(start: usize) -> impl Iterator<Item = (usize, u32, &'static ThreadSlot)> {
    (0..THREAD_SLOTS).filter_map(move |k| {
        let i = (start + k) % THREAD_SLOTS;
        let tid = TIDS[i].load(Ordering::Acquire);
        live(tid).then(|| (i, tid, &THREADS[i]))
    })
}

fn home(tid: u32) -> usize {
    (tid as usize).wrapping_mul(0x9E37_79B1) % THREAD_SLOTS
}

/// The slot position of `tid` (linear probing; stops at a never-used slot).
fn position(tid: u32) -> Option<usize> {
    let h = home(tid);
    for i in 0..THREAD_SLOTS {
        let k = (h + i) % THREAD_SLOTS;
        match TIDS[k].load(Ordering::Acquire) {
            t if t == tid => return Some(k),
            FREE => return None,
            _ => {}
        }
    }
    None
}

fn find(tid: u32) -> Option<&'static ThreadSlot> {
    position(tid).map(|k| &THREADS[k])
}

thread_local! {
    /// The calling thread's id, for [`note_wait`] (a system call saved per wait).
    /// Never read in the signal handler (a first TLS access may allocate).
    static MY_TID: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The calling thread begins a lock wait or a wait (from its hooks, not the handler).
pub fn note_wait() {
    let tid = MY_TID
        .try_with(|t| {
            if t.get() == 0 {
                t.set(gettid());
            }
            t.get()
        })
        .unwrap_or_else(|_| gettid());
    if let Some(s) = find(tid) {
        s.waits.fetch_add(1, Ordering::Relaxed);
    }
}

pub fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions and is async-signal-safe.
    unsafe { libc::gettid() as u32 }
}

/// Registers the current thread (its JNIEnv, trace index) and arms its CPU timer
/// (`period_ns` 0: no CPU timer). Returns false when the table is full.
pub fn register(env: *mut c_void, index: u32, period_ns: u64) -> bool {
    let tid = gettid();
    if find(tid).is_some() {
        // A thread of the same tid that ended unseen: its slot is stale.
        unregister();
    }
    claim(tid, env, index, period_ns)
}

/// Takes a free slot for `tid` and arms its CPU timer (`period_ns` 0: none).
fn claim(tid: u32, env: *mut c_void, index: u32, period_ns: u64) -> bool {
    let h = home(tid);
    for i in 0..THREAD_SLOTS {
        let k = (h + i) % THREAD_SLOTS;
        let (s, slot_tid) = (&THREADS[k], &TIDS[k]);
        let t = slot_tid.load(Ordering::Acquire);
        if t != FREE && t != GONE {
            continue;
        }
        if slot_tid
            .compare_exchange(t, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            continue;
        }
        s.env.store(env, Ordering::Relaxed);
        s.index.store(index, Ordering::Relaxed);
        s.rng.store(
            clock::tsc() ^ (tid as u64).rotate_left(32) | 1,
            Ordering::Relaxed,
        );
        s.busy.store(false, Ordering::Relaxed);
        s.cpu_after_wall.store(0, Ordering::Relaxed);
        s.wall_done.store(u64::MAX, Ordering::Relaxed);
        s.fd1.store(0, Ordering::Relaxed);
        slot_tid.store(tid, Ordering::Release);
        if period_ns > 0 {
            let fd = open_cpu_timer(tid);
            if fd >= 0 {
                s.fd1.store(fd + 1, Ordering::Release);
                // The kernel's cpu-clock hrtimer fires no sooner than 10 µs.
                set_period(fd, first_period(&s.rng, period_ns).max(10_000));
            }
        }
        return true;
    }
    false
}

/// The JavaVM, for the JNIEnv of threads registered from outside (see [`register_other`]).
static VM: AtomicPtr<crate::jni::JavaVM> = AtomicPtr::new(std::ptr::null_mut());

pub fn set_vm(vm: *mut crate::jni::JavaVM) {
    VM.store(vm, Ordering::SeqCst);
}

/// Whether thread `tid` has a slot.
pub fn is_registered(tid: u32) -> bool {
    find(tid).is_some()
}

/// Registers another thread of this process (one started before the agent's
/// hooks) and arms its CPU timer from here: perf_event_open takes any thread id,
/// and F_SETOWN_EX sends the timer's signal to that thread. Its JNIEnv is not
/// known here: the handler asks the JavaVM for it on that thread (GetEnv reads
/// the JVM's thread-local current thread; async-profiler does the same) and
/// stops sampling the thread if it is not a Java thread.
pub fn register_other(tid: u32, index: u32, period_ns: u64) -> bool {
    if VM.load(Ordering::Relaxed).is_null() || find(tid).is_some() {
        return false;
    }
    claim(tid, std::ptr::null_mut(), index, period_ns)
}

/// The JNIEnv of the current thread from the JavaVM (None: not a Java thread).
fn env_from_vm() -> Option<*mut c_void> {
    let vm = VM.load(Ordering::Relaxed);
    // SAFETY: vm is the process's JavaVM (set at VMInit); GetEnv with a JNI
    // version only reads the JVM's current-thread pointer, allocates nothing.
    unsafe { crate::jni::get_env(vm, JNI_VERSION_1_6) }
}

const JNI_VERSION_1_6: i32 = 0x0001_0006;

/// Forgets the current thread: no sample is taken on it after this returns.
pub fn unregister() {
    let Some(k) = position(gettid()) else { return };
    let s = &THREADS[k];
    s.env.store(std::ptr::null_mut(), Ordering::SeqCst);
    let fd = s.fd1.swap(0, Ordering::SeqCst) - 1;
    TIDS[k].store(GONE, Ordering::Release);
    if fd >= 0 {
        // SAFETY: fd is the perf_event fd this slot owned; closed once (swapped out).
        unsafe { libc::close(fd) };
    }
}

/// Closes every CPU timer (at the end; the handler is already inactive).
pub fn close_all() {
    // Slots never used (tid FREE) have no timer: only used ones are touched.
    for (k, s) in THREADS.iter().enumerate() {
        if TIDS[k].load(Ordering::Acquire) == FREE {
            continue;
        }
        let fd = s.fd1.swap(0, Ordering::SeqCst) - 1;
        if fd >= 0 {
            // SAFETY: as in unregister.
            unsafe { libc::close(fd) };
        }
    }
}

// ---------------------------------------------------------------- CPU timers

/// perf_event_attr (PERF_ATTR_SIZE_VER5, 112 bytes).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved: u16,
}

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
const FLAG_DISABLED: u64 = 1;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const IOC_REFRESH: libc::c_ulong = 0x2402;
const IOC_PERIOD: libc::c_ulong = 0x4008_2404;
const F_SETSIG: i32 = 10;
const F_SETOWN_EX: i32 = 15;
const F_OWNER_TID: i32 = 0;

#[repr(C)]
struct FOwnerEx {
    kind: i32,
    pid: i32,
}

/// Whether kernel time is counted (perf_event_paranoid < 2); else only user time ticks.
pub static COUNTS_KERNEL: AtomicBool = AtomicBool::new(true);

/// A cpu-clock perf_event counting `tid`'s CPU time, delivering CPU_SIGNAL to it on overflow.
fn open_cpu_timer(tid: u32) -> i32 {
    let mut attr = PerfEventAttr {
        kind: PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: PERF_COUNT_SW_CPU_CLOCK,
        sample_period: 10_000_000,
        flags: FLAG_DISABLED | FLAG_EXCLUDE_HV,
        wakeup_events: 1,
        ..Default::default()
    };
    let open = |attr: &PerfEventAttr| {
        // SAFETY: perf_event_open(attr, pid=tid, cpu=-1, group=-1, flags=0) with a valid attr.
        unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                attr as *const PerfEventAttr,
                tid as libc::pid_t,
                -1,
                -1,
                0,
            ) as i32
        }
    };
    let mut fd = -1;
    if COUNTS_KERNEL.load(Ordering::Relaxed) {
        fd = open(&attr);
    }
    if fd < 0 {
        attr.flags |= FLAG_EXCLUDE_KERNEL;
        fd = open(&attr);
        if fd >= 0 {
            COUNTS_KERNEL.store(false, Ordering::Relaxed);
        }
    }
    if fd < 0 {
        return -1;
    }
    let owner = FOwnerEx {
        kind: F_OWNER_TID,
        pid: tid as i32,
    };
    // SAFETY: fcntl on the fd just opened, with valid arguments.
    let ok = unsafe {
        libc::fcntl(fd, libc::F_SETFL, libc::O_ASYNC) == 0
            && libc::fcntl(fd, F_SETSIG, CPU_SIGNAL) == 0
            && libc::fcntl(fd, F_SETOWN_EX, &owner as *const FOwnerEx) == 0
    };
    if !ok {
        // SAFETY: our fd.
        unsafe { libc::close(fd) };
        return -1;
    }
    fd
}

static CPU_PERIOD_NS: AtomicU64 = AtomicU64::new(0);
static WALL_PERIOD_NS: AtomicU64 = AtomicU64::new(0);

pub fn set_periods(cpu_ns: u64, wall_ns: u64) {
    CPU_PERIOD_NS.store(cpu_ns, Ordering::SeqCst);
    WALL_PERIOD_NS.store(wall_ns, Ordering::SeqCst);
}

/// A period drawn uniformly from [p/2, 3p/2): the mean is p, and no fixed period
/// aliases with a periodic program.
pub fn jitter(rng: &AtomicU64, p: u64) -> u64 {
    p / 2 + draw(rng) % p.max(1)
}

/// The next xorshift64 value of a thread's generator.
fn draw(rng: &AtomicU64) -> u64 {
    let mut x = rng.load(Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rng.store(x, Ordering::Relaxed);
    x
}

/// A thread's first period: the CPU time to the next tick of a timer that had
/// been running with [`jitter`]'s periods all along (the residual of that renewal
/// process: uniform on [0, p/2) half the time, else on [p/2, 3p/2) with a density
/// falling linearly to zero). Each thread's CPU time is then sampled at the mean
/// rate from its start; a first period of at least p/2 never sampled a thread
/// that ran less (a run of 100,000 threads of ~100 µs each got 2 samples for 8 s
/// of CPU).
pub fn first_period(rng: &AtomicU64, p: u64) -> u64 {
    let pf = p as f64;
    let u = (draw(rng) >> 11) as f64 / (1u64 << 53) as f64;
    let t = if draw(rng) & (1 << 40) == 0 {
        u * pf / 2.0
    } else {
        1.5 * pf - pf * u.sqrt()
    };
    t as u64
}

/// Sets the next period of a thread's timer and lets it fire once more. The
/// timer stopped itself at its overflow (refresh count 1), so the new period
/// starts from zero when it is enabled again: no reset is needed (each ioctl
/// costs ~2 µs here: they run with interrupts off and reprogram an hrtimer).
fn arm(s: &ThreadSlot, fd: i32, p: u64) {
    set_period(fd, jitter(&s.rng, p).max(100_000));
}

/// Sets a timer's period and lets it fire once.
fn set_period(fd: i32, next: u64) {
    // SAFETY: ioctls on a perf_event fd owned by this slot; async-signal-safe syscalls.
    unsafe {
        libc::ioctl(fd, IOC_PERIOD, &next as *const u64);
        libc::ioctl(fd, IOC_REFRESH, 1);
    }
}

// ---------------------------------------------------------------- the ring

/// One sample as the handler leaves it for the sampler thread. All zeros is a
/// valid free entry: the ring is allocated zeroed, so its 3 MB cost no page
/// until a sample lands in them.
pub struct Entry {
    /// Vyukov's sequence number minus the cell's index (0: free for position index).
    seq: AtomicUsize,
    pub ts: u64,
    pub thread: u32,
    pub mode_state: u8,
    /// AsyncGetCallTrace's result: frames, or a negative error code.
    pub num_frames: i32,
    pub frames: [CallFrame; MAX_FRAMES],
}

/// A bounded multi-producer single-consumer queue (Vyukov's): producers claim a
/// cell with one CAS, fill it, and publish it with its sequence number.
struct Ring {
    cells: Box<[std::cell::UnsafeCell<Entry>]>,
    head: AtomicUsize,
    tail: AtomicUsize,
}

// SAFETY: a cell is written only by the producer that claimed it (CAS on head) and
// read only by the single consumer after it was published (seq), see push/pop.
unsafe impl Sync for Ring {}
// SAFETY: the jmethodIDs in the cells are process-wide values, not thread-bound.
unsafe impl Send for Ring {}

static RING: OnceLock<Ring> = OnceLock::new();

/// Samples dropped because the ring was full, or for want of a table slot.
pub static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Ring slots for these periods: twice the CPU samples all processors can take
/// between two drains, plus one wall tick's burst, as a power of two in
/// 256..=8192. Fewer slots than that would drop samples; more would spread the
/// handler's writes over more cold pages (a first touch costs a page fault).
fn ring_slots(cpu_period_ns: u64, cpus: usize) -> usize {
    let per_drain = match cpu_period_ns {
        0 => 0,
        p => cpus as u64 * DRAIN_NS.div_ceil(p) * 2,
    };
    (per_drain as usize + WALL_BURST)
        .next_power_of_two()
        .clamp(256, 8192)
}

/// Allocates the ring (before any signal), sized for the CPU period.
pub fn init_ring(cpu_period_ns: u64) {
    RING.get_or_init(|| {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let slots = ring_slots(cpu_period_ns, cpus);
        let layout =
            std::alloc::Layout::array::<std::cell::UnsafeCell<Entry>>(slots).expect("ring layout");
        // SAFETY: a non-zero-sized layout; an all-zero Entry is valid (atomics,
        // integers, null pointers); the slice owns the allocation (Box frees it
        // with the same layout). Zeroed pages come from the kernel untouched.
        let cells = unsafe {
            let p = std::alloc::alloc_zeroed(layout) as *mut std::cell::UnsafeCell<Entry>;
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, slots))
        };
        Ring {
            cells,
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
        }
    });
}

impl Ring {
    /// Claims a free cell (None when full).
    fn claim(&self) -> Option<(usize, usize, *mut Entry)> {
        let mut pos = self.head.load(Ordering::Relaxed);
        for _ in 0..16 {
            let idx = pos % self.cells.len();
            let cell = self.cells.get(idx)?;
            // SAFETY: seq is an atomic inside the cell; reading it is always allowed.
            let seq = unsafe { (*cell.get()).seq.load(Ordering::Acquire) } + idx;
            if seq == pos {
                match self.head.compare_exchange_weak(
                    pos,
                    pos + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Some((pos, idx, cell.get())),
                    Err(p) => pos = p,
                }
            } else if seq < pos {
                return None; // full: the consumer has not freed this cell yet
            } else {
                pos = self.head.load(Ordering::Relaxed);
            }
        }
        None
    }

    fn publish(e: *mut Entry, pos: usize, idx: usize) {
        // SAFETY: the caller claimed this cell (index idx) at `pos`.
        unsafe { (*e).seq.store(pos + 1 - idx, Ordering::Release) };
    }
}

/// Hands each published sample to `f`, oldest first (the sampler thread only).
pub fn drain(mut f: impl FnMut(&Entry)) {
    let Some(r) = RING.get() else { return };
    loop {
        let pos = r.tail.load(Ordering::Relaxed);
        let idx = pos % r.cells.len();
        let Some(cell) = r.cells.get(idx) else {
            return;
        };
        let e = cell.get();
        // SAFETY: seq is atomic; the rest of the cell is read only once seq says it
        // was published, and handed back (seq = pos + slots) after.
        unsafe {
            if (*e).seq.load(Ordering::Acquire) + idx != pos + 1 {
                return;
            }
            f(&*e);
            (*e).seq.store(pos + r.cells.len() - idx, Ordering::Release);
        }
        r.tail.store(pos + 1, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------- the handler

/// Samples are taken (cleared at the end and when the engine switches itself off).
pub static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Installs the handler for both signals (SA_RESTART: interrupted system calls go on).
pub fn install_handler() -> bool {
    for sig in [CPU_SIGNAL, WALL_SIGNAL] {
        // SAFETY: a zeroed sigaction is valid; the handler has the SA_SIGINFO signature;
        // both signals are blocked while it runs, so it never nests.
        let ok = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction =
                on_signal as extern "C" fn(i32, *mut libc::siginfo_t, *mut c_void) as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaddset(&mut sa.sa_mask, CPU_SIGNAL);
            libc::sigaddset(&mut sa.sa_mask, WALL_SIGNAL);
            libc::sigaction(sig, &sa, std::ptr::null_mut()) == 0
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Experiment counters (WEFT_SAMPLE_EXP=stats): [cpu n, cpu tsc, wall n, wall tsc, recover n, recover tsc].
pub static STATS_ON: AtomicBool = AtomicBool::new(false);
pub static STATS: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];
/// Per-sample (sig, walk tsc, arm tsc, total tsc) of the first 8192 samples.
pub static SAMPLE_LOG: [[AtomicU64; 4]; 8192] = [const { [const { AtomicU64::new(0) }; 4] }; 8192];
pub static SAMPLE_LOG_N: AtomicUsize = AtomicUsize::new(0);
static LAST_WALK: AtomicU64 = AtomicU64::new(0);
static LAST_ARM: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_signal(sig: i32, _info: *mut libc::siginfo_t, uc: *mut c_void) {
    // SAFETY: __errno_location is this thread's errno; restored before returning so
    // the interrupted code sees its own value.
    let errno = unsafe { *libc::__errno_location() };
    let t0 = clock::now();
    take_sample(sig, uc);
    if STATS_ON.load(Ordering::Relaxed) {
        let k = if sig == CPU_SIGNAL { 0 } else { 2 };
        STATS[k].fetch_add(1, Ordering::Relaxed);
        STATS[k + 1].fetch_add(clock::now() - t0, Ordering::Relaxed);
        let i = SAMPLE_LOG_N.fetch_add(1, Ordering::Relaxed);
        if i < SAMPLE_LOG.len() {
            SAMPLE_LOG[i][0].store(sig as u64, Ordering::Relaxed);
            SAMPLE_LOG[i][1].store(LAST_WALK.load(Ordering::Relaxed), Ordering::Relaxed);
            SAMPLE_LOG[i][2].store(LAST_ARM.load(Ordering::Relaxed), Ordering::Relaxed);
            SAMPLE_LOG[i][3].store(clock::now() - t0, Ordering::Relaxed);
        }
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

fn take_sample(sig: i32, uc: *mut c_void) {
    if !ACTIVE.load(Ordering::Relaxed) {
        return;
    }
    let Some(slot) = find(gettid()) else { return };
    if slot.busy.swap(true, Ordering::Acquire) {
        return;
    }
    let mut env = slot.env.load(Ordering::Acquire);
    if env.is_null() {
        // A thread registered from outside: its JNIEnv, once.
        match env_from_vm() {
            Some(e) => {
                slot.env.store(e, Ordering::Release);
                env = e;
            }
            None => {
                // Not a Java thread: no sample, and its timer is not re-armed.
                slot.busy.store(false, Ordering::Release);
                return;
            }
        }
    }
    let agct = AGCT.load(Ordering::Relaxed);
    let (mode, state) = if sig == CPU_SIGNAL {
        (
            weft_trace::sample_mode::CPU,
            weft_trace::thread_state::RUNNING,
        )
    } else {
        (
            weft_trace::sample_mode::WALL,
            slot.wall_state.load(Ordering::Relaxed),
        )
    };
    let mut published = false;
    if !env.is_null() && agct != 0 {
        match RING.get().and_then(|r| r.claim()) {
            Some((pos, idx, e)) => {
                // SAFETY: `e` is the cell this handler claimed; AsyncGetCallTrace is
                // HotSpot's signal-safe walker, given this thread's JNIEnv, a buffer
                // of MAX_FRAMES frames and the signal's ucontext; it runs under
                // sigsetjmp (walk_guard.c) with the slot's jump buffer, so a fault
                // inside it returns here (on_fault) instead of killing the JVM.
                unsafe {
                    let f: Agct = if FAULT_TEST.load(Ordering::Relaxed) {
                        weft_faulting_walk
                    } else {
                        std::mem::transmute::<usize, Agct>(agct)
                    };
                    let mut trace = CallTrace {
                        env,
                        num_frames: 0,
                        frames: (*e).frames.as_mut_ptr(),
                    };
                    slot.in_walk.store(true, Ordering::SeqCst);
                    let tw = clock::now();
                    let faulted = weft_protected_walk(
                        f,
                        &mut trace,
                        MAX_FRAMES as i32,
                        uc,
                        slot.jump.get() as *mut c_void,
                    ) != 0;
                    slot.in_walk.store(false, Ordering::SeqCst);
                    if STATS_ON.load(Ordering::Relaxed) {
                        LAST_WALK.store(clock::now() - tw, Ordering::Relaxed);
                    }
                    if faulted {
                        FAULTS.fetch_add(1, Ordering::Relaxed);
                        trace.num_frames = WALK_FAULTED;
                    } else if (trace.num_frames == UNKNOWN_JAVA || trace.num_frames > 0)
                        && RECOVER.load(Ordering::Relaxed)
                        && !FAULT_TEST.load(Ordering::Relaxed)
                    {
                        let t0 = clock::now();
                        let walked = trace.num_frames > 0;
                        let asgct_caller = if walked && trace.num_frames > 1 {
                            (*trace.frames.add(1)).method as u64
                        } else {
                            0
                        };
                        let r = recover(slot, &mut trace, f, uc, walked);
                        if let Some(n) = r {
                            // A walk that went through a frame the instructions
                            // prove half built read its caller from the wrong
                            // slot (a stale return address): the proven walk, or
                            // broken.
                            if walked {
                                STATS[6].fetch_add(1, Ordering::Relaxed);
                                let caller = if n > 1 {
                                    (*trace.frames.add(1)).method as u64
                                } else {
                                    0
                                };
                                if n <= 0 || caller != asgct_caller {
                                    STATS[7].fetch_add(1, Ordering::Relaxed);
                                }
                            }
                            trace.num_frames = n;
                        }
                        if !walked {
                            STATS[4].fetch_add(1, Ordering::Relaxed);
                            STATS[5].fetch_add(clock::now() - t0, Ordering::Relaxed);
                        }
                    }
                    (*e).num_frames = trace.num_frames;
                    (*e).ts = clock::now();
                    (*e).thread = slot.index.load(Ordering::Relaxed);
                    (*e).mode_state = mode | (state << 4);
                }
                Ring::publish(e, pos, idx);
                published = true;
            }
            None => {
                DROPPED.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    if sig == WALL_SIGNAL {
        // clock_gettime is async-signal-safe.
        slot.cpu_after_wall
            .store(clock::thread_cpu_ns(), Ordering::Relaxed);
        if published {
            // After the sample (published above) and the CPU time: the sampler
            // thread reads this first.
            let asked = slot.wall_asked.load(Ordering::Acquire);
            slot.wall_done.store(asked, Ordering::Release);
        }
    }
    if sig == CPU_SIGNAL {
        let fd = slot.fd1.load(Ordering::Acquire) - 1;
        let p = CPU_PERIOD_NS.load(Ordering::Relaxed);
        if fd >= 0 && p > 0 {
            let ta = clock::now();
            arm(slot, fd, p);
            if STATS_ON.load(Ordering::Relaxed) {
                LAST_ARM.store(clock::now() - ta, Ordering::Relaxed);
            }
        }
    }
    slot.busy.store(false, Ordering::Release);
}

/// `num_frames` of a walk that faulted (recovered by the fault handler).
pub const WALK_FAULTED: i32 = -100;

/// AsyncGetCallTrace's `ticks_unknown_Java`: the top frame could not be made out.
const UNKNOWN_JAVA: i32 = -5;

/// Failed walks of compiled prologues and epilogues are taken again from the
/// caller (half_built_frame.rs; off: the agent option `norecover`).
pub static RECOVER: AtomicBool = AtomicBool::new(true);

/// What [`recover_walk`] is given: a CallTrace first, so that a pointer to it
/// passes where walk_guard.c expects one.
#[repr(C)]
struct Recovery {
    trace: CallTrace,
    walk: Agct,
    code: compiled_code::Ranges,
    /// The first walk succeeded: only a compiled method's half-built frame
    /// is looked for (a walk never succeeds from inside a stub).
    walked: bool,
    /// The instructions at the PC proved where the return address is (the
    /// result is then the walk from there, or `unknown_Java`).
    proved: bool,
}

/// A walk that failed with `unknown_Java`, taken again: when the PC is in a
/// compiled method's prologue or epilogue (proved by its instructions), that
/// method is the top frame (no inlined frame is live there) and the walk goes
/// on from its caller, with the return address and stack pointer the
/// instructions say. Else the sample stays `unknown_Java`. The second walk
/// runs under the same crash protection as the first.
fn recover(
    slot: &ThreadSlot,
    trace: &mut CallTrace,
    walk: Agct,
    uc: *mut c_void,
    walked: bool,
) -> Option<i32> {
    let mut r = Recovery {
        trace: CallTrace {
            env: trace.env,
            num_frames: UNKNOWN_JAVA,
            frames: trace.frames,
        },
        walk,
        code: compiled_code::enter(),
        walked,
        proved: false,
    };
    slot.in_walk.store(true, Ordering::SeqCst);
    // SAFETY: recover_walk only reads the ucontext, our code table snapshot
    // (kept alive by enter/leave), the method's code bytes inside its range,
    // and the thread's stack above its stack pointer; it writes the cell's
    // frames. Under sigsetjmp like the first walk.
    let faulted = unsafe {
        weft_protected_walk(
            recover_walk,
            &mut r as *mut Recovery as *mut CallTrace,
            MAX_FRAMES as i32,
            uc,
            slot.jump.get() as *mut c_void,
        )
    } != 0;
    slot.in_walk.store(false, Ordering::SeqCst);
    compiled_code::leave();
    if faulted {
        FAULTS.fetch_add(1, Ordering::Relaxed);
        return Some(WALK_FAULTED);
    }
    r.proved.then_some(r.trace.num_frames)
}

#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn recover_walk(t: *mut CallTrace, depth: i32, uc: *mut c_void) {
    use crate::half_built_frame::{unwind, AFTER, BEFORE};
    // SAFETY (whole function): t points to the Recovery of `recover`; uc is the
    // signal's ucontext; the reads below are bounded as commented.
    let r = &mut *(t as *mut Recovery);
    let uc = uc as *const libc::ucontext_t;
    if uc.is_null() || depth < 2 {
        return;
    }
    let g = &(*uc).uc_mcontext.gregs;
    let pc = g[libc::REG_RIP as usize] as usize;
    let sp = g[libc::REG_RSP as usize] as usize;
    let Some(code) = r.code.find(pc) else {
        if !r.walked {
            compiled_code::want_newer();
        }
        return;
    };
    if code.is_stub() {
        if !r.walked {
            from_stub(r, code, depth, uc);
        }
        return;
    }
    // The method's code bytes around the PC, inside its range only.
    let lo = pc.saturating_sub(BEFORE).max(code.start);
    let hi = pc.saturating_add(AFTER).min(code.end);
    let mut bytes = [0u8; BEFORE + AFTER];
    std::ptr::copy_nonoverlapping(lo as *const u8, bytes.as_mut_ptr(), hi - lo);
    let (before, at) = bytes[..hi - lo].split_at(pc - lo);
    let Some(u) = unwind(before, at, pc - code.start) else {
        return;
    };
    r.proved = true;
    // Inside the frame the instructions describe, at or above the stack pointer.
    let ra = *((sp + u.return_address_at) as *const usize);
    // The caller must be compiled code we know (a return address into it):
    // AsyncGetCallTrace is only given a PC that lies in a method's code.
    if !r
        .code
        .find(ra)
        .is_some_and(|c| !c.is_stub() && ra > c.start)
    {
        if r.code.unknown_near_code(ra) {
            compiled_code::want_newer();
        }
        return;
    }
    let mut ctx: libc::ucontext_t = std::ptr::read(uc);
    let cg = &mut ctx.uc_mcontext.gregs;
    // ra - 1: the call instruction's last byte, so the caller's frame is
    // looked up at the call (its debug info), not at the next instruction.
    cg[libc::REG_RIP as usize] = (ra - 1) as i64;
    cg[libc::REG_RSP as usize] = (sp + u.return_address_at + 8) as i64;
    if let Some(at) = u.saved_rbp_at {
        cg[libc::REG_RBP as usize] = *((sp + at) as *const i64);
    }
    let top = r.trace.frames;
    *top = CallFrame {
        lineno: -1,
        method: code.method as *mut c_void,
    };
    let mut caller = CallTrace {
        env: r.trace.env,
        num_frames: 0,
        frames: top.add(1),
    };
    (r.walk)(
        &mut caller,
        depth - 1,
        &mut ctx as *mut libc::ucontext_t as *mut c_void,
    );
    if caller.num_frames > 0 {
        r.trace.num_frames = caller.num_frames + 1;
    }
}

/// How far above rsp a stub's frame pointer may be (its pushes and locals).
const STUB_FRAME_BYTES: usize = 256;

/// A walk that failed in one of the JVM's stubs (an arraycopy, ...): taken
/// again from the compiled method that called it, whichever of [rsp] (before
/// the stub's `push rbp`, after its `leave`) or [rbp + 8] (in between) holds a
/// return address whose call instruction calls this stub's entry: that is the
/// proof. The stub itself is no Java frame (AsyncGetCallTrace never reports
/// one either): the sample's top frame is the caller at the call.
#[cfg(target_arch = "x86_64")]
unsafe fn from_stub(
    r: &mut Recovery,
    stub: compiled_code::CodeRange,
    depth: i32,
    uc: *const libc::ucontext_t,
) {
    // SAFETY (whole function): the stack is read at rsp and at most
    // STUB_FRAME_BYTES + 16 above it (the frames of the stub's callers are
    // there); code bytes only inside a compiled method's range.
    let g = &(*uc).uc_mcontext.gregs;
    let sp = g[libc::REG_RSP as usize] as usize;
    let fp = g[libc::REG_RBP as usize] as usize;
    use crate::half_built_frame::{call_target, thunk_slot, CALL_SITE_BYTES, THUNK_BYTES};
    let calls_stub = |ra: usize| {
        let Some(c) = r.code.find(ra).filter(|c| !c.is_stub()) else {
            return false;
        };
        let Some(lo) = ra.checked_sub(CALL_SITE_BYTES).filter(|&lo| lo >= c.start) else {
            return false;
        };
        let mut b = [0u8; CALL_SITE_BYTES];
        std::ptr::copy_nonoverlapping(lo as *const u8, b.as_mut_ptr(), CALL_SITE_BYTES);
        match call_target(&b, ra) {
            Some(t) if t == stub.start => true,
            // A VM function that only jumps to the stub through a pointer (a double
            // `%` calls SharedRuntime::drem, which jumps to the fmod stub): the
            // pointer holds the stub's entry. The function's bytes and the pointer
            // are the VM's, mapped; a fault still returns to the walk's guard.
            Some(t) if r.code.find(t).is_none() => {
                let mut tb = [0u8; THUNK_BYTES];
                std::ptr::copy_nonoverlapping(t as *const u8, tb.as_mut_ptr(), THUNK_BYTES);
                thunk_slot(&tb, t).is_some_and(|slot| *(slot as *const usize) == stub.start)
            }
            _ => false,
        }
    };
    // A candidate return address near the code but in no known method: its
    // caller was compiled since the snapshot, which the next drain publishes
    // (else every sample in a stub called from new code stays failed for up to
    // a second: most of a Math.sin loop's samples).
    let ask_newer = |ra: usize| {
        if r.code.unknown_near_code(ra) {
            compiled_code::want_newer();
        }
    };
    // (return address, caller's rsp, caller's rbp if the stub saved it)
    let at_sp = *(sp as *const usize);
    let (ra, caller_sp, caller_fp) = if calls_stub(at_sp) {
        (at_sp, sp + 8, None)
    } else if fp >= sp && fp - sp <= STUB_FRAME_BYTES && fp.is_multiple_of(8) {
        let ra = *((fp + 8) as *const usize);
        if !calls_stub(ra) {
            ask_newer(at_sp);
            ask_newer(ra);
            return;
        }
        (ra, fp + 16, Some(*(fp as *const i64)))
    } else {
        ask_newer(at_sp);
        return;
    };
    r.proved = true;
    let mut ctx: libc::ucontext_t = std::ptr::read(uc);
    let cg = &mut ctx.uc_mcontext.gregs;
    cg[libc::REG_RIP as usize] = (ra - 1) as i64;
    cg[libc::REG_RSP as usize] = caller_sp as i64;
    if let Some(f) = caller_fp {
        cg[libc::REG_RBP as usize] = f;
    }
    let mut caller = CallTrace {
        env: r.trace.env,
        num_frames: 0,
        frames: r.trace.frames,
    };
    (r.walk)(
        &mut caller,
        depth,
        &mut ctx as *mut libc::ucontext_t as *mut c_void,
    );
    if caller.num_frames > 0 {
        r.trace.num_frames = caller.num_frames;
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe extern "C" fn recover_walk(_t: *mut CallTrace, _depth: i32, _uc: *mut c_void) {}

/// The fault handlers found before ours (chained to for every fault not in a walk).
static PREV_SEGV: AtomicUsize = AtomicUsize::new(0);
static PREV_BUS: AtomicUsize = AtomicUsize::new(0);

struct PrevAction(libc::sigaction);

/// Installs the SIGSEGV/SIGBUS handler that recovers from a fault inside a walk
/// (after the JVM's own handlers: every other fault is passed to them).
pub fn install_fault_handler() -> bool {
    // SAFETY: weft_jmpbuf_size has no preconditions.
    if unsafe { weft_jmpbuf_size() } > JMPBUF_BYTES {
        return false;
    }
    for (sig, prev) in [(libc::SIGSEGV, &PREV_SEGV), (libc::SIGBUS, &PREV_BUS)] {
        // SAFETY: zeroed sigactions are valid; the old action is kept (leaked on
        // purpose: the handler may chain to it until the process ends).
        let ok = unsafe {
            let old = Box::into_raw(Box::new(PrevAction(std::mem::zeroed())));
            let mut r = libc::sigaction(sig, std::ptr::null(), &mut (*old).0);
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction =
                on_fault as extern "C" fn(i32, *mut libc::siginfo_t, *mut c_void) as usize;
            // The JVM's own flags (stack, restart), plus SA_SIGINFO for us.
            sa.sa_flags = ((*old).0.sa_flags | libc::SA_SIGINFO) & !libc::SA_RESETHAND;
            sa.sa_mask = (*old).0.sa_mask;
            prev.store(old as usize, Ordering::SeqCst);
            if r == 0 {
                r = libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
            r == 0
        };
        if !ok {
            return false;
        }
    }
    true
}

extern "C" fn on_fault(sig: i32, info: *mut libc::siginfo_t, uc: *mut c_void) {
    if let Some(slot) = find(gettid()) {
        if slot.in_walk.swap(false, Ordering::SeqCst) {
            // SAFETY: the slot's jump buffer was filled by weft_protected_walk on
            // this thread, which is still running below us on this stack.
            unsafe { weft_jump_back(slot.jump.get() as *mut c_void) };
        }
    }
    let prev = if sig == libc::SIGBUS {
        &PREV_BUS
    } else {
        &PREV_SEGV
    };
    let p = prev.load(Ordering::SeqCst) as *const PrevAction;
    if p.is_null() {
        return;
    }
    // SAFETY: p is the leaked previous action; calling it as the kernel would
    // (three arguments with SA_SIGINFO, one without), or restoring the default
    // action so that the faulting instruction, run again, ends the process as
    // it would have without us.
    unsafe {
        let a = &(*p).0;
        match a.sa_sigaction {
            libc::SIG_IGN => {}
            libc::SIG_DFL => {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
            h if a.sa_flags & libc::SA_SIGINFO != 0 => {
                let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut c_void) =
                    std::mem::transmute(h);
                f(sig, info, uc);
            }
            h => {
                let f: extern "C" fn(i32) = std::mem::transmute(h);
                f(sig);
            }
        }
    }
}

/// Sends a wall-clock signal to a thread (the sampler thread).
pub fn signal_wall(tid: u32) -> bool {
    // SAFETY: tgkill to a thread of this process; a thread that just exited gives ESRCH.
    unsafe {
        libc::syscall(
            libc::SYS_tgkill,
            libc::getpid(),
            tid as libc::pid_t,
            WALL_SIGNAL,
        ) == 0
    }
}

pub fn wall_period_ns() -> u64 {
    WALL_PERIOD_NS.load(Ordering::Relaxed)
}

pub fn cpu_period_ns() -> u64 {
    CPU_PERIOD_NS.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_is_sized_for_the_rate() {
        // 100 Hz on 2 CPUs: 20 samples per drain and a wall burst.
        assert_eq!(ring_slots(10_000_000, 2), 256);
        assert_eq!(ring_slots(1_000_000, 2), 512);
        assert_eq!(ring_slots(0, 64), 256);
        assert_eq!(ring_slots(1_000_000, 64), 8192);
    }
}
