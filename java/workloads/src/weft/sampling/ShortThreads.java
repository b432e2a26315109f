package weft.sampling;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A thread per task: {@code threads} threads, two at a time, each running
 * {@link #burn} for about {@code micros} µs of CPU, far below the CPU sampling
 * period. Prints {@code burn_cpu_ns <n>}: the CPU time the threads spent in
 * {@code burn} (each thread's own clock; the loop makes no system call), the truth the CPU samples are checked
 * against.
 */
public final class ShortThreads {
    static final AtomicLong CPU_NS = new AtomicLong();
    /** Looked up once: each lookup runs a stream over the platform's beans. */
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static volatile long sink;

    static long burn(long micros) {
        long start = MX.getCurrentThreadCpuTime();
        long deadline = System.nanoTime() + micros * 1000;
        long h = 1;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 200; i++) {
                h = h * 31 + i;
            }
        }
        CPU_NS.addAndGet(MX.getCurrentThreadCpuTime() - start);
        return h;
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long micros = Long.parseLong(args[1]);
        for (int i = 0; i < threads; i += 2) {
            Thread a = new Thread(() -> sink += burn(micros));
            Thread b = new Thread(() -> sink += burn(micros));
            a.start();
            b.start();
            a.join();
            b.join();
        }
        System.out.println("burn_cpu_ns " + CPU_NS.get());
    }
}
