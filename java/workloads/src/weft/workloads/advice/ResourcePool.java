package weft.workloads.advice;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A pool of {@code items} "connections" (an {@code ArrayBlockingQueue}) shared by a
 * pool of {@code threads}: each of {@code tasks} tasks takes a connection, holds it for a
 * {@code holdMs} ms "query" (a sleep), and puts it back. With fewer connections than
 * threads the tasks queue for connections. Prints the elapsed time. Args:
 * {@code [items=2] [threads=8] [tasks=400] [holdMs=5]}.
 */
public final class ResourcePool {
    public static void main(String[] args) throws Exception {
        int items = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        int tasks = args.length > 2 ? Integer.parseInt(args[2]) : 400;
        long holdMs = args.length > 3 ? Long.parseLong(args[3]) : 5;
        BlockingQueue<Object> connections = new ArrayBlockingQueue<>(items);
        for (int i = 0; i < items; i++) {
            connections.add(new Object());
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long t0 = System.nanoTime();
        for (int i = 0; i < tasks; i++) {
            pool.execute(() -> {
                try {
                    Object c = connections.take();
                    try {
                        Thread.sleep(holdMs);
                    } finally {
                        connections.put(c);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        System.out.printf("items=%d threads=%d ms=%.1f%n", items, threads, (System.nanoTime() - t0) / 1e6);
    }
}
