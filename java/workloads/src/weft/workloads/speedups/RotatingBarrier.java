package weft.workloads.speedups;

import java.util.Map;
import java.util.concurrent.CyclicBarrier;

/**
 * Threads meet at a barrier every round; in round r thread r mod T does twice the
 * work of the others (WHATIF W8): balanced over the run, imbalanced in every
 * round. Knob {@code even=true}: the same total, shared evenly in each round.
 * Args: threads=2 rounds=200 work=2000 even=false (work in burn units per round).
 */
public final class RotatingBarrier {
    static {
        Ledger.start();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Ledger.parse(argv, "threads=2", "rounds=200", "work=2000", "even=false");
        int threads = Integer.parseInt(a.get("threads")), rounds = Integer.parseInt(a.get("rounds"));
        long work = Long.parseLong(a.get("work"));
        boolean even = Boolean.parseBoolean(a.get("even"));
        Ledger l = new Ledger("RotatingBarrier", threads);
        a.forEach(l::arg);
        CyclicBarrier barrier = new CyclicBarrier(threads);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        long units = even ? work * (threads + 1) / threads : (r % threads == me ? 2 * work : work);
                        l.timed(r, () -> Ledger.burn(units));
                        barrier.await();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "worker-" + t);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        l.print(even ? "even" : "rotating");
    }
}
