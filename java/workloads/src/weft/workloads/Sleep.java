package weft.workloads;

/**
 * A quiet long run for the signal and concurrent-recording tests: prints
 * {@code PID <pid>} first, then sleeps until max_ms has passed (or it is
 * signalled). A shutdown hook prints {@code shutdown hook ran}, so a test can see
 * that a signal reached the JVM and that it ended normally (its trace complete).
 *
 * With a second argument {@code stubborn}, the hook never returns: only SIGKILL
 * ends the JVM then.
 *
 * <p>Args: [max_ms=60000] [stubborn]
 */
public final class Sleep {
    public static void main(String[] args) throws Exception {
        long maxMs = Truth.arg(args, 0, 60_000);
        boolean stubborn = args.length > 1 && args[1].equals("stubborn");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("shutdown hook ran");
            System.out.flush();
            while (stubborn) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    // keep going: only SIGKILL ends this JVM
                }
            }
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
