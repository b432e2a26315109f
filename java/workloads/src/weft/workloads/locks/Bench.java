package weft.workloads.locks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The overhead benchmarks' shared engine. For each lock kind in turn
 * (kind=monitor|reentrant|mixed = monitor then reentrant), a fresh group of
 * {@code threads} threads each does {@code ops} iterations of: acquire,
 * {@code cs_work} LCG steps on the lock's protected state (plus a counter that
 * checks mutual exclusion), release, {@code outside_work} LCG steps on local
 * state. The work is a fixed amount of CPU (not clock-based), so a slowdown
 * anywhere shows in the elapsed time. Each group is a phase of the ground
 * truth; the boundary is set between the groups. With {@code truth=0} the
 * acquisitions are not timed (pure benchmark; blocked times are then absent).
 */
final class Bench {
    private Bench() {}

    /** The state protected by one lock; for monitors, also the lock object. */
    static final class Guarded {
        long x = 1;
        long count;
    }

    /** Monitor lock objects of the contended benchmark. */
    static final class HeavyMonitor {
        final Guarded s = new Guarded();
    }

    /** Per-thread monitor lock objects of the uncontended benchmark. */
    static final class OwnMonitor {
        final Guarded s = new Guarded();
    }

    static void run(String workload, String[] argv, boolean shared, String... spec) throws InterruptedException {
        Ground g = new Ground(workload);
        Args args = new Args(g, argv, spec);
        int n = args.integer("threads");
        long ops = args.num("ops");
        int csWork = args.integer("cs_work"), outWork = args.integer("outside_work");
        boolean truth = args.num("truth") != 0;
        g.measured = truth;
        String kind = args.get("kind");
        List<String> kinds = new ArrayList<>();
        switch (kind) {
            case "monitor": kinds.add("monitor"); break;
            case "reentrant": kinds.add("reentrant_lock"); break;
            case "mixed": kinds.add("monitor"); kinds.add("reentrant_lock"); break;
            default: throw new IllegalArgumentException("kind=monitor|reentrant|mixed");
        }
        double nsPerStep = Work.lcgNsPerStep();

        // Locks: one shared per kind, or one per thread per kind.
        int nl = shared ? 1 : n;
        Object[][] lockObjs = new Object[kinds.size()][nl];
        Guarded[][] states = new Guarded[kinds.size()][nl];
        int[][] idx = new int[kinds.size()][nl];
        for (int k = 0; k < kinds.size(); k++) {
            for (int i = 0; i < nl; i++) {
                String name = (shared ? "shared" : "own-" + i) + (kinds.size() > 1 ? "-" + kinds.get(k) : "");
                if (kinds.get(k).equals("monitor")) {
                    Object m = shared ? new HeavyMonitor() : new OwnMonitor();
                    lockObjs[k][i] = m;
                    states[k][i] = shared ? ((HeavyMonitor) m).s : ((OwnMonitor) m).s;
                    idx[k][i] = g.lock(name, m, "monitor", null, null);
                } else {
                    ReentrantLock l = new ReentrantLock();
                    lockObjs[k][i] = l;
                    states[k][i] = new Guarded();
                    idx[k][i] = g.lock(name, l, "reentrant_lock", null, ReentrantLock.class.getName() + "$NonfairSync");
                }
            }
        }
        String[] phaseNames = kinds.toArray(new String[0]);
        long[] starts = new long[kinds.size()];
        for (int k = 1; k < starts.length; k++) starts[k] = Long.MAX_VALUE; // set between the groups
        g.phases(phaseNames, starts);
        Ground.Acct main = g.mainAcct();

        StringBuilder groups = new StringBuilder("[");
        long totalElapsed = 0;
        boolean allOk = true;
        for (int k = 0; k < kinds.size(); k++) {
            if (k > 0) g.bounds[k] = System.nanoTime(); // every earlier thread has ended (joined)
            Thread[] ts = new Thread[n];
            for (int i = 0; i < n; i++) {
                String tname = kinds.get(k).replace("_lock", "") + "-" + i;
                Ground.Acct a = g.acct(tname);
                int li = shared ? 0 : i;
                Object lockObj = lockObjs[k][li];
                Guarded st = states[k][li];
                int lidx = idx[k][li];
                boolean monitor = kinds.get(k).equals("monitor");
                long seed = 17 + i;
                ts[i] = new Thread(() -> {
                    a.begin();
                    long local = seed;
                    if (monitor) {
                        for (long op = 0; op < ops; op++) {
                            if (truth) {
                                long t0 = System.nanoTime(), t1;
                                synchronized (lockObj) {
                                    t1 = System.nanoTime();
                                    st.x = Work.lcg(st.x, csWork);
                                    st.count++;
                                }
                                a.blocked(lidx, t0, t1);
                            } else {
                                synchronized (lockObj) {
                                    st.x = Work.lcg(st.x, csWork);
                                    st.count++;
                                }
                            }
                            local = Work.lcg(local, outWork);
                        }
                    } else {
                        ReentrantLock l = (ReentrantLock) lockObj;
                        for (long op = 0; op < ops; op++) {
                            long t0 = truth ? System.nanoTime() : 0;
                            l.lock();
                            long t1 = truth ? System.nanoTime() : 0;
                            try {
                                st.x = Work.lcg(st.x, csWork);
                                st.count++;
                            } finally {
                                l.unlock();
                            }
                            if (truth) a.blocked(lidx, t0, t1);
                            local = Work.lcg(local, outWork);
                        }
                    }
                    Work.sink ^= local;
                    a.end();
                }, tname);
            }
            long s0 = System.nanoTime();
            for (Thread t : ts) t.start();
            for (Thread t : ts) {
                long j0 = System.nanoTime();
                t.join();
                main.waited(Ground.Wait.JOIN, j0, System.nanoTime());
            }
            long elapsed = System.nanoTime() - s0;
            totalElapsed += elapsed;
            long count = 0;
            for (Guarded st : states[k]) count += st.count;
            boolean ok = count == n * ops;
            allOk &= ok;
            long total = n * ops;
            double opsPerS = total * 1e9 / elapsed;
            if (k > 0) groups.append(',');
            groups.append(String.format(Locale.ROOT,
                    "{\"kind\":\"%s\",\"threads\":%d,\"ops\":%d,\"elapsed_ns\":%d,\"ops_per_s\":%.1f,\"mutual_exclusion_ok\":%b}",
                    kinds.get(k), n, total, elapsed, opsPerS, ok));
            System.err.printf(Locale.ROOT, "%s %s: %d threads x %d ops in %.3f s = %.0f ops/s%n",
                    workload, kinds.get(k), n, ops, elapsed / 1e9, opsPerS);
        }
        groups.append(']');
        long totalOps = n * ops * kinds.size();
        g.extra.put("bench", String.format(Locale.ROOT,
                "{\"groups\":%s,\"elapsed_ns\":%d,\"ops\":%d,\"ops_per_s\":%.1f,\"mutual_exclusion_ok\":%b,\"lcg_ns_per_step\":%.3f}",
                groups, totalElapsed, totalOps, totalOps * 1e9 / totalElapsed, allOk, nsPerStep));
        System.err.printf(Locale.ROOT, "%s total: %.3f s, %.0f ops/s (lcg %.2f ns/step)%n",
                workload, totalElapsed / 1e9, totalOps * 1e9 / totalElapsed, nsPerStep);
        if (!allOk) throw new IllegalStateException("mutual exclusion violated");
        g.print();
    }
}
