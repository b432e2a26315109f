package weft.workloads.advice;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * A three-stage pipeline over two bounded queues: {@code parse} ({@code n} rounds per
 * item), {@code transform} ({@code 12 n}: the bottleneck), {@code write} ({@code n}).
 * The first stage waits for room, the last for work, both on {@code transform}.
 * Prints {@code pipeline <items> <checksum>}.
 */
public final class Pipeline {
    public static void main(String[] args) throws Exception {
        int items = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        BlockingQueue<Double> q1 = new ArrayBlockingQueue<>(16);
        BlockingQueue<Double> q2 = new ArrayBlockingQueue<>(16);
        double[] out = new double[1];
        Thread parse = new Thread(() -> {
            try {
                for (int i = 0; i < items; i++) {
                    q1.put(Arith.work(n));
                }
                q1.put(-1.0);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "parse");
        Thread transform = new Thread(() -> {
            try {
                for (double v = q1.take(); v >= 0; v = q1.take()) {
                    q2.put(v + Arith.work(12 * n));
                }
                q2.put(-1.0);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "transform");
        Thread write = new Thread(() -> {
            try {
                for (double v = q2.take(); v >= 0; v = q2.take()) {
                    out[0] += v + Arith.work(n);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "write");
        parse.start();
        transform.start();
        write.start();
        parse.join();
        transform.join();
        write.join();
        System.out.println("pipeline " + items + " " + (long) out[0]);
    }
}
