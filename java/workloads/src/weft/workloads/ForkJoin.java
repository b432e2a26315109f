package weft.workloads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.RecursiveTask;
import java.util.concurrent.TimeUnit;

/**
 * A ForkJoinPool of parallelism 1, so that nothing is ever stolen and the
 * counts do not depend on timing.
 *
 * <ul>
 * <li>{@code Sum extends RecursiveTask}: seven trees, each root submitted by
 *     {@code pool.invoke}; each node with more than one leaf forks its left half,
 *     {@code invoke()}s its right half, then {@code join()}s the left. The
 *     invoked right half runs its exec() inside the parent; the forked left half
 *     is still on top of the only worker's queue at join and is popped and run
 *     in place, inside the parent, by the same worker. fork() is not a
 *     submission, so under R1 every non-root node is aggregated: per tree,
 *     executions = 2*leaves - 1, aggregated = 2*leaves - 2, submitted = 1, and a root's
 *     self time is the whole tree: leaves * L (each leaf spins L = leaf_us; a
 *     leaf is longer than the other tasks so that fork/join bookkeeping, a
 *     few us per node, stays well under the 10% a test allows). (With more
 *     workers a stolen subtask would run directly in another worker thread and
 *     be reported: that is timing dependent, hence parallelism 1.)
 * <li>{@code Warm extends RecursiveAction}: one tree of depth 12 before Sum
 *     (8,191 executions, 8,190 aggregated, 1 submitted), so that the pool's
 *     fork/join code and weft's probes are compiled before Sum is timed. No self time.
 * <li>{@code Touch extends RecursiveAction}: n, via {@code pool.submit}, kind
 *     forkjoin, self W.
 * <li>{@code FjRun} Runnable via {@code pool.execute} (n; the pool wraps it in
 *     RunnableExecuteAction, plumbing), {@code FjCall} Callable via
 *     {@code pool.submit} (n; AdaptedCallable) and a lambda Runnable via
 *     {@code pool.submit} (n; AdaptedRunnableAction, rule 3): self W each.
 * </ul>
 * Even if the external caller (main) ran the root itself while joining it,
 * the counts would be the same: the root is submitted, hence reported.
 *
 * <p>Args: [n=50] [work_us=300] [leaves=16] [leaf_us=1000]
 */
public final class ForkJoin {
    static long workNs;
    static long leafNs;

    static final class Sum extends RecursiveTask<Long> {
        private static final long serialVersionUID = 1L;
        final int lo, hi;
        Sum(int lo, int hi) { this.lo = lo; this.hi = hi; }

        @Override
        protected Long compute() {
            if (hi - lo == 1) {
                Truth.spin(leafNs);
                return (long) lo;
            }
            int mid = (lo + hi) >>> 1;
            Sum left = new Sum(lo, mid);
            Sum right = new Sum(mid, hi);
            left.fork();
            long r = right.invoke();
            long l = left.join();
            return l + r;
        }
    }

    static final class Warm extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final int depth;
        Warm(int depth) { this.depth = depth; }

        @Override
        protected void compute() {
            if (depth > 0) {
                Warm left = new Warm(depth - 1);
                left.fork();
                new Warm(depth - 1).invoke();
                left.join();
            }
        }
    }

    static final class Touch extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        @Override
        protected void compute() { Truth.spin(workNs); }
    }

    static final class FjRun implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    static final class FjCall implements Callable<Long> {
        public Long call() { Truth.spin(workNs); return 1L; }
    }

    public static void main(String[] args) throws Exception {
        int n = (int) Truth.arg(args, 0, 50);
        workNs = Truth.arg(args, 1, 300) * 1000L;
        int leaves = (int) Truth.arg(args, 2, 16);
        leafNs = Truth.arg(args, 3, 1000) * 1000L;
        ForkJoinPool pool = new ForkJoinPool(1);
        Truth truth = new Truth("ForkJoin");

        // A tree of 8,191 empty tasks first: the fork-join probes are JIT-compiled
        // before Sum is timed.
        pool.invoke(new Warm(12));
        truth.task(Warm.class, "forkjoin", 8191, 8190, 1);

        // Seven trees, so that a test's p50 is not one execution that a hiccup (or the
        // interpreter, before the JIT compiles the probes) can stretch.
        for (int tree = 0; tree < 7; tree++) {
            long sum = pool.invoke(new Sum(0, leaves));
            if (sum != (long) leaves * (leaves - 1) / 2) throw new AssertionError("sum " + sum);
            truth.task(Sum.class, "forkjoin", 2L * leaves - 1, 2L * leaves - 2, 1);
        }
        truth.self(Sum.class, leaves * leafNs);

        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) futures.add(pool.submit(new Touch()));
        truth.task(Touch.class, "forkjoin", n, 0, n).self(Touch.class, workNs);

        for (int i = 0; i < n; i++) pool.execute(new FjRun());
        truth.task(FjRun.class, "runnable", n, 0, n).self(FjRun.class, workNs);

        for (int i = 0; i < n; i++) futures.add(pool.submit(new FjCall()));
        truth.task(FjCall.class, "callable", n, 0, n).self(FjCall.class, workNs);

        long w = workNs;
        int line = 0;
        for (int i = 0; i < n; i++) {
            line = Truth.line(); futures.add(pool.submit(() -> Truth.spin(w)));
        }
        String lambda = Truth.lambda(ForkJoin.class, "main", line);
        truth.task(lambda, "runnable", n, 0, n).self(lambda, w);

        for (Future<?> f : futures) f.get();
        pool.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) throw new AssertionError("pool did not stop");
        truth.print();
    }
}
