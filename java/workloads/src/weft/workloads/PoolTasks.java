package weft.workloads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Pool tasks on a ThreadPoolExecutor, every one submitted from main and run by
 * a pool worker, directly in the worker thread (R2: reported, never aggregated).
 *
 * <ul>
 * <li>{@code Work}: Runnable via {@code execute} (n).
 * <li>{@code Job}: Runnable via {@code submit} (n; the FutureTask is plumbing).
 * <li>{@code Calc}: Callable via {@code submit} (n).
 * <li>{@code Batch}: Callable via {@code invokeAll} (n; invokeAll is not a
 *     submission method, but the {@code execute(FutureTask)} it calls is, and
 *     rule 4 matches it to the Batch execution: submitted = n).
 * <li>a lambda Runnable and a lambda Callable via {@code submit} (n each, one
 *     new capturing lambda object per submission; rule 3 reports the FutureTask
 *     execution as the lambda's class).
 * <li>{@code Reused}: one object submitted 3 times = 3 executions, 3 submissions.
 * <li>{@code Thrower}: via {@code submit}, spins then throws (n executions: an
 *     execution ended by an exception is still one).
 * <li>{@code Crasher}: via {@code execute}, spins then throws out of the worker,
 *     which dies and is replaced by the pool (2 executions).
 * </ul>
 * Every task busy-spins work_us, so its self time is work_us.
 *
 * <p>Args: [n=100] [work_us=300] [threads=2]
 */
public final class PoolTasks {
    static long workNs;

    static final class Work implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    static final class Job implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    static final class Calc implements Callable<Long> {
        public Long call() { Truth.spin(workNs); return 1L; }
    }

    static final class Batch implements Callable<Long> {
        public Long call() { Truth.spin(workNs); return 2L; }
    }

    static final class Reused implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    static final class Thrower implements Runnable {
        public void run() {
            Truth.spin(workNs);
            throw new IllegalStateException("expected: Thrower always throws");
        }
    }

    static final class Crasher implements Runnable {
        public void run() {
            Truth.spin(workNs);
            throw new IllegalStateException("expected: Crasher kills its worker");
        }
    }

    public static void main(String[] args) throws Exception {
        int n = (int) Truth.arg(args, 0, 100);
        workNs = Truth.arg(args, 1, 300) * 1000L;
        int threads = (int) Truth.arg(args, 2, 2);
        // Crasher's exception reaches the worker's uncaught-exception handler: keep stderr quiet.
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> { });

        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 0L, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>());
        Truth truth = new Truth("PoolTasks");
        List<Future<?>> futures = new ArrayList<>();

        for (int i = 0; i < n; i++) pool.execute(new Work());
        truth.task(Work.class, "runnable", n, 0, n).self(Work.class, workNs);

        for (int i = 0; i < n; i++) futures.add(pool.submit(new Job()));
        truth.task(Job.class, "runnable", n, 0, n).self(Job.class, workNs);

        for (int i = 0; i < n; i++) futures.add(pool.submit(new Calc()));
        truth.task(Calc.class, "callable", n, 0, n).self(Calc.class, workNs);

        List<Batch> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) batch.add(new Batch());
        long sum = 0;
        for (Future<Long> f : pool.invokeAll(batch)) sum += f.get();
        if (sum != 2L * n) throw new AssertionError("invokeAll");
        truth.task(Batch.class, "callable", n, 0, n).self(Batch.class, workNs);

        submitLambdas(pool, n, truth, futures);

        Reused reused = new Reused();
        for (int i = 0; i < 3; i++) futures.add(pool.submit(reused));
        truth.task(Reused.class, "runnable", 3, 0, 3).self(Reused.class, workNs);

        List<Future<?>> thrown = new ArrayList<>();
        for (int i = 0; i < n; i++) thrown.add(pool.submit(new Thrower()));
        truth.task(Thrower.class, "runnable", n, 0, n).self(Thrower.class, workNs);

        for (int i = 0; i < 2; i++) pool.execute(new Crasher());
        // Counts only: two executions whose (cold) exception construction is part of
        // their self time give no stable median to compare with the known work.
        truth.task(Crasher.class, "runnable", 2, 0, 2);

        for (Future<?> f : futures) f.get();
        int failures = 0;
        for (Future<?> f : thrown) {
            try {
                f.get();
            } catch (ExecutionException expected) {
                failures++;
            }
        }
        if (failures != n) throw new AssertionError("Thrower futures: " + failures);
        pool.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) throw new AssertionError("pool did not stop");
        truth.print();
    }

    /** Lambdas: each name carries this method's name and the lambda's line. */
    static void submitLambdas(ExecutorService pool, int n, Truth truth, List<Future<?>> futures) {
        long w = workNs;
        int runLine = 0;
        int callLine = 0;
        for (int i = 0; i < n; i++) {
            runLine = Truth.line(); futures.add(pool.submit(() -> Truth.spin(w)));
        }
        for (int i = 0; i < n; i++) {
            callLine = Truth.line(); futures.add(pool.submit(() -> { Truth.spin(w); return 3L; }));
        }
        String run = Truth.lambda(PoolTasks.class, "submitLambdas", runLine);
        String call = Truth.lambda(PoolTasks.class, "submitLambdas", callLine);
        truth.task(run, "runnable", n, 0, n).self(run, w);
        truth.task(call, "callable", n, 0, n).self(call, w);
    }
}
