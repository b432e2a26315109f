import java.util.concurrent.*;

/**
 * What recording adds per fork-join task, robust to a loaded machine: tiny tasks in two
 * shapes (a RecursiveTask fork/compute/join tree, whose joins run their task inline,
 * and a CountedCompleter split loop, whose tasks the worker pops and runs), timed
 * in-process; the best of 250 timed invokes after 50 warm-up ones (a loaded machine
 * only adds time, so the minimum is the least disturbed). Args: parallelism.
 */
public class TaskCost {
    static final class Fib extends RecursiveTask<Integer> {
        final int n; Fib(int n) { this.n = n; }
        protected Integer compute() {
            if (n < 2) return n;
            Fib f1 = new Fib(n - 1); f1.fork();
            int b = new Fib(n - 2).compute();
            return f1.join() + b;
        }
    }
    static double[] a = new double[1 << 20];
    static final class Split extends CountedCompleter<Void> {
        final int lo, hi; Split(CountedCompleter<?> p, int lo, int hi) { super(p); this.lo = lo; this.hi = hi; }
        public void compute() {
            int l = lo, h = hi;
            while (h - l > 16) { int mid = (l + h) >>> 1; addToPendingCount(1); new Split(this, mid, h).fork(); h = mid; }
            for (int i = l; i < h; i++) a[i] = a[i] * 0.5 + i;
            tryComplete();
        }
    }
    public static void main(String[] args) {
        int par = Integer.parseInt(args[0]);
        ForkJoinPool p = new ForkJoinPool(par);
        long fibTasks = 0; { int[] c = new int[40]; c[0]=1; c[1]=1; for (int i=2;i<40;i++) c[i]=c[i-1]+c[i-2]+1; fibTasks = c[22]; }
        long best1 = Long.MAX_VALUE, best2 = Long.MAX_VALUE;
        for (int r = 0; r < 300; r++) {
            long t0 = System.nanoTime(); p.invoke(new Fib(22)); long t1 = System.nanoTime();
            p.invoke(new Split(null, 0, a.length)); long t2 = System.nanoTime();
            if (r > 50) { best1 = Math.min(best1, t1 - t0); best2 = Math.min(best2, t2 - t1); }
        }
        System.out.printf("fib ns/task %.1f  split ns/task %.1f%n", (double) best1 / fibTasks, (double) best2 / (a.length / 16));
        p.shutdown();
    }
}
