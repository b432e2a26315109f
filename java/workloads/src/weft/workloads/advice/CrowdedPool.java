package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * CPU-bound tasks on a pool of far more threads than CPUs: {@code tasks} tasks of
 * {@code work} rounds of arithmetic (~0.2 ms at the default) on {@code threads} threads.
 * A worker preempted while it holds the pool's task-queue lock keeps the others
 * waiting on it; the CPUs stay busy, so the wall time hardly moves (measured here on 2
 * CPUs: 64 threads 750–769 ms, 2 threads 757–768 ms; 640 tasks of ~1.3 ms: 824 vs 791
 * ms). Prints the checksum and the elapsed time. Args: {@code [threads=64] [tasks=4000]
 * [work=60000]}.
 */
public final class CrowdedPool {
    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        int tasks = args.length > 1 ? Integer.parseInt(args[1]) : 4000;
        int work = args.length > 2 ? Integer.parseInt(args[2]) : 60000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long t0 = System.nanoTime();
        List<Future<Double>> fs = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            fs.add(pool.submit(() -> Arith.work(work)));
        }
        double s = 0;
        for (Future<Double> f : fs) {
            s += f.get();
        }
        pool.shutdown();
        System.out.println("checksum " + (long) s + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }
}
