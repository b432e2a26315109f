/**
 * What a System.nanoTime() call costs inside a task, in two kinds of task: one that
 * misses the cache (16 strided loads in a 64 MB array) and one that does not (the same
 * loads in 16 KB). The clock read (vDSO clock_gettime: lfence + rdtsc) waits for the
 * loads in flight, so in the first kind it costs the overlap it takes away.
 * Usage: java ClockCost.java   (bench/clock/run.sh runs it with clock_cost.c)
 */
public final class ClockCost {
    static long sink;

    /** ns per task of `tasks` tasks of 16 loads over the first `span` ints of `a`. */
    static double perTask(int[] a, int span, int step, int clocks, int tasks) {
        long t0 = System.nanoTime();
        long s = 0, ts = 0;
        int idx = 0;
        for (int k = 0; k < tasks; k++) {
            for (int j = 0; j < 16; j++) {
                idx += step;
                if (idx >= span) idx -= span;
                s += a[idx];
            }
            for (int c = 0; c < clocks; c++) ts += System.nanoTime();
        }
        sink += s + ts;
        return (System.nanoTime() - t0) / (double) tasks;
    }

    public static void main(String[] args) {
        int n = 1 << 24;
        int[] a = new int[n];
        for (int i = 0; i < n; i++) a[i] = i * 7;
        String[] kinds = {"cache-missing (64 MB, stride 16 KB)", "cache-resident (16 KB)"};
        int[][] shape = {{n, 4099}, {4096, 17}};
        for (int kind = 0; kind < 2; kind++) {
            double[][] best = new double[3][1];
            for (double[] b : best) b[0] = Double.MAX_VALUE;
            for (int rep = 0; rep < 5; rep++) {
                for (int clocks = 0; clocks < 3; clocks++) {
                    double t = perTask(a, shape[kind][0], shape[kind][1], clocks, 2_000_000);
                    if (rep >= 1) best[clocks][0] = Math.min(best[clocks][0], t);
                }
            }
            System.out.printf("%s: %.1f ns/task; +%.1f ns with 1 nanoTime, +%.1f ns with 2%n",
                    kinds[kind], best[0][0], best[1][0] - best[0][0], best[2][0] - best[0][0]);
        }
        if (sink == 42) System.out.println();
    }
}
