package weft.workloads.locks;

/** Known amounts of work. */
final class Work {
    private Work() {}

    /** Busy-waits until {@code ns} nanoseconds of wall time have passed. */
    static void spin(long ns) {
        if (ns <= 0) return;
        long end = System.nanoTime() + ns;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    /** Busy-waits until the absolute nanoTime {@code deadline}. */
    static void spinUntil(long deadline) {
        while (System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
    }

    /** {@code n} LCG steps from {@code x}: a fixed amount of CPU work, independent of the clock. */
    static long lcg(long x, int n) {
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    /** Nanoseconds per LCG step, roughly (for the record only). */
    static double lcgNsPerStep() {
        long x = 1;
        for (int i = 0; i < 20; i++) x = lcg(x, 100_000); // warm up
        long t = System.nanoTime();
        x = lcg(x, 5_000_000);
        long d = System.nanoTime() - t;
        sink ^= x;
        return d / 5_000_000.0;
    }

    static volatile long sink;
}
