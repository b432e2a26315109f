package weft;

/**
 * Hooks of {@code java.lang.VirtualThread} (JDK 21+), added at VMInit: {@link #start}
 * and {@link #end} around {@code run(Runnable)} (the thread's life on its carriers,
 * entered mounted, its task the argument); {@link #unmount} and {@link #mount} around
 * {@code yieldContinuation} on JDK 21-23 (the one place a virtual thread leaves and
 * re-enters a carrier there), around {@code unmount()} / after {@code mount()} on 24+
 * (every stretch on a carrier, also those a monitor ends inside the JVM). They replace
 * the JVMTI virtual-thread events (crates/agent/src/vthreads.rs says why). They run
 * on the carrier inside the JDK's mount transitions: nothing here may throw into the
 * program or block.
 */
public final class VtProbe {
    private VtProbe() {}

    /**
     * {@code java.lang.VirtualThread}, taken from the first thread that starts: until
     * one has, no thread to unpark is a virtual one.
     */
    private static volatile Class<?> vtClass;

    public static void start(Object vthread, Object task) {
        if (!Probe.on) return;
        try {
            if (vtClass == null) vtClass = vthread.getClass();
            long tid = ((Thread) vthread).getId();
            if (task == null) {
                nStart(tid, null, 0, 0);
            } else {
                nStart(tid, task, Probe.classIdOf(task), System.identityHashCode(task));
            }
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    public static void end(Object vthread) {
        event(END, vthread);
    }

    public static void unmount(Object vthread) {
        event(UNMOUNT, vthread);
    }

    /**
     * Entry of {@code VirtualThread.park()} / {@code parkNanos(long)}, mounted: a park on
     * a blocker ({@code LockSupport.park(blocker)}: a queue, a condition, a latch) is a
     * wait the agent records with the thread's own frames. A sleep parks with none.
     */
    public static void park(Object vthread) {
        if (!Probe.on) return;
        try {
            Thread t = (Thread) vthread;
            Object blocker = java.util.concurrent.locks.LockSupport.getBlocker(t);
            if (blocker != null) nParkBegin(t.getId(), blocker);
        } catch (Throwable e) {
            Probe.fail(e);
        }
    }

    /**
     * Exit of the park (returned or threw), mounted again; its blocker is still set
     * ({@code LockSupport} clears it after the park returns).
     */
    public static void parkEnd(Object vthread) {
        if (!Probe.on) return;
        try {
            Thread t = (Thread) vthread;
            if (java.util.concurrent.locks.LockSupport.getBlocker(t) != null) nParkEnd(t.getId());
        } catch (Throwable e) {
            Probe.fail(e);
        }
    }

    public static void mount(Object vthread) {
        event(MOUNT, vthread);
    }

    /**
     * Entry of {@code LockSupport.unpark(Thread)} (static: {@code self} is null). A
     * virtual thread's unpark goes to {@code VirtualThread.unpark}, never to
     * {@code Unsafe.unpark} (the agent's hook for platform threads): recorded here, the
     * wake-up edge of its queue, condition and lock hand-offs. One compare for a
     * platform thread's.
     */
    public static void unpark(Object self, Object thread) {
        if (!Probe.on) return;
        try {
            Class<?> v = vtClass;
            if (v != null && thread != null && thread.getClass() == v) {
                nUnpark(((Thread) thread).getId());
            }
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    private static final int END = 0;
    private static final int UNMOUNT = 1;
    private static final int MOUNT = 2;

    /** One of the hooks that only name the thread ({@code what} is a constant where inlined). */
    private static void event(int what, Object vthread) {
        if (!Probe.on) return;
        try {
            long tid = ((Thread) vthread).getId();
            switch (what) {
                case END:
                    nEnd(tid);
                    break;
                case UNMOUNT:
                    nUnmount(tid);
                    break;
                default:
                    nMount(tid);
                    break;
            }
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /** {@code task}: the thread's Runnable, read by the agent only for a thread-per-task wrapper. */
    private static native void nStart(long tid, Object task, int cls, int ident);

    private static native void nEnd(long tid);

    private static native void nUnmount(long tid);

    private static native void nMount(long tid);

    private static native void nUnpark(long tid);

    private static native void nParkBegin(long tid, Object blocker);

    private static native void nParkEnd(long tid);
}
