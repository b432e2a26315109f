package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * integrate (Aeminium, after Doug Lea's Integrate): adaptive Simpson quadrature
 * of f(x) = (x^2 + 1) x over [0, end] with a fixed error tolerance. At each
 * refinement of an interval wider than {@code cutoff}, the left half is forked
 * as a {@code Quad} task, the right half recursed directly, then
 * {@code left.tryUnfork()}: on success the left half is computed directly
 * (method recursion, no exec); otherwise it is joined. Narrower intervals recurse
 * sequentially. The recursion tree depends only on the numbers, so forks and the
 * result are schedule-independent; the number of successful tryUnforks is not
 * (a thief may take the left half first), but the program knows it exactly.
 *
 * <p>Truth: forks (counted); never_run = successful tryUnforks (pushed usages that
 * never run through exec: wosp's "unforked and not executed via exec");
 * tasks = 1 + forks - never_run. With parallelism 1 nothing can be stolen, so
 * every tryUnfork succeeds and tasks = 1: deterministic. With parallelism &gt; 1
 * the split between tasks and never_run varies from run to run (exact per run).
 *
 * <p>Args: [end=2000] [cutoff_log2=9] (fork only intervals wider than end / 2^cutoff_log2)
 * [parallelism=#cpus] [tol_exp=8] (tolerance 10^-tol_exp) [reps=6]
 */
public final class Integrate {
    static double cutoff, tol;

    static double f(double x) { return (x * x + 1.0) * x; }

    static final class Quad extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final double l, r, fl, fr, a;
        double area;
        long forks, unforked;

        Quad(double l, double r, double fl, double fr, double a) {
            this.l = l; this.r = r; this.fl = fl; this.fr = fr; this.a = a;
        }

        @Override
        protected void compute() { area = recEval(l, r, fl, fr, a); }

        double recEval(double l, double r, double fl, double fr, double a) {
            double h = (r - l) * 0.5;
            double c = l + h;
            double fc = f(c);
            double hh = h * 0.5;
            double al = (fl + fc) * hh;
            double ar = (fr + fc) * hh;
            double alr = al + ar;
            if (Math.abs(alr - a) <= tol) return alr;
            if (r - l <= cutoff) {
                return recEval(l, c, fl, fc, al) + recEval(c, r, fc, fr, ar);
            }
            Quad q = new Quad(l, c, fl, fc, al);
            q.fork();
            forks++;
            double right = recEval(c, r, fc, fr, ar);
            if (q.tryUnfork()) {
                unforked++;
                return recEval(l, c, fl, fc, al) + right; // same order as the join path
            }
            q.quietlyJoin();
            forks += q.forks;
            unforked += q.unforked;
            return q.area + right;
        }
    }

    public static void main(String[] args) throws Exception {
        long end = FjTruth.arg(args, 0, 2000);
        long cutoffLog2 = FjTruth.arg(args, 1, 9);
        int p = FjTruth.parallelism(args, 2);
        long tolExp = FjTruth.arg(args, 3, 8);
        int reps = (int) FjTruth.arg(args, 4, 6);
        FjTruth.check(end > 0 && cutoffLog2 >= 0 && cutoffLog2 < 60 && reps >= 1, "args");
        cutoff = end / Math.pow(2, cutoffLog2);
        tol = Math.pow(10, -tolExp);
        ForkJoinPool pool = new ForkJoinPool(p);
        long forks = 0, unforked = 0;
        double area = 0;
        long[] perRep = new long[reps];
        for (int rep = 0; rep < reps; rep++) {
            double lo = 0, hi = end;
            Quad root = new Quad(lo, hi, f(lo), f(hi), (f(lo) + f(hi)) * (hi - lo) * 0.5);
            pool.invoke(root);
            forks += root.forks;
            unforked += root.unforked;
            perRep[rep] = 1 + root.forks - root.unforked;
            area = root.area;
        }
        FjTruth.shutdown(pool);

        double exact = Math.pow(end, 4) / 4 + Math.pow(end, 2) / 2;
        FjTruth.check(Math.abs(area - exact) <= 1e-6 * exact, "area " + area + " vs " + exact);
        FjTruth t = new FjTruth("integrate", end, cutoffLog2, p, tolExp, reps)
                .result(area)
                .forks(forks).externalSubmissions(reps).tasks(reps + forks - unforked)
                .cancelled(0).reinitialized(0).reused(0).neverRun(unforked);
        for (long n : perRep) t.computation(Quad.class, n);
        t.classTasks(Quad.class, reps + forks - unforked)
                .extra("deterministic", p == 1 ? "true" : "false")
                .print();
    }
}
