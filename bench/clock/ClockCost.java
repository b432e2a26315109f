/**
 * What a clock read costs inside a task, in two kinds of task: one that misses the
 * cache (16 strided loads in a 64 MB array) and one that does not (the same loads in
 * 16 KB). System.nanoTime (vDSO clock_gettime: an ordered TSC read) waits for the
 * loads in flight, so in the first kind it costs the overlap it takes away. With a
 * library argument (clock_jni.c, built by run.sh), also a JNI call to a plain rdtsc:
 * how weft.FjProbe reads the agent's clock when that is the TSC.
 * Usage: java ClockCost.java [path/to/libclock_jni.so]   (bench/clock/run.sh)
 */
public final class ClockCost {
    static long sink;

    /** A plain rdtsc (clock_jni.c). */
    static native long rdtsc();

    /**
     * ns per task of `tasks` tasks of 16 loads over the first `span` ints of `a`, and
     * `clocks` clock reads per task: System.nanoTime, or rdtsc through JNI if `jni`.
     */
    static double perTask(int[] a, int span, int step, int clocks, boolean jni, int tasks) {
        long t0 = System.nanoTime();
        long s = 0, ts = 0;
        int idx = 0;
        for (int k = 0; k < tasks; k++) {
            for (int j = 0; j < 16; j++) {
                idx += step;
                if (idx >= span) idx -= span;
                s += a[idx];
            }
            for (int c = 0; c < clocks; c++) ts += jni ? rdtsc() : System.nanoTime();
        }
        sink += s + ts;
        return (System.nanoTime() - t0) / (double) tasks;
    }

    public static void main(String[] args) {
        boolean jni = args.length > 0;
        if (jni) System.load(args[0]);
        int n = 1 << 24;
        int[] a = new int[n];
        for (int i = 0; i < n; i++) a[i] = i * 7;
        String[] kinds = {"cache-missing (64 MB, stride 16 KB)", "cache-resident (16 KB)"};
        int[][] shape = {{n, 4099}, {4096, 17}};
        for (int kind = 0; kind < 2; kind++) {
            // best[clocks][0: nanoTime, 1: JNI rdtsc]
            double[][] best = new double[3][2];
            for (double[] b : best) java.util.Arrays.fill(b, Double.MAX_VALUE);
            for (int rep = 0; rep < 5; rep++) {
                for (int clocks = 0; clocks < 3; clocks++) {
                    for (int how = 0; how < (jni && clocks > 0 ? 2 : 1); how++) {
                        double t = perTask(a, shape[kind][0], shape[kind][1], clocks, how == 1,
                                2_000_000);
                        if (rep >= 1) best[clocks][how] = Math.min(best[clocks][how], t);
                    }
                }
            }
            System.out.printf("%s: %.1f ns/task; +%.1f ns with 1 nanoTime, +%.1f ns with 2%n",
                    kinds[kind], best[0][0], best[1][0] - best[0][0], best[2][0] - best[0][0]);
            if (jni) {
                System.out.printf("%s: +%.1f ns with 1 JNI rdtsc, +%.1f ns with 2%n",
                        kinds[kind], best[1][1] - best[0][0], best[2][1] - best[0][0]);
            }
        }
        if (sink == 42) System.out.println();
    }
}
