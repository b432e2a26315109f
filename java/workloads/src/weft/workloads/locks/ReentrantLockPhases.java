package weft.workloads.locks;

import java.util.concurrent.locks.ReentrantLock;

/**
 * {@link MonitorPhases} on {@link ReentrantLock}s: phase 1 each thread its own
 * lock, phase 2 one shared lock. {@code fair=1} makes the locks fair.
 *
 * <p>Args: [threads=4] [phase1_ms=1000] [phase2_ms=1000] [cs_us=1000] [outside_us=20] [hold=sleep] [fair=0]
 */
public final class ReentrantLockPhases {
    static {
        Ground.programStart(); // the truth's main account starts here (Ground.programStart)
    }

    public static void main(String[] argv) throws Exception {
        Contention.run("ReentrantLockPhases", argv, Contention.spec(4, 1000, 1000, 1000, 20, "fair=0"), (g, n, args) -> {
            boolean fair = args.num("fair") != 0;
            Contention.Guard shared = Contention.reentrant(g, "shared", new ReentrantLock(fair));
            Contention.Guard[][] gs = new Contention.Guard[n][];
            for (int i = 0; i < n; i++) {
                Contention.Guard own = args.num("phase1_ms") > 0 ? Contention.reentrant(g, "own-" + i, new ReentrantLock(fair)) : null;
                gs[i] = new Contention.Guard[] {own, shared};
            }
            return gs;
        });
    }
}
