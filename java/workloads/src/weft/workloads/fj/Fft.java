package weft.workloads.fj;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * fft (Aeminium): recursive radix-2 decimation-in-time FFT of {@code n}
 * (a power of two) complex points, out of place. A transform of size
 * {@code > cutoff} forks the even half, computes the odd half directly, joins,
 * then combines (butterflies) sequentially. Each output element is computed by
 * a fixed sequence of operations, so the result is bit-identical whatever the
 * schedule. The transform is repeated {@code reps} times, each one
 * {@code pool.invoke} (one computation each).
 *
 * <p>Truth: forks per transform F(n) = n &lt;= cutoff ? 0 : 1 + 2 F(n/2) (counted in
 * the tasks and checked); tasks = reps * (F + 1); result = sum of |X_k| (last rep).
 *
 * <p>Args: [log2_n=18] [cutoff=16] [parallelism=#cpus] [reps=4]
 */
public final class Fft {
    static int cutoff;
    static double[] cosT, sinT; // twiddles of the full size N: w^k = exp(-2 pi i k / N)
    static int fullN;

    static final class Transform extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final double[] inRe, inIm, outRe, outIm;
        final int inOff, stride, outOff, n;
        long forks;

        Transform(double[] inRe, double[] inIm, int inOff, int stride,
                  double[] outRe, double[] outIm, int outOff, int n) {
            this.inRe = inRe; this.inIm = inIm; this.inOff = inOff; this.stride = stride;
            this.outRe = outRe; this.outIm = outIm; this.outOff = outOff; this.n = n;
        }

        @Override
        protected void compute() {
            if (n <= cutoff) {
                seq(inOff, stride, outOff, n);
                return;
            }
            int h = n / 2;
            Transform even = new Transform(inRe, inIm, inOff, 2 * stride, outRe, outIm, outOff, h);
            Transform odd = new Transform(inRe, inIm, inOff + stride, 2 * stride, outRe, outIm, outOff + h, h);
            even.fork();
            forks++;
            odd.compute();
            even.join();
            forks += even.forks + odd.forks;
            combine(outOff, n);
        }

        private void seq(int io, int st, int oo, int m) {
            if (m == 1) {
                outRe[oo] = inRe[io];
                outIm[oo] = inIm[io];
                return;
            }
            seq(io, 2 * st, oo, m / 2);
            seq(io + st, 2 * st, oo + m / 2, m / 2);
            combine(oo, m);
        }

        private void combine(int oo, int m) {
            int h = m / 2, step = fullN / m;
            for (int k = 0; k < h; k++) {
                double c = cosT[k * step], s = sinT[k * step];
                double oRe = outRe[oo + h + k], oIm = outIm[oo + h + k];
                double tRe = c * oRe - s * oIm, tIm = c * oIm + s * oRe;
                double eRe = outRe[oo + k], eIm = outIm[oo + k];
                outRe[oo + k] = eRe + tRe;
                outIm[oo + k] = eIm + tIm;
                outRe[oo + h + k] = eRe - tRe;
                outIm[oo + h + k] = eIm - tIm;
            }
        }
    }

    static long forksOf(int n) { return n <= cutoff ? 0 : 1 + 2 * forksOf(n / 2); }

    public static void main(String[] args) throws Exception {
        int logN = (int) FjTruth.arg(args, 0, 18);
        cutoff = (int) FjTruth.arg(args, 1, 16);
        int p = FjTruth.parallelism(args, 2);
        int reps = (int) FjTruth.arg(args, 3, 4);
        FjTruth.check(logN >= 1 && logN <= 26 && cutoff >= 1 && reps >= 1, "args");
        int n = 1 << logN;
        fullN = n;
        cosT = new double[n / 2];
        sinT = new double[n / 2];
        for (int k = 0; k < n / 2; k++) {
            double a = -2 * Math.PI * k / n;
            cosT[k] = Math.cos(a);
            sinT[k] = Math.sin(a);
        }
        double[] re = new double[n], im = new double[n];
        for (int i = 0; i < n; i++) {
            re[i] = Math.sin(i * 0.001) + (i % 17) * 0.25;
            im[i] = Math.cos(i * 0.0007) - (i % 5) * 0.5;
        }
        ForkJoinPool pool = new ForkJoinPool(p);
        long forks = 0;
        double[] oRe = new double[n], oIm = new double[n];
        for (int r = 0; r < reps; r++) {
            Transform root = new Transform(re, im, 0, 1, oRe, oIm, 0, n);
            pool.invoke(root);
            forks += root.forks;
        }
        FjTruth.shutdown(pool);

        long perRep = forksOf(n);
        FjTruth.check(forks == reps * perRep, "fork count");
        double sum = 0, sumIn = 0;
        for (int i = 0; i < n; i++) {
            sum += Math.hypot(oRe[i], oIm[i]);
            sumIn += re[i];
        }
        FjTruth.check(Math.abs(oRe[0] - sumIn) < 1e-6 * Math.max(1, Math.abs(sumIn)), "DC term");
        FjTruth t = new FjTruth("fft", logN, cutoff, p, reps)
                .result(sum)
                .forks(forks).externalSubmissions(reps).tasks(forks + reps)
                .cancelled(0).reinitialized(0).reused(0).neverRun(0);
        for (int r = 0; r < reps; r++) t.computation(Transform.class, perRep + 1);
        t.classTasks(Transform.class, forks + reps).print();
    }
}
