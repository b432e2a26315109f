package weft.workloads.locks;

/**
 * N threads (default 2; test 2 and 4) contend on one {@code synchronized}
 * object of class {@link Shared}: hold it {@code cs_us} (slept; {@code hold=spin}
 * busy-spins), busy-spin {@code outside_us} outside, for {@code phase2_ms}.
 * Expected CSP ~ (N-1)/N; the truth is what is measured.
 *
 * <p>Args: [threads=2] [phase1_ms=0] [phase2_ms=1500] [cs_us=1000] [outside_us=10] [hold=sleep]
 * (phase1_ms &gt; 0 adds an uncontended phase on per-thread {@link Own} monitors).
 */
public final class MonitorPingPong {
    static {
        Ground.programStart(); // the truth's main account starts here (Ground.programStart)
    }

    /** The contended monitor's class. */
    static final class Shared {}

    /** Per-thread monitors of the optional uncontended phase. */
    static final class Own {}

    public static void main(String[] argv) throws Exception {
        Contention.run("MonitorPingPong", argv, Contention.spec(2, 0, 1500, 1000, 10), (g, n, args) -> {
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
