package weft.workloads.fj;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

/**
 * Corner case: two computations in one pool at the same time. Two client
 * threads wait on a barrier, then each calls {@code pool.invoke} on its own
 * {@code Fib} root (same task class, different sizes, so the two trees have
 * different task counts) in the SAME pool. Workers steal across both and may
 * run a task of one computation nested inside a join of the other: the trees
 * must still come out separate (the parent of a fork is the run on top of the
 * forking thread's stack).
 *
 * <p>Truth: external_submissions = 2; computations = [{Fib, tasks(nA)},
 * {Fib, tasks(nB)}] (order not significant: the two start together); forks and
 * tasks are the sums; per tree tasks = I(n) + 1 as in Fibonacci.
 *
 * <p>Args: [nA=34] [cutoff=10] [parallelism=#cpus] [nB=33]
 */
public final class TwoClients {
    static int cutoff;

    static final class Fib extends RecursiveTask<Long> {
        private static final long serialVersionUID = 1L;
        final int n;
        long forks;

        Fib(int n) { this.n = n; }

        @Override
        protected Long compute() {
            if (n <= cutoff) return Fibonacci.seqFib(n);
            Fib f1 = new Fib(n - 1);
            f1.fork();
            forks++;
            Fib f2 = new Fib(n - 2);
            long r = f2.compute();
            long l = f1.join();
            forks += f1.forks + f2.forks;
            return l + r;
        }
    }

    public static void main(String[] args) throws Exception {
        int nA = (int) FjTruth.arg(args, 0, 34);
        cutoff = (int) FjTruth.arg(args, 1, 10);
        int p = FjTruth.parallelism(args, 2);
        int nB = (int) FjTruth.arg(args, 3, 33);
        FjTruth.check(cutoff >= 1, "args");
        ForkJoinPool pool = new ForkJoinPool(p);
        CyclicBarrier start = new CyclicBarrier(2);
        Fib a = new Fib(nA), b = new Fib(nB);
        long[] results = new long[2];
        Throwable[] errors = new Throwable[2];
        Thread ta = client("client-A", start, pool, a, results, errors, 0);
        Thread tb = client("client-B", start, pool, b, results, errors, 1);
        ta.start();
        tb.start();
        ta.join();
        tb.join();
        FjTruth.shutdown(pool);
        for (Throwable t : errors) if (t != null) throw new AssertionError(t);
        FjTruth.check(results[0] == Fibonacci.seqFib(nA) && results[1] == Fibonacci.seqFib(nB), "results");
        FjTruth.check(a.forks == Fibonacci.internal(nA, cutoff, new java.util.HashMap<>())
                && b.forks == Fibonacci.internal(nB, cutoff, new java.util.HashMap<>()), "fork counts");

        long forks = a.forks + b.forks;
        new FjTruth("two-clients", nA, cutoff, p, nB)
                .result(results[0] + results[1])
                .forks(forks).externalSubmissions(2).tasks(forks + 2)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0)
                .computation(Fib.class, a.forks + 1)
                .computation(Fib.class, b.forks + 1)
                .classTasks(Fib.class, forks + 2)
                .print();
    }

    private static Thread client(String name, CyclicBarrier start, ForkJoinPool pool, Fib root,
                                 long[] results, Throwable[] errors, int i) {
        return new Thread(() -> {
            try {
                start.await();
                results[i] = pool.invoke(root);
            } catch (Throwable t) {
                errors[i] = t;
            }
        }, name);
    }
}
