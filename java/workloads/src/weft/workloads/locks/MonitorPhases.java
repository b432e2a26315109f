package weft.workloads.locks;

/**
 * Phase 1 ({@code phase1_ms}): no contention, each thread loops on its own
 * monitor (class {@link Own}). Phase 2 ({@code phase2_ms}): heavy contention,
 * all threads loop on one monitor (class {@link Shared}). Iteration: enter,
 * hold {@code cs_us} (slept; {@code hold=spin} busy-spins), exit, busy-spin
 * {@code outside_us}.
 *
 * <p>Args: [threads=4] [phase1_ms=1000] [phase2_ms=1000] [cs_us=1000] [outside_us=20] [hold=sleep]
 */
public final class MonitorPhases {
    static {
        Ground.programStart(); // the truth's main account starts here (Ground.programStart)
    }

    static final class Shared {}

    static final class Own {}

    public static void main(String[] argv) throws Exception {
        Contention.run("MonitorPhases", argv, Contention.spec(4, 1000, 1000, 1000, 20), (g, n, args) -> {
            Contention.Guard shared = Contention.monitor(g, "shared", new Shared());
            Contention.Guard[][] gs = new Contention.Guard[n][];
            for (int i = 0; i < n; i++) {
                Contention.Guard own = args.num("phase1_ms") > 0 ? Contention.monitor(g, "own-" + i, new Own()) : null;
                gs[i] = new Contention.Guard[] {own, shared};
            }
            return gs;
        });
    }
}
