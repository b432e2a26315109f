package weft.workloads;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The overhead benchmark's executor workload: {@code tasks} Runnables
 * ({@code Unit}) submitted one by one with {@code execute} to a fixed
 * ThreadPoolExecutor, each busy-spinning work_us. Prints only the ground truth
 * (no timings: the benchmark measures wall time from outside).
 *
 * <p>Args: [tasks=100000] [work_us=20] [threads=number of CPUs]
 */
public final class ExecutorBench {
    static long workNs;

    static final class Unit implements Runnable {
        final CountDownLatch done;
        Unit(CountDownLatch done) { this.done = done; }
        public void run() {
            Truth.spin(workNs);
            done.countDown();
        }
    }

    public static void main(String[] args) throws Exception {
        int tasks = (int) Truth.arg(args, 0, 100_000);
        workNs = Truth.arg(args, 1, 20) * 1000L;
        int threads = (int) Truth.arg(args, 2, Runtime.getRuntime().availableProcessors());
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 0L, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>());
        CountDownLatch done = new CountDownLatch(tasks);
        for (int i = 0; i < tasks; i++) pool.execute(new Unit(done));
        done.await();
        pool.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) throw new AssertionError("pool did not stop");
        Truth truth = new Truth("ExecutorBench");
        truth.task(Unit.class, "runnable", tasks, 0, tasks);
        // Below 200 us, probe cost and timer noise exceed the 10% a test allows.
        if (workNs >= 200_000) truth.self(Unit.class, workNs);
        truth.print();
    }
}
