package weft.workloads.locks;

import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.concurrent.locks.StampedLock;

/**
 * The shared shape of the contention workloads: N threads, an optional
 * uncontended phase 1 (each thread loops on its own lock) then a contended
 * phase 2 (all threads loop on one shared lock). One iteration = acquire
 * (timed), hold {@code cs_us} inside (see {@link #hold}: slept by default, or
 * busy-spun with {@code hold=spin}), release, busy-spin {@code outside_us}.
 * The phase boundaries are fixed nanoTime deadlines computed before the threads
 * start; a thread checks the deadline before each iteration, so an iteration
 * begun before a boundary may end after it (its periods are split exactly).
 */
final class Contention {
    private Contention() {}

    /** hold=sleep (default): hold the lock by Thread.sleep for the whole ms, then spin the rest. */
    static boolean sleepHold = true;

    /**
     * The critical section: {@code ns} of wall time. With {@code hold=sleep} the whole
     * milliseconds are slept (a wait of kind Thread.sleep, which Free Lunch counts as
     * running) and the remainder busy-spun; with {@code hold=spin} all of it is spun.
     */
    static void hold(Ground.Acct a, long ns) {
        long end = System.nanoTime() + ns;
        long ms = ns / 1_000_000;
        if (sleepHold && ms > 0) {
            long s0 = System.nanoTime();
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            a.waited(Ground.Wait.SLEEP, s0, System.nanoTime());
        }
        Work.spinUntil(end);
    }

    /** Acquires (timed into the account), runs the critical section, releases. */
    interface Guard {
        void run(Ground.Acct a, long csNs);
    }

    /** Creates and registers the locks (before any account); returns per thread {own (phase 1), shared (phase 2)}. */
    interface Factory {
        Guard[][] build(Ground g, int threads, Args args);

        default String threadName(int i, Args args) {
            return "worker-" + i;
        }
    }

    /** Common args, in positional order; workloads append their own. */
    static String[] spec(int threads, long phase1Ms, long phase2Ms, long csUs, long outsideUs, String... more) {
        String[] s = new String[6 + more.length];
        s[0] = "threads=" + threads;
        s[1] = "phase1_ms=" + phase1Ms;
        s[2] = "phase2_ms=" + phase2Ms;
        s[3] = "cs_us=" + csUs;
        s[4] = "outside_us=" + outsideUs;
        s[5] = "hold=sleep";
        System.arraycopy(more, 0, s, 6, more.length);
        return s;
    }

    static void run(String workload, String[] argv, String[] spec, Factory f) throws InterruptedException {
        Ground g = new Ground(workload);
        Args args = new Args(g, argv, spec);
        int n = args.integer("threads");
        long p1 = args.num("phase1_ms") * 1_000_000L, p2 = args.num("phase2_ms") * 1_000_000L;
        long cs = args.num("cs_us") * 1_000L, out = args.num("outside_us") * 1_000L;
        if (n < 1 || p2 <= 0) throw new IllegalArgumentException("threads >= 1 and phase2_ms > 0");
        switch (args.get("hold")) {
            case "sleep": sleepHold = true; break;
            case "spin": sleepHold = false; break;
            default: throw new IllegalArgumentException("hold=sleep|spin");
        }
        Guard[][] guards = f.build(g, n, args);

        long tb = System.nanoTime() + p1, te = tb + p2;
        if (p1 > 0) g.phases(new String[] {"uncontended", "contended"}, new long[] {0, tb});
        else g.phases(new String[] {"contended"}, new long[] {0});
        Ground.Acct main = g.mainAcct();

        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            String name = f.threadName(i, args);
            Ground.Acct a = g.acct(name);
            Guard own = guards[i][0], shared = guards[i][1];
            boolean phase1 = p1 > 0;
            ts[i] = new Thread(() -> {
                a.begin();
                if (phase1) {
                    while (System.nanoTime() - tb < 0) {
                        own.run(a, cs);
                        Work.spin(out);
                    }
                }
                while (System.nanoTime() - te < 0) {
                    shared.run(a, cs);
                    Work.spin(out);
                }
                a.end();
            }, name);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) {
            long j0 = System.nanoTime();
            t.join();
            main.waited(Ground.Wait.JOIN, j0, System.nanoTime());
        }
        g.print();
    }

    // ------------------------------------------------------------------ guards

    static Guard monitor(Ground g, String name, Object obj) {
        int idx = g.lock(name, obj, "monitor", null, null);
        return (a, cs) -> {
            long t0 = System.nanoTime(), t1;
            synchronized (obj) {
                t1 = System.nanoTime();
                hold(a, cs);
            }
            a.blocked(idx, t0, t1);
        };
    }

    static Guard reentrant(Ground g, String name, ReentrantLock lock) {
        int idx = g.lock(name, lock, "reentrant_lock", null, ReentrantLock.class.getName() + (lock.isFair() ? "$FairSync" : "$NonfairSync"));
        return (a, cs) -> {
            long t0 = System.nanoTime();
            lock.lock();
            long t1 = System.nanoTime();
            try {
                hold(a, cs);
            } finally {
                lock.unlock();
            }
            a.blocked(idx, t0, t1);
        };
    }

    /** {read guard, write guard} on the two sides of one read-write lock. */
    static Guard[] readWrite(Ground g, String name, ReentrantReadWriteLock rw) {
        String sync = ReentrantReadWriteLock.class.getName() + (rw.isFair() ? "$FairSync" : "$NonfairSync");
        int r = g.lock(name, rw, "read_write_lock", "read", sync);
        int w = g.lock(name, rw, "read_write_lock", "write", sync);
        java.util.concurrent.locks.Lock rl = rw.readLock(), wl = rw.writeLock();
        Guard read = (a, cs) -> {
            long t0 = System.nanoTime();
            rl.lock();
            long t1 = System.nanoTime();
            try {
                hold(a, cs);
            } finally {
                rl.unlock();
            }
            a.blocked(r, t0, t1);
        };
        Guard write = (a, cs) -> {
            long t0 = System.nanoTime();
            wl.lock();
            long t1 = System.nanoTime();
            try {
                hold(a, cs);
            } finally {
                wl.unlock();
            }
            a.blocked(w, t0, t1);
        };
        return new Guard[] {read, write};
    }

    static Guard semaphore(Ground g, String name, Semaphore s) {
        int idx = g.lock(name, s, "semaphore", null, Semaphore.class.getName() + (s.isFair() ? "$FairSync" : "$NonfairSync"));
        return (a, cs) -> {
            long t0 = System.nanoTime();
            s.acquireUninterruptibly();
            long t1 = System.nanoTime();
            try {
                hold(a, cs);
            } finally {
                s.release();
            }
            a.blocked(idx, t0, t1);
        };
    }

    static Guard stampedWrite(Ground g, String name, StampedLock s) {
        int idx = g.lock(name, s, "stamped_lock", "write", null);
        return (a, cs) -> {
            long t0 = System.nanoTime();
            long stamp = s.writeLock();
            long t1 = System.nanoTime();
            try {
                hold(a, cs);
            } finally {
                s.unlockWrite(stamp);
            }
            a.blocked(idx, t0, t1);
        };
    }
}
