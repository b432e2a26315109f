package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * Known work: a balanced binary tree over {@code leaves} leaves. Every node
 * forks both children and joins both, so every node except the root is a
 * forked usage; the root is one {@code pool.invoke}. A child covering one leaf
 * is a {@code Leaf}, which busy-waits exactly {@code work_us} of wall-clock time
 * (System.nanoTime) and does nothing else; interior nodes are {@code Split}s
 * (negligible own work). So every Leaf task has self time work_us (within the
 * profiler's tolerance), and the Leaf total is leaves * work_us.
 *
 * <p>Truth: Leaf tasks = leaves, Split tasks = leaves - 1 (root included),
 * forks = 2 * leaves - 2, tasks = 2 * leaves - 1, work_ns_per_leaf = work_us * 1000.
 *
 * <p>Args: [leaves=2048] [work_us=200] [parallelism=#cpus]
 */
public final class KnownWork {
    static long workNs;

    static final class Leaf extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        @Override
        protected void compute() { FjTruth.spin(workNs); }
    }

    static final class Split extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final int lo, hi;
        long forks, leaves, splits;

        Split(int lo, int hi) { this.lo = lo; this.hi = hi; }

        @Override
        protected void compute() {
            splits++;
            int mid = (lo + hi) >>> 1;
            RecursiveAction a = mid - lo == 1 ? new Leaf() : new Split(lo, mid);
            RecursiveAction b = hi - mid == 1 ? new Leaf() : new Split(mid, hi);
            a.fork();
            b.fork();
            forks += 2;
            b.join();
            a.join();
            add(a);
            add(b);
        }

        private void add(RecursiveAction t) {
            if (t instanceof Split) {
                Split s = (Split) t;
                forks += s.forks;
                leaves += s.leaves;
                splits += s.splits;
            } else {
                leaves++;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int leaves = (int) FjTruth.arg(args, 0, 2048);
        long workUs = FjTruth.arg(args, 1, 200);
        int p = FjTruth.parallelism(args, 2);
        FjTruth.check(leaves >= 2, "leaves must be >= 2");
        workNs = workUs * 1000L;
        ForkJoinPool pool = new ForkJoinPool(p);
        Split root = new Split(0, leaves);
        pool.invoke(root);
        FjTruth.shutdown(pool);

        FjTruth.check(root.leaves == leaves && root.splits == leaves - 1, "tree shape");
        FjTruth.check(root.forks == 2L * leaves - 2, "fork count");
        long tasks = root.forks + 1;
        new FjTruth("known-work", leaves, workUs, p)
                .result(root.leaves)
                .forks(root.forks).externalSubmissions(1).tasks(tasks)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0)
                .computation(Split.class, tasks)
                .classTasks(Split.class, root.splits)
                .classTasks(Leaf.class, root.leaves)
                .workNsPerLeaf(workNs)
                .extra("known_work", "{\"class\":" + FjTruth.q(Leaf.class.getName())
                        + ",\"tasks\":" + root.leaves + ",\"self_ns\":" + workNs + "}")
                .print();
    }
}
