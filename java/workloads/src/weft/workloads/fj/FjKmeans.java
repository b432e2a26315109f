package weft.workloads.fj;

import java.util.SplittableRandom;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

/**
 * fj-kmeans (Renaissance): Lloyd's k-means on {@code n} 3-D points. Each
 * iteration is one {@code pool.invoke} of an {@code Assign} task (one
 * computation per iteration): a range larger than {@code cutoff} points forks
 * BOTH halves and joins both (as in wosp's table, every task object is a forked
 * usage); a leaf assigns its points to the nearest centroid and returns
 * per-cluster sums, which are merged left + right in tree order. Centroids are
 * then updated sequentially by main. Merge order is fixed by the tree, so the
 * result is schedule-independent.
 *
 * <p>Truth: forks per iteration F(n) = 2 * (leaves - 1) (counted, checked against
 * a shadow); tasks = iters * (F + 1). Result: sum of final centroid coordinates.
 *
 * <p>Args: [n=200000] [cutoff=1000] [parallelism=#cpus] [k=16] [iters=25]
 */
public final class FjKmeans {
    static int cutoff, k;
    static double[] px, py, pz;
    static double[] cx, cy, cz;

    static final class Assign extends RecursiveTask<double[]> {
        private static final long serialVersionUID = 1L;
        final int lo, hi;
        long forks;

        Assign(int lo, int hi) { this.lo = lo; this.hi = hi; }

        /** Result layout: [sumx[k], sumy[k], sumz[k], count[k]]. */
        @Override
        protected double[] compute() {
            if (hi - lo <= cutoff) {
                double[] acc = new double[4 * k];
                for (int i = lo; i < hi; i++) {
                    int best = 0;
                    double bd = Double.MAX_VALUE;
                    for (int c = 0; c < k; c++) {
                        double dx = px[i] - cx[c], dy = py[i] - cy[c], dz = pz[i] - cz[c];
                        double d = dx * dx + dy * dy + dz * dz;
                        if (d < bd) { bd = d; best = c; }
                    }
                    acc[best] += px[i];
                    acc[k + best] += py[i];
                    acc[2 * k + best] += pz[i];
                    acc[3 * k + best] += 1;
                }
                return acc;
            }
            int mid = (lo + hi) >>> 1;
            Assign left = new Assign(lo, mid), right = new Assign(mid, hi);
            left.fork();
            right.fork();
            forks += 2;
            double[] r = right.join();
            double[] l = left.join();
            forks += left.forks + right.forks;
            for (int i = 0; i < l.length; i++) l[i] += r[i];
            return l;
        }
    }

    static long forksOf(int lo, int hi) {
        if (hi - lo <= cutoff) return 0;
        int mid = (lo + hi) >>> 1;
        return 2 + forksOf(lo, mid) + forksOf(mid, hi);
    }

    public static void main(String[] args) throws Exception {
        int n = (int) FjTruth.arg(args, 0, 200_000);
        cutoff = (int) FjTruth.arg(args, 1, 1000);
        int p = FjTruth.parallelism(args, 2);
        k = (int) FjTruth.arg(args, 3, 16);
        int iters = (int) FjTruth.arg(args, 4, 25);
        FjTruth.check(n >= k && k >= 1 && cutoff >= 1 && iters >= 1, "args");
        px = new double[n]; py = new double[n]; pz = new double[n];
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < n; i++) {
            int blob = i % k;
            px[i] = blob * 3.0 + rnd.nextGaussian();
            py[i] = (blob % 4) * 5.0 + rnd.nextGaussian();
            pz[i] = (blob / 4) * 7.0 + rnd.nextGaussian();
        }
        cx = new double[k]; cy = new double[k]; cz = new double[k];
        for (int c = 0; c < k; c++) { cx[c] = px[c * 7]; cy[c] = py[c * 7]; cz[c] = pz[c * 7]; }
        ForkJoinPool pool = new ForkJoinPool(p);
        long forks = 0;
        for (int it = 0; it < iters; it++) {
            Assign root = new Assign(0, n);
            double[] acc = pool.invoke(root);
            forks += root.forks;
            for (int c = 0; c < k; c++) {
                double cnt = acc[3 * k + c];
                if (cnt > 0) { cx[c] = acc[c] / cnt; cy[c] = acc[k + c] / cnt; cz[c] = acc[2 * k + c] / cnt; }
            }
        }
        FjTruth.shutdown(pool);

        long perIter = forksOf(0, n);
        FjTruth.check(forks == iters * perIter, "fork count");
        double sum = 0;
        for (int c = 0; c < k; c++) sum += cx[c] + cy[c] + cz[c];
        FjTruth t = new FjTruth("fj-kmeans", n, cutoff, p, k, iters)
                .result(sum)
                .forks(forks).externalSubmissions(iters).tasks(forks + iters)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0);
        for (int i = 0; i < iters; i++) t.computation(Assign.class, perIter + 1);
        t.classTasks(Assign.class, forks + iters).print();
    }
}
