package weft.workloads.speedups;

import java.util.Map;

/**
 * Threads with equal work and no synchronisation. Run with more threads than
 * CPUs (e.g. under {@code taskset -c 0}) each waits for a core part of the time;
 * the knob is the CPUs (run it again with one core per thread).
 * Args: threads=2 work=800000.
 */
public final class Oversubscribed {
    static {
        Ledger.start();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Ledger.parse(argv, "threads=2", "work=800000");
        int threads = Integer.parseInt(a.get("threads"));
        long work = Long.parseLong(a.get("work"));
        Ledger l = new Ledger("Oversubscribed", threads);
        a.forEach(l::arg);
        l.arg("cpus", Runtime.getRuntime().availableProcessors());
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> l.timed(0, () -> Ledger.burn(work)), "worker-" + t);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        l.print("cpus=" + Runtime.getRuntime().availableProcessors());
    }
}
