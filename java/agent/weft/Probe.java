package weft;

import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The hot path of the weft agent. Instrumented methods call {@link #enter},
 * {@link #exit} and {@link #created}; the probe id tells the kind (bits 24..27),
 * so the common cases need one native call. Nothing here allocates after a
 * class's first use, and nothing may throw into the program: any Throwable
 * switches the agent off.
 */
public final class Probe {
    /** Set by the agent at VMInit, cleared at VMDeath or when the agent disables itself. */
    public static volatile boolean on;

    private static final int EXECUTION = 1;
    private static final int PLUMBING = 2;
    private static final int SUBMISSION = 3;
    /** Future.get / CompletableFuture.join (docs/task-model.md §Edges). */
    private static final int JOIN = 6;
    private static final int LOCK = 7;
    /** A parallel-loop body (agent::LOOP_BODY_CODE): recorded whatever the class implements. */
    private static final int LOOP_BODY = 9;

    /**
     * What the agent knows of a class: its id, whether it is JDK plumbing that wraps a
     * task, and whether it is one of the virtual-thread scheduler's own runnables
     * (the {@code VirtualThread::runContinuation} and unpark lambdas).
     */
    private static final class ClassInfo {
        final int id;
        final boolean wrapsTask;
        final boolean vtScheduler;
        /**
         * What its probes leave out on a virtual thread: 0 nothing; 1 a thread-per-task
         * executor's wrapper, whose plumbing begin the agent's VirtualThreadStart
         * callback records (only its end is recorded here, and an execution probe of
         * its own records nothing); 2 everything (the RunnableAdapter inside it).
         * crates/agent/src/vthreads.rs.
         */
        final int onVirtual;
        /** A hidden class (a lambda): no probe of its own, see {@link #runTask}. */
        final boolean hidden;
        /**
         * Whether {@link #runTask} records this class's runs: 0 not asked yet, 1 yes (a
         * hidden class, or one whose {@code run()} has no probe of its own), 2 no. Racy:
         * two threads asking at once get the same answer.
         */
        int atCall;

        ClassInfo(int id, boolean wrapsTask, boolean vtScheduler, int onVirtual, boolean hidden) {
            this.id = id;
            this.wrapsTask = wrapsTask;
            this.vtScheduler = vtScheduler;
            this.onVirtual = onVirtual;
            this.hidden = hidden;
        }
    }

    /** Per-class facts, without a lock (ClassTable says why not a ClassValue). */
    private static final ClassTable<ClassInfo> IDS = new ClassTable<>();

    /** What the agent knows of class {@code c}, registering it at its first use. */
    private static ClassInfo info(Class<?> c) {
        ClassInfo known = IDS.get(c);
        return known != null ? known : register(c);
    }

    /** Registers class {@code c} at its first use (out of line: once per class). */
    @FjStubDontInline
    private static ClassInfo register(Class<?> c) {
        // Two threads may register a class together: the agent then defines it twice
        // (same name, two ids; the analysis merges classes by name) and both ids keep
        // their per-class facts (agent::register_class); the first put is kept here.
        String name = c.getName();
        boolean hidden = c.isHidden();
        int id = nRegisterClass(c, name, hidden, c.getNestHost());
        return IDS.putIfAbsent(c, new ClassInfo(id, nWrapsTask(id), name.startsWith(VT_LAMBDA),
                nSkippedOnVirtual(id), hidden));
    }

    /** Name prefix of the hidden classes of {@code java.lang.VirtualThread}'s lambdas. */
    private static final String VT_LAMBDA = "java.lang.VirtualThread$$Lambda";

    /**
     * {@code jdk.internal.misc.CarrierThread} (JDK 21+; null before): the threads of
     * the virtual-thread scheduler's pool. What runs on one outside a virtual thread
     * is the scheduler mounting virtual threads, which the analysis leaves out
     * (docs/virtual-threads.md); not recording it saves five records and three JNI
     * calls per virtual thread. Resolved at first use, after VMInit.
     */
    private static final class Carrier {
        static final Class<?> CLASS = bootClass("jdk.internal.misc.CarrierThread");
    }

    /** {@code java.lang.VirtualThread} (JDK 21+; null before), resolved at first use. */
    private static final class Virtual {
        static final Class<?> CLASS = bootClass("java.lang.VirtualThread");
    }

    /** A class of the boot loader, or null when this JDK has none of that name. */
    private static Class<?> bootClass(String name) {
        try {
            return Class.forName(name, false, null);
        } catch (Throwable t) {
            return null;
        }
    }

    /** Whether this thread is a virtual thread. */
    private static boolean onVirtual() {
        return Thread.currentThread().getClass() == Virtual.CLASS; // null before 21: false
    }

    /**
     * What a probe of {@code self} leaves out on this thread ({@link ClassInfo#onVirtual}
     * on a virtual thread, 0 on others).
     */
    private static int skippedOnVirtual(Object self) {
        return onVirtual() ? info(self.getClass()).onVirtual : 0;
    }

    /**
     * Whether this is a virtual thread whose own records cover a probe of {@code self}
     * (its task, or its thread-per-task wrapper: {@link VtProbe#covers}).
     */
    private static boolean coveredOnVirtual(Object self) {
        return onVirtual() && VtProbe.covers(self);
    }

    /** The virtual-thread scheduler's pool, once seen (a racy cache: a miss only re-checks). */
    private static ForkJoinPool vtPool;

    /** Whether this thread is a carrier with no virtual thread mounted. */
    static boolean onCarrier() {
        Class<?> c = Carrier.CLASS;
        return c != null && Thread.currentThread().getClass() == c;
    }

    /** Whether {@code pool} is the virtual-thread scheduler's pool (its thread factory is
     * one of VirtualThread's lambdas, checked on JDK 21 and 25). */
    static boolean isVtScheduler(Object pool) {
        ForkJoinPool v = vtPool;
        if (v != null) return v == pool;
        if (Carrier.CLASS == null || !(pool instanceof ForkJoinPool)) return false;
        ForkJoinPool p = (ForkJoinPool) pool;
        Object f = p.getFactory();
        if (f != null && f.getClass().getName().startsWith(VT_LAMBDA)) {
            vtPool = p;
            return true;
        }
        return false;
    }

    /**
     * The virtual-thread scheduler's executors a submission probe met (its fork-join
     * pool at each start, its timers at each sleep): their submissions record nothing,
     * so they skip the depth below (a ThreadLocal look-up going in and out, and a
     * ThreadLocal map for every virtual thread that sleeps). Filled once per executor,
     * by compare-and-set, never emptied: an executor is in it from the first entry that
     * skipped the depth, so the matching exit skips it too. Copied on write (not an
     * atomic array, whose VarHandle code C2 inlined into every submission; a reference's
     * {@code get} is a plain volatile read): a thread that has seen an executor in it
     * sees it in every later copy.
     */
    private static final AtomicReference<Object[]> VT_EXECUTORS = new AtomicReference<>(new Object[0]);

    /** Whether {@code self} is one of {@link #VT_EXECUTORS}. */
    private static boolean isVtExecutor(Object self) {
        for (Object o : VT_EXECUTORS.get()) {
            if (o == self) return true;
        }
        return false;
    }

    /** Adds {@code self} to {@link #VT_EXECUTORS}; false when it is full (8). Out of line: once per executor. */
    @FjStubDontInline
    private static boolean addVtExecutor(Object self) {
        while (true) {
            Object[] old = VT_EXECUTORS.get();
            for (Object o : old) {
                if (o == self) return true;
            }
            if (old.length >= 8) return false;
            Object[] copy = java.util.Arrays.copyOf(old, old.length + 1);
            copy[old.length] = self;
            if (VT_EXECUTORS.compareAndSet(old, copy)) return true;
        }
    }

    /** Per-thread nesting depth of submission methods. */
    private static final ThreadLocal<int[]> SUBMIT_DEPTH = new ThreadLocal<int[]>() {
        @Override
        protected int[] initialValue() {
            return new int[1];
        }
    };

    private Probe() {}

    /*
     * The kinds' methods (enterExecution, ...) are @DontInline (FjStubDontInline):
     * inlined, the shared body of every kind doubled the size of the compiled JDK
     * methods around them (C2 time), and a branch or a type first seen late deoptimized
     * and recompiled every caller. The rewriter calls each kind's entry point
     * (execEnter, ...) below; enter/exit dispatch to them for the other callers
     * (exitInt/exitLong, kinds without an entry point of their own).
     */

    public static void enter(int probe, Object self, Object arg) {
        switch ((probe >>> 24) & 0xF) {
            case EXECUTION:
                execEnter(probe, self, arg);
                break;
            case PLUMBING:
                plumbEnter(probe, self, arg);
                break;
            case SUBMISSION:
                submitEnter(probe, self, arg);
                break;
            case LOOP_BODY:
                loopEnter(probe, self, arg);
                break;
            case JOIN:
                joinEnter(probe, self, arg);
                break;
            case LOCK:
                lockEnter(probe, self, arg);
                break;
            default:
                break;
        }
    }

    /*
     * The entry points the rewriter calls, one per kind (crates/classfile,
     * probe_entry_names): each is one case of enter/exit, so C2 inlines a few bytes into
     * each instrumented method rather than the whole dispatcher.
     */

    public static void execEnter(int probe, Object self, Object arg) {
        if (!on) return;
        try {
            enterExecution(probe, self);
        } catch (Throwable t) {
            fail(t);
        }
    }

    public static void execExit(int probe, Object self) {
        if (!on) return;
        try {
            exitExecution(probe, self);
        } catch (Throwable t) {
            fail(t);
        }
    }

    public static void plumbEnter(int probe, Object self, Object arg) {
        if (!on) return;
        try {
            enterPlumbing(probe, self);
        } catch (Throwable t) {
            fail(t);
        }
    }

    public static void plumbExit(int probe, Object self) {
        if (!on) return;
        try {
            exitPlumbing(probe, self);
        } catch (Throwable t) {
            fail(t);
        }
    }

    public static void submitEnter(int probe, Object self, Object arg) {
        if (!on) return;
        try {
            enterSubmission(probe, self, arg);
        } catch (Throwable t) {
            fail(t);
        }
    }

    /**
     * Also when off: the probes went off (an attach session ended) inside a submission,
     * and its depth must still come down, or the next session misses this thread's
     * submissions.
     */
    public static void submitExit(int probe, Object self) {
        try {
            exitSubmission(self);
        } catch (Throwable t) {
            fail(t);
        }
    }

    public static void joinEnter(int probe, Object self, Object arg) {
        if (!on) return;
        try {
            enterJoin(probe, self);
        } catch (Throwable t) {
            fail(t);
        }
    }

    public static void joinExit(int probe, Object self) {
        if (!on) return;
        try {
            nJoinEnd(probe);
        } catch (Throwable t) {
            fail(t);
        }
    }

    public static void lockEnter(int probe, Object self, Object arg) {
        if (!on) return;
        try {
            nLockBegin(probe, self, arg);
        } catch (Throwable t) {
            fail(t);
        }
    }

    public static void lockExit(int probe, Object self) {
        if (!on) return;
        try {
            nLockEnd(probe);
        } catch (Throwable t) {
            fail(t);
        }
    }

    public static void loopEnter(int probe, Object self, Object arg) {
        if (!on) return;
        try {
            enterLoopBody(probe, self);
        } catch (Throwable t) {
            fail(t);
        }
    }

    public static void loopExit(int probe, Object self) {
        if (!on) return;
        try {
            nEnd(probe, System.identityHashCode(self));
        } catch (Throwable t) {
            fail(t);
        }
    }

    @FjStubDontInline
    private static void enterExecution(int probe, Object self) {
        if (self instanceof Runnable || self instanceof Callable || self instanceof ForkJoinTask) {
            ClassInfo info = info(self.getClass());
            if (onVirtual() && (info.onVirtual != 0 || VtProbe.covers(self))) return;
            nBegin(probe, info.id, System.identityHashCode(self), 0, 0);
        }
    }

    @FjStubDontInline
    private static void enterPlumbing(int probe, Object self) {
        if (onCarrier() || skippedOnVirtual(self) != 0 || coveredOnVirtual(self)) return;
        Object inner = inner(probe, self);
        if (inner == null) {
            nBegin(probe, classIdOf(self), System.identityHashCode(self), 0, 0);
        } else {
            nBegin(probe, classIdOf(self), System.identityHashCode(self),
                    classIdOf(inner), System.identityHashCode(inner));
        }
    }

    @FjStubDontInline
    private static void enterSubmission(int probe, Object self, Object arg) {
        // Only the outermost submission on a thread is recorded (submit calling
        // execute is plumbing); the depth is kept here, not in native code, so that
        // leaving a submission costs no JNI call.
        if (!(self instanceof Executor) || isVtExecutor(self)) return;
        ClassInfo argInfo = arg == null ? null : info(arg.getClass());
        if (argInfo != null && argInfo.vtScheduler && addVtExecutor(self)) return;
        if (SUBMIT_DEPTH.get()[0]++ != 0) return;
        if (argInfo == null) {
            nSubmitBegin(probe, classIdOf(self), 0, 0, 0, 0);
            return;
        }
        if (argInfo.vtScheduler) return;
        int argCls = argInfo.id;
        // Only plumbing (FutureTask, adapters) needs the native unwrap.
        Object inner = argInfo.wrapsTask ? unwrap(arg, argInfo) : null;
        if (inner == null) {
            nSubmitBegin(probe, classIdOf(self), argCls, System.identityHashCode(arg), 0, 0);
        } else {
            nSubmitBegin(probe, classIdOf(self), argCls, System.identityHashCode(arg),
                    classIdOf(inner), System.identityHashCode(inner));
        }
    }

    @FjStubDontInline
    private static void enterLoopBody(int probe, Object self) {
        nBegin(probe, classIdOf(self), System.identityHashCode(self), 0, 0);
    }

    @FjStubDontInline
    private static void enterJoin(int probe, Object self) {
        nJoinBegin(probe, classIdOf(self), System.identityHashCode(self));
    }

    /** Each kind's exit; a submission's also when the probes are off (submitExit). */
    public static void exit(int probe, Object self) {
        switch ((probe >>> 24) & 0xF) {
            case EXECUTION:
                execExit(probe, self);
                break;
            case PLUMBING:
                plumbExit(probe, self);
                break;
            case LOOP_BODY:
                loopExit(probe, self);
                break;
            case SUBMISSION:
                submitExit(probe, self);
                break;
            case JOIN:
                joinExit(probe, self);
                break;
            case LOCK:
                lockExit(probe, self);
                break;
            default:
                break;
        }
    }

    /**
     * Exit probe of a lock slow path returning int (AQS {@code acquire}; added where the
     * method returns int: crates/classfile, {@code WrapRequest::pass_result}): its result
     * says whether it acquired (positive) or gave up (0: a timed {@code tryLock} or
     * {@code tryAcquire} ran out of time, or it threw; negative: interrupted).
     */
    public static void exitInt(int result, int probe, Object self) {
        if (result > 0) {
            exit(probe, self);
        } else {
            gaveUp(probe, self);
        }
    }

    /**
     * The same for {@code StampedLock.acquireWrite/acquireRead}: a stamp when it acquired;
     * 0 (timed out, or it threw) or 1 ({@code INTERRUPTED}) when it gave up.
     */
    public static void exitLong(long result, int probe, Object self) {
        if (result != 0L && result != 1L) {
            exit(probe, self);
        } else {
            gaveUp(probe, self);
        }
    }

    @FjStubDontInline
    private static void gaveUp(int probe, Object self) {
        if (!on || ((probe >>> 24) & 0xF) != LOCK) {
            exit(probe, self);
            return;
        }
        try {
            nLockGaveUp(probe);
        } catch (Throwable t) {
            fail(t);
        }
    }

    @FjStubDontInline
    private static void exitExecution(int probe, Object self) {
        if (self instanceof Runnable || self instanceof Callable || self instanceof ForkJoinTask) {
            if (skippedOnVirtual(self) != 0 || (onVirtual() && VtProbe.coversExit(self))) return;
            nEnd(probe, System.identityHashCode(self));
        }
    }

    @FjStubDontInline
    private static void exitPlumbing(int probe, Object self) {
        if (!onCarrier() && skippedOnVirtual(self) != 2
                && !(onVirtual() && VtProbe.coversExit(self))) {
            nEnd(probe, System.identityHashCode(self));
        }
    }

    @FjStubDontInline
    private static void exitSubmission(Object self) {
        if (self instanceof Executor && !isVtExecutor(self)) {
            int[] depth = SUBMIT_DEPTH.get();
            if (depth[0] > 0) depth[0]--;
        }
    }

    @FjStubDontInline
    public static void created(int probe, Object self) {
        if (!on) return;
        try {
            nCreated(self, classIdOf(self), System.identityHashCode(self));
        } catch (Throwable t) {
            fail(t);
        }
    }

    /**
     * Probe id of the redirected {@code Runnable.run()} calls (an execution probe of
     * {@code java.lang.Runnable.run}), set by the agent before {@link #on}; 0: not recorded.
     */
    static int runProbe;

    /**
     * What a call of {@code Runnable.run()} in the program's classes (and in
     * {@code ThreadPoolExecutor.runWorker}) became (crates/classfile/src/task_calls.rs):
     * runs the task, and records it as an execution when its class is hidden or its
     * {@code run()} has no probe of its own ({@link #recordedAtCall}). A lambda
     * is a hidden class, which no class hook sees, so its {@code run()} has no probe of
     * its own: a lambda given to {@code Executor.execute} ran unseen. Other classes are
     * recorded by their own probes. Hidden from stack traces: a task's exception shows
     * the frames it showed without weft.
     */
    @FjStubHidden
    public static void runTask(Runnable r) {
        int probe = runProbe;
        if (!on || probe == 0 || r == null || !recordedAtCall(r)) {
            r.run();
            return;
        }
        int ident = System.identityHashCode(r);
        runBegin(probe, r, ident);
        try {
            r.run();
        } finally {
            runEnd(probe, ident);
        }
    }

    /**
     * Entry of {@code ThreadPoolExecutor.beforeExecute(Thread, Runnable)} under attach
     * (crates/agent/src/pool_tasks.rs): the begin {@link #runTask} records when launched,
     * for a pool thread whose worker loop was entered before the attach.
     */
    @FjStubDontInline
    public static void poolTaskBegin(Object pool, Object task) {
        int probe = runProbe;
        if (!on || probe == 0 || !(task instanceof Runnable)) return;
        Runnable r = (Runnable) task;
        if (recordedAtCall(r)) runBegin(probe, r, System.identityHashCode(r));
    }

    /** Entry of {@code ThreadPoolExecutor.afterExecute(Runnable, Throwable)} under attach. */
    @FjStubDontInline
    public static void poolTaskEnd(Object pool, Object task) {
        int probe = runProbe;
        if (!on || probe == 0 || !(task instanceof Runnable)) return;
        Runnable r = (Runnable) task;
        if (recordedAtCall(r)) runEnd(probe, System.identityHashCode(r));
    }

    private static boolean recordedAtCall(Runnable r) {
        try {
            ClassInfo info = info(r.getClass());
            int a = info.atCall;
            if (a == 0) a = info.atCall = askAtCall(r.getClass(), info);
            return a == 1;
        } catch (Throwable t) {
            fail(t);
            return false;
        }
    }

    /** Once per class: hidden, or a {@code run()} without a probe of its own (a class weft
     * skips, such as {@code sun.net.httpserver.ServerImpl$Exchange}, or one loaded before
     * the class hook). */
    @FjStubDontInline
    private static int askAtCall(Class<?> c, ClassInfo info) {
        return info.hidden || !nRunProbed(c) ? 1 : 2;
    }

    @FjStubDontInline
    private static void runBegin(int probe, Runnable r, int ident) {
        try {
            nBegin(probe, classIdOf(r), ident, 0, 0);
        } catch (Throwable t) {
            fail(t);
        }
    }

    @FjStubDontInline
    private static void runEnd(int probe, int ident) {
        try {
            if (on) nEnd(probe, ident);
        } catch (Throwable t) {
            fail(t);
        }
    }

    /**
     * Entry hook of {@code Thread.start()} (added at VMInit: crates/agent/src/thread_starts.rs):
     * the thread's start as its creation by this thread, so that a thread whose object and
     * Runnable have no constructor probe (a lambda, {@code new Thread(..)} itself) still has
     * the thread that started it (the what-if graph's spawn edge, the report's site).
     */
    @FjStubDontInline
    public static void threadStart(Object thread) {
        if (!on) return;
        try {
            nThreadStart(thread, classIdOf(thread), System.identityHashCode(thread));
        } catch (Throwable t) {
            fail(t);
        }
    }

    /** Class id of an object's runtime class (also called by the agent through JNI). */
    static int classIdOf(Object o) {
        return info(o.getClass()).id;
    }

    /**
     * The task inside the object of plumbing probe {@code probe} (null: none). Unwrapped
     * here, one native step per level, so that each level's class comes from this
     * class's table: a native unwrap asked each level's class
     * through JNI (GetObjectClass and IsSameObject, each a thread-state transition).
     */
    private static Object inner(int probe, Object self) {
        Object first = nFirst(probe, self);
        if (first == null) return null;
        // self: the probe's class holds its task in subclasses, unwrapped by runtime class
        if (first == self) return unwrap(self, info(self.getClass()));
        Object deeper = unwrap(first, info(first.getClass()));
        return deeper != null ? deeper : first;
    }

    /** The innermost task inside object {@code o} of class {@code c} (null if it wraps none). */
    private static Object unwrap(Object o, ClassInfo c) {
        Object found = null;
        for (int i = 0; i < 4 && c.wrapsTask; i++) {
            Object next = nStep(o, c.id);
            if (next == null) break;
            found = o = next;
            c = info(o.getClass());
        }
        return found;
    }

    /** Identity of an object (called by the agent through JNI). */
    static int identOf(Object o) {
        return System.identityHashCode(o);
    }

    /** Switches the agent off after a Throwable in a probe (also used by {@link FjProbe}). */
    static void fail(Throwable t) {
        on = false;
        try {
            nDisabled(String.valueOf(t));
        } catch (Throwable ignored) {
            // nothing more can be done
        }
    }

    private static native void nBegin(int probe, int cls, int ident, int innerCls, int innerIdent);

    private static native void nEnd(int probe, int ident);

    private static native Object nFirst(int probe, Object self);

    private static native Object nStep(Object o, int cls);

    private static native boolean nWrapsTask(int classId);

    private static native boolean nRunProbed(Class<?> c);

    private static native int nSkippedOnVirtual(int classId);

    private static native void nSubmitBegin(int probe, int executorCls, int taskCls, int taskIdent,
            int innerCls, int innerIdent);



    private static native void nCreated(Object self, int cls, int ident);

    private static native void nThreadStart(Object thread, int cls, int ident);

    private static native int nRegisterClass(Class<?> c, String name, boolean hidden, Class<?> nestHost);

    private static native void nDisabled(String reason);

    /** A Future.get / CompletableFuture.join began (target: the future). */
    private static native void nJoinBegin(int probe, int targetCls, int targetIdent);

    private static native void nJoinEnd(int probe);

    /** Slow path of a lock acquisition (AQS / StampedLock); docs/locks.md. */
    private static native void nLockBegin(int probe, Object lock, Object node);

    private static native void nLockEnd(int probe);

    private static native void nLockGaveUp(int probe);
}
