package weft.workloads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Virtual threads queued on one {@code ReentrantLock} (JDK 21+, compiled for 17:
 * the API by reflection): {@code tasks} tasks on
 * {@code newVirtualThreadPerTaskExecutor()}, each taking the lock and sleeping
 * {@code hold_ms} inside it, so that they go in one after another and nearly all
 * of them park (unmounted) waiting for it. A j.u.c. lock unmounts a waiting virtual
 * thread: it does not pin, on any JDK. With {@code cpu}, each holds the lock
 * computing for about {@code hold_ms} instead of sleeping: the carriers then work one
 * at a time, the lock's doing.
 *
 * <p>Args: [tasks=200] [hold_ms=1] [sleep|cpu]
 */
public final class VirtualLock {
    static final ReentrantLock LOCK = new ReentrantLock();

    public static void main(String[] args) throws Exception {
        int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        long holdMs = args.length > 1 ? Long.parseLong(args[1]) : 1;
        boolean cpu = args.length > 2 && args[2].equals("cpu");
        ExecutorService ex = (ExecutorService)
                Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            fs.add(ex.submit(() -> {
                LOCK.lock();
                try {
                    if (cpu) {
                        compute(holdMs);
                    } else {
                        Thread.sleep(holdMs);
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                } finally {
                    LOCK.unlock();
                }
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        ex.shutdown();
        System.out.println("VirtualLock done " + sink);
    }

    static double sink;

    /** About {@code ms} of CPU (the clock read every 1,000 rounds). */
    static void compute(long ms) {
        long end = System.nanoTime() + ms * 1_000_000;
        double s = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                s += Math.sqrt(i + s);
            }
        }
        sink += s;
    }
}
