package weft.workloads.locks;

/**
 * Overhead benchmark, lock-heavy: {@code threads} threads hammer ONE shared lock
 * with many short critical sections ({@code cs_work} LCG steps inside,
 * {@code outside_work} outside), first a monitor ({@link Bench.HeavyMonitor}),
 * then a ReentrantLock (kind=mixed). Throughput and elapsed time go to the
 * ground truth's {@code "bench"} (and a human line to stderr). See {@link Bench}.
 *
 * <p>Args: [threads=4] [ops=100000] [cs_work=300] [outside_work=300] [kind=mixed] [truth=1]
 * (ops per thread per kind).
 */
public final class LockHeavyBench {
    static {
        Ground.programStart(); // the truth's main account starts here (Ground.programStart)
    }

    public static void main(String[] argv) throws Exception {
        Bench.run("LockHeavyBench", argv, true,
                "threads=4", "ops=100000", "cs_work=300", "outside_work=300", "kind=mixed", "truth=1");
    }
}
