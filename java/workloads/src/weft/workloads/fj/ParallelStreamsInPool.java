package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;
import java.util.stream.LongStream;

/**
 * Corner case: a parallel stream run inside a task of a custom pool. Main
 * submits one {@code InPool} task per rep ({@code pool.submit}, then get);
 * InPool runs a parallel LongStream reduction on its worker, so the stream's
 * tasks are forked into this pool from inside InPool's run. What the program
 * knows exactly: the result, the {@code reps} external submissions, and that
 * each is ONE computation rooted at InPool (every JDK-internal fork happens
 * inside a run that descends from it), InPool itself running through exec
 * once per rep. The JDK-internal task count is not known, so tasks/forks and
 * the per-computation task counts are omitted, and so are cancelled /
 * never_run / reinitialized (what the JDK's tasks do is not the program's to know); classes lists only InPool
 * (other, JDK, classes will appear too).
 *
 * <p>Args: [n=20000000] [cutoff=unused] [parallelism=#cpus] [reps=3]
 */
public final class ParallelStreamsInPool {
    static final class InPool extends RecursiveTask<Long> {
        private static final long serialVersionUID = 1L;
        final long n;
        InPool(long n) { this.n = n; }
        @Override
        protected Long compute() {
            return LongStream.range(0, n).parallel().map(x -> (x * x) % 1_000_003).sum();
        }
    }

    public static void main(String[] args) throws Exception {
        long n = FjTruth.arg(args, 0, 20_000_000L);
        int p = FjTruth.parallelism(args, 2);
        int reps = (int) FjTruth.arg(args, 3, 3);
        ForkJoinPool pool = new ForkJoinPool(p);
        long sum = 0;
        for (int r = 0; r < reps; r++) sum += pool.submit(new InPool(n)).get();
        FjTruth.shutdown(pool);
        long expect = 0;
        for (long x = 0; x < n; x++) expect += (x * x) % 1_000_003;
        FjTruth.check(sum == reps * expect, "stream sum");

        FjTruth t = new FjTruth("parallel-streams-in-pool", n, 0, p, reps)
                .result(sum)
                .externalSubmissions(reps);
        for (int r = 0; r < reps; r++) t.computation(InPool.class.getName());
        t.classTasks(InPool.class, reps).print();
    }
}
