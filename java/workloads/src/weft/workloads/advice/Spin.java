package weft.workloads.advice;

/** CPU work of a known length for the advice workloads. */
final class Spin {
    private Spin() {}

    /** Spins for {@code ns} nanoseconds; returns the iteration count (to keep the loop). */
    static long spin(long ns) {
        long t = System.nanoTime();
        long x = 0;
        while (System.nanoTime() - t < ns) {
            x++;
        }
        return x;
    }
}
