package weft.workloads.locks;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Writers contend with readers on one {@link ReentrantReadWriteLock} (phase 2),
 * after an optional uncontended phase 1 where each thread uses its own
 * read-write lock with the same role. Threads 0..writers-1 take the write lock,
 * the others the read lock; the read and write sides are recorded separately
 * (readers block only behind writers, or behind a queued writer).
 *
 * <p>Args: [threads=4] [phase1_ms=500] [phase2_ms=1000] [cs_us=1000] [outside_us=20] [hold=sleep] [writers=2] [fair=0]
 */
public final class ReadWriteLockContention {
    static {
        Ground.programStart(); // the truth's main account starts here (Ground.programStart)
    }

    public static void main(String[] argv) throws Exception {
        Contention.run("ReadWriteLockContention", argv, Contention.spec(4, 500, 1000, 1000, 20, "writers=2", "fair=0"),
                new Contention.Factory() {
                    @Override
                    public Contention.Guard[][] build(Ground g, int n, Args args) {
                        boolean fair = args.num("fair") != 0;
                        int writers = args.integer("writers");
                        Contention.Guard[] shared = Contention.readWrite(g, "shared", new ReentrantReadWriteLock(fair));
                        Contention.Guard[][] gs = new Contention.Guard[n][];
                        for (int i = 0; i < n; i++) {
                            int side = i < writers ? 1 : 0;
                            Contention.Guard own = args.num("phase1_ms") > 0
                                    ? Contention.readWrite(g, "own-" + i, new ReentrantReadWriteLock(fair))[side] : null;
                            gs[i] = new Contention.Guard[] {own, shared[side]};
                        }
                        return gs;
                    }

                    @Override
                    public String threadName(int i, Args args) {
                        int writers = args.integer("writers");
                        return i < writers ? "writer-" + i : "reader-" + (i - writers);
                    }
                });
    }
}
