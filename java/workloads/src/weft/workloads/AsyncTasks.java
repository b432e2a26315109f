package weft.workloads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * CompletableFuture.runAsync/supplyAsync on a given 2-thread ThreadPoolExecutor.
 * runAsync/supplyAsync are not submission methods, but the execute(AsyncRun /
 * AsyncSupply) they call is, and rule 4 matches it to the execution standing for
 * the plumbing object:
 *
 * <ul>
 * <li>{@code CfRun} via runAsync (n): CfRun.run() runs nested in AsyncRun.run()
 *     (rule 2): n executions of CfRun, submitted n, self W.
 * <li>a lambda Runnable via runAsync (n): rule 3, reported as the lambda's class.
 * <li>a lambda Supplier via supplyAsync (n): rule 3, reported as the lambda's
 *     class. The task model does not settle its kind (a Supplier is neither a
 *     Runnable nor a Callable; AsyncSupply.run() is what runs); weft's analysis
 *     (crates/analysis/src/tasks.rs) calls a value-returning AsyncSupply
 *     "callable", and so does this truth.
 * </ul>
 *
 * <p>Args: [n=100] [work_us=300]
 */
public final class AsyncTasks {
    static long workNs;

    static final class CfRun implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    public static void main(String[] args) throws Exception {
        int n = (int) Truth.arg(args, 0, 100);
        workNs = Truth.arg(args, 1, 300) * 1000L;
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 0L, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>());
        Truth truth = new Truth("AsyncTasks");
        List<CompletableFuture<?>> futures = new ArrayList<>();

        for (int i = 0; i < n; i++) futures.add(CompletableFuture.runAsync(new CfRun(), pool));
        truth.task(CfRun.class, "runnable", n, 0, n).self(CfRun.class, workNs);

        long w = workNs;
        int runLine = 0;
        int supplyLine = 0;
        for (int i = 0; i < n; i++) {
            runLine = Truth.line(); futures.add(CompletableFuture.runAsync(() -> Truth.spin(w), pool));
        }
        for (int i = 0; i < n; i++) {
            supplyLine = Truth.line(); futures.add(CompletableFuture.supplyAsync(() -> { Truth.spin(w); return 1L; }, pool));
        }
        String run = Truth.lambda(AsyncTasks.class, "main", runLine);
        String supply = Truth.lambda(AsyncTasks.class, "main", supplyLine);
        truth.task(run, "runnable", n, 0, n).self(run, w);
        truth.task(supply, "callable", n, 0, n).self(supply, w);

        CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0])).join();
        pool.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) throw new AssertionError("pool did not stop");
        truth.print();
    }
}
