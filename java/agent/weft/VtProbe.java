package weft;

/**
 * Hooks of {@code VirtualThread.yieldContinuation} on JDK 21-23 (the one place a
 * virtual thread leaves and re-enters a carrier there): {@link #unmount} runs on
 * the carrier it leaves, {@link #mount} on the carrier it comes back on. They
 * replace the JVM's mount/unmount notifications, which the JVM also posts at each
 * thread's first mount and last unmount (crates/agent/src/vthreads.rs). Nothing
 * here may throw into the program.
 */
public final class VtProbe {
    private VtProbe() {}

    public static void unmount(Object vthread) {
        if (!Probe.on) return;
        try {
            nUnmount(((Thread) vthread).getId());
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    public static void mount(Object vthread) {
        if (!Probe.on) return;
        try {
            nMount(((Thread) vthread).getId());
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    private static native void nUnmount(long tid);

    private static native void nMount(long tid);
}
