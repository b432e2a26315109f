package weft.workloads.behaviour;

import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.Serializable;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.RecursiveTask;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Output that depends on what weft could change in a class: declared members and modifiers,
 * default serialVersionUIDs, serialized forms, stack traces, StackWalker frames and callers,
 * reflection and method handles, uncaught-exception output. The behaviour test
 * (crates/cli/tests/behaviour.rs) runs each mode plain and under {@code weft record} and requires
 * identical stdout, stderr (minus weft's own lines) and exit code.
 *
 * <p>Modes: {@code shape}, {@code traces}, {@code reflect}, {@code write FILE}, {@code read FILE},
 * {@code uncaught}.
 */
public final class Shape {
    private Shape() {}

    // ------------------------------------------------------------------ task classes

    /** A Serializable Runnable without an explicit serialVersionUID (its default one is hashed
     * from its members and modifiers). */
    public static class Job implements Runnable, Serializable {
        int n;
        String label = "job";
        transient int runs;

        public Job(int n) {
            this.n = n;
        }

        @Override
        public synchronized void run() {
            runs++;
            n = n * 2 + 1;
        }

        @Override
        public String toString() {
            return label + ":" + n;
        }
    }

    /** A Serializable Callable without an explicit serialVersionUID. */
    public static class Sum implements Callable<Integer>, Serializable {
        final int[] xs;

        public Sum(int... xs) {
            this.xs = xs;
        }

        @Override
        public Integer call() throws Exception {
            int s = 0;
            for (int x : xs) {
                if (x < 0) throw new IllegalArgumentException("negative " + x);
                s += x;
            }
            return s;
        }
    }

    /** A fork-join task (ForkJoinTask is Serializable), no explicit serialVersionUID. */
    public static class Fib extends RecursiveTask<Integer> {
        final int n;

        public Fib(int n) {
            this.n = n;
        }

        @Override
        protected Integer compute() {
            if (n < 2) {
                if (n < 0) throw new IllegalStateException("fib of " + n);
                return n;
            }
            Fib a = new Fib(n - 1);
            a.fork();
            return new Fib(n - 2).compute() + a.join();
        }
    }

    /** A thread subclass whose run throws. */
    public static class Failing extends Thread {
        public Failing() {
            super("failing");
        }

        @Override
        public void run() {
            deep(3);
        }

        private void deep(int k) {
            if (k == 0) throw new UnsupportedOperationException("from a thread");
            deep(k - 1);
        }
    }

    /** A task whose run looks at its own stack. */
    public static class Walker implements Runnable {
        final List<String> seen = new ArrayList<>();

        @Override
        public void run() {
            seen.add("walker " + StackWalker.getInstance().walk(s -> s
                .map(f -> f.getClassName() + "." + f.getMethodName() + ":" + f.getLineNumber())
                .collect(Collectors.joining(" < "))));
            seen.add("caller " + Who.caller());
            StackTraceElement[] st = Thread.currentThread().getStackTrace();
            seen.add("getStackTrace " + Arrays.stream(st).skip(1).map(String::valueOf)
                .collect(Collectors.joining(" < ")));
        }
    }

    /** A Runnable that throws. */
    public static class Boom implements Runnable {
        @Override
        public void run() {
            throw new IllegalStateException("from a runnable");
        }
    }

    /** Who called me? (StackWalker.getCallerClass, and the caller's method name). */
    static final class Who {
        static String caller() {
            StackWalker w = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);
            String method = w.walk(s -> s.skip(1).findFirst().map(StackWalker.StackFrame::getMethodName)
                .orElse("?"));
            return w.getCallerClass().getName() + "." + method;
        }
    }

    /** An executor of its own (its execute/submit are submission methods for weft). */
    public static class Inline extends AbstractExecutorService {
        private boolean shut;

        @Override
        public void execute(Runnable r) {
            r.run();
        }

        @Override
        public void shutdown() {
            shut = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            shut = true;
            return new ArrayList<>();
        }

        @Override
        public boolean isShutdown() {
            return shut;
        }

        @Override
        public boolean isTerminated() {
            return shut;
        }

        @Override
        public boolean awaitTermination(long t, TimeUnit u) {
            return true;
        }
    }

    static final Class<?>[] CLASSES = {Job.class, Sum.class, Fib.class, Failing.class, Walker.class,
        Inline.class, Boom.class, Shape.class};

    // ------------------------------------------------------------------ modes

    public static void main(String[] args) throws Throwable {
        switch (args.length == 0 ? "" : args[0]) {
            case "shape":
                shape();
                break;
            case "traces":
                traces();
                break;
            case "reflect":
                reflect();
                break;
            case "write":
                write(args[1]);
                break;
            case "read":
                read(args[1]);
                break;
            case "uncaught":
                uncaught();
                break;
            default:
                System.err.println("usage: Shape shape|traces|reflect|write FILE|read FILE|uncaught");
                System.exit(2);
        }
    }

    /** Declared members with modifiers, and default serialVersionUIDs. */
    static void shape() {
        for (Class<?> c : CLASSES) {
            System.out.println("class " + Modifier.toString(c.getModifiers()) + " " + c.getName());
            List<String> lines = new ArrayList<>();
            for (Method m : c.getDeclaredMethods()) {
                lines.add("  method " + m.toGenericString()
                    + (m.isSynthetic() ? " synthetic" : "") + (m.isBridge() ? " bridge" : "")
                    + " annotations=" + Arrays.toString(m.getDeclaredAnnotations()));
            }
            for (Field f : c.getDeclaredFields()) {
                lines.add("  field " + Modifier.toString(f.getModifiers()) + " " + f.getType().getName() + " "
                    + f.getName());
            }
            for (Constructor<?> k : c.getDeclaredConstructors()) {
                lines.add("  constructor " + k.toGenericString());
            }
            lines.sort(null);
            lines.forEach(System.out::println);
            ObjectStreamClass osc = ObjectStreamClass.lookup(c);
            if (osc != null) {
                System.out.println("  serialVersionUID " + osc.getSerialVersionUID());
            }
        }
        // The JDK classes the tasks run through (weft instruments them too).
        for (Class<?> c : new Class<?>[] {java.util.concurrent.FutureTask.class,
                java.util.concurrent.ForkJoinTask.class, java.util.concurrent.ThreadPoolExecutor.class}) {
            System.out.println("jdk " + c.getName() + " methods=" + c.getDeclaredMethods().length
                + " serialVersionUID=" + (Serializable.class.isAssignableFrom(c)
                    ? ObjectStreamClass.lookup(c).getSerialVersionUID() : 0));
        }
    }

    static String frames(Throwable t) {
        StringBuilder sb = new StringBuilder(t.toString());
        for (StackTraceElement e : t.getStackTrace()) {
            sb.append("\n    at ").append(e);
        }
        if (t.getCause() != null) sb.append("\n  caused by ").append(frames(t.getCause()));
        return sb.toString();
    }

    /** Stack traces of exceptions thrown in tasks, StackWalker inside tasks. */
    static void traces() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Integer> ok = pool.submit(new Sum(1, 2, 3));
            System.out.println("sum " + ok.get());
            try {
                pool.submit(new Sum(1, -2)).get();
            } catch (ExecutionException e) {
                System.out.println("executor: " + frames(e.getCause()));
            }
            Walker w = new Walker();
            pool.submit(w).get();
            w.seen.forEach(s -> System.out.println("pool " + s));
            Walker w2 = new Walker();
            Thread t = new Thread(w2, "walker-thread");
            t.start();
            t.join();
            w2.seen.forEach(s -> System.out.println("thread " + s));
            Walker w3 = new Walker();
            new Inline().execute(w3);
            w3.seen.forEach(s -> System.out.println("inline " + s));
        } finally {
            pool.shutdown();
        }
        ForkJoinPool fj = new ForkJoinPool(2);
        try {
            System.out.println("fib " + fj.invoke(new Fib(12)));
            try {
                fj.invoke(new Fib(-1));
            } catch (IllegalStateException e) {
                // Fork-join rethrows a copy made on the joining thread: the top frames are the
                // task's own, found as the cause or the exception itself.
                Throwable own = e.getCause() != null ? e.getCause() : e;
                System.out.println("fork-join: " + own.getMessage() + " at " + own.getStackTrace()[0]);
            }
        } finally {
            fj.shutdown();
        }
        try {
            new Sum(-5).call();
        } catch (IllegalArgumentException e) {
            System.out.println("direct: " + frames(e));
        }
    }

    /** Reflection and method handles on the task methods. */
    static void reflect() throws Throwable {
        Method run = Job.class.getMethod("run");
        System.out.println("run modifiers " + Modifier.toString(run.getModifiers()) + " declared by "
            + run.getDeclaringClass().getSimpleName());
        Job j = new Job(3);
        run.invoke(j);
        MethodHandle mh = MethodHandles.lookup().findVirtual(Job.class, "run", MethodType.methodType(void.class));
        mh.invoke(j);
        System.out.println("job " + j + " runs=" + j.runs);
        Method call = Sum.class.getMethod("call");
        System.out.println("call returns " + call.getReturnType().getName() + " throws "
            + Arrays.toString(call.getExceptionTypes()) + " value " + call.invoke(new Sum(4, 5)));
        try {
            call.invoke(new Sum(-1));
        } catch (java.lang.reflect.InvocationTargetException e) {
            System.out.println("invoke: " + frames(e.getCause()));
        }
        Method compute = Fib.class.getDeclaredMethod("compute");
        System.out.println("compute " + Modifier.toString(compute.getModifiers()) + " returns "
            + compute.getGenericReturnType());
        System.out.println("methods named run in Job: " + Arrays.stream(Job.class.getDeclaredMethods())
            .filter(m -> m.getName().startsWith("run")).count());
    }

    static Object[] objects() {
        Job j = new Job(20);
        j.run();
        return new Object[] {j, new Sum(7, 8, 9), new Fib(9)};
    }

    /** Serializes task objects (the other run reads them). */
    static void write(String file) throws IOException {
        try (ObjectOutputStream out = new ObjectOutputStream(new FileOutputStream(file))) {
            for (Object o : objects()) out.writeObject(o);
        }
        System.out.println("wrote " + objects().length + " objects");
    }

    /** Reads what the other run wrote and uses it. */
    static void read(String file) throws Exception {
        try (ObjectInputStream in = new ObjectInputStream(new FileInputStream(file))) {
            Job j = (Job) in.readObject();
            Sum s = (Sum) in.readObject();
            Fib f = (Fib) in.readObject();
            j.run();
            ForkJoinPool fj = new ForkJoinPool(2);
            try {
                System.out.println("read " + j + " sum=" + s.call() + " fib=" + fj.invoke(f));
            } finally {
                fj.shutdown();
            }
        }
    }

    /** An uncaught exception in a thread (default handler output), then one in main (exit code 1). */
    static void uncaught() throws Exception {
        Failing t = new Failing();
        t.start();
        t.join();
        System.out.println("after the thread");
        // The handler runs before the thread dies, so join orders its output before ours.
        Thread r = new Thread(new Boom(), "boom");
        r.start();
        r.join();
        System.out.println("after the runnable");
        new Sum(-3).call();
    }
}
