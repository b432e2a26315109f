package weft.sampling;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Known CPU splits between three methods, for the sampling engine's accuracy
 * tests (docs/sampling.md). Two worker threads call alpha, beta and gamma with
 * work in the ratio 60/30/10; each call's CPU time is measured with the thread's
 * own CPU clock, and the totals are printed as the truth:
 * {@code SPLITS-TRUTH alpha=<ns> beta=<ns> gamma=<ns>}.
 *
 * <p>Modes: {@code steady} (fixed amounts of arithmetic) and {@code periodic}
 * (fixed 20 ms rounds of wall time, 12/6/2 ms: a fixed 10 ms sampling period
 * aliases with it). A third thread, {@code sleeper}, sleeps in {@code nap} the
 * whole time: absent from CPU samples, present in wall samples.
 */
public final class Splits {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final long[] CPU = new long[3];
    private static volatile long sink;

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "steady";
        long millis = args.length > 1 ? Long.parseLong(args[1]) : 2000;
        long deadline = System.nanoTime() + millis * 1_000_000L;
        Thread sleeper = new Thread(() -> nap(deadline), "sleeper");
        sleeper.setDaemon(true);
        sleeper.start();
        Thread[] workers = new Thread[2];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Thread(() -> work(mode, deadline), "worker-" + i);
            workers[i].start();
        }
        for (Thread t : workers) {
            t.join();
        }
        sleeper.join();
        synchronized (CPU) {
            System.out.println("SPLITS-TRUTH alpha=" + CPU[0] + " beta=" + CPU[1] + " gamma=" + CPU[2]);
        }
    }

    /** Sleeps until the deadline (in one sleep: a sleeping thread uses no CPU). */
    static void nap(long deadline) {
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            try {
                Thread.sleep(left / 1_000_000L + 1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static void work(String mode, long deadline) {
        long[] mine = new long[3];
        boolean periodic = mode.equals("periodic");
        while (System.nanoTime() < deadline) {
            long t0 = MX.getCurrentThreadCpuTime();
            if (periodic) {
                alphaFor(12_000_000L);
            } else {
                alpha(600_000);
            }
            long t1 = MX.getCurrentThreadCpuTime();
            if (periodic) {
                betaFor(6_000_000L);
            } else {
                beta(300_000);
            }
            long t2 = MX.getCurrentThreadCpuTime();
            if (periodic) {
                gammaFor(2_000_000L);
            } else {
                gamma(100_000);
            }
            long t3 = MX.getCurrentThreadCpuTime();
            mine[0] += t1 - t0;
            mine[1] += t2 - t1;
            mine[2] += t3 - t2;
        }
        synchronized (CPU) {
            for (int i = 0; i < 3; i++) {
                CPU[i] += mine[i];
            }
        }
    }

    static long spin(long n) {
        long x = n;
        for (long i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    static void alpha(long n) {
        sink += spin(n);
    }

    static void beta(long n) {
        sink += spin(n);
    }

    static void gamma(long n) {
        sink += spin(n);
    }

    /** Spins in slices of ~50 µs until {@code ns} of wall time passed. */
    static void alphaFor(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end) {
            sink += spin(20_000);
        }
    }

    static void betaFor(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end) {
            sink += spin(20_000);
        }
    }

    static void gammaFor(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end) {
            sink += spin(20_000);
        }
    }
}
