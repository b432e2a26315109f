package weft.workloads.speedups;

import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Threads alternate work outside a lock and inside one shared lock (WHATIF W1,
 * lock-bound regime). Knob {@code lock=none}: the same work, no lock. Blocked
 * time is the nanoTime difference around each acquisition.
 * Args: threads=2 iters=1000 outside=100 cs=400 lock=reentrant|sync|none.
 */
public final class ContendedLock {
    static {
        Ledger.start();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Ledger.parse(argv, "threads=2", "iters=1000", "outside=100", "cs=400", "lock=reentrant");
        int threads = Integer.parseInt(a.get("threads")), iters = Integer.parseInt(a.get("iters"));
        long outside = Long.parseLong(a.get("outside")), cs = Long.parseLong(a.get("cs"));
        String kind = a.get("lock");
        Ledger l = new Ledger("ContendedLock", threads);
        a.forEach(l::arg);
        ReentrantLock lock = new ReentrantLock();
        Object monitor = new Object();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                long c0 = Ledger.cpu(), w0 = System.nanoTime(), blocked = 0, blockedCpu = 0;
                for (int i = 0; i < iters; i++) {
                    Ledger.burn(outside);
                    switch (kind) {
                        case "none" -> Ledger.burn(cs);
                        case "sync" -> {
                            long bc = Ledger.cpu(), b = System.nanoTime();
                            synchronized (monitor) {
                                blocked += System.nanoTime() - b;
                                blockedCpu += Ledger.cpu() - bc;
                                Ledger.burn(cs);
                            }
                        }
                        default -> {
                            long bc = Ledger.cpu(), b = System.nanoTime();
                            lock.lock();
                            try {
                                blocked += System.nanoTime() - b;
                                blockedCpu += Ledger.cpu() - bc;
                                Ledger.burn(cs);
                            } finally {
                                lock.unlock();
                            }
                        }
                    }
                }
                l.record(0, Ledger.cpu() - c0, System.nanoTime() - w0, blocked, blockedCpu);
            }, "worker-" + t);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        l.print(kind);
    }
}
