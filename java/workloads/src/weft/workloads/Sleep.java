package weft.workloads;

/**
 * A quiet long run for the signal and concurrent-recording tests: prints
 * {@code PID <pid>} first, then sleeps until max_ms has passed (or it is
 * signalled). A shutdown hook prints {@code shutdown hook ran}, so a test can see
 * that a signal reached the JVM and that it ended normally (its trace complete).
 *
 * <p>Args: [max_ms=60000]
 */
public final class Sleep {
    public static void main(String[] args) throws Exception {
        long maxMs = Truth.arg(args, 0, 60_000);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("shutdown hook ran");
            System.out.flush();
        }));
        System.out.println("PID " + ProcessHandle.current().pid());
        System.out.flush();
        long end = System.currentTimeMillis() + maxMs;
        while (System.currentTimeMillis() < end) {
            Thread.sleep(20);
        }
        System.out.println("slept " + maxMs + " ms");
    }
}
