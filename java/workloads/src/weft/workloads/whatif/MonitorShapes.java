package weft.workloads.whatif;

import java.util.ArrayList;
import java.util.List;

/**
 * What `weft record --lock-detail` rewrites (every monitorenter/monitorexit and synchronized
 * method of application classes) must not change: each shape prints what the program sees, and
 * crates/cli/tests/whatif.rs compares the output with and without the agent (under -Xverify:all).
 */
public final class MonitorShapes {
    private static final Object LOCK = new Object();
    private static int statics;
    private final List<String> log = new ArrayList<>();
    private int depth;

    /** Recursion through a synchronized method (re-entry of the same monitor). */
    synchronized int factorial(int n) {
        depth = Math.max(depth, n);
        return n <= 1 ? 1 : n * factorial(n - 1);
    }

    static synchronized int bumpStatic() {
        return ++statics;
    }

    /** An exception out of a synchronized method releases its monitor. */
    synchronized void fail(String why) {
        log.add("fail " + why);
        throw new IllegalArgumentException(why);
    }

    /** An exception out of a synchronized block, caught in the same method. */
    static String catchInside(int i) {
        try {
            synchronized (LOCK) {
                if (i % 2 == 0) throw new ArithmeticException("even " + i);
                return "odd " + i;
            }
        } catch (ArithmeticException e) {
            return e.getMessage() + " held=" + Thread.holdsLock(LOCK);
        } finally {
            statics += 0;
        }
    }

    /** Loops leaving a block by continue, break and return; a nested re-entry; a switch. */
    static long loops(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            synchronized (LOCK) {
                if (i % 5 == 1) continue;
                if (i == n - 2) break;
                synchronized (LOCK) {
                    switch (i % 3) {
                        case 0: s += i; break;
                        case 1: s -= i; break;
                        default: s ^= i;
                    }
                }
                if (s > 1_000_000) return s;
            }
        }
        return s;
    }

    /** wait/notify inside monitors: a bounded buffer of one slot between two threads. */
    static long handOff(int items) throws InterruptedException {
        final long[] slot = {0};
        final boolean[] full = {false};
        final long[] sum = {0};
        Thread consumer = new Thread(() -> {
            for (int i = 0; i < items; i++) {
                synchronized (slot) {
                    while (!full[0]) {
                        try {
                            slot.wait();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    sum[0] += slot[0];
                    full[0] = false;
                    slot.notifyAll();
                }
            }
        }, "consumer");
        consumer.start();
        for (int i = 1; i <= items; i++) {
            synchronized (slot) {
                while (full[0]) slot.wait();
                slot[0] = i;
                full[0] = true;
                slot.notifyAll();
            }
        }
        consumer.join();
        return sum[0];
    }

    /** Contention: threads incrementing under one monitor. */
    static long contended(int threads, int iters) throws InterruptedException {
        final long[] c = {0};
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < iters; i++) {
                    synchronized (c) {
                        c[0]++;
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        return c[0];
    }

    public static void main(String[] args) throws Exception {
        MonitorShapes m = new MonitorShapes();
        System.out.println("factorial=" + m.factorial(10) + " depth=" + m.depth);
        for (int i = 0; i < 3; i++) bumpStatic();
        System.out.println("statics=" + statics);
        try {
            m.fail("bad");
        } catch (IllegalArgumentException e) {
            System.out.println("caught=" + e.getMessage() + " held=" + Thread.holdsLock(m) + " log=" + m.log);
            StackTraceElement top = e.getStackTrace()[0];
            System.out.println("top=" + top.getClassName() + "." + top.getMethodName());
        }
        for (int i = 0; i < 4; i++) System.out.println("catch=" + catchInside(i));
        System.out.println("loops=" + loops(40));
        System.out.println("handOff=" + handOff(200));
        System.out.println("contended=" + contended(4, 20000));
        System.out.println("free=" + !Thread.holdsLock(LOCK));
        // A synchronized method that never returns normally, uncaught: the JVM's own output.
        if (args.length > 0) m.fail("uncaught");
    }
}
