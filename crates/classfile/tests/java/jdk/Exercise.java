package jdk;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RecursiveTask;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.stream.LongStream;
import weft.Probe;

/** Runs the JDK's task machinery on a java.base patched by tests/jdk.rs. Args: name=probeId ... */
public class Exercise {
    static final class Sum extends RecursiveTask<Long> {
        final long lo, hi;
        Sum(long lo, long hi) { this.lo = lo; this.hi = hi; }
        protected Long compute() {
            if (hi - lo < 1000) {
                long s = 0;
                for (long i = lo; i < hi; i++) s += i;
                return s;
            }
            long mid = (lo + hi) / 2;
            Sum a = new Sum(lo, mid);
            a.fork();
            return new Sum(mid, hi).compute() + a.join();
        }
    }

    public static void main(String[] args) throws Exception {
        ThreadPoolExecutor tpe = new ThreadPoolExecutor(2, 2, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        long s = 0;
        for (int i = 0; i < 20; i++) {
            final int k = i;
            Future<Integer> f = tpe.submit(() -> k * k);
            s += f.get();
        }
        tpe.execute(() -> {});
        tpe.shutdown();
        tpe.awaitTermination(10, TimeUnit.SECONDS);
        System.out.println("tpe=" + s);

        ForkJoinPool fjp = new ForkJoinPool(2);
        System.out.println("fj=" + fjp.invoke(new Sum(0, 100_000)));
        System.out.println("fj-submit=" + fjp.submit(new Sum(0, 10_000)).get());
        fjp.shutdown();

        System.out.println("stream=" + LongStream.range(0, 200_000).parallel().map(x -> x % 7).sum());
        System.out.println("common=" + ForkJoinPool.commonPool().invoke(new Sum(0, 50_000)));

        CompletableFuture<String> cf = CompletableFuture.supplyAsync(() -> "cf")
            .thenApplyAsync(x -> x + "!")
            .thenCombine(CompletableFuture.supplyAsync(() -> 2), (a, b) -> a + b);
        System.out.println("cf=" + cf.get());
        ExecutorService ex = java.util.concurrent.Executors.newCachedThreadPool();
        System.out.println("cf-ex=" + CompletableFuture.runAsync(() -> {}, ex).thenApply(v -> "ok").join());
        ex.shutdown();

        FutureTask<String> ft = new FutureTask<>(() -> "ft");
        Thread t = new Thread(ft, "ft-runner");
        t.start();
        System.out.println("ft=" + ft.get());
        t.join();
        int[] box = new int[1];
        Thread t2 = new Thread(() -> box[0] = 7);
        t2.start();
        t2.join();
        System.out.println("thread=" + box[0]);
        System.out.println("list=" + List.of(3, 1, 2).parallelStream().sorted().toList());

        for (String a : args) {
            String[] kv = a.split("=");
            int id = Integer.parseInt(kv[1]);
            System.out.println(kv[0] + " entered=" + (Probe.enters(id) > 0) + " exited=" + (Probe.exits(id) > 0)
                + " created=" + (Probe.created(id) > 0));
        }
    }
}
