package weft.workloads.locks;

import java.util.concurrent.locks.StampedLock;

/**
 * {@code threads} threads contend for the write lock of one {@link StampedLock}
 * (phase 2), after an optional uncontended phase 1 on per-thread StampedLocks.
 * StampedLock is not AQS-based: it spins, then parks with LockSupport.
 *
 * <p>Args: [threads=3] [phase1_ms=500] [phase2_ms=1000] [cs_us=1000] [outside_us=20] [hold=sleep]
 */
public final class StampedLockContention {
    static {
        Ground.programStart(); // the truth's main account starts here (Ground.programStart)
    }

    public static void main(String[] argv) throws Exception {
        Contention.run("StampedLockContention", argv, Contention.spec(3, 500, 1000, 1000, 20), (g, n, args) -> {
            Contention.Guard shared = Contention.stampedWrite(g, "shared", new StampedLock());
            Contention.Guard[][] gs = new Contention.Guard[n][];
            for (int i = 0; i < n; i++) {
                Contention.Guard own = args.num("phase1_ms") > 0 ? Contention.stampedWrite(g, "own-" + i, new StampedLock()) : null;
                gs[i] = new Contention.Guard[] {own, shared};
            }
            return gs;
        });
    }
}
