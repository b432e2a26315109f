package weft.workloads.fj;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * quicksort (Aeminium): sorts {@code n} longs. A range larger than
 * {@code cutoff} is partitioned sequentially (Hoare, median-of-three pivot)
 * and BOTH non-empty parts are forked, then joined (so, as in wosp's table,
 * every task object is a forked usage). The split depends on the data only
 * (fixed seed), not on the schedule. A small range is sorted with Arrays.sort.
 *
 * <p>Truth: forks counted in the tasks (data-dependent, schedule-independent);
 * tasks = forks + 1; one computation. Result: checksum of the sorted array.
 *
 * <p>Args: [n=4000000] [cutoff=2048] [parallelism=#cpus]
 */
public final class QuickSort {
    static int cutoff;
    static long[] a;

    static final class Sort extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final int lo, hi; // inclusive lo, exclusive hi
        long forks;

        Sort(int lo, int hi) { this.lo = lo; this.hi = hi; }

        @Override
        protected void compute() {
            if (hi - lo <= cutoff) {
                Arrays.sort(a, lo, hi);
                return;
            }
            int l = lo, r = hi - 1, m = (lo + hi) >>> 1;
            long x = a[l], y = a[m], z = a[r];
            long pivot = Math.max(Math.min(x, y), Math.min(Math.max(x, y), z));
            int i = l - 1, j = r + 1;
            while (true) {
                do i++; while (a[i] < pivot);
                do j--; while (a[j] > pivot);
                if (i >= j) break;
                long t = a[i]; a[i] = a[j]; a[j] = t;
            }
            Sort left = j + 1 > lo ? new Sort(lo, j + 1) : null;
            Sort right = hi > j + 1 ? new Sort(j + 1, hi) : null;
            if (left != null) { left.fork(); forks++; }
            if (right != null) { right.fork(); forks++; }
            if (right != null) { right.join(); forks += right.forks; }
            if (left != null) { left.join(); forks += left.forks; }
        }
    }

    public static void main(String[] args) throws Exception {
        int n = (int) FjTruth.arg(args, 0, 4_000_000);
        cutoff = (int) FjTruth.arg(args, 1, 2048);
        int p = FjTruth.parallelism(args, 2);
        FjTruth.check(n >= 1 && cutoff >= 2, "args (cutoff >= 2)");
        a = new long[n];
        SplittableRandom rnd = new SplittableRandom(4242);
        for (int i = 0; i < n; i++) a[i] = rnd.nextLong(1_000_000_000L);
        ForkJoinPool pool = new ForkJoinPool(p);
        Sort root = new Sort(0, n);
        pool.invoke(root);
        FjTruth.shutdown(pool);

        long check = 0;
        for (int i = 0; i < n; i++) {
            if (i > 0) FjTruth.check(a[i - 1] <= a[i], "not sorted");
            check = check * 31 + a[i];
        }
        long tasks = root.forks + 1;
        new FjTruth("quicksort", n, cutoff, p)
                .result(check)
                .forks(root.forks).externalSubmissions(1).tasks(tasks)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0)
                .computation(Sort.class, tasks)
                .classTasks(Sort.class, tasks)
                .print();
    }
}
