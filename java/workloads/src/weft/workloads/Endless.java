package weft.workloads;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A long run for the SIGKILL test: prints {@code PID <pid>} first (so a test can
 * kill the JVM itself rather than weft), then keeps a 2-thread pool busy with
 * batches of 100 {@code Tick} tasks (100 us each) until max_ms has passed.
 * If it is not killed, it prints its ground truth.
 *
 * <p>Args: [max_ms=60000]
 */
public final class Endless {
    static final class Tick implements Runnable {
        final CountDownLatch done;
        Tick(CountDownLatch done) { this.done = done; }
        public void run() {
            Truth.spin(100_000);
            done.countDown();
        }
    }

    public static void main(String[] args) throws Exception {
        long maxNs = Truth.arg(args, 0, 60_000) * 1_000_000L;
        System.out.println("PID " + ProcessHandle.current().pid());
        System.out.flush();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 0L, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>());
        long start = System.nanoTime();
        long batches = 0;
        while (System.nanoTime() - start < maxNs) {
            CountDownLatch done = new CountDownLatch(100);
            for (int i = 0; i < 100; i++) pool.execute(new Tick(done));
            done.await();
            batches++;
        }
        pool.shutdown();
        pool.awaitTermination(60, TimeUnit.SECONDS);
        // Not printed in the comparison with a plain run: the batch count depends on timing.
        new Truth("Endless").task(Tick.class, "runnable", batches * 100, 0, batches * 100).print();
    }
}
