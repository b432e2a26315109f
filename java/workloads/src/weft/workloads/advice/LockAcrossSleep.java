package weft.workloads.advice;

/**
 * Threads that hold a monitor across a blocking call: each of {@code threads} threads
 * enters {@code synchronized (LOCK)} {@code rounds} times and sleeps {@code hold_ms}
 * inside it (a stand-in for I/O or a remote call under a lock). The holder is off
 * the CPU while the others wait: with {@code outside=true} the sleep moves out of the
 * lock (the fix) and the threads sleep side by side. Prints the counter and the
 * elapsed time. Args: {@code [threads=4] [rounds=40] [hold_ms=5] [outside=false]}.
 */
public final class LockAcrossSleep {
    static final Object LOCK = new Object();
    static long counter;

    static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 40;
        long holdMs = args.length > 2 ? Long.parseLong(args[2]) : 5;
        boolean outside = args.length > 3 && Boolean.parseBoolean(args[3]);
        long t0 = System.nanoTime();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < rounds; i++) {
                    if (outside) {
                        pause(holdMs);
                    }
                    synchronized (LOCK) {
                        if (!outside) {
                            pause(holdMs);
                        }
                        counter++;
                    }
                }
            }, "holder-" + t);
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("counter " + counter + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }
}
