package weft.workloads;

import java.io.File;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

/**
 * Fork-join rounds without a pause, for {@code weft attach} landing in the middle of a
 * computation (crates/cli/tests/attach.rs): tasks already running or queued at the
 * attach, and tasks still queued at the detach. Each round is one {@code Fib(n)}
 * computation on a pool of 2 with {@code tasks} tasks (counted here); the program prints
 * {@code READY} after a first round, then runs rounds until {@code <dir>/quit} appears
 * and prints {@code ROUNDS r tasks=T results=R} (R: the distinct results, 1 when every
 * round computed the same).
 *
 * <p>Args: dir [n=24] [common: the common pool instead of a pool of 2]
 */
public final class AttachForkJoinLoop {
    static final int CUTOFF = 12;

    static final class Fib extends RecursiveTask<Long> {
        final int n;

        Fib(int n) { this.n = n; }

        protected Long compute() {
            if (n < CUTOFF) return seq(n);
            Fib a = new Fib(n - 1);
            a.fork();
            long b = new Fib(n - 2).invoke();
            return a.join() + b;
        }
    }

    static long seq(int n) {
        return n < 2 ? n : seq(n - 1) + seq(n - 2);
    }

    /** Tasks of one round: one per call of compute. */
    static long tasks(int n) {
        return n < CUTOFF ? 1 : 1 + tasks(n - 1) + tasks(n - 2);
    }

    public static void main(String[] args) throws Exception {
        File quit = new File(new File(args[0]), "quit");
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 24;
        boolean common = args.length > 2 && args[2].equals("common");
        ForkJoinPool pool = common ? ForkJoinPool.commonPool() : new ForkJoinPool(2);
        long first = pool.invoke(new Fib(n));
        System.out.println("READY");
        System.out.flush();
        long rounds = 1;
        int results = 1;
        while (!quit.exists()) {
            if (pool.invoke(new Fib(n)) != first) results++;
            rounds++;
        }
        if (!common) pool.shutdown();
        System.out.println("ROUNDS " + rounds + " tasks=" + tasks(n) + " results=" + results);
    }
}
