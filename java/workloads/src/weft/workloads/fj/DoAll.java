package weft.workloads.fj;

import java.util.concurrent.CountedCompleter;
import java.util.concurrent.ForkJoinPool;

/**
 * doall (Aeminium): a parallel loop {@code a[i] = f(i)} over {@code n} elements,
 * written as a {@code CountedCompleter}: a range larger than {@code cutoff}
 * repeatedly forks its upper half (addToPendingCount(1) then fork) and keeps
 * the lower half, then processes what is left and calls tryComplete(). The
 * loop runs {@code reps} times, each a {@code pool.invoke} (one computation).
 *
 * <p>Truth: forks per loop F(n) from a sequential shadow of the split loop (the
 * split is data-independent; the children are never joined, so they cannot
 * report counts back); every forked completer runs through exec, so tasks =
 * reps * (F + 1). result = sum of a[] after the last rep (deterministic: every
 * element is written by exactly one leaf; the sum is taken sequentially).
 *
 * <p>Args: [n=4000000] [cutoff=1024] [parallelism=#cpus] [reps=5]
 */
public final class DoAll {
    static int cutoff;
    static double[] a;

    static final class ForEach extends CountedCompleter<Void> {
        private static final long serialVersionUID = 1L;
        final int lo, hi;

        ForEach(CountedCompleter<?> parent, int lo, int hi) {
            super(parent);
            this.lo = lo;
            this.hi = hi;
        }

        @Override
        public void compute() {
            int l = lo, h = hi;
            while (h - l > cutoff) {
                int mid = (l + h) >>> 1;
                addToPendingCount(1);
                new ForEach(this, mid, h).fork();
                h = mid;
            }
            for (int i = l; i < h; i++) {
                double x = i * 1e-6;
                a[i] = Math.sqrt(x + 1.0) * (1.0 + x * (0.5 - x * 0.125)) + (i & 7);
            }
            tryComplete();
        }
    }

    /** Shadow of ForEach.compute's split loop: the forks made for [lo, hi). */
    static long forksOf(int lo, int hi) {
        long f = 0;
        int l = lo, h = hi;
        while (h - l > cutoff) {
            int mid = (l + h) >>> 1;
            f += 1 + forksOf(mid, h);
            h = mid;
        }
        return f;
    }

    public static void main(String[] args) throws Exception {
        int n = (int) FjTruth.arg(args, 0, 4_000_000);
        cutoff = (int) FjTruth.arg(args, 1, 1024);
        int p = FjTruth.parallelism(args, 2);
        int reps = (int) FjTruth.arg(args, 3, 5);
        FjTruth.check(n >= 1 && cutoff >= 1 && reps >= 1, "args");
        a = new double[n];
        ForkJoinPool pool = new ForkJoinPool(p);
        for (int r = 0; r < reps; r++) {
            java.util.Arrays.fill(a, Double.NaN);
            pool.invoke(new ForEach(null, 0, n));
        }
        FjTruth.shutdown(pool);

        double sum = 0;
        for (int i = 0; i < n; i++) {
            FjTruth.check(!Double.isNaN(a[i]), "element not written");
            sum += a[i];
        }
        long perRep = forksOf(0, n);
        long forks = reps * perRep;
        FjTruth t = new FjTruth("doall", n, cutoff, p, reps)
                .result(sum)
                .forks(forks).externalSubmissions(reps).tasks(forks + reps)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0);
        for (int r = 0; r < reps; r++) t.computation(ForEach.class, perRep + 1);
        t.classTasks(ForEach.class, forks + reps).print();
    }
}
