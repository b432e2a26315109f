package weft.sample;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The program {@code weft demo} records: a producer that hands work to a pool
 * of 4 threads, in three styles.
 *
 * <ol>
 * <li>{@code Checksum}: too fine-grained. Thousands of tasks of about 2 us each,
 *     submitted one by one: queueing and hand-off cost more than the work.
 *     Better: one task per batch of a few thousand items.
 * <li>{@code Tile}: about right. 200 tasks of about 1 ms each.
 * <li>{@code Render}: too coarse. The whole job is 2 tasks of about 400 ms, so
 *     2 of the 4 threads idle while they run. Better: split into 4+ parts.
 * </ol>
 * Takes about 1 s.
 */
public final class Sample {
    /** Stand-in for real work: busy for {@code ns} nanoseconds of wall time. */
    static long busy(long ns) {
        long end = System.nanoTime() + ns;
        long x = 0;
        while (System.nanoTime() - end < 0) {
            x += 1;
        }
        return x;
    }

    /** Too fine: ~2 us of work per task. */
    static final class Checksum implements Runnable {
        public void run() { busy(2_000); }
    }

    /** About right: ~1 ms of work per task. */
    static final class Tile implements Runnable {
        public void run() { busy(1_000_000); }
    }

    /** Too coarse: ~400 ms of work per task, only 2 of them. */
    static final class Render implements Runnable {
        public void run() { busy(400_000_000); }
    }

    public static void main(String[] args) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> pending = new ArrayList<>();

        // 1. Too fine-grained: 20,000 tiny tasks, one submit each.
        for (int i = 0; i < 20_000; i++) {
            pending.add(pool.submit(new Checksum()));
        }
        waitFor(pending);

        // 2. About right.
        for (int i = 0; i < 200; i++) {
            pending.add(pool.submit(new Tile()));
        }
        waitFor(pending);

        // 3. Too coarse: 2 long tasks on 4 threads.
        for (int i = 0; i < 2; i++) {
            pending.add(pool.submit(new Render()));
        }
        waitFor(pending);

        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        System.out.println("sample done: 20000 Checksum, 200 Tile, 2 Render tasks");
    }

    static void waitFor(List<Future<?>> pending) throws Exception {
        for (Future<?> f : pending) {
            f.get();
        }
        pending.clear();
    }
}
