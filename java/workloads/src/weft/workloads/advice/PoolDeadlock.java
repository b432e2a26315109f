package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A thread-starvation deadlock: a pool of 2 threads runs {@code outer} tasks that
 * each submit an inner task to the same pool and wait for it with {@code get()}.
 * The first two outer tasks take both threads and wait for inner tasks queued
 * behind the other outer tasks: nothing runs again. A watchdog ends the JVM after
 * {@code ms} with exit status 3 (the pool threads still blocked).
 * Args: {@code [outer=6] [ms=800]}.
 */
public final class PoolDeadlock {
    public static void main(String[] args) throws Exception {
        int outer = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        long ms = args.length > 1 ? Long.parseLong(args[1]) : 800;
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                return;
            }
            System.out.println("PoolDeadlock: still blocked after " + ms + " ms, exiting");
            System.exit(3);
        }, "watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<Future<Integer>> fs = new ArrayList<>();
        // The outer tasks submit their inner ones only once all outer ones are queued:
        // an inner task submitted before the pool had its second thread would start
        // that thread itself and run (5 tasks never started instead of 6, now and then).
        CountDownLatch queued = new CountDownLatch(1);
        for (int i = 0; i < outer; i++) {
            final int k = i;
            fs.add(pool.submit(() -> {
                queued.await();
                Future<Integer> inner = pool.submit(() -> k * 2);
                return inner.get();
            }));
        }
        queued.countDown();
        for (Future<Integer> f : fs) {
            f.get();
        }
        System.out.println("PoolDeadlock: no deadlock");
    }
}
