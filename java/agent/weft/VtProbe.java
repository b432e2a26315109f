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
                return;
            }
            int ident = System.identityHashCode(task);
            Object covered = nStart(tid, task, Probe.classIdOf(task), ident);
            // A Callable's kind is said by its own probe (call()) alone: left recording.
            // The slot the agent claimed is still given back at the end.
            if (covered != null && !(covered instanceof java.util.concurrent.Callable)) {
                cover(tid, task, ident, covered);
            }
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    public static void end(Object vthread) {
        if (!Probe.on) return;
        try {
            long tid = ((Thread) vthread).getId();
            int s = slot(tid);
            int wrapperIdent = 0;
            long wrapperEnd = 0;
            if (OWNER[s] == tid) {
                wrapperIdent = WRAPPER_IDENT[s];
                wrapperEnd = WRAPPER_END[s];
                COVERED[s] = null;
                WRAPPER[s] = null;
                OWNER[s] = 0;
            }
            ENDED[s] = tid;
            nEnd(tid, wrapperIdent, wrapperEnd);
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /*
     * What a virtual thread's own records already say. Its start record names its task
     * and, for a thread-per-task executor's wrapper, the wrapper's begin names the task
     * inside it; so on that thread the task's own execution probes, and the wrapper's
     * end (written with the thread's end), would only repeat them: two or three JNI
     * calls per virtual thread (docs/virtual-threads.md). A slot per thread id, which
     * the agent gives at the thread's start ({@link #nStart} returns non-null, having
     * claimed it by compare-and-set) and takes back at its end ({@link #nEnd}): a
     * thread whose slot another live one holds records those probes as before. Plain
     * arrays (an atomic array's VarHandles doubled what C2 inlined of these hooks):
     * only the slot's holder writes it, between the agent's claim and release, and only
     * the holder finds its own id in it. Ownership changes only at the thread's start
     * and end, so a probe's entry and exit decide alike.
     */
    private static final int SLOTS = 4096; // vthreads::COVER_SLOTS
    /** The thread id that holds each slot (0: none). */
    private static final long[] OWNER = new long[SLOTS];
    /** The task whose execution probes the thread's records cover (owner's writes). */
    private static final Object[] COVERED = new Object[SLOTS];
    /** The thread-per-task wrapper whose end the thread's end writes (null: none). */
    private static final Object[] WRAPPER = new Object[SLOTS];
    private static final int[] WRAPPER_IDENT = new int[SLOTS];
    /**
     * When the wrapper's execution ended (the agent's ticks, 0: not yet): its task's
     * end, else its own {@code run}'s. The record is written at the thread's end with
     * this time; the trace reader puts a virtual thread's records in time order.
     */
    private static final long[] WRAPPER_END = new long[SLOTS];
    /**
     * The thread that ended last in each slot: on JDK 24+ its final {@code unmount()},
     * after {@code run} returned, records nothing (its end said it), so it makes no
     * JNI call. Racy: a miss only makes the call.
     */
    private static final long[] ENDED = new long[SLOTS];

    private static int slot(long tid) {
        return (int) tid & (SLOTS - 1);
    }

    private static void cover(long tid, Object task, int ident, Object covered) {
        int s = slot(tid);
        OWNER[s] = tid;
        COVERED[s] = covered;
        WRAPPER_END[s] = 0;
        if (covered != task) {
            WRAPPER[s] = task;
            WRAPPER_IDENT[s] = ident;
        } else {
            WRAPPER_IDENT[s] = 0;
        }
    }

    /**
     * Whether a probe of {@code self} on the current (virtual) thread is covered by the
     * thread's own records: its task, or its thread-per-task wrapper.
     */
    static boolean covers(Object self) {
        long tid = Thread.currentThread().getId();
        int s = slot(tid);
        return OWNER[s] == tid && (COVERED[s] == self || WRAPPER[s] == self);
    }

    /**
     * {@link #covers} at an exit probe of {@code self}, which also times the wrapper's
     * end (the agent's clock, as the fork-join hooks read it): the task's exit (the
     * outermost, the last one), else the wrapper's own.
     */
    static boolean coversExit(Object self) {
        long tid = Thread.currentThread().getId();
        int s = slot(tid);
        if (OWNER[s] != tid) return false;
        if (COVERED[s] == self) {
            if (WRAPPER[s] != null) WRAPPER_END[s] = FjProbe.now();
            return true;
        }
        if (WRAPPER[s] == self) {
            if (WRAPPER_END[s] == 0) WRAPPER_END[s] = FjProbe.now();
            return true;
        }
        return false;
    }

    public static void unmount(Object vthread) {
        long tid = ((Thread) vthread).getId();
        if (ENDED[slot(tid)] == tid) return; // the final one (24+): its end said it
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

    private static final int UNMOUNT = 1;
    private static final int MOUNT = 2;

    /** One of the hooks that only name the thread ({@code what} is a constant where inlined). */
    private static void event(int what, Object vthread) {
        if (!Probe.on) return;
        try {
            long tid = ((Thread) vthread).getId();
            if (what == UNMOUNT) {
                nUnmount(tid);
            } else {
                nMount(tid);
            }
        } catch (Throwable t) {
            Probe.fail(t);
        }
    }

    /**
     * {@code task}: the thread's Runnable, read by the agent only for a thread-per-task
     * wrapper. Returns the task whose execution probes the records written here cover
     * (the wrapper's inner task, or {@code task} itself when it is no plumbing), having
     * claimed the thread's slot for it; null: none, or the slot is taken.
     */
    private static native Object nStart(long tid, Object task, int cls, int ident);

    /**
     * {@code wrapperIdent}: the identity of the wrapper whose end to write first (0:
     * none), which ended at {@code wrapperEnd} (ticks; 0: now). Gives back the thread's
     * slot if it held it.
     */
    private static native void nEnd(long tid, int wrapperIdent, long wrapperEnd);

    private static native void nUnmount(long tid);

    private static native void nMount(long tid);

    private static native void nUnpark(long tid);

    private static native void nParkBegin(long tid, Object blocker);

    private static native void nParkEnd(long tid);
}
