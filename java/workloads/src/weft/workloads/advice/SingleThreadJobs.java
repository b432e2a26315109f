package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * {@code jobs} CPU jobs of {@code work} rounds each on a single-thread executor,
 * submitted all at once ({@code scheduled=false}: {@code newSingleThreadExecutor().submit})
 * or scheduled 10 ms apart ({@code scheduled=true}:
 * {@code newSingleThreadScheduledExecutor().schedule}), then waited for: they run one
 * after another whatever the CPUs. With {@code threads=N} the pool has N threads.
 * Prints the elapsed time. Args: {@code [jobs=3] [work=40000000] [scheduled=false] [threads=1]}.
 */
public final class SingleThreadJobs {
    public static void main(String[] args) throws Exception {
        int jobs = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int work = args.length > 1 ? Integer.parseInt(args[1]) : 40_000_000;
        boolean scheduled = args.length > 2 && Boolean.parseBoolean(args[2]);
        int threads = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        long t0 = System.nanoTime();
        List<Future<Double>> fs = new ArrayList<>();
        ExecutorService pool;
        if (scheduled) {
            ScheduledExecutorService ses = Executors.newScheduledThreadPool(threads);
            for (int i = 0; i < jobs; i++) {
                fs.add(ses.schedule(() -> Arith.work(work), 10L * i, TimeUnit.MILLISECONDS));
            }
            pool = ses;
        } else {
            pool = Executors.newFixedThreadPool(threads);
            for (int i = 0; i < jobs; i++) {
                fs.add(pool.submit(() -> Arith.work(work)));
            }
        }
        double s = 0;
        for (Future<Double> f : fs) {
            s += f.get();
        }
        pool.shutdown();
        System.out.printf("s=%.1f ms=%.1f%n", s, (System.nanoTime() - t0) / 1e6);
    }
}
