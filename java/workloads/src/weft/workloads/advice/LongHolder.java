package weft.workloads.advice;

/**
 * One thread that holds a monitor for long stretches: a {@code holder} thread computes
 * {@code rounds} times for about {@code hold_ms} inside {@code synchronized (LOCK)}, with a
 * short pause between, while {@code waiters} threads each take the lock for a moment
 * {@code rounds} times and mostly wait for it. The CPUs idle because of the lock, not
 * because the holder's work is one piece. Prints the counter.
 * Args: {@code [waiters=2] [rounds=20] [hold_ms=60]}.
 */
public final class LongHolder {
    static final Object LOCK = new Object();
    static long counter;

    public static void main(String[] args) throws Exception {
        int waiters = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        long holdMs = args.length > 2 ? Long.parseLong(args[2]) : 60;
        Thread holder = new Thread(() -> {
            for (int r = 0; r < rounds; r++) {
                synchronized (LOCK) {
                    long end = System.nanoTime() + holdMs * 1_000_000;
                    double s = 0;
                    while (System.nanoTime() < end) {
                        s += Arith.work(2000);
                    }
                    counter += (long) s & 1;
                }
                Thread.onSpinWait();
            }
        }, "holder");
        Thread[] ws = new Thread[waiters];
        for (int w = 0; w < waiters; w++) {
            ws[w] = new Thread(() -> {
                for (int r = 0; r < rounds; r++) {
                    synchronized (LOCK) {
                        counter++;
                    }
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "waiter-" + w);
        }
        holder.start();
        for (Thread w : ws) {
            w.start();
        }
        holder.join();
        for (Thread w : ws) {
            w.join();
        }
        System.out.println("counter " + counter);
    }
}
