package weft;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test stub of weft's monitor probe class: counts calls and checks that they come in order on each
 * thread (an `entered` right after an `enter`, never more `exit`s than `enter`s).
 */
public final class MonitorProbe {
    public static final AtomicInteger ENTER = new AtomicInteger();
    public static final AtomicInteger ENTERED = new AtomicInteger();
    public static final AtomicInteger EXIT = new AtomicInteger();
    public static final AtomicInteger NOTIFY = new AtomicInteger();
    public static final AtomicInteger OUT_OF_ORDER = new AtomicInteger();
    private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);

    private MonitorProbe() {}

    public static void enter(Object lock) {
        if (lock == null) OUT_OF_ORDER.incrementAndGet();
        ENTER.incrementAndGet();
        DEPTH.get()[0]++;
    }

    public static void entered() {
        ENTERED.incrementAndGet();
        if (DEPTH.get()[0] <= 0) OUT_OF_ORDER.incrementAndGet();
    }

    public static void exit() {
        EXIT.incrementAndGet();
        if (--DEPTH.get()[0] < 0) OUT_OF_ORDER.incrementAndGet();
    }

    /** Replaces a {@code lock.notify()} call (inside a monitor: depth above 0). */
    public static void notify(Object lock) {
        lock.notify();
        NOTIFY.incrementAndGet();
        if (DEPTH.get()[0] <= 0) OUT_OF_ORDER.incrementAndGet();
    }

    public static void notifyAll(Object lock) {
        lock.notifyAll();
        NOTIFY.incrementAndGet();
        if (DEPTH.get()[0] <= 0) OUT_OF_ORDER.incrementAndGet();
    }
}
