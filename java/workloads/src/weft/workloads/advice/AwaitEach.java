package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code count} pieces of work of {@code work} rounds of arithmetic (~30 ms at the
 * default), run as pool tasks ({@code mode=tasks}: a pool of 4) or as threads
 * ({@code mode=threads}), each waited for before the next is started
 * ({@code all=false}: {@code submit(task).get()}, {@code t.start(); t.join()}): one at a
 * time. With {@code all=true} all are started first, then waited for. Prints the
 * checksum and the elapsed time. Args: {@code [mode=tasks] [all=false] [count=20]
 * [work=5000000]}.
 */
public final class AwaitEach {
    public static void main(String[] args) throws Exception {
        boolean threads = args.length > 0 && args[0].equals("threads");
        boolean all = args.length > 1 && Boolean.parseBoolean(args[1]);
        int count = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        int work = args.length > 3 ? Integer.parseInt(args[3]) : 5_000_000;
        long t0 = System.nanoTime();
        double[] r = new double[count];
        if (threads) {
            List<Thread> ts = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                final int k = i;
                Thread t = new Thread(() -> r[k] = Arith.work(work), "piece-" + i);
                t.start();
                if (all) {
                    ts.add(t);
                } else {
                    t.join();
                }
            }
            for (Thread t : ts) {
                t.join();
            }
        } else {
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<Double>> fs = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                Future<Double> f = pool.submit(() -> Arith.work(work));
                if (all) {
                    fs.add(f);
                } else {
                    r[i] = f.get();
                }
            }
            for (int i = 0; i < fs.size(); i++) {
                r[i] = fs.get(i).get();
            }
            pool.shutdown();
        }
        double s = 0;
        for (double x : r) {
            s += x;
        }
        System.out.println("checksum " + (long) s + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }
}
