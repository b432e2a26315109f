package weft;

/**
 * No-op stand-in of weft's monitor probe class for the whole-java.base test: java.base's own
 * monitors call it from the first instructions the VM runs, so it touches nothing but a field.
 */
public final class MonitorProbe {
    public static int calls;

    private MonitorProbe() {}

    public static void enter(Object lock) {
        calls++;
    }

    public static void entered() {
        calls++;
    }

    public static void exit() {
        calls++;
    }

    public static void notify(Object lock) {
        lock.notify();
        calls++;
    }

    public static void notifyAll(Object lock) {
        lock.notifyAll();
        calls++;
    }
}
