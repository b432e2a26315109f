package weft.workloads.fj;

import java.util.SplittableRandom;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

/**
 * pi (Aeminium): Monte Carlo estimate of pi over {@code samples} points. A
 * range larger than {@code cutoff} samples forks its left half, computes its
 * right half directly and joins the left. A leaf draws its points from a
 * {@code SplittableRandom} seeded by its first sample index, so the hit count
 * (the result) is exact and independent of scheduling.
 *
 * <p>Truth: forks counted in the tasks (= leaves - 1); tasks = forks + 1; one
 * computation; result = number of hits (pi ~ 4 * hits / samples).
 *
 * <p>Args: [samples=40000000] [cutoff=2500] [parallelism=#cpus]
 */
public final class Pi {
    static long cutoff;

    static final class Count extends RecursiveTask<Long> {
        private static final long serialVersionUID = 1L;
        final long lo, hi;
        long forks, leaves;

        Count(long lo, long hi) { this.lo = lo; this.hi = hi; }

        @Override
        protected Long compute() {
            if (hi - lo <= cutoff) {
                leaves = 1;
                SplittableRandom rnd = new SplittableRandom(0x9E3779B97F4A7C15L ^ lo);
                long hits = 0;
                for (long i = lo; i < hi; i++) {
                    double x = rnd.nextDouble(), y = rnd.nextDouble();
                    if (x * x + y * y <= 1.0) hits++;
                }
                return hits;
            }
            long mid = (lo + hi) >>> 1;
            Count left = new Count(lo, mid);
            left.fork();
            forks++;
            Count right = new Count(mid, hi);
            long r = right.compute();
            long l = left.join();
            forks += left.forks + right.forks;
            leaves = left.leaves + right.leaves;
            return l + r;
        }
    }

    public static void main(String[] args) throws Exception {
        long samples = FjTruth.arg(args, 0, 40_000_000L);
        cutoff = FjTruth.arg(args, 1, 2500);
        int p = FjTruth.parallelism(args, 2);
        FjTruth.check(cutoff >= 1 && samples >= 1, "args");
        ForkJoinPool pool = new ForkJoinPool(p);
        Count root = new Count(0, samples);
        long hits = pool.invoke(root);
        FjTruth.shutdown(pool);

        FjTruth.check(root.forks == root.leaves - 1, "fork count");
        double pi = 4.0 * hits / samples;
        FjTruth.check(Math.abs(pi - Math.PI) < 0.01, "pi estimate " + pi);
        long tasks = root.forks + 1;
        new FjTruth("pi", samples, cutoff, p)
                .result(hits)
                .forks(root.forks).externalSubmissions(1).tasks(tasks)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0)
                .computation(Count.class, tasks)
                .classTasks(Count.class, tasks)
                .extra("pi", Double.toString(pi))
                .print();
    }
}
