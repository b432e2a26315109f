package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code threads} threads each hand one CPU job of {@code work} rounds to a fixed pool of {@code pool} threads
 * and wait for it: each thread waits once, so nothing is "one at a time" on its side;
 * a pool smaller than the CPUs binds. Prints the elapsed time. Args:
 * {@code [threads=100] [pool=1] [work=1000000]}.
 */
public final class OneJobEach {
    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        int work = args.length > 2 ? Integer.parseInt(args[2]) : 1_000_000;
        ExecutorService pool = Executors.newFixedThreadPool(size);
        long t0 = System.nanoTime();
        double[] r = new double[threads];
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            final int k = i;
            Runnable job = () -> {
                try {
                    Future<Double> f = pool.submit(() -> Arith.work(work));
                    r[k] = f.get();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            };
            Thread t = new Thread(job, "client-" + i);
            t.start();
            ts.add(t);
        }
        for (Thread t : ts) {
            t.join();
        }
        pool.shutdown();
        System.out.printf("ms=%.1f%n", (System.nanoTime() - t0) / 1e6);
    }
}
