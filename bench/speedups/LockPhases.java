import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where a contended lock's time goes (docs/speedups.md §Lock hand-offs): the
 * ContendedLock loop (2 threads, 1000 iterations, burn 100 units outside and 400
 * inside one ReentrantLock) with a nanoTime stamp around each phase. Prints per
 * phase the 10th and 50th percentile over the iterations (robust to preemption on
 * a loaded machine) and the threads' mean active and blocked time per iteration.
 * Compare {@code lock} with {@code none} (the same work, no lock): the unlock's
 * median is the release's hand-off (the unpark of the parked waiter).
 *
 * <pre>javac -d /tmp/lp bench/speedups/LockPhases.java && java -cp /tmp/lp LockPhases lock|none</pre>
 */
public class LockPhases {
    static volatile long sink;
    static final int ITERS = 1000;
    static final String[] PHASES = {"outside", "lock", "cs", "unlock", "next"};

    /** The workloads' burn: units × 1000 steps of a 64-bit LCG. */
    static void burn(long units) {
        long x = units | 1;
        for (long i = 0; i < units * 1000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        sink += x;
    }

    public static void main(String[] args) throws Exception {
        boolean locked = !(args.length > 0 && args[0].equals("none"));
        ReentrantLock lock = new ReentrantLock();
        // stamps[thread][iteration]: before outside, before lock, after lock, before unlock, after unlock
        long[][][] stamps = new long[2][ITERS][5];
        Thread[] threads = new Thread[2];
        long start = System.nanoTime();
        for (int t = 0; t < 2; t++) {
            long[][] mine = stamps[t];
            threads[t] = new Thread(() -> {
                for (long[] s : mine) {
                    s[0] = System.nanoTime();
                    burn(100);
                    s[1] = System.nanoTime();
                    if (locked) {
                        lock.lock();
                        try {
                            s[2] = System.nanoTime();
                            burn(400);
                            s[3] = System.nanoTime();
                        } finally {
                            lock.unlock();
                        }
                    } else {
                        s[2] = System.nanoTime();
                        burn(400);
                        s[3] = System.nanoTime();
                    }
                    s[4] = System.nanoTime();
                }
            }, "worker-" + t);
        }
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join();
        StringBuilder out = new StringBuilder((locked ? "lock" : "none") + " elapsed "
                + (System.nanoTime() - start) / 1_000_000 + " ms;");
        for (int p = 0; p < PHASES.length; p++) {
            long[] d = new long[2 * (ITERS - 1)];
            int k = 0;
            for (long[][] mine : stamps) {
                for (int i = 0; i < ITERS - 1; i++) {
                    d[k++] = p < 4 ? mine[i][p + 1] - mine[i][p] : mine[i + 1][0] - mine[i][4];
                }
            }
            Arrays.sort(d);
            out.append(String.format(" %s p10 %.1f p50 %.1f us;", PHASES[p], d[d.length / 10] / 1e3,
                    d[d.length / 2] / 1e3));
        }
        long active = 0, blocked = 0;
        for (long[][] mine : stamps) {
            for (int i = 0; i < ITERS; i++) {
                long b = mine[i][2] - mine[i][1];
                blocked += b;
                active += mine[i][4] - mine[i][0] - b;
                if (i + 1 < ITERS) active += mine[i + 1][0] - mine[i][4];
            }
        }
        out.append(String.format(" mean active %.1f blocked %.1f us, E_LC %.3f", active / 2e3 / ITERS,
                blocked / 2e3 / ITERS, active / (double) (active + blocked)));
        System.out.println(out);
    }
}
