package weft;

/**
 * Hooks of the measured window (agent option {@code window=pkg.Class.method}): the
 * wrapper of the window method calls {@link #enter} and {@link #exit} (also when
 * the method throws). Nothing here may throw into the program.
 */
public final class WindowProbe {
    private WindowProbe() {}

    public static void enter(Object self) {
        if (!Probe.on) return;
        try {
            nEnter();
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    public static void exit(Object self) {
        if (!Probe.on) return;
        try {
            nExit();
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    private static native void nEnter();

    private static native void nExit();
}
