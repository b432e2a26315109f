package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * lud (Aeminium): blocked right-looking LU decomposition (no pivoting, the
 * matrix is diagonally dominant) of an n x n matrix in bs x bs blocks. One
 * root {@code Factor} task is submitted; for each block step k it factors the
 * diagonal block itself, then runs two parallel phases over block index ranges
 * (the panel solves, then the trailing updates), each by calling
 * {@code invoke()} directly on a top {@code Range} (not a task). A Range of more
 * than {@code cutoff} blocks forks its left half, computes its right half
 * directly, then {@code tryUnfork()}s the left half: on success it computes it
 * directly (no exec), else joins it. Every block is updated by exactly one task
 * in a fixed order per step, so the result is schedule-independent.
 *
 * <p>Truth: forks (counted, checked against a shadow); never_run = successful
 * tryUnforks; tasks = 1 + forks - never_run; Range tasks = forks - never_run.
 * With parallelism 1 every tryUnfork succeeds (deterministic); with more, the
 * tasks / never_run split varies per run but is exact.
 *
 * <p>Args: [n=768] [cutoff=1] (blocks per leaf) [parallelism=#cpus] [bs=32]
 */
public final class Lud {
    static int cutoff, bs, nb;
    static double[][] m;

    /** One block operation of a phase: id in [0, count). */
    interface Op { void run(int k, int id); }

    static final class Range extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final Op op;
        final int k, lo, hi;
        long forks, unforked;

        Range(Op op, int k, int lo, int hi) { this.op = op; this.k = k; this.lo = lo; this.hi = hi; }

        @Override
        protected void compute() {
            if (hi - lo <= cutoff) {
                for (int i = lo; i < hi; i++) op.run(k, i);
                return;
            }
            int mid = (lo + hi) >>> 1;
            Range left = new Range(op, k, lo, mid);
            Range right = new Range(op, k, mid, hi);
            left.fork();
            forks++;
            right.compute();
            if (left.tryUnfork()) {
                unforked++;
                left.compute(); // direct: the pushed usage never runs through exec
            } else {
                left.join();
            }
            forks += left.forks + right.forks;
            unforked += left.unforked + right.unforked;
        }
    }

    static final class Factor extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        long forks, unforked;

        @Override
        protected void compute() {
            for (int k = 0; k < nb; k++) {
                factorDiag(k);
                int rest = nb - k - 1;
                if (rest == 0) break;
                Range panels = new Range(Lud::panel, k, 0, 2 * rest);
                panels.invoke();
                Range updates = new Range(Lud::update, k, 0, rest * rest);
                updates.invoke();
                forks += panels.forks + updates.forks;
                unforked += panels.unforked + updates.unforked;
            }
        }
    }

    static void factorDiag(int k) {
        int o = k * bs;
        for (int j = o; j < o + bs; j++) {
            for (int i = j + 1; i < o + bs; i++) {
                m[i][j] /= m[j][j];
                double l = m[i][j];
                for (int c = j + 1; c < o + bs; c++) m[i][c] -= l * m[j][c];
            }
        }
    }

    /** id &lt; rest: row panel block (k, k+1+id) = L_kk^-1 A; else column panel block (k+1+id-rest, k) = A U_kk^-1. */
    static void panel(int k, int id) {
        int rest = nb - k - 1, o = k * bs;
        if (id < rest) {
            int c0 = (k + 1 + id) * bs;
            for (int i = o; i < o + bs; i++)
                for (int j = o; j < i; j++) {
                    double l = m[i][j];
                    for (int c = c0; c < c0 + bs; c++) m[i][c] -= l * m[j][c];
                }
        } else {
            int r0 = (k + 1 + id - rest) * bs;
            for (int r = r0; r < r0 + bs; r++)
                for (int j = o; j < o + bs; j++) {
                    m[r][j] /= m[j][j];
                    double l = m[r][j];
                    for (int c = j + 1; c < o + bs; c++) m[r][c] -= l * m[j][c];
                }
        }
    }

    /** Trailing block (bi, bj) -= L_(bi,k) U_(k,bj). */
    static void update(int k, int id) {
        int rest = nb - k - 1, o = k * bs;
        int r0 = (k + 1 + id / rest) * bs, c0 = (k + 1 + id % rest) * bs;
        for (int r = r0; r < r0 + bs; r++) {
            double[] row = m[r];
            for (int j = o; j < o + bs; j++) {
                double l = row[j];
                double[] u = m[j];
                for (int c = c0; c < c0 + bs; c++) row[c] -= l * u[c];
            }
        }
    }

    static long forksOf(int count) {
        if (count <= cutoff) return 0;
        int mid = count >>> 1;
        return 1 + forksOf(mid) + forksOf(count - mid);
    }

    public static void main(String[] args) throws Exception {
        int n = (int) FjTruth.arg(args, 0, 768);
        cutoff = (int) FjTruth.arg(args, 1, 1);
        int p = FjTruth.parallelism(args, 2);
        bs = (int) FjTruth.arg(args, 3, 32);
        FjTruth.check(bs >= 1 && n % bs == 0 && cutoff >= 1, "args: n must be a multiple of bs");
        nb = n / bs;
        m = new double[n][n];
        double[][] orig = new double[n][n];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                orig[i][j] = m[i][j] = (i == j ? n : 0) + ((i * 13 + j * 7) % 19) / 19.0;
        ForkJoinPool pool = new ForkJoinPool(p);
        Factor root = new Factor();
        pool.invoke(root);
        FjTruth.shutdown(pool);

        long shadow = 0;
        for (int k = 0; k < nb - 1; k++) {
            int rest = nb - k - 1;
            shadow += forksOf(2 * rest) + forksOf(rest * rest);
        }
        FjTruth.check(root.forks == shadow, "fork count");
        // check (L U)[i][j] == orig on a few entries
        for (int t = 0; t < 16; t++) {
            int i = (t * 37) % n, j = (t * 53 + 5) % n;
            double s = 0;
            for (int q = 0; q <= Math.min(i, j); q++) s += (q == i ? 1.0 : m[i][q]) * m[q][j];
            FjTruth.check(Math.abs(s - orig[i][j]) < 1e-8 * n, "LU check");
        }
        double sum = 0;
        for (double[] row : m) for (double v : row) sum += v;
        long tasks = 1 + root.forks - root.unforked;
        new FjTruth("lud", n, cutoff, p, bs)
                .result(sum)
                .forks(root.forks).externalSubmissions(1).tasks(tasks)
                .cancelled(0).reinitialized(0).reused(0).neverRun(root.unforked)
                .computation(Factor.class, tasks)
                .classTasks(Factor.class, 1)
                .classTasks(Range.class, root.forks - root.unforked)
                .extra("deterministic", p == 1 ? "true" : "false")
                .print();
    }
}
