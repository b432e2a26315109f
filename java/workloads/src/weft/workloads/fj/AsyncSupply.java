package weft.workloads.fj;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;

/**
 * Corner case: {@code CompletableFuture.supplyAsync} on the common pool.
 * {@code n} suppliers are started from main with {@code supplyAsync(supplier)}
 * (default executor), then all joined. Each call wraps the supplier in a
 * {@code CompletableFuture$AsyncSupply} (a ForkJoinTask) and calls
 * {@code commonPool().execute} from main: one external submission, one usage
 * that runs through exec (on a worker, or on main if it helps while joining),
 * one computation per call. No dependent stages are used (a dependent *Async
 * stage would be submitted from whichever thread completes its source: timing).
 *
 * <p>CompletableFuture only uses the common pool when its parallelism is &gt; 1
 * (otherwise it starts one thread per task: no fork-join at all). The common
 * pool is 1 on a 2-CPU machine, so main sets
 * {@code java.util.concurrent.ForkJoinPool.common.parallelism} to
 * max(2, parallelism) unless it was set on the command line, and asserts it
 * took effect (the property is read once, when ForkJoinPool is initialized).
 *
 * <p>Truth: external_submissions = tasks = n; n computations of 1 task each, root
 * class java.util.concurrent.CompletableFuture$AsyncSupply.
 *
 * <p>Args: [n=200] [work_us=1000] [parallelism=max(2,#cpus)] (of the common pool)
 */
public final class AsyncSupply {
    public static void main(String[] args) throws Exception {
        String prop = "java.util.concurrent.ForkJoinPool.common.parallelism";
        int n = (int) FjTruth.arg(args, 0, 200);
        long workUs = FjTruth.arg(args, 1, 1000);
        int p = Math.max(2, FjTruth.parallelism(args, 2));
        if (System.getProperty(prop) == null) System.setProperty(prop, Integer.toString(p));
        int common = ForkJoinPool.getCommonPoolParallelism();
        FjTruth.check(common > 1, "common pool parallelism " + common
                + ": CompletableFuture would not use the common pool");
        long workNs = workUs * 1000;
        List<CompletableFuture<Long>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final long v = i;
            fs.add(CompletableFuture.supplyAsync(() -> {
                FjTruth.spin(workNs);
                return v * v;
            }));
        }
        long sum = 0;
        for (CompletableFuture<Long> f : fs) sum += f.join();
        FjTruth.check(sum == (long) (n - 1) * n * (2L * n - 1) / 6, "sum");

        String root = "java.util.concurrent.CompletableFuture$AsyncSupply";
        FjTruth t = new FjTruth("async-supply", n, workUs, common)
                .result(sum)
                .forks(0).externalSubmissions(n).tasks(n)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0);
        for (int i = 0; i < n; i++) t.computation(root, 1);
        t.classTasks(root, n).print();
    }
}
