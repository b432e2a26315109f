package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * {@code rounds} calls of {@code invokeAny} on a fixed pool of 2: each hands 4 CPU
 * jobs of 1, 2, 3 and 4 × {@code n} rounds of work to the pool and takes the first
 * result (the losers see their interrupt and stop). {@code main} waits for its own
 * tasks' results in the completion queue most of the run: no producer bottleneck.
 * Prints {@code anyof <rounds>}.
 */
public final class AnyOfPool {
    static double job(int n) {
        double s = 0;
        for (int k = 0; k < n / 1000; k++) {
            if (Thread.currentThread().isInterrupted()) {
                return -1;
            }
            s += Arith.work(1000);
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        int done = 0;
        for (int r = 0; r < rounds; r++) {
            List<Callable<Double>> jobs = new ArrayList<>();
            for (int k = 1; k <= 4; k++) {
                final int work = k * n;
                jobs.add(() -> job(work));
            }
            if (pool.invokeAny(jobs) >= 0) {
                done++;
            }
        }
        pool.shutdown();
        System.out.println("anyof " + done);
    }
}
