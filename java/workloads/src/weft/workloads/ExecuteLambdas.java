package weft.workloads;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Lambdas run with no JDK wrapper around them: given to {@code ThreadPoolExecutor.execute}
 * (queued as they are, run by the worker loop) and to an executor written by hand (a thread
 * taking Runnables from a queue and calling {@code run()}), plus a lambda called in place on
 * main (aggregated into main, as a named class's would be). A lambda is a hidden class, so
 * these runs are seen at their callers (docs/task-model.md §Lambdas). And a named task made by
 * reflection, whose creation site is the code that asked for it, not the JDK's accessors.
 *
 * <p>Args: [tasks=200] [work_us=300] [threads=2]
 */
public final class ExecuteLambdas {
    /** A single-thread executor written by hand. */
    static final class HandExecutor implements Executor {
        private static final Runnable STOP = () -> { };
        private final BlockingQueue<Runnable> queue = new LinkedBlockingQueue<>();
        private final Thread thread = new Thread(this::loop, "hand-executor");

        HandExecutor() {
            thread.start();
        }

        private void loop() {
            try {
                while (true) {
                    Runnable r = queue.take();
                    if (r == STOP) return;
                    r.run();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void execute(Runnable r) {
            queue.add(r);
        }

        void stop() throws InterruptedException {
            queue.add(STOP);
            thread.join();
        }
    }

    /** A task made by reflection, as a framework or a plugin loader makes its objects. */
    public static final class Reflected implements Runnable {
        static long workNs;

        @Override
        public void run() {
            Truth.spin(workNs);
        }
    }

    public static void main(String[] args) throws Exception {
        int n = (int) Truth.arg(args, 0, 200);
        long w = Truth.arg(args, 1, 300) * 1000L;
        int threads = (int) Truth.arg(args, 2, 2);
        Truth truth = new Truth("ExecuteLambdas");

        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 0L, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>());
        CountDownLatch pooled = new CountDownLatch(n);
        int poolLine = 0;
        for (int i = 0; i < n; i++) {
            poolLine = Truth.line(); pool.execute(() -> { Truth.spin(w); pooled.countDown(); });
        }
        pooled.await();
        // Two lambdas on one line: distinct classes, named `[main:L]` and `[main:L#2]`.
        CountDownLatch pair = new CountDownLatch(2 * n);
        int pairLine = 0;
        for (int i = 0; i < n; i++) {
            pairLine = Truth.line(); pool.execute(() -> { Truth.spin(w); pair.countDown(); }); pool.execute(() -> { Truth.spin(w); pair.countDown(); });
        }
        pair.await();
        String first = Truth.lambda(ExecuteLambdas.class, "main", pairLine);
        truth.task(first, "runnable", n, 0, n).self(first, w);
        truth.task(first.replace("]", "#2]"), "runnable", n, 0, n).self(first.replace("]", "#2]"), w);
        Reflected.workNs = w;
        for (int i = 0; i < n; i++) {
            pool.submit(Reflected.class.getDeclaredConstructor().newInstance()).get();
        }
        truth.task(Reflected.class, "runnable", n, 0, n).self(Reflected.class, w);
        pool.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) throw new AssertionError("pool did not stop");
        String onPool = Truth.lambda(ExecuteLambdas.class, "main", poolLine);
        truth.task(onPool, "runnable", n, 0, n).self(onPool, w);

        HandExecutor hand = new HandExecutor();
        CountDownLatch handed = new CountDownLatch(n);
        int handLine = 0;
        for (int i = 0; i < n; i++) {
            handLine = Truth.line(); hand.execute(() -> { Truth.spin(w); handed.countDown(); });
        }
        handed.await();
        hand.stop();
        String byHand = Truth.lambda(ExecuteLambdas.class, "main", handLine);
        truth.task(byHand, "runnable", n, 0, n).self(byHand, w);

        int inPlaceLine = Truth.line(); Runnable inPlace = () -> Truth.spin(w);
        for (int i = 0; i < 3; i++) inPlace.run();
        truth.task(Truth.lambda(ExecuteLambdas.class, "main", inPlaceLine), "runnable", 3, 3, 0);
        truth.task(ExecuteLambdas.class.getName() + "$$Lambda[" + HandExecutor.class.getName() + "::loop]",
                "thread", 1, 0, 0);
        truth.print();
    }
}
