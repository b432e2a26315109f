package weft.workloads.locks;

/**
 * Overhead benchmark, lock-using without contention: each thread has its OWN
 * lock (a monitor {@link Bench.OwnMonitor}, then a ReentrantLock with kind=mixed)
 * and does millions of uncontended acquisitions with a little work inside and
 * outside. Ground truth: no contention (each measured acquisition takes ns).
 * See {@link Bench}.
 *
 * <p>Args: [threads=2] [ops=4000000] [cs_work=20] [outside_work=20] [kind=mixed] [truth=1]
 * (ops per thread per kind).
 */
public final class NoContentionBench {
    static {
        Ground.programStart(); // the truth's main account starts here (Ground.programStart)
    }

    public static void main(String[] argv) throws Exception {
        Bench.run("NoContentionBench", argv, false,
                "threads=2", "ops=4000000", "cs_work=20", "outside_work=20", "kind=mixed", "truth=1");
    }
}
