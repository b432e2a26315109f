package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * Corner case: cancel before run. One {@code Driver} is submitted
 * ({@code pool.invoke}). It first forks p - 1 {@link Blockers} (so no other
 * worker can steal what follows), then, {@code rounds} times:
 * <ol>
 * <li>forks {@code victims} {@code Victim}s and cancels each with
 *     {@code cancel(true)} while it is still in the Driver's queue: every cancel
 *     succeeds (asserted), so each is a pushed usage that is cleared and never
 *     runs through exec (the worker that later pops it sees it done and skips
 *     exec). They are then quietly joined (already done).</li>
 * <li>cancel that fails: forks one {@code Late}, joins it (it runs), then
 *     {@code cancel(true)} returns false (asserted): not a cancellation.</li>
 * <li>cancel before fork: a new {@code Late} is cancelled while never forked
 *     (no usage: the model emits nothing), reinitialized (no usage: not counted
 *     as reinitialized), then forked and joined: one normal task.</li>
 * </ol>
 * Then it releases and joins the Blockers. Deterministic for any parallelism.
 *
 * <p>Truth: cancelled = rounds * victims; forks = (p - 1) + rounds * (victims + 2);
 * tasks = 1 + (p - 1) + 2 * rounds; never_run = 0 (cancelled usages are counted
 * as cancelled, not never_run); reinitialized = 0 (the only reinitialize() is on
 * a never-forked instance).
 *
 * <p>Args: [victims=50] [rounds=20] [parallelism=#cpus]
 */
public final class CancelBeforeRun {
    static final class Victim extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        static volatile int ran;
        @Override
        protected void compute() { ran++; }
    }

    static final class Late extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        @Override
        protected void compute() { FjTruth.spin(10_000); }
    }

    static final class Driver extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final int victims, rounds, p;
        long forks, cancelled, cancelFailed, blockers;

        Driver(int victims, int rounds, int p) { this.victims = victims; this.rounds = rounds; this.p = p; }

        @Override
        protected void compute() {
            Blockers b = new Blockers();
            blockers = b.fork(p);
            forks += blockers;
            for (int r = 0; r < rounds; r++) {
                Victim[] vs = new Victim[victims];
                for (int i = 0; i < victims; i++) {
                    vs[i] = new Victim();
                    vs[i].fork();
                    forks++;
                }
                for (int i = victims - 1; i >= 0; i--) {
                    FjTruth.check(vs[i].cancel(true), "cancel of a queued task failed");
                    cancelled++;
                }
                for (Victim v : vs) {
                    v.quietlyJoin();
                    FjTruth.check(v.isCancelled(), "victim not cancelled");
                }

                Late done = new Late();
                done.fork();
                forks++;
                done.join();
                FjTruth.check(!done.cancel(true), "cancel of a completed task succeeded");
                cancelFailed++;

                Late early = new Late();
                FjTruth.check(early.cancel(true), "cancel of a new task failed");
                early.reinitialize();
                early.fork();
                forks++;
                early.join();
                FjTruth.check(early.isCompletedNormally(), "reinitialized task did not run");
            }
            b.release();
            b.joinAll();
        }
    }

    public static void main(String[] args) throws Exception {
        int victims = (int) FjTruth.arg(args, 0, 50);
        int rounds = (int) FjTruth.arg(args, 1, 20);
        int p = FjTruth.parallelism(args, 2);
        ForkJoinPool pool = new ForkJoinPool(p);
        Driver d = new Driver(victims, rounds, p);
        pool.invoke(d);
        FjTruth.shutdown(pool); // queued cancelled victims are popped and skipped by now
        FjTruth.check(Victim.ran == 0, "a cancelled victim ran");

        long tasks = 1 + d.blockers + 2L * rounds;
        new FjTruth("cancel-before-run", victims, rounds, p)
                .result(d.cancelled)
                .forks(d.forks).externalSubmissions(1).tasks(tasks)
                .cancelled(d.cancelled).reinitialized(0).reused(0).neverRun(0)
                .computation(Driver.class, tasks)
                .classTasks(Driver.class, 1)
                .classTasks(Blockers.Blocker.class, d.blockers)
                .classTasks(Late.class, 2L * rounds)
                .extra("cancel_failed", Long.toString(d.cancelFailed))
                .print();
    }
}
