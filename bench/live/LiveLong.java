import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A long run for the cost of `weft record --live` (bench/live/live-cost.sh): for
 * `seconds`, 3 threads take one monitor for ~20 us then park ~100 us (contention,
 * parks: lock records all along), and a pool runs 200 us tasks (task records), so
 * that the trace grows steadily.
 *
 * <p>Args: [seconds=600]
 */
public final class LiveLong {
    static final Object LOCK = new Object();

    static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 600;
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        Thread[] ts = new Thread[3];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                while (System.nanoTime() < deadline) {
                    synchronized (LOCK) {
                        spin(20_000);
                    }
                    LockSupport.parkNanos(100_000);
                }
            }, "contender-" + i);
            ts[i].start();
        }
        ExecutorService pool = Executors.newFixedThreadPool(1);
        while (System.nanoTime() < deadline) {
            pool.submit(() -> spin(200_000)).get();
            LockSupport.parkNanos(1_000_000);
        }
        pool.shutdown();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        for (Thread t : ts) {
            t.join();
        }
    }
}
