package weft.workloads.whatif;

/**
 * One thread started from a lambda ({@code new Thread(() -> ...)}, no constructor
 * probe for either object): main spins {@code main_ms}, starts the thread, which spins
 * three times as long, and joins it. The run's critical path is main's spin, the
 * thread's start, the thread's spin, main's join: the what-if test checks it goes
 * through the thread back to main (crates/cli/tests/whatif.rs).
 *
 * <p>Args: [main_ms=30]
 */
public final class LambdaThread {
    static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    public static void main(String[] args) throws Exception {
        long ns = (args.length > 0 ? Long.parseLong(args[0]) : 30) * 1_000_000L;
        spin(ns);
        Thread t = new Thread(() -> spin(3 * ns));
        t.start();
        t.join();
        System.out.println("LambdaThread done");
    }
}
