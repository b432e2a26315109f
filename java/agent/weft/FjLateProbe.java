package weft;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The fork-join hooks of a late agent (docs/attach.md): the events of {@link FjProbe}
 * (same buffers, same layout, same decoder) without the fields the launched agent
 * adds to {@code ForkJoinTask} and {@code ForkJoinWorkerThread}, which a
 * retransformation cannot add. A task's usage state lives in a side table keyed by
 * the task's identity ({@link Table}), a thread's buffer in the session's
 * ThreadLocal. The launched agent never calls this class (its hot path stays
 * {@link FjProbe}'s).
 *
 * <p>Tasks forked or submitted before the attach have no entry: their runs are
 * recorded as runs without a fork (usage 0, as a direct execution) and joins of them
 * as joins of an unknown task (their wait is still the joiner's), never as another
 * task's. Joins are recorded as a join, the inline run and the join's end (FjProbe
 * folds the common case into the run: an optimisation only).
 */
public final class FjLateProbe {
    private FjLateProbe() {}

    /** One attach session's state: set by the agent at the start, dropped at the end. */
    private static volatile Session session;

    private static final AtomicInteger NEXT_INDEX = new AtomicInteger();

    static final class Session {
        volatile Table table = new Table(TABLE_SIZE);
        final ThreadLocal<FjProbe.Buf> local = new ThreadLocal<>();
        final ConcurrentLinkedQueue<FjProbe.Buf> all = new ConcurrentLinkedQueue<>();

        FjProbe.Buf buf() {
            FjProbe.Buf b = local.get();
            if (b == null) b = owned();
            return b;
        }

        /**
         * This thread's buffer after its ThreadLocal was cleared (common-pool workers
         * clear theirs after each top-level task: a new buffer each time would leak
         * one per task), else a new one.
         */
        private FjProbe.Buf owned() {
            Thread t = Thread.currentThread();
            for (FjProbe.Buf x : all) {
                if (x.owner == t) {
                    local.set(x);
                    return x;
                }
            }
            return newBuf();
        }

        private FjProbe.Buf newBuf() {
            int index = NEXT_INDEX.incrementAndGet();
            FjProbe.Buf b = new FjProbe.Buf(index, nAttach(index));
            all.add(b);
            local.set(b);
            Thread t = Thread.currentThread();
            if (t instanceof ForkJoinWorkerThread) {
                ForkJoinPool p = ((ForkJoinWorkerThread) t).getPool();
                long[] e = b.ev;
                e[0] = FjProbe.E_WORKER | (FjProbe.classId(p) << 8);
                e[1] = System.identityHashCode(p) & 0xFFFF_FFFFL;
                e[2] = p.getParallelism();
                b.n = 3;
            }
            return b;
        }

        /** The task's state ({@code usage << 2 | FORKED}; 0 when not known). */
        long get(Object o) {
            return table.get(o);
        }

        void put(Object o, long v) {
            Table t = table;
            if (!t.put(o, v)) {
                // Full (live entries and removed ones): a new table with the live entries
                // (best effort: one set or removed in the old table meanwhile is lost or
                // kept; a lost task's run is seen as a run without a fork).
                Table fresh = new Table(TABLE_SIZE);
                for (int i = 0; i <= t.mask; i++) {
                    Object k = t.keys.get(i);
                    if (k != null && k != Table.GONE) fresh.put(k, t.vals[i]);
                }
                fresh.put(o, v);
                table = fresh;
            }
        }
    }

    /** Slots of a side table (a power of two; 2^18: 3 MB, rebuilt when 3/4 are used). */
    private static final int TABLE_SIZE = 1 << 18;

    /**
     * An identity-keyed table, lock-free (a monitor or a j.u.c. lock here would show in
     * the program's own lock report): open addressing with linear probing, keys set by
     * CAS, a removed key becomes {@link #GONE} (its slot is not reused, so that a lookup
     * never stops short of a key further on). Values are written by the thread that set
     * the key, before the task is queued (its queue publishes them).
     */
    static final class Table {
        static final Object GONE = new Object();
        final AtomicReferenceArray<Object> keys;
        final long[] vals;
        final int mask;
        final AtomicInteger used = new AtomicInteger();
        final int limit;

        Table(int size) {
            keys = new AtomicReferenceArray<>(size);
            vals = new long[size];
            mask = size - 1;
            limit = size - (size >> 2);
        }

        private int slot(Object o) {
            int h = System.identityHashCode(o);
            return (h ^ (h >>> 16)) & mask;
        }

        long get(Object o) {
            int i = slot(o);
            for (int k = 0; k <= mask; k++, i = (i + 1) & mask) {
                Object x = keys.get(i);
                if (x == o) return vals[i];
                if (x == null) return 0;
            }
            return 0;
        }

        /** Sets the value of {@code o}, adding it if absent; false if the table is full. */
        boolean put(Object o, long v) {
            int i = slot(o);
            for (int k = 0; k <= mask; k++, i = (i + 1) & mask) {
                Object x = keys.get(i);
                if (x == o) {
                    vals[i] = v;
                    return true;
                }
                if (x == null) {
                    if (used.get() >= limit) return false;
                    if (keys.compareAndSet(i, null, o)) {
                        vals[i] = v;
                        used.incrementAndGet();
                        return true;
                    }
                    // Taken meanwhile: look at this slot again.
                    k--;
                    i = (i - 1) & mask;
                }
            }
            return false;
        }

        void remove(Object o) {
            int i = slot(o);
            for (int k = 0; k <= mask; k++, i = (i + 1) & mask) {
                Object x = keys.get(i);
                if (x == o) {
                    keys.set(i, GONE);
                    return;
                }
                if (x == null) return;
            }
        }
    }

    /** Starts a session's state (the agent, before the probes go on). */
    static void begin() {
        session = new Session();
    }

    /** Flushes every buffer of the session and drops its state (the agent, probes off). */
    static void end() {
        Session s = session;
        session = null;
        if (s == null) return;
        for (FjProbe.Buf b : s.all) {
            synchronized (b) {
                b.flush();
            }
        }
    }

    /** Flushes and forgets the ending thread's buffer (the agent, at ThreadEnd). */
    static void threadEnd() {
        Session s = session;
        if (s == null) return;
        Thread t = Thread.currentThread();
        for (FjProbe.Buf b : s.all) {
            if (b.owner == t) {
                // Flushed before it leaves the list (FjProbe.threadEnd says why).
                synchronized (b) {
                    b.dead = true;
                    b.flush();
                }
                s.all.remove(b);
                return;
            }
        }
    }

    private static Session on() {
        return Probe.on ? session : null;
    }

    /** Entry of {@code ForkJoinTask.fork()}. */
    public static void fork(Object o) {
        Session s = on();
        if (s == null) return;
        try {
            if (Probe.onCarrier()) return;
            FjProbe.Buf b = s.buf();
            long prev = s.get(o) >>> 2;
            long id = b.idBase | ++b.counter;
            s.put(o, (id << 2) | FjProbe.FORKED);
            long[] e = b.ev;
            int i = b.n;
            long h = FjProbe.E_PUSH | (b.cls(o) << 8);
            int k = i + 1;
            if (prev != 0) {
                h |= FjProbe.F_PREV;
                e[k++] = prev;
            }
            if (b.depth == 0) {
                h |= FjProbe.F_TS;
                e[k++] = b.lastTs = FjProbe.now();
            }
            e[i] = h;
            b.n = k;
            if (b.sites > 0) FjProbe.site(b, o, id);
            FjProbe.check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Entry of the pool's submission funnel. */
    public static void submit(Object pool, Object task) {
        Session s = on();
        if (s == null || !(task instanceof ForkJoinTask)) return;
        try {
            if (Probe.isVtScheduler(pool)) return;
            FjProbe.Buf b = s.buf();
            long prev = s.get(task) >>> 2;
            long id = b.idBase | ++b.counter;
            s.put(task, (id << 2) | FjProbe.FORKED);
            long ts = FjProbe.now();
            b.lastTs = ts;
            long[] e = b.ev;
            int i = b.n;
            e[i] = FjProbe.E_EXT | (b.cls(task) << 8);
            e[i + 1] = prev;
            e[i + 2] = ts;
            e[i + 3] = (System.identityHashCode(task) & 0xFFFF_FFFFL)
                    | ((long) System.identityHashCode(pool) << 32);
            b.n = i + 4;
            FjProbe.check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Entry of {@code doExec}: a run of a usage, or (usage 0: no fork seen) a run without one. */
    public static void exec(Object o) {
        Session s = on();
        if (s == null) return;
        try {
            if (Probe.onCarrier()) return;
            FjProbe.Buf b = s.buf();
            int d = b.rd++;
            boolean done = ((ForkJoinTask<?>) o).isDone();
            if (d < 64) {
                b.rb = done ? b.rb & ~(1L << d) : b.rb | (1L << d);
            } else {
                b.rbx = FjProbe.setDeep(b.rbx, d, !done);
            }
            if (done) return;
            long u = s.get(o);
            long usage = 0;
            if ((u & FjProbe.FORKED) != 0) {
                s.put(o, u & ~FjProbe.FORKED);
                usage = u >>> 2;
            }
            long ts = b.lastTs = FjProbe.now();
            long[] e = b.ev;
            int i = b.n;
            if (usage != 0) {
                e[i] = (ts << 4) | FjProbe.E_RUN;
                e[i + 1] = usage;
                b.n = i + 2;
            } else {
                e[i] = FjProbe.E_BEGIN | (b.cls(o) << 8);
                e[i + 1] = 0;
                e[i + 2] = ts;
                b.n = i + 3;
            }
            b.depth++;
            FjProbe.check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Exit of {@code doExec}. */
    public static void execEnd(Object o) {
        Session s = on();
        if (s == null) return;
        try {
            if (Probe.onCarrier()) return;
            FjProbe.Buf b = s.buf();
            if (b.rd == 0) return;
            int d = --b.rd;
            if (d < 64 ? (b.rb & (1L << d)) == 0 : !FjProbe.deep(b.rbx, d)) return;
            long ts = b.lastTs = FjProbe.now();
            int i = b.n;
            b.ev[i] = (ts << 4) | FjProbe.E_END;
            b.n = i + 1;
            if (b.depth > 0) b.depth--;
            // Done: nothing will join it (isDone first); not done (a completer waiting
            // for its children): a join may still come.
            if (((ForkJoinTask<?>) o).isDone()) s.table.remove(o);
            FjProbe.check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Exit of {@code cancel(boolean)}. */
    public static void cancelEnd(Object o) {
        Session s = on();
        if (s == null) return;
        try {
            long u = s.get(o);
            if ((u & FjProbe.FORKED) == 0 || !((ForkJoinTask<?>) o).isCancelled()) return;
            s.table.remove(o);
            FjProbe.event3(s.buf(), FjProbe.E_CANCEL, u >>> 2);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Entry of {@code reinitialize()}. */
    public static void reinit(Object o) {
        Session s = on();
        if (s == null) return;
        try {
            long u = s.get(o);
            if (u >>> 2 == 0) return;
            s.put(o, u & ~FjProbe.FORKED);
            FjProbe.event3(s.buf(), FjProbe.E_REINIT, u >>> 2);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Entry of {@code awaitDone} (or join/get/quietlyJoin): a wait if the task is not done. */
    public static void join(Object o) {
        Session s = on();
        if (s == null) return;
        try {
            FjProbe.Buf b = s.buf();
            int d = b.jd++;
            boolean done = ((ForkJoinTask<?>) o).isDone();
            if (d < 64) {
                b.jb = done ? b.jb & ~(1L << d) : b.jb | (1L << d);
            } else {
                b.jbx = FjProbe.setDeep(b.jbx, d, !done);
            }
            if (done) return;
            long ts = b.lastTs = FjProbe.now();
            long[] e = b.ev;
            int i = b.n;
            e[i] = (ts << 4) | FjProbe.E_JOIN;
            e[i + 1] = s.get(o) >>> 2;
            b.n = i + 2;
            FjProbe.check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Exit of {@code awaitDone} (or join/get/quietlyJoin). */
    public static void joinEnd(Object o) {
        Session s = on();
        if (s == null) return;
        try {
            FjProbe.Buf b = s.buf();
            if (b.jd == 0) return;
            int d = --b.jd;
            if (d < 64 ? (b.jb & (1L << d)) == 0 : !FjProbe.deep(b.jbx, d)) return;
            long ts = b.lastTs = FjProbe.now();
            int i = b.n;
            b.ev[i] = (ts << 4) | FjProbe.E_JOINE;
            b.n = i + 1;
            FjProbe.check(b);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    private static native long nAttach(int index);
}
