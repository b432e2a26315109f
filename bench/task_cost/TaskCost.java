import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * What recording adds per executor task and per virtual thread, robust to a loaded
 * machine: batches of empty tasks timed in-process, the best batch of many (a loaded
 * machine only adds time, so the minimum is the least disturbed).
 *
 * <ul>
 * <li>{@code pool}: BATCH Runnables created and given to a 2-thread ThreadPoolExecutor
 *     with {@code execute} (as ExecutorBench), the batch awaited on a latch;
 * <li>{@code submit}: BATCH Runnables submitted to it, each Future's {@code get} called;
 * <li>{@code vt} (JDK 21+, by reflection): BATCH Runnables submitted to
 *     {@code newVirtualThreadPerTaskExecutor()}, each Future's {@code get} called.
 * </ul>
 * Args: [batches=300] (the first fifth are warm-up) [shapes=pool,submit,vt].
 */
public class TaskCost {
    static final int BATCH = 2000;

    static final class Unit implements Runnable {
        final CountDownLatch done;
        Unit(CountDownLatch done) { this.done = done; }
        public void run() { if (done != null) done.countDown(); }
    }

    public static void main(String[] args) throws Exception {
        int batches = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int warm = batches / 5;
        String shapes = args.length > 1 ? args[1] : "pool,submit,vt";
        boolean doPool = shapes.contains("pool"), doSubmit = shapes.contains("submit");
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 0L, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>());
        ExecutorService vt = null;
        try {
            if (shapes.contains("vt")) vt = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (ReflectiveOperationException e) {
            // JDK 17: no virtual threads
        }
        long bestPool = Long.MAX_VALUE, bestSubmit = Long.MAX_VALUE, bestVt = Long.MAX_VALUE;
        List<Future<?>> fs = new ArrayList<>(BATCH);
        for (int b = 0; b < batches; b++) {
            long t0 = System.nanoTime();
            if (doPool) {
                CountDownLatch done = new CountDownLatch(BATCH);
                for (int i = 0; i < BATCH; i++) pool.execute(new Unit(done));
                done.await();
            }
            long t1 = System.nanoTime();
            if (doSubmit) {
                fs.clear();
                for (int i = 0; i < BATCH; i++) fs.add(pool.submit(new Unit(null)));
                for (Future<?> f : fs) f.get();
            }
            long t2 = System.nanoTime();
            long t3 = t2;
            if (vt != null) {
                fs.clear();
                for (int i = 0; i < BATCH; i++) fs.add(vt.submit(new Unit(null)));
                for (Future<?> f : fs) f.get();
                t3 = System.nanoTime();
            }
            if (b >= warm) {
                bestPool = Math.min(bestPool, t1 - t0);
                bestSubmit = Math.min(bestSubmit, t2 - t1);
                bestVt = Math.min(bestVt, t3 - t2);
            }
        }
        System.out.printf("pool ns/task %s  submit ns/task %s  vt ns/task %s%n",
                doPool ? String.format("%.0f", (double) bestPool / BATCH) : "-",
                doSubmit ? String.format("%.0f", (double) bestSubmit / BATCH) : "-",
                vt == null ? "-" : String.format("%.0f", (double) bestVt / BATCH));
        pool.shutdown();
        if (vt != null) vt.shutdown();
    }
}
