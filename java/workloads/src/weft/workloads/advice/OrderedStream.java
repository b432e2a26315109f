package weft.workloads.advice;

import java.util.stream.IntStream;

/**
 * A parallel stream whose heavy work is in its {@code forEachOrdered} action:
 * {@code items} elements, each {@code n} rounds of work in the action, which the
 * stream runs on one element at a time, in order. Prints {@code ordered <checksum>}.
 */
public final class OrderedStream {
    public static void main(String[] args) {
        int items = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        double[] acc = new double[1];
        IntStream.range(0, items).parallel().mapToObj(i -> (double) i)
                .forEachOrdered(v -> acc[0] += v + Arith.work(n));
        System.out.println("ordered " + (long) acc[0]);
    }
}
