package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * nbody (Aeminium): direct O(n^2) gravitational n-body simulation for
 * {@code steps} steps. Each step is one {@code pool.invoke} of a {@code Forces}
 * task over all bodies (one computation per step); a range larger than
 * {@code cutoff} bodies forks its left half, computes its right half directly
 * and joins. Each body's acceleration is summed over the other bodies in index
 * order by one task, then positions are advanced sequentially by main: the
 * result is schedule-independent.
 *
 * <p>Truth: forks per step F(n) (counted, checked against a shadow);
 * tasks = steps * (F + 1). Result: sum of the final x coordinates.
 *
 * <p>Args: [n=2500] [cutoff=64] [parallelism=#cpus] [steps=10]
 */
public final class NBody {
    static int cutoff;
    static double[] x, y, z, vx, vy, vz, ax, ay, az, mass;

    static final class Forces extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final int lo, hi;
        long forks;

        Forces(int lo, int hi) { this.lo = lo; this.hi = hi; }

        @Override
        protected void compute() {
            if (hi - lo <= cutoff) {
                int n = x.length;
                for (int i = lo; i < hi; i++) {
                    double sx = 0, sy = 0, sz = 0;
                    for (int j = 0; j < n; j++) {
                        if (j == i) continue;
                        double dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
                        double d2 = dx * dx + dy * dy + dz * dz + 1e-3;
                        double inv = mass[j] / (d2 * Math.sqrt(d2));
                        sx += dx * inv;
                        sy += dy * inv;
                        sz += dz * inv;
                    }
                    ax[i] = sx;
                    ay[i] = sy;
                    az[i] = sz;
                }
                return;
            }
            int mid = (lo + hi) >>> 1;
            Forces left = new Forces(lo, mid), right = new Forces(mid, hi);
            left.fork();
            forks++;
            right.compute();
            left.join();
            forks += left.forks + right.forks;
        }
    }

    static long forksOf(int lo, int hi) {
        if (hi - lo <= cutoff) return 0;
        int mid = (lo + hi) >>> 1;
        return 1 + forksOf(lo, mid) + forksOf(mid, hi);
    }

    public static void main(String[] args) throws Exception {
        int n = (int) FjTruth.arg(args, 0, 2500);
        cutoff = (int) FjTruth.arg(args, 1, 64);
        int p = FjTruth.parallelism(args, 2);
        int steps = (int) FjTruth.arg(args, 3, 10);
        FjTruth.check(n >= 2 && cutoff >= 1 && steps >= 1, "args");
        x = new double[n]; y = new double[n]; z = new double[n];
        vx = new double[n]; vy = new double[n]; vz = new double[n];
        ax = new double[n]; ay = new double[n]; az = new double[n];
        mass = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = Math.cos(i * 0.37) * (1 + i % 7);
            y[i] = Math.sin(i * 0.61) * (1 + i % 5);
            z[i] = ((i * 13) % 11) * 0.1;
            mass[i] = 1.0 + (i % 3);
        }
        ForkJoinPool pool = new ForkJoinPool(p);
        long forks = 0;
        double dt = 1e-3;
        for (int s = 0; s < steps; s++) {
            Forces root = new Forces(0, n);
            pool.invoke(root);
            forks += root.forks;
            for (int i = 0; i < n; i++) {
                vx[i] += ax[i] * dt; vy[i] += ay[i] * dt; vz[i] += az[i] * dt;
                x[i] += vx[i] * dt; y[i] += vy[i] * dt; z[i] += vz[i] * dt;
            }
        }
        FjTruth.shutdown(pool);

        long perStep = forksOf(0, n);
        FjTruth.check(forks == steps * perStep, "fork count");
        double sum = 0;
        for (int i = 0; i < n; i++) sum += x[i];
        FjTruth t = new FjTruth("nbody", n, cutoff, p, steps)
                .result(sum)
                .forks(forks).externalSubmissions(steps).tasks(forks + steps)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0);
        for (int s = 0; s < steps; s++) t.computation(Forces.class, perStep + 1);
        t.classTasks(Forces.class, forks + steps).print();
    }
}
