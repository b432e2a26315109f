package weft;

/**
 * The monitor probes of {@code weft record --lock-detail} (docs/whatif.md): the agent rewrites each
 * {@code monitorenter} of an application class into {@code enter(o); monitorenter; entered()},
 * each {@code monitorexit} into {@code monitorexit; exit()}, and a synchronized method's body to
 * call {@code enter(this)} first and {@code exit()} on every way out; each {@code notify()} and
 * {@code notifyAll()} call becomes a call of {@link #notify} or {@link #notifyAll}. The natives never throw into
 * the program and do nothing while the agent is off.
 */
public final class MonitorProbe {
    private MonitorProbe() {}

    /** About to enter the monitor of {@code lock} (never null: a null monitorenter throws first). */
    public static native void enter(Object lock);

    /** The monitorenter after the last {@link #enter} returned. */
    public static native void entered();

    /** The innermost entered monitor is released. */
    public static native void exit();

    /**
     * Replaces an application's {@code lock.notify()} call: notifies (throwing what
     * {@code notify} throws, before anything is recorded), then records it.
     */
    public static void notify(Object lock) {
        lock.notify();
        notified(lock, false);
    }

    /** Replaces an application's {@code lock.notifyAll()} call, as {@link #notify}. */
    public static void notifyAll(Object lock) {
        lock.notifyAll();
        notified(lock, true);
    }

    /** {@code notify} ({@code all}: {@code notifyAll}) of {@code lock} returned. */
    private static native void notified(Object lock, boolean all);
}
