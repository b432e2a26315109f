package weft.workloads.advice;

import java.util.stream.IntStream;

/**
 * A parallel stream whose elements each block {@code block_ms} (a stand-in for a call
 * to a service or a file read) on the common pool, which is sized for computing (one
 * thread fewer than the CPUs, and the caller): the CPUs idle while the elements wait.
 * Prints the sum and the elapsed time. Args: {@code [elements=100] [block_ms=20]}.
 */
public final class BlockingStream {
    public static void main(String[] args) {
        int elements = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        long blockMs = args.length > 1 ? Long.parseLong(args[1]) : 20;
        long t0 = System.nanoTime();
        long sum = IntStream.range(0, elements).parallel().map(i -> {
            try {
                Thread.sleep(blockMs);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
            return i;
        }).sum();
        System.out.println("sum " + sum + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }
}
