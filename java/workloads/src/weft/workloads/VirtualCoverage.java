package weft.workloads;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Virtual threads (JDK 21+, reached by reflection) that are all alive at once, more
 * of them than the agent's table of what a thread's own records cover has slots
 * (4,096: crates/agent/src/vthreads.rs), so that threads share slots: the task counts
 * must not depend on which thread got one.
 *
 * <ul>
 * <li>{@code Parked}: n Runnables started with {@code Thread.ofVirtual().start(r)},
 *     each parked on a latch until all have started, then running an {@code Inner}
 *     task inline ({@code inner.run()}, a nested execution of another class); every
 *     tenth throws after that (the thread dies, as it would without weft).
 * <li>{@code Job}: n Callables submitted to {@code newVirtualThreadPerTaskExecutor()},
 *     each parked on a second latch until all have been submitted.
 * <li>{@code Piece}: n Runnables submitted to it the same way.
 * </ul>
 *
 * <p>{@code Inner} runs nested in a task: aggregated into it (docs/task-model.md, R1).
 *
 * <p>Args: [n=5000]
 */
public final class VirtualCoverage {
    static final class Inner implements Runnable {
        public void run() { Truth.spin(2_000); }
    }

    static final class Parked implements Runnable {
        final CountDownLatch gate;
        final boolean fails;

        Parked(CountDownLatch gate, boolean fails) {
            this.gate = gate;
            this.fails = fails;
        }

        public void run() {
            await(gate);
            new Inner().run();
            if (fails) throw new IllegalStateException("expected by the workload");
        }
    }

    static final class Job implements Callable<Integer> {
        final CountDownLatch gate;

        Job(CountDownLatch gate) { this.gate = gate; }

        public Integer call() {
            await(gate);
            Truth.spin(2_000);
            return 1;
        }
    }

    static final class Piece implements Runnable {
        final CountDownLatch gate;

        Piece(CountDownLatch gate) { this.gate = gate; }

        public void run() {
            await(gate);
            Truth.spin(2_000);
        }
    }

    static void await(CountDownLatch gate) {
        try {
            gate.await();
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        // The failing threads' exceptions are expected: not printed.
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> { });

        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        CountDownLatch gate = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ts.add((Thread) start.invoke(builder, new Parked(gate, i % 10 == 9)));
        }
        gate.countDown();
        for (Thread t : ts) {
            t.join();
        }

        ExecutorService ex = (ExecutorService)
                Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        CountDownLatch gate2 = new CountDownLatch(1);
        List<Future<Integer>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            fs.add(ex.submit(new Job(gate2)));
        }
        gate2.countDown();
        int sum = 0;
        for (Future<Integer> f : fs) {
            sum += f.get();
        }
        if (sum != n) throw new AssertionError("jobs returned " + sum);
        CountDownLatch gate3 = new CountDownLatch(1);
        List<Future<?>> ps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ps.add(ex.submit(new Piece(gate3)));
        }
        gate3.countDown();
        for (Future<?> f : ps) {
            f.get();
        }
        ex.shutdown();

        new Truth("VirtualCoverage")
                .task(Parked.class, "virtual-thread", n, 0, 0)
                .task(Inner.class, "runnable", n, n, 0)
                .task(Job.class, "callable", n, 0, n)
                .task(Piece.class, "runnable", n, 0, n)
                .print();
    }
}
