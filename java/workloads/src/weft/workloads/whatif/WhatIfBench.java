package weft.workloads.whatif;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.RecursiveTask;

/**
 * Validation workloads of the what-if estimates (docs/whatif.md, bench/whatif/).
 * Each case has a knob that makes the change real; all work is a deterministic CPU
 * loop, burn(units), folded into a printed checksum (the pool case's tasks may also
 * sleep first, an I/O-bound pool). Prints
 * {@code WEFT_TRUTH case=... window_ns=... checksum=...} for the timed phase.
 *
 * <pre>
 * java weft.workloads.whatif.WhatIfBench CASE [key=value]...
 *   lock      threads=4 iters=N inside=U outside=U lock=shared|none   (lock-bound or CPU-bound)
 *   inline    steps=N work=U between=U inline=false|true              (submit, then get at once)
 *   pool      tasks=N work=U pool=K sleep_us=0 wait=get|termination   (a pool smaller than the work;
 *                                                                     sleep_us: each task first waits,
 *                                                                     as for I/O; wait=termination:
 *                                                                     shutdown and awaitTermination)
 *   fj        units=N cutoff=C parallelism=2                          (size-based split, sum)
 *   pipeline  items=N w1=U w2=U w3=U cap=C threads=platform|virtual   (3 threads, 2 queues)
 *   imbalance big=U small=U smalls=N bigscale=1.0 smallscale=1.0 pool=2
 *   limit     tasks=N work=U sleep_us=S permits=P threads=virtual|platform pool=K
 *             (a task per virtual thread, or on a pool of K, each holding one of P
 *             permits of a Semaphore across its sleep and work: the concurrency limit
 *             virtual threads are told to use instead of a pool)
 * </pre>
 */
public final class WhatIfBench {
    static volatile long sink;

    /** Deterministic CPU work: xorshift iterations. */
    static long burn(long units) {
        long x = 0x9E3779B97F4A7C15L ^ units;
        for (long i = 0; i < units; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    /** The lock of the lock case: its class names it in `lock:...:remove`. */
    static final class SharedLock {
        long value;
    }

    /** One step of the inline case: submitted, then waited for at once. */
    static final class Step implements Callable<Long> {
        final long work;
        Step(long work) { this.work = work; }
        public Long call() { return burn(work); }
    }

    /** A task of the pool case. */
    static final class Chunk implements Callable<Long> {
        final long work;
        final long sleepUs;
        Chunk(long work, long sleepUs) { this.work = work; this.sleepUs = sleepUs; }
        public Long call() throws InterruptedException {
            if (sleepUs > 0) Thread.sleep(sleepUs / 1000, (int) (sleepUs % 1000) * 1000);
            return burn(work);
        }
    }

    /** The big tasks of the imbalance case. */
    static final class Big implements Callable<Long> {
        final long work;
        Big(long work) { this.work = work; }
        public Long call() { return burn(work); }
    }

    /** The small tasks of the imbalance case. */
    static final class Small implements Callable<Long> {
        final long work;
        Small(long work) { this.work = work; }
        public Long call() { return burn(work); }
    }

    /** Size-based binary split: leaves of at most `cutoff` units. */
    static final class Sum extends RecursiveTask<Long> {
        final long lo, hi, cutoff;
        Sum(long lo, long hi, long cutoff) { this.lo = lo; this.hi = hi; this.cutoff = cutoff; }
        protected Long compute() {
            if (hi - lo <= cutoff) {
                return burn(hi - lo);
            }
            long mid = (lo + hi) >>> 1;
            Sum left = new Sum(lo, mid, cutoff);
            Sum right = new Sum(mid, hi, cutoff);
            left.fork();
            long r = right.compute();
            return r ^ left.join();
        }
    }

    /** A pipeline stage thread: takes from `in` (or generates), burns, puts to `out`. */
    static class Stage extends Thread {
        final BlockingQueue<Long> in, out;
        final long items, work;
        long acc;
        Stage(String name, BlockingQueue<Long> in, BlockingQueue<Long> out, long items, long work) {
            super(name);
            this.in = in; this.out = out; this.items = items; this.work = work;
        }
        public void run() {
            try {
                for (long i = 0; i < items; i++) {
                    long v = in == null ? i : in.take();
                    v ^= burn(work);
                    if (out != null) out.put(v); else acc ^= v;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The stages have their own classes, so an edit can name one (`faster:...$Middle:50%`). */
    static final class First extends Stage {
        First(BlockingQueue<Long> in, BlockingQueue<Long> out, long items, long work) { super("stage-1", in, out, items, work); }
    }
    static final class Middle extends Stage {
        Middle(BlockingQueue<Long> in, BlockingQueue<Long> out, long items, long work) { super("stage-2", in, out, items, work); }
    }
    static final class Last extends Stage {
        Last(BlockingQueue<Long> in, BlockingQueue<Long> out, long items, long work) { super("stage-3", in, out, items, work); }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: WhatIfBench lock|inline|pool|fj|pipeline|imbalance|limit [key=value]...");
            System.exit(2);
        }
        String kase = args[0];
        java.util.Map<String, String> kv = new java.util.HashMap<>();
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq < 0) { System.err.println("bad argument " + args[i]); System.exit(2); }
            kv.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        long t0 = System.nanoTime();
        long checksum = timed(kase, kv);
        long t1 = System.nanoTime();
        System.out.println("WEFT_TRUTH case=" + kase + " window_ns=" + (t1 - t0) + " checksum=" + checksum);
    }

    /** The measured phase: `weft record --window weft.workloads.whatif.WhatIfBench.timed`. */
    static long timed(String kase, java.util.Map<String, String> kv) throws Exception {
        switch (kase) {
            case "lock": return lockCase(kv);
            case "inline": return inlineCase(kv);
            case "pool": return poolCase(kv);
            case "fj": return fjCase(kv);
            case "pipeline": return pipelineCase(kv);
            case "imbalance": return imbalanceCase(kv);
            case "limit": return limitCase(kv);
            default: System.err.println("unknown case " + kase); System.exit(2); return 0;
        }
    }

    static long num(java.util.Map<String, String> kv, String k, long def) {
        String v = kv.get(k);
        return v == null ? def : Long.parseLong(v);
    }

    static double dbl(java.util.Map<String, String> kv, String k, double def) {
        String v = kv.get(k);
        return v == null ? def : Double.parseDouble(v);
    }

    static long lockCase(java.util.Map<String, String> kv) throws Exception {
        int threads = (int) num(kv, "threads", 4);
        long iters = num(kv, "iters", 2000), inside = num(kv, "inside", 20000), outside = num(kv, "outside", 2000);
        boolean none = "none".equals(kv.get("lock"));
        SharedLock shared = new SharedLock();
        Thread[] ts = new Thread[threads];
        long[] acc = new long[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            // lock=none: a lock object per thread, same code path, no contention.
            final SharedLock lock = none ? new SharedLock() : shared;
            ts[t] = new Thread(() -> {
                long a = 0;
                for (long i = 0; i < iters; i++) {
                    a ^= burn(outside);
                    synchronized (lock) {
                        lock.value ^= burn(inside);
                    }
                }
                acc[id] = a ^ lock.value;
            }, "locker-" + t);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        long c = 0;
        for (long a : acc) c ^= a;
        return c;
    }

    static long inlineCase(java.util.Map<String, String> kv) throws Exception {
        long steps = num(kv, "steps", 3000), work = num(kv, "work", 20000), between = num(kv, "between", 20000);
        boolean inline = Boolean.parseBoolean(kv.getOrDefault("inline", "false"));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        long c = 0;
        for (long i = 0; i < steps; i++) {
            c ^= burn(between);
            Step s = new Step(work);
            c ^= inline ? s.call() : pool.submit(s).get();
        }
        pool.shutdown();
        return c;
    }

    static long poolCase(java.util.Map<String, String> kv) throws Exception {
        long tasks = num(kv, "tasks", 200), work = num(kv, "work", 2_000_000);
        long sleepUs = num(kv, "sleep_us", 0);
        // pool=virtual: a virtual thread per task (JDK 21+; reached by reflection, this
        // file compiles for 17).
        ExecutorService pool = "virtual".equals(kv.get("pool"))
            ? (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null)
            : Executors.newFixedThreadPool((int) num(kv, "pool", 1));
        List<Future<Long>> fs = new ArrayList<>();
        for (long i = 0; i < tasks; i++) fs.add(pool.submit(new Chunk(work, sleepUs)));
        long c = 0;
        if ("termination".equals(kv.get("wait"))) {
            // wait=termination: the common ending, shutdown() and awaitTermination (woken
            // by the last worker's exit, after its last task) instead of a get per task.
            pool.shutdown();
            pool.awaitTermination(1, java.util.concurrent.TimeUnit.HOURS);
            for (Future<Long> f : fs) c ^= f.get();
            return c;
        }
        for (Future<Long> f : fs) c ^= f.get();
        pool.shutdown();
        return c;
    }

    static long fjCase(java.util.Map<String, String> kv) throws Exception {
        long units = num(kv, "units", 400_000_000L), cutoff = num(kv, "cutoff", 100_000_000L);
        int par = (int) num(kv, "parallelism", 2);
        ForkJoinPool pool = new ForkJoinPool(par);
        long c = pool.invoke(new Sum(0, units, cutoff));
        pool.shutdown();
        return c;
    }

    static long pipelineCase(java.util.Map<String, String> kv) throws Exception {
        long items = num(kv, "items", 20000);
        long w1 = num(kv, "w1", 20000), w2 = num(kv, "w2", 40000), w3 = num(kv, "w3", 20000);
        int cap = (int) num(kv, "cap", 64);
        BlockingQueue<Long> q1 = new ArrayBlockingQueue<>(cap), q2 = new ArrayBlockingQueue<>(cap);
        Stage s1 = new First(null, q1, items, w1);
        Stage s2 = new Middle(q1, q2, items, w2);
        Stage s3 = new Last(q2, null, items, w3);
        if ("virtual".equals(kv.get("threads"))) {
            // threads=virtual: each stage runs on a virtual thread of its own (JDK 21+,
            // reached by reflection: this file compiles for 17); their queue hand-offs
            // unpark virtual threads.
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            java.lang.reflect.Method start =
                Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
            Thread v1 = (Thread) start.invoke(builder, s1);
            Thread v2 = (Thread) start.invoke(builder, s2);
            Thread v3 = (Thread) start.invoke(builder, s3);
            v1.join(); v2.join(); v3.join();
            return s3.acc;
        }
        s1.start(); s2.start(); s3.start();
        s1.join(); s2.join(); s3.join();
        return s3.acc;
    }

    /** A task of the limit case: one of the semaphore's permits across its sleep and work. */
    static final class Limited implements Callable<Long> {
        final java.util.concurrent.Semaphore permits;
        final long work, sleepUs;
        Limited(java.util.concurrent.Semaphore permits, long work, long sleepUs) {
            this.permits = permits; this.work = work; this.sleepUs = sleepUs;
        }
        public Long call() throws InterruptedException {
            permits.acquire();
            try {
                if (sleepUs > 0) Thread.sleep(sleepUs / 1000, (int) (sleepUs % 1000) * 1000);
                return burn(work);
            } finally {
                permits.release();
            }
        }
    }

    static long limitCase(java.util.Map<String, String> kv) throws Exception {
        long tasks = num(kv, "tasks", 2000), work = num(kv, "work", 20000);
        long sleepUs = num(kv, "sleep_us", 1000);
        java.util.concurrent.Semaphore permits =
            new java.util.concurrent.Semaphore((int) num(kv, "permits", 2));
        ExecutorService pool = "platform".equals(kv.get("threads"))
            ? Executors.newFixedThreadPool((int) num(kv, "pool", 8))
            : (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        List<Future<Long>> fs = new ArrayList<>();
        for (long i = 0; i < tasks; i++) fs.add(pool.submit(new Limited(permits, work, sleepUs)));
        long c = 0;
        for (Future<Long> f : fs) c ^= f.get();
        pool.shutdown();
        return c;
    }

    static long imbalanceCase(java.util.Map<String, String> kv) throws Exception {
        long big = num(kv, "big", 400_000_000L), small = num(kv, "small", 20_000_000L);
        long smalls = num(kv, "smalls", 10);
        double bigScale = dbl(kv, "bigscale", 1.0), smallScale = dbl(kv, "smallscale", 1.0);
        int k = (int) num(kv, "pool", 2);
        ExecutorService pool = Executors.newFixedThreadPool(k);
        List<Future<Long>> fs = new ArrayList<>();
        fs.add(pool.submit(new Big((long) (big * bigScale))));
        for (long i = 0; i < smalls; i++) fs.add(pool.submit(new Small((long) (small * smallScale))));
        long c = 0;
        for (Future<Long> f : fs) c ^= f.get();
        pool.shutdown();
        return c;
    }
}
