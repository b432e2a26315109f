package weft.workloads.advice;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

/**
 * A divide-and-conquer sum on the common pool, {@code reps} times over {@code n}
 * elements (leaves of 2,000). {@code order=wrong}: the classic mistake
 * {@code left.fork(); left.join(); right.compute()}: each fork is joined before the
 * forking task does its own half, so the halves run one after the other whatever the
 * pool. {@code order=right}: {@code left.fork(); right.compute(); left.join()}.
 * {@code pool=0} runs it on the common pool, {@code pool=N} on a {@code new ForkJoinPool(N)}.
 * Prints the sum and the elapsed time. Args:
 * {@code [order=wrong] [reps=12] [n=4000000] [pool=0]}.
 */
public final class ForkThenJoin {
    static final int LEAF = 2_000;

    static final class Sum extends RecursiveTask<Double> {
        final int lo;
        final int hi;
        final boolean wrong;

        Sum(int lo, int hi, boolean wrong) {
            this.lo = lo;
            this.hi = hi;
            this.wrong = wrong;
        }

        @Override
        protected Double compute() {
            if (hi - lo <= LEAF) {
                double s = 0;
                for (int i = lo; i < hi; i++) {
                    s += Math.sqrt(i) * Math.sin(i);
                }
                return s;
            }
            int mid = (lo + hi) >>> 1;
            Sum left = new Sum(lo, mid, wrong);
            Sum right = new Sum(mid, hi, wrong);
            left.fork();
            if (wrong) {
                double l = left.join();
                return l + right.compute();
            }
            double r = right.compute();
            return left.join() + r;
        }
    }

    public static void main(String[] args) {
        boolean wrong = args.length == 0 || !args[0].equals("right");
        int reps = args.length > 1 ? Integer.parseInt(args[1]) : 12;
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 4_000_000;
        int size = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        ForkJoinPool pool = size > 0 ? new ForkJoinPool(size) : ForkJoinPool.commonPool();
        long t0 = System.nanoTime();
        double s = 0;
        for (int r = 0; r < reps; r++) {
            s += pool.invoke(new Sum(0, n, wrong));
        }
        System.out.printf("sum=%.3f ms=%.1f%n", s, (System.nanoTime() - t0) / 1e6);
    }
}
