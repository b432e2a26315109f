package weft.workloads.fj;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

/**
 * fibonacci (Aeminium): fib(n) with a sequential cutoff. A node with
 * {@code n > cutoff} forks {@code fib(n-1)}, computes {@code fib(n-2)} directly
 * (a method call: not a task, its time is the parent's) and joins the forked
 * half, which always runs through exec (stolen, or popped by the joiner).
 *
 * <p>Truth: forks = internal nodes I(n) (counted in the tasks, checked against
 * I(n) = n &lt;= cutoff ? 0 : 1 + I(n-1) + I(n-2)); tasks = forks + 1 (the root,
 * one {@code pool.invoke}); one computation. With n - cutoff = 28 (default
 * 40 12) there are F(30) = 832,040 tasks: the overhead-benchmark configuration.
 *
 * <p>Args: [n=40] [cutoff=12] [parallelism=#cpus]
 */
public final class Fibonacci {
    static int cutoff;

    static final class Fib extends RecursiveTask<Long> {
        private static final long serialVersionUID = 1L;
        final int n;
        long forks; // forks made while computing this subtree (joined/direct children included)

        Fib(int n) { this.n = n; }

        @Override
        protected Long compute() {
            if (n <= cutoff) return seqFib(n);
            Fib f1 = new Fib(n - 1);
            f1.fork();
            forks++;
            Fib f2 = new Fib(n - 2);
            long r = f2.compute();
            forks += f2.forks;
            long l = f1.join();
            forks += f1.forks;
            return l + r;
        }
    }

    static long seqFib(int n) {
        return n < 2 ? n : seqFib(n - 1) + seqFib(n - 2);
    }

    static long internal(int n, int c, Map<Integer, Long> memo) {
        if (n <= c) return 0;
        Long m = memo.get(n);
        if (m != null) return m;
        long v = 1 + internal(n - 1, c, memo) + internal(n - 2, c, memo);
        memo.put(n, v);
        return v;
    }

    public static void main(String[] args) throws Exception {
        int n = (int) FjTruth.arg(args, 0, 40);
        cutoff = (int) FjTruth.arg(args, 1, 12);
        int p = FjTruth.parallelism(args, 2);
        FjTruth.check(cutoff >= 1, "cutoff must be >= 1");
        ForkJoinPool pool = new ForkJoinPool(p);
        Fib root = new Fib(n);
        long result = pool.invoke(root);
        FjTruth.shutdown(pool);

        long forks = root.forks;
        FjTruth.check(forks == internal(n, cutoff, new HashMap<>()), "fork count");
        long a = 0, b = 1;
        for (int i = 0; i < n; i++) { long t = a + b; a = b; b = t; }
        FjTruth.check(result == a, "fib value");
        long tasks = forks + 1;
        new FjTruth("fibonacci", n, cutoff, p)
                .result(result)
                .forks(forks).externalSubmissions(1).tasks(tasks)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0)
                .computation(Fib.class, tasks)
                .classTasks(Fib.class, tasks)
                .print();
    }
}
