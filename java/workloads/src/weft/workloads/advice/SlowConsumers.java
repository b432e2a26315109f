package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * {@code main} puts {@code items} items into a bounded queue of 16 that {@code consumers}
 * threads ({@code consumer-N}) take from, each item costing them {@code work} rounds of
 * arithmetic: the consumers together are the bottleneck and {@code main} waits for room.
 * Prints the elapsed time. Args: {@code [consumers=3] [items=600] [work=300000]}.
 */
public final class SlowConsumers {
    public static void main(String[] args) throws Exception {
        int consumers = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int items = args.length > 1 ? Integer.parseInt(args[1]) : 600;
        int work = args.length > 2 ? Integer.parseInt(args[2]) : 300_000;
        BlockingQueue<Integer> queue = new ArrayBlockingQueue<>(16);
        List<Thread> ts = new ArrayList<>();
        double[] sums = new double[consumers];
        long t0 = System.nanoTime();
        for (int c = 0; c < consumers; c++) {
            final int id = c;
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        int v = queue.take();
                        if (v < 0) {
                            return;
                        }
                        sums[id] += Arith.work(work + v % 7);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "consumer-" + c);
            t.start();
            ts.add(t);
        }
        for (int i = 0; i < items; i++) {
            queue.put(i);
        }
        for (int c = 0; c < consumers; c++) {
            queue.put(-1);
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.printf("ms=%.1f%n", (System.nanoTime() - t0) / 1e6);
    }
}
