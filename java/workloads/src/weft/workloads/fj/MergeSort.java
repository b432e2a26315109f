package weft.workloads.fj;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * mergesort (Aeminium): sorts {@code n} longs. A range larger than
 * {@code cutoff} forks its left half, sorts its right half directly, joins,
 * then merges both halves through a scratch array; a small range is sorted
 * with Arrays.sort.
 *
 * <p>Truth: forks = leaves - 1 (counted in the tasks, checked against a shadow);
 * tasks = forks + 1; one computation. Result: a checksum of the sorted array
 * (sortedness is asserted).
 *
 * <p>Args: [n=4000000] [cutoff=8192] [parallelism=#cpus]
 */
public final class MergeSort {
    static int cutoff;
    static long[] a, tmp;

    static final class Sort extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final int lo, hi;
        long forks;

        Sort(int lo, int hi) { this.lo = lo; this.hi = hi; }

        @Override
        protected void compute() {
            if (hi - lo <= cutoff) {
                Arrays.sort(a, lo, hi);
                return;
            }
            int mid = (lo + hi) >>> 1;
            Sort left = new Sort(lo, mid);
            Sort right = new Sort(mid, hi);
            left.fork();
            forks++;
            right.compute();
            left.join();
            forks += left.forks + right.forks;
            System.arraycopy(a, lo, tmp, lo, hi - lo);
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi) a[k++] = tmp[i] <= tmp[j] ? tmp[i++] : tmp[j++];
            while (i < mid) a[k++] = tmp[i++];
            while (j < hi) a[k++] = tmp[j++];
        }
    }

    static long forksOf(int lo, int hi) {
        if (hi - lo <= cutoff) return 0;
        int mid = (lo + hi) >>> 1;
        return 1 + forksOf(lo, mid) + forksOf(mid, hi);
    }

    public static void main(String[] args) throws Exception {
        int n = (int) FjTruth.arg(args, 0, 4_000_000);
        cutoff = (int) FjTruth.arg(args, 1, 8192);
        int p = FjTruth.parallelism(args, 2);
        FjTruth.check(n >= 1 && cutoff >= 1, "args");
        a = new long[n];
        tmp = new long[n];
        SplittableRandom rnd = new SplittableRandom(42);
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
        FjTruth.check(root.forks == forksOf(0, n), "fork count");
        long tasks = root.forks + 1;
        new FjTruth("mergesort", n, cutoff, p)
                .result(check)
                .forks(root.forks).externalSubmissions(1).tasks(tasks)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0)
                .computation(Sort.class, tasks)
                .classTasks(Sort.class, tasks)
                .print();
    }
}
