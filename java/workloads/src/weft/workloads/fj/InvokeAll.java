package weft.workloads.fj;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveTask;

/**
 * Corner case: {@code ForkJoinTask.invokeAll}. A tree over a range where each
 * node splits into {@code fanout} children and hands them to invokeAll:
 * {@code invokeAll(t1, t2)} for fanout 2, {@code invokeAll(t1, ..., tn)}
 * (varargs) for fanout 3, {@code invokeAll(List)} for fanout 4+ (depth decides).
 *
 * <p>What wosp should count: in JDK 17 (checked with javap) and in JDK 25 (source),
 * every invokeAll overload forks t2..tn (last first) and runs t1 DIRECTLY
 * (doExec on the calling thread, exec in the INIT state): t1 is NOT a task, its
 * time and its own forks belong to the caller's run. The counts below rely on
 * that JDK behaviour (forks are counted in the program as fanout - 1 per
 * invokeAll call, not observed); a JDK that forked every argument would give
 * forks + (number of invokeAll calls). All forked children are joined by
 * invokeAll, so they all run through exec.
 *
 * <p>Truth: forks = sum over invokeAll calls of (n - 1); tasks = forks + 1;
 * result = sum of the range.
 *
 * <p>Args: [n=3000000] [cutoff=2000] [parallelism=#cpus]
 */
public final class InvokeAll {
    static int cutoff;

    static final class Sum extends RecursiveTask<Long> {
        private static final long serialVersionUID = 1L;
        final int lo, hi, depth;
        long forks, calls;

        Sum(int lo, int hi, int depth) { this.lo = lo; this.hi = hi; this.depth = depth; }

        @Override
        protected Long compute() {
            if (hi - lo <= cutoff) {
                long s = 0;
                for (int i = lo; i < hi; i++) s += (long) i * i % 1000003;
                return s;
            }
            int fanout = 2 + depth % 3; // 2, 3, 4, 2, ...
            int len = hi - lo;
            List<Sum> kids = new ArrayList<>();
            for (int c = 0; c < fanout; c++) {
                int a = lo + (int) ((long) len * c / fanout), b = lo + (int) ((long) len * (c + 1) / fanout);
                kids.add(new Sum(a, b, depth + 1));
            }
            if (fanout == 2) ForkJoinTask.invokeAll(kids.get(0), kids.get(1));
            else if (fanout == 3) ForkJoinTask.invokeAll(kids.get(0), kids.get(1), kids.get(2));
            else ForkJoinTask.invokeAll(kids);
            forks += fanout - 1; // JDK 17..25: t2..tn forked, t1 run directly
            calls++;
            long s = 0;
            for (Sum k : kids) {
                s += k.join();
                forks += k.forks;
                calls += k.calls;
            }
            return s;
        }
    }

    public static void main(String[] args) throws Exception {
        int n = (int) FjTruth.arg(args, 0, 3_000_000);
        cutoff = (int) FjTruth.arg(args, 1, 2000);
        int p = FjTruth.parallelism(args, 2);
        FjTruth.check(n >= 1 && cutoff >= 4, "args (cutoff >= 4)");
        ForkJoinPool pool = new ForkJoinPool(p);
        Sum root = new Sum(0, n, 0);
        long result = pool.invoke(root);
        FjTruth.shutdown(pool);
        long expect = 0;
        for (int i = 0; i < n; i++) expect += (long) i * i % 1000003;
        FjTruth.check(result == expect, "sum");

        long tasks = root.forks + 1;
        new FjTruth("invokeall", n, cutoff, p)
                .result(result)
                .forks(root.forks).externalSubmissions(1).tasks(tasks)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0)
                .computation(Sum.class, tasks)
                .classTasks(Sum.class, tasks)
                .extra("invokeall_calls", Long.toString(root.calls))
                .print();
    }
}
