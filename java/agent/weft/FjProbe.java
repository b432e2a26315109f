package weft;

import java.util.ArrayList;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.ForkJoinWorkerThread;

/**
 * The fork-join hot path (docs/forkjoin.md). Wrappers the agent adds to
 * {@code ForkJoinTask.fork/doExec/cancel/reinitialize/join/get/quietlyJoin} and to
 * the pool's submission funnel call {@link Probe#enter}/{@link Probe#exit}, which
 * dispatch here. Events go into a per-thread {@code long[]} (no JNI, no
 * allocation, no atomics) that is handed to the agent in batches.
 *
 * <p>Per-object state lives in a field the agent adds to ForkJoinTask at load,
 * {@code public transient long weft$u}: {@code usage << 2 | RUNNING | FORKED}.
 * A worker thread's buffer lives in {@code ForkJoinWorkerThread.weft$b}, other
 * threads' in a ThreadLocal.
 */
public final class FjProbe {
    // Sub-kinds (bits 20..23 of a fork-join probe id).
    static final int FORK = 1;
    static final int EXEC = 2;
    static final int CANCEL = 3;
    static final int REINIT = 4;
    static final int JOIN = 5;
    static final int SUBMIT = 6;

    // Event kinds in the buffer (low 8 bits of an event's first long).
    static final int E_PUSH = 1;   // [k | cls<<8, usage, prev, ts]
    static final int E_EXT = 2;    // [k | cls<<8, usage, prev, ts, ident | pool<<32]
    static final int E_BEGIN = 3;  // [k | cls<<8, usage, ts]
    static final int E_END = 4;    // [k, ts]
    static final int E_CANCEL = 5; // [k, usage, ts]
    static final int E_REINIT = 6; // [k, usage, ts]
    static final int E_JOINB = 7;  // [k, usage, ts]
    static final int E_JOINE = 8;  // [k, ts]
    static final int E_SITE = 9;   // [k | site<<8, usage]
    static final int E_WORKER = 10; // [k | cls<<8, pool, parallelism]

    private static final long FORKED = 1;
    private static final long RUNNING = 2;

    static final int SIZE = 8192;
    static final int MODE = Integer.getInteger("weft.fjmode", 0);

    /** Whether the agent added the fields (checked once, after VMInit). */
    private static final class H {
        static final boolean OK;
        static {
            boolean ok;
            try {
                ok = ForkJoinTask.class.getField("weft$u").getType() == long.class
                        && ForkJoinWorkerThread.class.getField("weft$b").getType() == Object.class;
            } catch (Throwable t) {
                ok = false;
            }
            OK = ok;
        }
    }

    private static final ThreadLocal<Buf> TL = new ThreadLocal<>();
    private static final ArrayList<Buf> ALL = new ArrayList<>();
    private static int nextIndex;

    /** One thread's event buffer. */
    static final class Buf {
        final long[] ev = new long[SIZE];
        int n;
        final long idBase;
        long counter;
        long lastTs;
        Class<?> lastCls;
        long lastClsId;
        int sites = 32;
        int forks;
        // Which open doExec/join frames emitted a begin (1) or not (0).
        byte[] st = new byte[64];
        int sp;
        final long handle;
        final Thread owner = Thread.currentThread();
        boolean dead;

        Buf(int index, long handle) {
            this.idBase = ((long) index) << 40;
            this.handle = handle;
        }

        long cls(Object o) {
            Class<?> c = o.getClass();
            if (c == lastCls) return lastClsId;
            long id = Probe.classIdOf(o) & 0xFFFF_FFFFL;
            lastCls = c;
            lastClsId = id;
            return id;
        }

        void push(int v) {
            if (sp == st.length) st = java.util.Arrays.copyOf(st, sp * 2);
            st[sp++] = (byte) v;
        }

        int pop() {
            return sp > 0 ? st[--sp] : 0;
        }

        void flush() {
            if (n > 0) {
                int k = n;
                n = 0;
                nFlush(handle, ev, k);
            }
        }
    }

    private FjProbe() {}

    private static long now() {
        return MODE == 2 ? 1 : System.nanoTime();
    }

    private static Buf buf() {
        Thread t = Thread.currentThread();
        if (t instanceof ForkJoinWorkerThread) {
            Buf b = (Buf) ((FjStubWorker) (Object) t).weft$b;
            if (b == null) b = newBuf((ForkJoinWorkerThread) t);
            return b;
        }
        Buf b = TL.get();
        if (b == null) b = newBuf(null);
        return b;
    }

    private static Buf newBuf(ForkJoinWorkerThread w) {
        int index;
        synchronized (ALL) {
            index = ++nextIndex;
        }
        Buf b = new Buf(index, nAttach());
        synchronized (ALL) {
            ALL.add(b);
        }
        if (w != null) {
            ((FjStubWorker) (Object) w).weft$b = b;
            ForkJoinPool p = w.getPool();
            long[] e = b.ev;
            e[0] = E_WORKER | (b.cls(p) << 8);
            e[1] = System.identityHashCode(p) & 0xFFFF_FFFFL;
            e[2] = p.getParallelism();
            b.n = 3;
        } else {
            TL.set(b);
        }
        return b;
    }

    static void enter(int probe, Object self, Object arg) {
        if (MODE == 1) return;
        if (!H.OK) return;
        switch ((probe >>> 20) & 0xF) {
            case FORK: fork((ForkJoinTask<?>) self); break;
            case EXEC: execBegin((ForkJoinTask<?>) self); break;
            case REINIT: reinit((ForkJoinTask<?>) self); break;
            case JOIN: joinBegin((ForkJoinTask<?>) self); break;
            case SUBMIT:
                if (arg instanceof ForkJoinTask) submit(self, (ForkJoinTask<?>) arg);
                break;
            default: break;
        }
    }

    static void exit(int probe, Object self) {
        if (MODE == 1) return;
        if (!H.OK) return;
        switch ((probe >>> 20) & 0xF) {
            case EXEC: execEnd(); break;
            case CANCEL: cancelled((ForkJoinTask<?>) self); break;
            case JOIN: joinEnd(); break;
            default: break;
        }
    }

    private static void fork(ForkJoinTask<?> t) {
        Buf b = buf();
        long u = ((FjStubTask) (Object) t).weft$u;
        long id = b.idBase | ++b.counter;
        ((FjStubTask) (Object) t).weft$u = (id << 2) | FORKED;
        long[] e = b.ev;
        int i = b.n;
        e[i] = E_PUSH | (b.cls(t) << 8);
        e[i + 1] = id;
        e[i + 2] = u >>> 2;
        e[i + 3] = b.sp > 0 ? b.lastTs : (b.lastTs = now());
        b.n = i + 4;
        if (b.sites > 0 || (++b.forks & 0xFFFF) == 0) {
            if (b.sites > 0) b.sites--;
            int site = nSite(t, (int) b.cls(t));
            if (site != 0) {
                i = b.n;
                e[i] = E_SITE | ((site & 0xFFFF_FFFFL) << 8);
                e[i + 1] = id;
                b.n = i + 2;
            }
        }
        if (b.n > SIZE - 16) b.flush();
    }

    private static void submit(Object pool, ForkJoinTask<?> t) {
        Buf b = buf();
        long u = ((FjStubTask) (Object) t).weft$u;
        long id = b.idBase | ++b.counter;
        ((FjStubTask) (Object) t).weft$u = (id << 2) | FORKED;
        long ts = now();
        b.lastTs = ts;
        long[] e = b.ev;
        int i = b.n;
        e[i] = E_EXT | (b.cls(t) << 8);
        e[i + 1] = id;
        e[i + 2] = u >>> 2;
        e[i + 3] = ts;
        e[i + 4] = (System.identityHashCode(t) & 0xFFFF_FFFFL)
                | ((long) System.identityHashCode(pool) << 32);
        b.n = i + 5;
        if (b.n > SIZE - 16) b.flush();
    }

    private static void execBegin(ForkJoinTask<?> t) {
        Buf b = buf();
        if (t.isDone()) {
            b.push(0);
            return;
        }
        long u = ((FjStubTask) (Object) t).weft$u;
        long usage = 0;
        if ((u & FORKED) != 0) {
            usage = u >>> 2;
            ((FjStubTask) (Object) t).weft$u = (usage << 2) | RUNNING;
        }
        long ts = now();
        b.lastTs = ts;
        long[] e = b.ev;
        int i = b.n;
        e[i] = E_BEGIN | (b.cls(t) << 8);
        e[i + 1] = usage;
        e[i + 2] = ts;
        b.n = i + 3;
        b.push(1);
    }

    private static void execEnd() {
        Buf b = buf();
        if (b.pop() == 0) return;
        long ts = now();
        b.lastTs = ts;
        long[] e = b.ev;
        int i = b.n;
        e[i] = E_END;
        e[i + 1] = ts;
        b.n = i + 2;
        if (b.n > SIZE - 16) b.flush();
    }

    private static void cancelled(ForkJoinTask<?> t) {
        long u = ((FjStubTask) (Object) t).weft$u;
        if ((u & FORKED) == 0 || !t.isCancelled()) return;
        ((FjStubTask) (Object) t).weft$u = u & ~FORKED;
        Buf b = buf();
        long ts = now();
        b.lastTs = ts;
        long[] e = b.ev;
        int i = b.n;
        e[i] = E_CANCEL;
        e[i + 1] = u >>> 2;
        e[i + 2] = ts;
        b.n = i + 3;
        if (b.n > SIZE - 16) b.flush();
    }

    private static void reinit(ForkJoinTask<?> t) {
        long u = ((FjStubTask) (Object) t).weft$u;
        ((FjStubTask) (Object) t).weft$u = u & ~(FORKED | RUNNING);
        Buf b = buf();
        long ts = now();
        b.lastTs = ts;
        long[] e = b.ev;
        int i = b.n;
        e[i] = E_REINIT;
        e[i + 1] = u >>> 2;
        e[i + 2] = ts;
        b.n = i + 3;
        if (b.n > SIZE - 16) b.flush();
    }

    private static void joinBegin(ForkJoinTask<?> t) {
        Buf b = buf();
        if (t.isDone()) {
            b.push(0);
            return;
        }
        long ts = now();
        b.lastTs = ts;
        long[] e = b.ev;
        int i = b.n;
        e[i] = E_JOINB;
        e[i + 1] = ((FjStubTask) (Object) t).weft$u >>> 2;
        e[i + 2] = ts;
        b.n = i + 3;
        b.push(1);
    }

    private static void joinEnd() {
        Buf b = buf();
        if (b.pop() == 0) return;
        long ts = now();
        b.lastTs = ts;
        long[] e = b.ev;
        int i = b.n;
        e[i] = E_JOINE;
        e[i + 1] = ts;
        b.n = i + 2;
        if (b.n > SIZE - 16) b.flush();
    }

    /** Flushes the current thread's buffer and forgets it (called by the agent at ThreadEnd). */
    static void threadEnd() {
        // Thread.exit() has already cleared the thread's ThreadLocals: find it by owner.
        Thread t = Thread.currentThread();
        Buf b = null;
        synchronized (ALL) {
            for (int i = 0; i < ALL.size(); i++) {
                if (ALL.get(i).owner == t) {
                    b = ALL.remove(i);
                    break;
                }
            }
        }
        if (b == null) return;
        synchronized (b) {
            b.dead = true;
            b.flush();
        }
    }

    /** Flushes every thread's buffer (called by the agent at VMDeath, probes off). */
    static void flushAll() {
        Buf[] bufs;
        synchronized (ALL) {
            bufs = ALL.toArray(new Buf[0]);
        }
        for (Buf b : bufs) {
            synchronized (b) {
                b.flush();
            }
        }
    }

    private static native long nAttach();

    private static native void nFlush(long handle, long[] ev, int n);

    private static native int nSite(Object task, int cls);
}
