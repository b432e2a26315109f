package weft.workloads.advice;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Pool tasks drawing random bytes: {@code tasks} tasks on {@code tasks} threads each
 * draw {@code draws} 64-byte values. {@code how}: {@code shared} (one
 * {@code new SecureRandom()} for all: NativePRNG on Linux), {@code own} (one each:
 * still NativePRNG, whose instances share one JVM-wide source and its locks) or
 * {@code drbg} (one {@code SecureRandom.getInstance("DRBG")} each: the fix).
 * Prints the checksum and the elapsed time.
 * Args: {@code [tasks=4] [draws=200000] [how=shared]}.
 */
public final class SharedSecureRandom {
    public static void main(String[] args) throws Exception {
        int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int draws = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        String how = args.length > 2 ? args[2] : "shared";
        SecureRandom shared = new SecureRandom();
        ExecutorService pool = Executors.newFixedThreadPool(tasks);
        long t0 = System.nanoTime();
        List<Future<Long>> fs = new ArrayList<>();
        for (int t = 0; t < tasks; t++) {
            fs.add(pool.submit(() -> {
                SecureRandom r = switch (how) {
                    case "own" -> new SecureRandom();
                    case "drbg" -> SecureRandom.getInstance("DRBG");
                    default -> shared;
                };
                byte[] b = new byte[64];
                long sum = 0;
                for (int i = 0; i < draws; i++) {
                    r.nextBytes(b);
                    sum += b[0];
                }
                return sum;
            }));
        }
        long sum = 0;
        for (Future<Long> f : fs) {
            sum += f.get();
        }
        pool.shutdown();
        System.out.println("secure-random " + how + " " + sum + " "
                + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }
}
