package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code threads} pool threads each update {@code keys} keys of one
 * {@code ConcurrentHashMap} {@code rounds} times with {@code compute}, whose function
 * does {@code inside} units of work under the key's bin lock, then {@code outside}
 * units: the bins are contended, but with more threads than CPUs the CPUs are busy all
 * along, so a blocked thread would mostly have waited for a CPU anyway (computing the
 * value outside the lock, with {@code merge}, gained ~2% on 2 CPUs).
 * Args: [threads=4] [keys=4] [rounds=2000] [inside=20000] [outside=5000]. Prints
 * {@code updates <n>}.
 */
public final class ComputeInMap {
    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int keys = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
        int inside = args.length > 3 ? Integer.parseInt(args[3]) : 20_000;
        int outside = args.length > 4 ? Integer.parseInt(args[4]) : 5_000;
        ConcurrentHashMap<Integer, Double> map = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<Double>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            fs.add(pool.submit(() -> {
                double sink = 0;
                for (int k = 0; k < rounds; k++) {
                    sink += map.compute(k % keys, (key, v) -> (v == null ? 0 : v) + Arith.work(inside));
                    sink += Arith.work(outside);
                }
                return sink;
            }));
        }
        double sink = 0;
        for (Future<Double> f : fs) {
            sink += f.get();
        }
        pool.shutdown();
        System.out.println("updates " + (threads * rounds) + (sink == 42 ? "!" : ""));
    }
}
