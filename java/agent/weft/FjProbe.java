package weft;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.ForkJoinWorkerThread;

/**
 * The fork-join hot path (docs/forkjoin.md). The wrappers the agent adds to
 * {@code ForkJoinTask.fork/doExec/cancel/reinitialize/awaitDone} (awaitDone: the
 * slow path of every wait, from join, get, quietlyJoin, invoke and invokeAll) and to
 * the pool's submission funnel call the small static hooks below directly (not
 * {@link Probe#enter}): {@link #fork}, {@link #exec}/{@link #execEnd},
 * {@link #cancelEnd}, {@link #reinit}, {@link #join}/{@link #joinEnd}, {@link #submit}.
 * Events go into a per-thread {@code long[]} (no JNI, no allocation, no atomics)
 * that is handed to the agent in batches of ~8k longs, and copied into the trace as
 * it is: the layout below is part of the trace format (record tag 36,
 * crates/trace/src/fjevents.rs decodes it).
 *
 * <p>Per-object state lives in a field the agent adds to ForkJoinTask at load,
 * {@code public transient long weft$u}: {@code usage << 2 | FORKED} (bit 1 unused).
 * A worker thread's buffer lives in {@code ForkJoinWorkerThread.weft$b}, other
 * threads' in a ThreadLocal. Usage ids are {@code thread << 40 | counter}: the
 * decoder recomputes them from the push order, so a
 * push does not store its id.
 */
public final class FjProbe {
    // Event kinds in the buffer (low 4 bits of an event's first long).
    static final int E_PUSH = 1;    // [k | flags | cls<<8] [prev if F_PREV] [ts if F_TS]
    static final int E_EXT = 2;     // [k | cls<<8, prev, ts, ident | pool<<32]
    static final int E_BEGIN = 3;   // [k | cls<<8, 0, ts]: a direct execution
    static final int E_END = 4;     // [ts<<4 | k]
    static final int E_CANCEL = 5;  // [k, usage, ts]
    static final int E_REINIT = 6;  // [k, usage, ts]
    static final int E_JOINE = 8;   // [ts<<4 | k]
    static final int E_SITE = 9;    // [k | site<<8, usage]
    static final int E_WORKER = 10; // [k | cls<<8, pool, parallelism]
    static final int E_RUN = 11;    // [ts<<4 | k, usage]: its class is its push's
    static final int E_JOIN = 12;   // [ts<<4 | k, usage]
    /** Push flags (bits 4..7 of the first long). */
    static final long F_PREV = 16;
    static final long F_TS = 32;

    static final long FORKED = 1;
    /** Buf.jpos when no JoinBegin is open in the buffer: low enough that `n == jpos + 5`
     * (joinEnd's test for a Join, Run, RunEnd just written) never holds without a
     * separate `jpos >= 0` branch, whose rare side trapped. */
    static final int NO_JOIN = -8;

    static final int SIZE = 8192;
    private static final int LIMIT = SIZE - 16;
    /** Flushes at the small limit per buffer (see Buf.limit). */
    private static final int WARM = 256;

    /**
     * Whether the agent added the fields (checked once, after VMInit). The class
     * literals load both classes (not initializing them) through the class hook;
     * the agent knows which it gave a field (reflection here cost ~1 ms at start-up).
     */
    private static final class H {
        static final boolean OK;
        static {
            boolean ok;
            try {
                ok = ForkJoinTask.class != null && ForkJoinWorkerThread.class != null && nFieldsAdded();
            } catch (Throwable t) {
                ok = false;
            }
            OK = ok;
        }
    }

    private static final ThreadLocal<Buf> TL = new ThreadLocal<>();
    private static final Class<?> WORKER = ForkJoinWorkerThread.class;
    /** Every live buffer. Lock-free (as is the index counter): a monitor here would be
     * contended when workers end together, and show in the program's lock report. */
    private static final ConcurrentLinkedQueue<Buf> ALL = new ConcurrentLinkedQueue<>();
    private static final AtomicInteger NEXT_INDEX = new AtomicInteger();

    /**
     * Timestamps are the agent's clock ticks: the TSC read by {@link #nTicks} when the
     * agent's clock is the TSC, else System.nanoTime (then the agent's ticks are
     * CLOCK_MONOTONIC ns, the same values). A JNI call to a plain rdtsc costs ~8 ns in a
     * loop (~20 in the hooks) against ~23 (~24) for System.nanoTime (the vDSO's ordered
     * TSC read and scaling), and does not wait for the loads in flight: a read in a task
     * whose loads miss the cache costs ~26 ns against ~128 (BENCHMARKS.md, fifth
     * session).
     */
    private static final boolean TSC = nTicksAreTsc();

    static long now() {
        return TSC ? nTicks() : System.nanoTime();
    }

    static {
        // Loads the queue's iterator class now: initialized at the first threadEnd
        // instead, workers ending together contend on its class-init lock.
        for (Buf b : ALL) {
            b.hashCode();
        }
    }

    /** The first class any buffer's cache missed on, which new buffers start from (final
     * fields: a racy read sees a consistent pair). */
    private static ClassSeed seed;

    private static final class ClassSeed {
        final Class<?> cls;
        final long id;

        ClassSeed(Class<?> cls, long id) {
            this.cls = cls;
            this.id = id;
        }
    }

    /** The class id of an object's class, unsigned. */
    static long classId(Object o) {
        return Probe.classIdOf(o) & 0xFFFF_FFFFL;
    }

    /** One thread's event buffer. */
    static final class Buf {
        final long[] ev = new long[SIZE];
        int n;
        /** Flush above this: small for the first WARM flushes (so that the JIT sees the
         * path taken while it profiles {@link #check} and does not compile it as an
         * uncommon trap, which deoptimizes every caller when hit), then SIZE - 16. */
        int limit = 64;
        int flushes;
        final long idBase;
        long counter;
        /** The last timestamp taken on this thread. */
        long lastTs;
        Class<?> lastCls;
        long lastClsId;
        int sites = 32;
        /** Open recorded runs (a fork inside a run reuses lastTs). */
        int depth;
        /** Open doExec calls, and which recorded a begin (bit d of rb; deeper: rbx). */
        int rd;
        long rb;
        long[] rbx;
        /** Open joins, and which recorded a begin (bit d of jb; deeper: jbx). */
        int jd;
        long jb;
        long[] jbx;
        /** Index of the last JoinBegin (NO_JOIN: none in the buffer), and n right after
         * it (-1: none). */
        int jpos = NO_JOIN;
        int jmark = -1;
        /** Open joins (depth < 64) whose task runs or ran inline: their Join event
         * became the run's Run event (bit d). */
        long ji;
        /** The task whose run ended last, when, and n right after its RunEnd (-1: flushed since). */
        Object lastEnded;
        long lastEndTs;
        int emark = -1;
        final long handle;
        final Thread owner = Thread.currentThread();
        boolean dead;

        Buf(int index, long handle) {
            this.idBase = ((long) index) << 40;
            this.handle = handle;
            // A new worker most likely forks what the others fork: its first fork
            // then hits the cache, instead of a branch C2 may have left out of the
            // hooks when all forks were of one class (a deoptimization when a
            // worker starts late).
            ClassSeed s = seed;
            if (s != null) {
                lastCls = s.cls;
                lastClsId = s.id;
            }
        }

        long cls(Object o) {
            Class<?> c = o.getClass();
            if (c == lastCls) return lastClsId;
            long id = classId(o);
            lastCls = c;
            lastClsId = id;
            // The first class only: a workload of several classes takes the miss
            // path all along (so C2 keeps it), and a shared field written at every
            // miss would bounce between the workers' caches.
            if (seed == null) seed = new ClassSeed(c, id);
            return id;
        }

        void flush() {
            limit = ++flushes < WARM ? 64 : LIMIT;
            jpos = NO_JOIN;
            jmark = -1;
            emark = -1;
            if (n > 0) {
                int k = n;
                n = 0;
                nFlush(handle, ev, k);
            }
        }
    }

    private FjProbe() {}

    /**
     * The buffer-full test of every hook, in one method so that its branch profile is
     * shared: a flush seen by any hook keeps the branch compiled in all of them.
     */
    static void check(Buf b) {
        if (b.n > b.limit) b.flush();
    }

    /** Sets bit `d` (>= 64) of an overflow bit stack; returns the (possibly new) array. */
    static long[] setDeep(long[] a, int d, boolean v) {
        int w = (d >>> 6) - 1;
        if (a == null) a = new long[4];
        if (w >= a.length) a = java.util.Arrays.copyOf(a, Math.max(w + 1, a.length * 2));
        if (v) a[w] |= 1L << d;
        else a[w] &= ~(1L << d);
        return a;
    }

    static boolean deep(long[] a, int d) {
        int w = (d >>> 6) - 1;
        return a != null && w < a.length && (a[w] & (1L << d)) != 0;
    }

    private static Buf buf() {
        Thread t = Thread.currentThread();
        // Not `instanceof`: C2 compiles that from its type profile (the workers' class
        // only) into a class check that trapped at each call from another thread (the
        // main thread waiting for its invoke: up to 5 deoptimizations of the hooks it is
        // inlined in, until recompiled); isInstance is a plain subtype test.
        if (WORKER.isInstance(t)) {
            Buf b = (Buf) ((FjStubWorker) (Object) t).weft$b;
            if (b == null) b = newBuf((ForkJoinWorkerThread) t);
            return b;
        }
        Buf b = TL.get();
        if (b == null) b = newBuf(null);
        return b;
    }

    private static Buf newBuf(ForkJoinWorkerThread w) {
        int index = NEXT_INDEX.incrementAndGet();
        Buf b = new Buf(index, nAttach(index));
        ALL.add(b);
        if (w != null) {
            ((FjStubWorker) (Object) w).weft$b = b;
            ForkJoinPool p = w.getPool();
            long[] e = b.ev;
            // Not through b.cls: its one-entry cache would then miss at the first
            // fork of every worker, a branch C2 compiles as a trap when workers
            // start late (a deoptimization and recompilation of the hook).
            e[0] = E_WORKER | (classId(p) << 8);
            e[1] = System.identityHashCode(p) & 0xFFFF_FFFFL;
            e[2] = p.getParallelism();
            b.n = 3;
        } else {
            TL.set(b);
        }
        return b;
    }

    /** Entry of {@code ForkJoinTask.fork()}: a new usage. */
    @FjStubDontInline
    public static void fork(Object o) {
        if (!Probe.on || !H.OK) return;
        try {
            if (Probe.onCarrier()) return; // the virtual-thread scheduler's plumbing
            FjStubTask s = (FjStubTask) o;
            Buf b = buf();
            long prev = s.weft$u >>> 2;
            long id = b.idBase | ++b.counter;
            s.weft$u = (id << 2) | FORKED;
            long[] e = b.ev;
            int i = b.n;
            long h = E_PUSH | (b.cls(o) << 8);
            int k = i + 1;
            if (prev != 0) {
                h |= F_PREV;
                e[k++] = prev;
            }
            if (b.depth == 0) {
                h |= F_TS;
                e[k++] = b.lastTs = now();
            }
            e[i] = h;
            b.n = k;
            // One test for both (a site left to take, a buffer to flush): taken in every
            // thread's first forks and at the warm-up flushes, so C2 compiles both ways;
            // `sites > 0` alone trapped when a thread started late.
            if (((-b.sites) | (b.limit - k)) < 0) forkSites(b, o, id);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    private static void forkSites(Buf b, Object o, long id) {
        if (b.sites > 0) site(b, o, id);
        check(b);
    }

    static void site(Buf b, Object o, long id) {
        if (b.sites > 0) b.sites--;
        int site = nSite(o, (int) b.cls(o));
        if (site != 0) {
            int i = b.n;
            b.ev[i] = E_SITE | ((site & 0xFFFF_FFFFL) << 8);
            b.ev[i + 1] = id;
            b.n = i + 2;
        }
    }

    /** Entry of the pool's submission funnel (externalSubmit on 17, poolSubmit on 21+). */
    @FjStubDontInline
    public static void submit(Object pool, Object task) {
        if (!Probe.on || !H.OK) return;
        try {
            // A virtual thread (re)scheduled: plumbing, left out by the analysis anyway.
            // Asked before the type test: the scheduler's tasks are of several classes
            // (execute's and lazySubmit's adapters), and C2's check of that type,
            // compiled for the first class seen, trapped and recompiled this hook.
            if (Probe.isVtScheduler(pool) || !(task instanceof ForkJoinTask)) return;
            FjStubTask s = (FjStubTask) task;
            Buf b = buf();
            long prev = s.weft$u >>> 2;
            long id = b.idBase | ++b.counter;
            s.weft$u = (id << 2) | FORKED;
            long ts = now();
            b.lastTs = ts;
            long[] e = b.ev;
            int i = b.n;
            e[i] = E_EXT | (b.cls(task) << 8);
            e[i + 1] = prev;
            e[i + 2] = ts;
            e[i + 3] = (System.identityHashCode(task) & 0xFFFF_FFFFL)
                    | ((long) System.identityHashCode(pool) << 32);
            b.n = i + 4;
            check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Entry of {@code doExec}: a run of a usage, or (usage 0) a direct execution. */
    @FjStubDontInline
    public static void exec(Object o) {
        if (!Probe.on || !H.OK) return;
        try {
            if (Probe.onCarrier()) return; // a mount: see execEnd
            Buf b = buf();
            int d = b.rd++;
            boolean done = ((ForkJoinTask<?>) o).isDone();
            if (d < 64) {
                b.rb = done ? b.rb & ~(1L << d) : b.rb | (1L << d);
            } else {
                b.rbx = setDeep(b.rbx, d, !done);
            }
            if (done) return;
            FjStubTask s = (FjStubTask) o;
            long u = s.weft$u;
            s.weft$u = u & ~FORKED;
            long usage = (u & FORKED) != 0 ? u >>> 2 : 0;
            long[] e = b.ev;
            int i = b.n;
            int jd = b.jd - 1;
            // Zero iff this run is the inline run of the join that just began (its
            // task, nesting < 64; the mask keeps NO_JOIN in bounds). One branch: as a
            // chain of &&, the test "that task is not the one run here" was first
            // taken late in a run (a join helping with another task), an uncommon
            // trap that deoptimized this hook and had C2 compile it again
            // (bench/fj_jit).
            long other = (i ^ b.jmark) | (jd >>> 6) | ((usage - 1) >>> 63)
                    | (e[(b.jpos + 1) & (SIZE - 1)] ^ usage);
            if (other == 0) {
                // Run inline by the join that just began (most joins): its Join
                // becomes this Run (same layout, same usage, same instant: only the
                // kind changes), and the join records nothing more unless it still
                // waits after the run.
                e[b.jpos] = (e[b.jpos] & ~15L) | E_RUN;
                b.ji |= 1L << jd;
                b.jpos = NO_JOIN;
                b.jmark = -1;
                b.depth++;
                return;
            }
            long ts = b.lastTs = now();
            if (usage != 0) {
                e[i] = (ts << 4) | E_RUN;
                e[i + 1] = usage;
                b.n = i + 2;
            } else {
                e[i] = E_BEGIN | (b.cls(o) << 8);
                e[i + 1] = 0;
                e[i + 2] = ts;
                b.n = i + 3;
            }
            b.depth++;
            check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Exit of {@code doExec}. */
    @FjStubDontInline
    public static void execEnd(Object o) {
        if (!Probe.on || !H.OK) return;
        try {
            // The scheduler's task ends on the carrier it began on, with no virtual
            // thread mounted: skipped as its begin was.
            if (Probe.onCarrier()) return;
            // Per-thread state only: the task may already be reinitialized and
            // resubmitted by a joiner that saw it done (doExec sets done before exit).
            Buf b = buf();
            if (b.rd == 0) return;
            int d = --b.rd;
            if (d < 64 ? (b.rb & (1L << d)) == 0 : !deep(b.rbx, d)) return;
            long ts = b.lastTs = now();
            int i = b.n;
            b.ev[i] = (ts << 4) | E_END;
            b.n = i + 1;
            b.lastEnded = o;
            b.lastEndTs = ts;
            b.emark = i + 1;
            if (b.depth > 0) b.depth--;
            check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Exit of {@code cancel(boolean)}: a queued usage was cancelled. */
    @FjStubDontInline
    public static void cancelEnd(Object o) {
        if (!Probe.on || !H.OK) return;
        try {
            FjStubTask s = (FjStubTask) o;
            long u = s.weft$u;
            if ((u & FORKED) == 0 || !((ForkJoinTask<?>) o).isCancelled()) return;
            s.weft$u = u & ~FORKED;
            event3(buf(), E_CANCEL, u >>> 2);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Entry of {@code reinitialize()}. */
    @FjStubDontInline
    public static void reinit(Object o) {
        if (!Probe.on || !H.OK) return;
        try {
            FjStubTask s = (FjStubTask) o;
            long u = s.weft$u;
            s.weft$u = u & ~FORKED;
            if (u >>> 2 != 0) event3(buf(), E_REINIT, u >>> 2);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    static void event3(Buf b, int kind, long usage) {
        long ts = b.lastTs = now();
        long[] e = b.ev;
        int i = b.n;
        e[i] = kind;
        e[i + 1] = usage;
        e[i + 2] = ts;
        b.n = i + 3;
        check(b);
    }

    /** Entry of {@code awaitDone} (or of join/get/quietlyJoin on a JDK without a known
     * awaitDone): a wait begins if the task is not done. */
    @FjStubDontInline
    public static void join(Object o) {
        if (!Probe.on || !H.OK) return;
        try {
            Buf b = buf();
            int d = b.jd++;
            boolean done = ((ForkJoinTask<?>) o).isDone();
            if (d < 64) {
                b.jb = done ? b.jb & ~(1L << d) : b.jb | (1L << d);
            } else {
                b.jbx = setDeep(b.jbx, d, !done);
            }
            if (done) return;
            long ts = b.lastTs = now();
            long[] e = b.ev;
            int i = b.n;
            e[i] = (ts << 4) | E_JOIN;
            e[i + 1] = ((FjStubTask) o).weft$u >>> 2;
            b.n = i + 2;
            b.jpos = i;
            b.jmark = i + 2;
            check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Exit of {@code awaitDone} (or of join/get/quietlyJoin). */
    @FjStubDontInline
    public static void joinEnd(Object o) {
        if (!Probe.on || !H.OK) return;
        try {
            Buf b = buf();
            if (b.jd == 0) return;
            int d = --b.jd;
            if (d < 64 ? (b.jb & (1L << d)) == 0 : !deep(b.jbx, d)) return;
            int i = b.n;
            if (d < 64 && (b.ji & (1L << d)) != 0) {
                b.ji &= ~(1L << d);
                // Ran its task inline: done when the run ended, nothing to record.
                if (i == b.emark && b.lastEnded == o) return;
                // Still waited after the run (a completer with pending children):
                // a join from the run's end (or the last instant known) to now.
                long begin = b.lastEnded == o ? b.lastEndTs : b.lastTs;
                long ts = b.lastTs = now();
                long[] e = b.ev;
                e[i] = (begin << 4) | E_JOIN;
                e[i + 1] = ((FjStubTask) o).weft$u >>> 2;
                e[i + 2] = (ts << 4) | E_JOINE;
                b.n = i + 3;
                b.jpos = NO_JOIN;
                b.jmark = -1;
                check(b);
                return;
            }
            int j = b.jpos;
            if (i == j + 5 && dropInline(b, j)) return;
            long[] e = b.ev;
            // The join ended by running its task here: it ended when that run did.
            long ts = i == b.emark && b.lastEnded == o ? b.lastTs : (b.lastTs = now());
            e[i] = (ts << 4) | E_JOINE;
            b.n = i + 1;
            b.jpos = NO_JOIN;
            b.jmark = -1;
            check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /**
     * Drops a join that only ran its task inline (Join, Run of the same usage, RunEnd):
     * there is no wait to record. (Joins nested deeper than 64, which the conversion
     * in {@link #exec} does not track.)
     */
    private static boolean dropInline(Buf b, int j) {
        long[] e = b.ev;
        if ((e[j + 2] & 15) != E_RUN || e[j + 3] != e[j + 1]) return false;
        e[j] = e[j + 2];
        e[j + 1] = e[j + 3];
        e[j + 2] = e[j + 4];
        b.n = j + 3;
        b.jpos = NO_JOIN;
        b.jmark = -1;
        return true;
    }

    /** Gives a starting pool worker its buffer (called by the agent at ThreadStart). */
    static void threadStart() {
        if (!Probe.on || !H.OK) return;
        try {
            // newBuf, not buf: the compiled buf takes a null field for a trap.
            Thread w = Thread.currentThread();
            if (w instanceof ForkJoinWorkerThread && ((FjStubWorker) (Object) w).weft$b == null) {
                newBuf((ForkJoinWorkerThread) w);
            }
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Flushes the current thread's buffer and forgets it (called by the agent at ThreadEnd). */
    static void threadEnd() {
        // Thread.exit() has already cleared the thread's ThreadLocals: find it by owner.
        Thread t = Thread.currentThread();
        Buf b = null;
        for (Buf x : ALL) {
            if (x.owner == t) {
                b = x;
                break;
            }
        }
        if (b == null) return;
        // Flushed before it leaves ALL: a worker ending while the JVM dies (a pool shut
        // down, not awaited) is then either in flushAll's snapshot, which waits for this
        // flush, or already flushed; removed first, its last batch could be written after
        // the agent's final drain and lost (Fib(10) recorded 79 of its 89 runs under load).
        synchronized (b) {
            b.dead = true;
            b.flush();
        }
        ALL.remove(b);
    }

    /** Flushes every thread's buffer (called by the agent at VMDeath, probes off). */
    static void flushAll() {
        for (Buf b : ALL.toArray(new Buf[0])) {
            synchronized (b) {
                b.flush();
            }
        }
    }

    private static native boolean nFieldsAdded();

    private static native boolean nTicksAreTsc();

    private static native long nTicks();

    private static native long nAttach(int index);

    private static native void nFlush(long handle, long[] ev, int n);

    private static native int nSite(Object task, int cls);
}
