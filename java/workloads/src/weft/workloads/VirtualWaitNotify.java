package weft.workloads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Virtual threads handing items through a one-slot buffer guarded by
 * {@code wait}/{@code notifyAll} (JDK 21+, compiled for 17: the executor by
 * reflection): one producer task puts {@code items} items, {@code consumers} consumer
 * tasks take them, all on {@code newVirtualThreadPerTaskExecutor()}. On JDK 21-23 a
 * virtual thread in {@code Object.wait} stays on its carrier (the scheduler adds a
 * carrier meanwhile); on 24+ it unmounts. Prints {@code sum <sum of the items>}.
 *
 * <p>Args: [items=3000] [consumers=8]
 */
public final class VirtualWaitNotify {
    static final Object LOCK = new Object();
    static Integer slot;
    static long sum;

    public static void main(String[] args) throws Exception {
        int items = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
        int consumers = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        ExecutorService ex = (ExecutorService)
                Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        List<Future<?>> fs = new ArrayList<>();
        for (int c = 0; c < consumers; c++) {
            fs.add(ex.submit(() -> {
                while (true) {
                    int v = take();
                    if (v < 0) {
                        return null;
                    }
                    synchronized (VirtualWaitNotify.class) {
                        sum += v;
                    }
                }
            }));
        }
        fs.add(ex.submit(() -> {
            for (int i = 0; i < items + consumers; i++) {
                put(i < items ? i : -1);
            }
            return null;
        }));
        for (Future<?> f : fs) {
            f.get();
        }
        ex.shutdown();
        System.out.println("sum " + sum);
    }

    static int take() throws InterruptedException {
        synchronized (LOCK) {
            while (slot == null) {
                LOCK.wait();
            }
            int v = slot;
            slot = null;
            LOCK.notifyAll();
            return v;
        }
    }

    static void put(int v) throws InterruptedException {
        synchronized (LOCK) {
            while (slot != null) {
                LOCK.wait();
            }
            slot = v;
            LOCK.notifyAll();
        }
    }
}
