package weft.workloads.locks;

import java.util.concurrent.Semaphore;

/**
 * {@code threads} threads share a {@link Semaphore} with {@code permits} &lt; threads
 * permits (phase 2), after an optional uncontended phase 1 where each thread has
 * its own semaphore. Expected CSP ~ (threads-permits)/threads.
 *
 * <p>Args: [threads=4] [phase1_ms=500] [phase2_ms=1000] [cs_us=1000] [outside_us=20] [hold=sleep] [permits=2] [fair=0]
 */
public final class SemaphoreContention {
    static {
        Ground.programStart(); // the truth's main account starts here (Ground.programStart)
    }

    public static void main(String[] argv) throws Exception {
        Contention.run("SemaphoreContention", argv, Contention.spec(4, 500, 1000, 1000, 20, "permits=2", "fair=0"), (g, n, args) -> {
            boolean fair = args.num("fair") != 0;
            int permits = args.integer("permits");
            Contention.Guard shared = Contention.semaphore(g, "shared", new Semaphore(permits, fair));
            Contention.Guard[][] gs = new Contention.Guard[n][];
            for (int i = 0; i < n; i++) {
                Contention.Guard own = args.num("phase1_ms") > 0 ? Contention.semaphore(g, "own-" + i, new Semaphore(permits, fair)) : null;
                gs[i] = new Contention.Guard[] {own, shared};
            }
            return gs;
        });
    }
}
