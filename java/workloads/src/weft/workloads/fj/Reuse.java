package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

/**
 * Corner case: task reuse with {@code reinitialize()}.
 * <ol>
 * <li>A {@code Driver} is submitted; it forks one {@code Work} object, joins it,
 *     reinitializes it and forks it again, {@code reps} times (reps usages of one
 *     instance: reps - 1 reinitialized / reused).</li>
 * <li>Then a pre-constructed array of {@code width} Work objects is run in a
 *     loop {@code loops} times: each loop reinitializes every object (after the
 *     first loop), forks all, joins all.</li>
 * <li>A Work that is never forked is {@code invoke()}d directly, reinitialized
 *     and invoked again: no usage at all (INIT state), its reinitialize is not
 *     counted, its time is the Driver's.</li>
 * <li>From main, one {@code Root} object is submitted with {@code pool.invoke},
 *     reinitialized and submitted again: two external submissions, two
 *     computations, one reinitialized (a submitted usage counts like a forked
 *     one).</li>
 * </ol>
 * Every reinitialize() counted is on an instance whose previous usage completed
 * and was joined, and is followed by exactly one fork/submission, so here
 * reinitialized == reused.
 *
 * <p>Truth: forks = reps + width * loops; tasks = 1 + forks + 2;
 * reinitialized = reused = (reps - 1) + width * (loops - 1) + 1.
 *
 * <p>Args: [reps=2000] [width=16] [parallelism=#cpus] [loops=200] [work_us=20]
 */
public final class Reuse {
    static long workNs;

    static final class Work extends RecursiveTask<Long> {
        private static final long serialVersionUID = 1L;
        final long v;
        int runs;
        Work(long v) { this.v = v; }
        @Override
        protected Long compute() { runs++; FjTruth.spin(workNs); return v; }
    }

    static final class Root extends RecursiveTask<Long> {
        private static final long serialVersionUID = 1L;
        int runs;
        @Override
        protected Long compute() { runs++; FjTruth.spin(workNs); return 7L; }
    }

    static final class Driver extends RecursiveTask<Long> {
        private static final long serialVersionUID = 1L;
        final int reps, width, loops;
        long forks, reinit;

        Driver(int reps, int width, int loops) { this.reps = reps; this.width = width; this.loops = loops; }

        @Override
        protected Long compute() {
            long sum = 0;
            Work w = new Work(1);
            for (int r = 0; r < reps; r++) {
                if (r > 0) { w.reinitialize(); reinit++; }
                w.fork(); forks++;
                sum += w.join();
            }
            FjTruth.check(w.runs == reps, "reused work runs");

            Work[] tree = new Work[width];
            for (int i = 0; i < width; i++) tree[i] = new Work(i);
            for (int l = 0; l < loops; l++) {
                for (Work t : tree) {
                    if (l > 0) { t.reinitialize(); reinit++; }
                    t.fork(); forks++;
                }
                for (int i = width - 1; i >= 0; i--) sum += tree[i].join();
            }
            for (Work t : tree) FjTruth.check(t.runs == loops, "tree work runs");

            Work direct = new Work(100);
            sum += direct.invoke();
            direct.reinitialize(); // never forked: not a counted reinitialize
            sum += direct.invoke();
            return sum;
        }
    }

    public static void main(String[] args) throws Exception {
        int reps = (int) FjTruth.arg(args, 0, 2000);
        int width = (int) FjTruth.arg(args, 1, 16);
        int p = FjTruth.parallelism(args, 2);
        int loops = (int) FjTruth.arg(args, 3, 200);
        long workUs = FjTruth.arg(args, 4, 20);
        FjTruth.check(reps >= 1 && width >= 1 && loops >= 1, "args");
        workNs = workUs * 1000;
        ForkJoinPool pool = new ForkJoinPool(p);
        Driver d = new Driver(reps, width, loops);
        long sum = pool.invoke(d);
        Root root = new Root();
        sum += pool.invoke(root);
        root.reinitialize();
        sum += pool.invoke(root);
        FjTruth.shutdown(pool);
        FjTruth.check(root.runs == 2, "root runs");
        FjTruth.check(sum == reps + (long) loops * width * (width - 1) / 2 + 200 + 14, "sum " + sum);

        long reinit = d.reinit + 1;
        long driverTasks = 1 + d.forks;
        new FjTruth("reuse", reps, width, p, loops, workUs)
                .result(sum)
                .forks(d.forks).externalSubmissions(3).tasks(driverTasks + 2)
                .cancelled(0).reinitialized(reinit).reused(reinit).neverRun(0)
                .computation(Driver.class, driverTasks)
                .computation(Root.class, 1)
                .computation(Root.class, 1)
                .classTasks(Driver.class, 1)
                .classTasks(Work.class, d.forks)
                .classTasks(Root.class, 2)
                .print();
    }
}
