package weft.workloads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Async CompletableFuture stages on given executors: {@code thenApplyAsync} and
 * {@code thenCombineAsync} on a 2-thread ThreadPoolExecutor, {@code thenAcceptAsync} on a
 * 2-thread ForkJoinPool. Each stage is a {@code CompletableFuture$Completion} the executor
 * runs (plumbing, docs/task-model.md); its execution stands for the stage's function, a
 * lambda reported under its own name (before session 15: {@code CompletableFuture$UniApply},
 * and a fork-join pool's stages as fork-join tasks of that class).
 *
 * <p>Args: [n=100] [work_us=300]
 */
public final class AsyncStages {
    public static void main(String[] args) throws Exception {
        int n = (int) Truth.arg(args, 0, 100);
        long w = Truth.arg(args, 1, 300) * 1000L;
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 0L, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>());
        ForkJoinPool fj = new ForkJoinPool(2);
        Truth truth = new Truth("AsyncStages");
        List<CompletableFuture<?>> futures = new ArrayList<>();
        int supplyLine = 0, applyLine = 0, otherLine = 0, combineLine = 0, acceptLine = 0;
        for (int i = 0; i < n; i++) {
            long k = i;
            supplyLine = Truth.line(); CompletableFuture<Long> s = CompletableFuture.supplyAsync(() -> { Truth.spin(w); return k; }, pool);
            applyLine = Truth.line(); CompletableFuture<Long> a = s.thenApplyAsync(x -> { Truth.spin(w); return x + 1; }, pool);
            otherLine = Truth.line(); CompletableFuture<Long> o = CompletableFuture.supplyAsync(() -> { Truth.spin(w); return 2L; }, pool);
            combineLine = Truth.line(); CompletableFuture<Long> c = a.thenCombineAsync(o, (x, y) -> { Truth.spin(w); return x * y; }, pool);
            acceptLine = Truth.line(); futures.add(c.thenAcceptAsync(x -> Truth.spin(w), fj));
        }
        CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0])).join();
        pool.shutdown();
        fj.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) throw new AssertionError("pool did not stop");
        for (int[] l : new int[][] {{supplyLine, 1}, {otherLine, 1}, {applyLine, 0}, {combineLine, 0}, {acceptLine, 0}}) {
            String name = Truth.lambda(AsyncStages.class, "main", l[0]);
            truth.task(name, l[1] == 1 ? "callable" : "runnable", n, 0, n).self(name, w);
        }
        truth.print();
    }
}
