package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * matrixmult (Aeminium): C = A x B for n x n matrices. A block of C larger than
 * cutoff x cutoff is split along its longer side (rows first on a tie): the
 * first half is forked, the second computed directly, then the first joined.
 * A leaf block computes its elements with the k loop in a fixed order, so C is
 * bit-identical whatever the schedule.
 *
 * <p>Truth: forks = (leaf blocks - 1), counted in the tasks and checked against a
 * shadow of the split; tasks = forks + 1; one computation. Result: sum of C.
 *
 * <p>Args: [n=512] [cutoff=16] [parallelism=#cpus]
 */
public final class MatrixMult {
    static int cutoff;
    static double[][] A, B, C;

    static final class Block extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final int r0, r1, c0, c1;
        long forks;

        Block(int r0, int r1, int c0, int c1) { this.r0 = r0; this.r1 = r1; this.c0 = c0; this.c1 = c1; }

        @Override
        protected void compute() {
            int rows = r1 - r0, cols = c1 - c0;
            if (rows <= cutoff && cols <= cutoff) {
                int n = A.length;
                for (int i = r0; i < r1; i++) {
                    double[] ci = C[i], ai = A[i];
                    for (int k = 0; k < n; k++) {
                        double aik = ai[k];
                        double[] bk = B[k];
                        for (int j = c0; j < c1; j++) ci[j] += aik * bk[j];
                    }
                }
                return;
            }
            Block first, second;
            if (rows >= cols) {
                int m = (r0 + r1) >>> 1;
                first = new Block(r0, m, c0, c1);
                second = new Block(m, r1, c0, c1);
            } else {
                int m = (c0 + c1) >>> 1;
                first = new Block(r0, r1, c0, m);
                second = new Block(r0, r1, m, c1);
            }
            first.fork();
            forks++;
            second.compute();
            first.join();
            forks += first.forks + second.forks;
        }
    }

    static long forksOf(int rows, int cols) {
        if (rows <= cutoff && cols <= cutoff) return 0;
        if (rows >= cols) return 1 + forksOf(rows / 2, cols) + forksOf(rows - rows / 2, cols);
        return 1 + forksOf(rows, cols / 2) + forksOf(rows, cols - cols / 2);
    }

    public static void main(String[] args) throws Exception {
        int n = (int) FjTruth.arg(args, 0, 512);
        cutoff = (int) FjTruth.arg(args, 1, 16);
        int p = FjTruth.parallelism(args, 2);
        FjTruth.check(n >= 1 && cutoff >= 1, "args");
        A = new double[n][n];
        B = new double[n][n];
        C = new double[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                A[i][j] = ((i * 7 + j * 3) % 13) * 0.125 - 0.5;
                B[i][j] = ((i * 5 + j * 11) % 17) * 0.0625 + 0.25;
            }
        }
        ForkJoinPool pool = new ForkJoinPool(p);
        Block root = new Block(0, n, 0, n);
        pool.invoke(root);
        FjTruth.shutdown(pool);

        FjTruth.check(root.forks == forksOf(n, n), "fork count");
        double sum = 0;
        for (double[] row : C) for (double v : row) sum += v;
        long tasks = root.forks + 1;
        new FjTruth("matrixmult", n, cutoff, p)
                .result(sum)
                .forks(root.forks).externalSubmissions(1).tasks(tasks)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0)
                .computation(Block.class, tasks)
                .classTasks(Block.class, tasks)
                .print();
    }
}
