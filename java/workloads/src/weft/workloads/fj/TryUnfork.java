package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * Corner case: tryUnfork. One {@code Driver} is submitted. It forks p - 1
 * {@link Blockers} first (nothing forked later can be stolen, so every
 * tryUnfork outcome below is deterministic and asserted), then, {@code rounds}
 * times, with fresh {@code Work} objects:
 * <ol>
 * <li>unfork then run directly: fork, tryUnfork (true), {@code compute()} as a
 *     method: the usage is pushed but never runs through exec (never_run).</li>
 * <li>unfork then invoke: fork, tryUnfork (true), {@code invoke()}: invoke runs
 *     exec, so in the wosp model the (still forked) usage runs: a task, run by
 *     the pushing thread (not a steal).</li>
 * <li>unfork then drop: fork, tryUnfork (true), never touched again (never_run).</li>
 * <li>unfork that fails: fork t, fork u; t.tryUnfork() is false (u is on top);
 *     u.tryUnfork() true and u.compute() (never_run); t.join() runs t through
 *     exec (a task).</li>
 * <li>refork after unfork, no reinitialize (the JDK docs call forking twice a
 *     usage error, but it works and wosp's model chains it): fork, tryUnfork
 *     (true), fork again, join: two usages of one object, the first never runs,
 *     the second runs and chains to the first (reused, not reinitialized).</li>
 * </ol>
 *
 * <p>Truth per round: forks 7, tasks 3 (cases 2, 4, 5), never_run 4 (cases 1, 3,
 * 4's u, 5's first usage), reused 1. Plus Driver (1 task) and p - 1 Blockers.
 *
 * <p>Args: [rounds=1000] [work_us=20] [parallelism=#cpus]
 */
public final class TryUnfork {
    static long workNs;

    static final class Work extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        int runs;
        @Override
        protected void compute() { runs++; FjTruth.spin(workNs); }
    }

    static final class Driver extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final int rounds, p;
        long forks, tasks, neverRun, reused, blockers;

        Driver(int rounds, int p) { this.rounds = rounds; this.p = p; }

        @Override
        protected void compute() {
            Blockers b = new Blockers();
            blockers = b.fork(p);
            forks += blockers;
            for (int r = 0; r < rounds; r++) {
                Work w1 = new Work();
                w1.fork(); forks++;
                FjTruth.check(w1.tryUnfork(), "unfork 1");
                w1.compute(); neverRun++;

                Work w2 = new Work();
                w2.fork(); forks++;
                FjTruth.check(w2.tryUnfork(), "unfork 2");
                w2.invoke(); tasks++;

                Work w3 = new Work();
                w3.fork(); forks++;
                FjTruth.check(w3.tryUnfork(), "unfork 3");
                neverRun++; // dropped

                Work t = new Work(), u = new Work();
                t.fork(); forks++;
                u.fork(); forks++;
                FjTruth.check(!t.tryUnfork(), "unfork of a task not on top succeeded");
                FjTruth.check(u.tryUnfork(), "unfork 4");
                u.compute(); neverRun++;
                t.join(); tasks++;

                Work w5 = new Work();
                w5.fork(); forks++;
                FjTruth.check(w5.tryUnfork(), "unfork 5");
                neverRun++;
                w5.fork(); forks++; reused++;
                w5.join(); tasks++;

                FjTruth.check(w1.runs == 1 && w2.runs == 1 && w3.runs == 0 && t.runs == 1
                        && u.runs == 1 && w5.runs == 1, "run counts");
            }
            b.release();
            b.joinAll();
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = (int) FjTruth.arg(args, 0, 1000);
        long workUs = FjTruth.arg(args, 1, 20);
        int p = FjTruth.parallelism(args, 2);
        workNs = workUs * 1000;
        ForkJoinPool pool = new ForkJoinPool(p);
        Driver d = new Driver(rounds, p);
        pool.invoke(d);
        FjTruth.shutdown(pool);

        long tasks = 1 + d.blockers + d.tasks;
        new FjTruth("tryunfork", rounds, workUs, p)
                .result(d.neverRun)
                .forks(d.forks).externalSubmissions(1).tasks(tasks)
                .cancelled(0).reinitialized(0).reused(d.reused).neverRun(d.neverRun)
                .computation(Driver.class, tasks)
                .classTasks(Driver.class, 1)
                .classTasks(Blockers.Blocker.class, d.blockers)
                .classTasks(Work.class, d.tasks)
                .print();
    }
}
