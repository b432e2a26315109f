package weft.workloads.advice;

import java.util.concurrent.Exchanger;

/**
 * A {@code producer} thread fills a buffer ({@code produce} rounds of arithmetic) and
 * swaps it with a {@code consumer} thread ({@code consume} rounds per buffer) through an
 * {@code Exchanger}, {@code rounds} times. With a slower consumer the producer waits at
 * the exchange for it. Prints the elapsed time. Args:
 * {@code [rounds=60] [produce=100000] [consume=4000000]}.
 */
public final class ExchangerPair {
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
        int produce = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        int consume = args.length > 2 ? Integer.parseInt(args[2]) : 4_000_000;
        Exchanger<double[]> exchanger = new Exchanger<>();
        long t0 = System.nanoTime();
        Thread producer = new Thread(() -> {
            double[] b = new double[1];
            try {
                for (int i = 0; i < rounds; i++) {
                    b[0] = Arith.work(produce);
                    b = exchanger.exchange(b);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "producer");
        double[] sum = new double[1];
        Thread consumer = new Thread(() -> {
            double[] b = new double[1];
            try {
                for (int i = 0; i < rounds; i++) {
                    b = exchanger.exchange(b);
                    sum[0] += b[0] + Arith.work(consume);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "consumer");
        producer.start();
        consumer.start();
        producer.join();
        consumer.join();
        System.out.printf("sum=%.1f ms=%.1f%n", sum[0], (System.nanoTime() - t0) / 1e6);
    }
}
