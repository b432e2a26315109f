package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * heat (Aeminium): Jacobi iteration of 2-D heat diffusion on a rows x cols grid
 * for {@code steps} time steps. One root {@code Solve} task is submitted
 * ({@code pool.invoke}); for every step it calls {@code invoke()} directly on a
 * fresh {@code Rows} task over all interior rows: that top Rows object is run
 * as a method call, NOT forked, so it is not a task (its time and its forks
 * belong to Solve's run). A Rows range larger than {@code cutoff} rows forks its
 * upper half, computes its lower half directly and joins.
 *
 * <p>Truth: forks per step F(r) = r &lt;= cutoff ? 0 : 1 + F(r/2 upper) + F(lower)
 * (counted and checked against a shadow); Rows tasks = steps * F; Solve tasks =
 * 1; one computation (root Solve) with all of them. Result: sum of the final
 * grid (each cell is computed by one task from the previous grid: deterministic).
 *
 * <p>Args: [size=512] [cutoff=4] [parallelism=#cpus] [steps=100]
 */
public final class Heat {
    static int cutoff, cols;

    static final class Rows extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final double[][] src, dst;
        final int lo, hi;
        long forks;

        Rows(double[][] src, double[][] dst, int lo, int hi) {
            this.src = src; this.dst = dst; this.lo = lo; this.hi = hi;
        }

        @Override
        protected void compute() {
            if (hi - lo <= cutoff) {
                for (int i = lo; i < hi; i++) {
                    double[] up = src[i - 1], mid = src[i], down = src[i + 1], out = dst[i];
                    for (int j = 1; j < cols - 1; j++) {
                        out[j] = mid[j] + 0.2 * (up[j] + down[j] + mid[j - 1] + mid[j + 1] - 4 * mid[j]);
                    }
                }
                return;
            }
            int m = (lo + hi) >>> 1;
            Rows upper = new Rows(src, dst, lo, m);
            Rows lower = new Rows(src, dst, m, hi);
            upper.fork();
            forks++;
            lower.compute();
            upper.join();
            forks += upper.forks + lower.forks;
        }
    }

    static final class Solve extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final int steps;
        double[][] a, b;
        long forks;

        Solve(double[][] a, double[][] b, int steps) { this.a = a; this.b = b; this.steps = steps; }

        @Override
        protected void compute() {
            for (int s = 0; s < steps; s++) {
                Rows top = new Rows(a, b, 1, a.length - 1);
                top.invoke(); // direct: not a task
                forks += top.forks;
                double[][] t = a; a = b; b = t;
            }
        }
    }

    static long forksOf(int lo, int hi) {
        if (hi - lo <= cutoff) return 0;
        int m = (lo + hi) >>> 1;
        return 1 + forksOf(lo, m) + forksOf(m, hi);
    }

    public static void main(String[] args) throws Exception {
        int size = (int) FjTruth.arg(args, 0, 512);
        cutoff = (int) FjTruth.arg(args, 1, 4);
        int p = FjTruth.parallelism(args, 2);
        int steps = (int) FjTruth.arg(args, 3, 100);
        FjTruth.check(size >= 3 && cutoff >= 1 && steps >= 1, "args");
        cols = size;
        double[][] a = new double[size][size], b = new double[size][size];
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < size; j++) {
                boolean edge = i == 0 || j == 0 || i == size - 1 || j == size - 1;
                a[i][j] = b[i][j] = edge ? (i == 0 ? 100.0 : 0.0) : ((i * 31 + j * 17) % 11) * 0.5;
            }
        }
        ForkJoinPool pool = new ForkJoinPool(p);
        Solve root = new Solve(a, b, steps);
        pool.invoke(root);
        FjTruth.shutdown(pool);

        long perStep = forksOf(1, size - 1);
        FjTruth.check(root.forks == steps * perStep, "fork count");
        double sum = 0;
        for (double[] row : root.a) for (double v : row) sum += v;
        long tasks = root.forks + 1;
        new FjTruth("heat", size, cutoff, p, steps)
                .result(sum)
                .forks(root.forks).externalSubmissions(1).tasks(tasks)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0)
                .computation(Solve.class, tasks)
                .classTasks(Solve.class, 1)
                .classTasks(Rows.class, root.forks)
                .print();
    }
}
