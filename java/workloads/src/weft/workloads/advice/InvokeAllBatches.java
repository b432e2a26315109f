package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code batches} calls of {@code invokeAll} on a fixed pool of 2, each with 7 short
 * jobs ({@code n} rounds) and, last, one long job (8 × {@code n}): the long job of each
 * batch is the last task {@code main} waits for before the next batch, but the short
 * ones ran beside it: these tasks were not run one at a time.
 * Prints {@code batches <batches> <checksum>}.
 */
public final class InvokeAllBatches {
    public static void main(String[] args) throws Exception {
        int batches = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        double sum = 0;
        for (int b = 0; b < batches; b++) {
            List<Callable<Double>> jobs = new ArrayList<>();
            for (int k = 0; k < 7; k++) {
                jobs.add(() -> Arith.work(n));
            }
            jobs.add(() -> Arith.work(8 * n));
            for (Future<Double> f : pool.invokeAll(jobs)) {
                sum += f.get();
            }
        }
        pool.shutdown();
        System.out.println("batches " + batches + " " + (long) sum);
    }
}
