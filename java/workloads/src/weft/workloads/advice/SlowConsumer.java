package weft.workloads.advice;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.SynchronousQueue;

/**
 * A cheap producer ({@code main}) and {@code consumers} threads behind a bounded queue
 * of {@code capacity}: each item costs its consumer {@code work} rounds of arithmetic
 * (~0.25 ms at the default), producing it almost nothing. With one consumer the queue is
 * full all along and {@code main} waits in {@code put}: the consumer is the bottleneck.
 * A {@code capacity} of 0 is a hand-off with no buffer: a {@code LinkedTransferQueue}
 * that {@code main} {@code transfer}s each item into (it waits for a consumer to take it);
 * -1 a {@code SynchronousQueue} ({@code put} waits the same way).
 * Prints the checksum and the elapsed time. Args: {@code [items=2000] [consumers=1]
 * [capacity=16] [work=100000]}.
 */
public final class SlowConsumer {
    static final Integer STOP = -1;

    static double consume(int item, int work) {
        double s = 0;
        for (int j = 0; j < work; j++) {
            s += Math.sqrt(j + item);
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        int items = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int consumers = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        int capacity = args.length > 2 ? Integer.parseInt(args[2]) : 16;
        int work = args.length > 3 ? Integer.parseInt(args[3]) : 100000;
        LinkedTransferQueue<Integer> handoff = capacity == 0 ? new LinkedTransferQueue<>() : null;
        BlockingQueue<Integer> q = capacity > 0 ? new ArrayBlockingQueue<>(capacity)
                : capacity == 0 ? handoff : new SynchronousQueue<>();
        double[] sums = new double[consumers];
        Thread[] ts = new Thread[consumers];
        long t0 = System.nanoTime();
        for (int c = 0; c < consumers; c++) {
            final int id = c;
            ts[c] = new Thread(() -> {
                try {
                    for (Integer x = q.take(); !x.equals(STOP); x = q.take()) {
                        sums[id] += consume(x, work);
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "consumer-" + c);
            ts[c].start();
        }
        for (int i = 0; i < items; i++) {
            if (handoff != null) {
                handoff.transfer(i);
            } else {
                q.put(i);
            }
        }
        for (int c = 0; c < consumers; c++) {
            q.put(STOP);
        }
        double total = 0;
        for (int c = 0; c < consumers; c++) {
            ts[c].join();
            total += sums[c];
        }
        System.out.println("checksum " + (long) total + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }
}
