package weft.workloads.advice;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Threads that hold a lock while they wait for another thread: each of {@code threads}
 * threads takes one {@code ReentrantLock} {@code rounds} times and, holding it, submits
 * a job to a 2-thread pool (it sleeps {@code job_ms}, a stand-in for a remote call) and
 * waits for its result with {@code Future.get}. The others wait for the lock meanwhile;
 * with {@code outside=true} the job is submitted and awaited before the lock is taken
 * (the fix) and the jobs of different threads overlap. Prints the sum and the elapsed
 * time. Args: {@code [threads=4] [rounds=60] [job_ms=2] [outside=false]}.
 */
public final class LockAcrossGet {
    static final ReentrantLock LOCK = new ReentrantLock();
    static long sum;

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 60;
        long jobMs = args.length > 2 ? Long.parseLong(args[2]) : 2;
        boolean outside = args.length > 3 && Boolean.parseBoolean(args[3]);
        ExecutorService backend = Executors.newFixedThreadPool(2);
        long t0 = System.nanoTime();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < rounds; i++) {
                    try {
                        long v = 0;
                        if (outside) {
                            v = backend.submit(() -> job(jobMs)).get();
                        }
                        LOCK.lock();
                        try {
                            if (!outside) {
                                Future<Long> f = backend.submit(() -> job(jobMs));
                                v = f.get();
                            }
                            sum += v;
                        } finally {
                            LOCK.unlock();
                        }
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }
            }, "request-" + t);
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        backend.shutdown();
        System.out.println("sum " + sum + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }

    static long job(long ms) throws InterruptedException {
        Thread.sleep(ms);
        return ms;
    }
}
