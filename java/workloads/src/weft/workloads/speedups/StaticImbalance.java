package weft.workloads.speedups;

import java.util.Map;

/**
 * Items of growing cost (item i costs i+1) statically partitioned over threads
 * (WHATIF W6). Knob {@code partition=cyclic}: item i goes to thread i mod T
 * instead of a contiguous block. Args: threads=2 items=1600 cost=1 partition=block.
 */
public final class StaticImbalance {
    static {
        Ledger.start();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Ledger.parse(argv, "threads=2", "items=1600", "cost=1", "partition=block");
        int threads = Integer.parseInt(a.get("threads")), items = Integer.parseInt(a.get("items"));
        long cost = Long.parseLong(a.get("cost"));
        boolean cyclic = a.get("partition").equals("cyclic");
        Ledger l = new Ledger("StaticImbalance", threads);
        a.forEach(l::arg);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int me = t;
            ts[t] = new Thread(() -> l.timed(0, () -> {
                if (cyclic) {
                    for (int i = me; i < items; i += threads) Ledger.burn(cost * (i + 1));
                } else {
                    int from = items * me / threads, to = items * (me + 1) / threads;
                    for (int i = from; i < to; i++) Ledger.burn(cost * (i + 1));
                }
            }), "worker-" + t);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        l.print(cyclic ? "cyclic" : "block");
    }
}
