package weft.workloads;

import java.lang.management.ManagementFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A run with a measured phase: {@link #solve} (the window method of the
 * {@code --window} test) between a warm-up and a tear-down that do other work.
 * Each phase runs its own task class on its own 2-thread pool (created and shut
 * down inside the phase), and its tasks contend on the phase's own lock class.
 *
 * <ul>
 * <li>warm-up: {@code Before} tasks (n_before), lock {@code LockBefore};
 * <li>{@code solve}: {@code Inside} tasks (n_inside), lock {@code LockInside};
 * <li>tear-down: {@code After} tasks (n_after), lock {@code LockAfter}.
 * </ul>
 * Every task busy-spins work_us, half of it holding its phase's lock. Besides the
 * usual truth line, it prints {@code WEFT-PHASE {"cpu_ns":C,"wall_ns":W}}: the
 * process CPU time and the wall time of the {@code solve} call, measured by the
 * JVM itself.
 *
 * <p>Args: [n_before=60] [n_inside=40] [n_after=50] [work_us=2000]
 */
public final class Phases {
    static long workNs;

    static final class LockBefore {}

    static final class LockInside {}

    static final class LockAfter {}

    static final LockBefore LOCK_BEFORE = new LockBefore();
    static final LockInside LOCK_INSIDE = new LockInside();
    static final LockAfter LOCK_AFTER = new LockAfter();

    static void work(Object lock) {
        Truth.spin(workNs / 2);
        synchronized (lock) {
            Truth.spin(workNs / 2);
        }
    }

    static final class Before implements Runnable {
        public void run() { work(LOCK_BEFORE); }
    }

    static final class Inside implements Runnable {
        public void run() { work(LOCK_INSIDE); }
    }

    static final class After implements Runnable {
        public void run() { work(LOCK_AFTER); }
    }

    static void runAll(Runnable task, int n) throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        for (int i = 0; i < n; i++) {
            pool.execute(task);
        }
        pool.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("pool did not finish");
        }
    }

    /** The measured phase. */
    static void solve(int n) throws InterruptedException {
        runAll(new Inside(), n);
    }

    static long processCpuNs() {
        return ((com.sun.management.OperatingSystemMXBean)
                ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    public static void main(String[] args) throws Exception {
        int nBefore = (int) Truth.arg(args, 0, 60);
        int nInside = (int) Truth.arg(args, 1, 40);
        int nAfter = (int) Truth.arg(args, 2, 50);
        workNs = Truth.arg(args, 3, 2000) * 1000L;
        processCpuNs(); // load the management classes before the phase

        runAll(new Before(), nBefore);
        long cpu0 = processCpuNs();
        long t0 = System.nanoTime();
        solve(nInside);
        long wall = System.nanoTime() - t0;
        long cpu = processCpuNs() - cpu0;
        runAll(new After(), nAfter);

        new Truth("Phases")
                .task(Before.class, "runnable", nBefore, 0, nBefore)
                .task(Inside.class, "runnable", nInside, 0, nInside)
                .task(After.class, "runnable", nAfter, 0, nAfter)
                .print();
        System.out.println("WEFT-PHASE {\"cpu_ns\":" + cpu + ",\"wall_ns\":" + wall + "}");
    }
}
