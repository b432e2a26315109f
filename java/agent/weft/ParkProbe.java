package weft;

/**
 * Parks seen by a late agent (docs/attach.md). {@code Unsafe.park} was bound long
 * before an attach, so its native cannot be replaced as at start-up: an attach
 * session wraps the bodies of {@code LockSupport.park*} with these hooks instead
 * (restored at the session's end). The same records as the start-up hook: a park
 * inside a wrapped lock acquisition marks it as parked, any other is a wait. A
 * virtual thread's park leaves its carrier (no {@code Unsafe.park}): not recorded,
 * as virtual threads are not followed by a late agent.
 */
public final class ParkProbe {
    private ParkProbe() {}

    /** {@code java.lang.VirtualThread} (null before JDK 21), resolved at first use. */
    private static final class Vt {
        static final Class<?> CLASS = find();

        private static Class<?> find() {
            try {
                return Class.forName("java.lang.VirtualThread", false, null);
            } catch (Throwable t) {
                return null;
            }
        }
    }

    private static boolean virtualThread() {
        Class<?> v = Vt.CLASS;
        return v != null && Thread.currentThread().getClass() == v;
    }

    /** Entry of {@code LockSupport.park*} (static: {@code self} is null). */
    public static void park(Object self, Object blocker) {
        if (!Probe.on) return;
        try {
            if (!virtualThread()) nBegin(blocker);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** Exit of {@code LockSupport.park*}. */
    public static void parkEnd(Object self) {
        if (!Probe.on) return;
        try {
            if (!virtualThread()) nEnd();
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    private static native void nBegin(Object blocker);

    private static native void nEnd();
}
