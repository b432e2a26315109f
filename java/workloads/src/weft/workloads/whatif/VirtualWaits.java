package weft.workloads.whatif;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Virtual threads that wait (JDK 21+, compiled for 17: the API by reflection):
 * {@code tasks} tasks on {@code newVirtualThreadPerTaskExecutor()}, each spinning
 * {@code work_us}, sleeping {@code sleep_ms} (unmounted: the carrier runs others)
 * and spinning again; main waits for all. The run takes about
 * tasks x 2 x work_us / cores + sleep_ms: a what-if model that kept the sleeps as
 * compute would need tasks x sleep_ms / cores (crates/cli/tests/whatif.rs).
 *
 * <p>Args: [tasks=2000] [work_us=20] [sleep_ms=5]
 */
public final class VirtualWaits {
    static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    public static void main(String[] args) throws Exception {
        int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        long workNs = (args.length > 1 ? Long.parseLong(args[1]) : 20) * 1000L;
        long sleepMs = args.length > 2 ? Long.parseLong(args[2]) : 5;
        ExecutorService ex = (ExecutorService)
                Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            fs.add(ex.submit(() -> {
                spin(workNs);
                try {
                    Thread.sleep(sleepMs);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
                spin(workNs);
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        ex.shutdown();
        System.out.println("VirtualWaits done");
    }
}
