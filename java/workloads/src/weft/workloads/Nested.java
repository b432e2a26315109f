package weft.workloads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Nesting, on a 2-thread ThreadPoolExecutor (every top-level task submitted
 * from main, so reported):
 *
 * <ul>
 * <li>R1: {@code Outer} (execute, n) runs, directly inside itself, K
 *     {@code Inner} Runnables, one {@code InnerCalc} Callable and one
 *     {@code Fragile} Runnable that throws (caught by Outer). None is submitted,
 *     so all are aggregated into Outer, and Outer's self time includes theirs:
 *     W + K*W/4 + W/4 + W/4.
 * <li>A submitted task is never aggregated: {@code Host} (submit, n) spins W,
 *     then submits a {@code Guest} to {@code Inline} (a custom Executor whose
 *     execute runs the task in place) and a {@code Guest2} to {@code Direct}
 *     (an AbstractExecutorService whose submit wraps it in a FutureTask and runs
 *     it in place). Both guests run nested in Host but are reported, with self
 *     W each; Host's self time excludes them: W.
 * <li>Recursion is one execution: {@code Recursive} (submit, n) calls its own
 *     run() 5 levels deep, then spins W.
 * <li>super.run() is the same execution: {@code SubWork extends BaseWork}
 *     (submit, n) spins W/2 then calls super.run() which spins W/2: one execution
 *     of class SubWork with self W; BaseWork itself never appears.
 * </ul>
 *
 * <p>Args: [n=100] [work_us=400] [k=2]
 */
public final class Nested {
    static long workNs;
    static int k;

    static final class Inner implements Runnable {
        public void run() { Truth.spin(workNs / 4); }
    }

    static final class InnerCalc implements Callable<Long> {
        public Long call() { Truth.spin(workNs / 4); return 1L; }
    }

    static final class Fragile implements Runnable {
        public void run() {
            Truth.spin(workNs / 4);
            throw new IllegalStateException("expected: Fragile always throws");
        }
    }

    static final class Outer implements Runnable {
        public void run() {
            Truth.spin(workNs);
            for (int i = 0; i < k; i++) new Inner().run();
            try {
                new InnerCalc().call();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            try {
                new Fragile().run();
                throw new AssertionError("Fragile did not throw");
            } catch (IllegalStateException expected) {
                // an execution ended by an exception
            }
        }
    }

    /** Runs each task in place, inside the caller (a submission: Executor.execute). */
    static final class Inline implements Executor {
        public void execute(Runnable task) { task.run(); }
    }

    /** An ExecutorService whose submit runs the FutureTask in place. */
    static final class Direct extends AbstractExecutorService {
        private volatile boolean shutdown;
        public void execute(Runnable task) { task.run(); }
        public void shutdown() { shutdown = true; }
        public List<Runnable> shutdownNow() { shutdown = true; return new ArrayList<>(); }
        public boolean isShutdown() { return shutdown; }
        public boolean isTerminated() { return shutdown; }
        public boolean awaitTermination(long timeout, TimeUnit unit) { return true; }
    }

    static final Inline INLINE = new Inline();
    static final Direct DIRECT = new Direct();

    static final class Guest implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    static final class Guest2 implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    /** Untimed task of the warm-up. */
    static final class Warmup implements Runnable {
        public void run() { }
    }

    static final class Host implements Runnable {
        public void run() {
            Truth.spin(workNs);
            INLINE.execute(new Guest());
            Future<?> f = DIRECT.submit(new Guest2());
            if (!f.isDone()) throw new AssertionError("Direct did not run Guest2 in place");
        }
    }

    static final class Recursive implements Runnable {
        private int depth = 5;
        public void run() {
            if (depth > 0) {
                depth--;
                run();
            } else {
                Truth.spin(workNs);
            }
        }
    }

    static class BaseWork implements Runnable {
        public void run() { Truth.spin(workNs / 2); }
    }

    static final class SubWork extends BaseWork {
        @Override
        public void run() {
            Truth.spin(workNs - workNs / 2);
            super.run();
        }
    }

    public static void main(String[] args) throws Exception {
        int n = (int) Truth.arg(args, 0, 100);
        workNs = Truth.arg(args, 1, 400) * 1000L;
        k = (int) Truth.arg(args, 2, 2);
        long quarter = workNs / 4;
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 0L, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>());
        Truth truth = new Truth("Nested");
        List<Future<?>> futures = new ArrayList<>();

        // Warm-up: run the probe paths (creation, inline submission, FutureTask
        // plumbing, Future.get) a few thousand times first, so that the timed tasks
        // below are measured with the probes JIT-compiled rather than interpreted.
        final int warm = 3000;
        for (int i = 0; i < warm; i++) {
            INLINE.execute(new Warmup());
            DIRECT.submit(new Warmup()).get();
        }
        truth.task(Warmup.class, "runnable", 2L * warm, 0, 2L * warm);

        for (int i = 0; i < n; i++) pool.execute(new Outer());
        truth.task(Outer.class, "runnable", n, 0, n).self(Outer.class, workNs + (k + 2) * quarter);
        truth.task(Inner.class, "runnable", (long) n * k, (long) n * k, 0);
        truth.task(InnerCalc.class, "callable", n, n, 0);
        truth.task(Fragile.class, "runnable", n, n, 0);

        for (int i = 0; i < n; i++) futures.add(pool.submit(new Host()));
        truth.task(Host.class, "runnable", n, 0, n).self(Host.class, workNs);
        truth.task(Guest.class, "runnable", n, 0, n).self(Guest.class, workNs);
        truth.task(Guest2.class, "runnable", n, 0, n).self(Guest2.class, workNs);

        for (int i = 0; i < n; i++) futures.add(pool.submit(new Recursive()));
        truth.task(Recursive.class, "runnable", n, 0, n).self(Recursive.class, workNs);

        for (int i = 0; i < n; i++) futures.add(pool.submit(new SubWork()));
        truth.task(SubWork.class, "runnable", n, 0, n).self(SubWork.class, workNs);
        truth.task(BaseWork.class, "runnable", 0, 0, 0);

        for (Future<?> f : futures) f.get();
        pool.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) throw new AssertionError("pool did not stop");
        truth.print();
    }
}
