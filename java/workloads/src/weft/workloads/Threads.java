package weft.workloads;

import java.util.ArrayList;
import java.util.List;

/**
 * Threads are tasks of kind thread, one execution each, started and joined by
 * main; each busy-spins T, so its self time is T:
 *
 * <ul>
 * <li>{@code Spinner extends Thread} (3): class Spinner.
 * <li>{@code new Thread(new Target())} (2): class Target (the Thread object is a
 *     plain java.lang.Thread); Target.run() inside it is the same execution.
 * <li>{@code new Thread(lambda)} (2): class of the lambda, kind thread.
 * <li>{@code Named extends Thread} with a {@code Target2} target (1): class Named;
 *     Target2 never appears (its run() is the thread's own execution).
 * </ul>
 *
 * <p>Args: [thread_ms=50]
 */
public final class Threads {
    static long threadNs;

    static final class Spinner extends Thread {
        Spinner(String name) { super(name); }
        @Override
        public void run() { Truth.spin(threadNs); }
    }

    static final class Target implements Runnable {
        public void run() { Truth.spin(threadNs); }
    }

    static final class Target2 implements Runnable {
        public void run() { Truth.spin(threadNs); }
    }

    static final class Named extends Thread {
        Named(Runnable target, String name) { super(target, name); }
    }

    public static void main(String[] args) throws Exception {
        threadNs = Truth.arg(args, 0, 50) * 1_000_000L;
        Truth truth = new Truth("Threads");
        List<Thread> threads = new ArrayList<>();

        for (int i = 0; i < 3; i++) threads.add(new Spinner("spinner-" + i));
        truth.task(Spinner.class, "thread", 3, 0, 0).self(Spinner.class, threadNs);

        for (int i = 0; i < 2; i++) threads.add(new Thread(new Target(), "target-" + i));
        truth.task(Target.class, "thread", 2, 0, 0).self(Target.class, threadNs);

        long t = threadNs;
        int line = 0;
        for (int i = 0; i < 2; i++) {
            line = Truth.line(); threads.add(new Thread(() -> Truth.spin(t), "lambda-" + i));
        }
        String lambda = Truth.lambda(Threads.class, "main", line);
        truth.task(lambda, "thread", 2, 0, 0).self(lambda, threadNs);

        threads.add(new Named(new Target2(), "named-0"));
        truth.task(Named.class, "thread", 1, 0, 0).self(Named.class, threadNs);
        truth.task(Target2.class, "thread", 0, 0, 0);

        // Two at a time, so that on two cores a thread's spin is not stretched by waiting for a CPU
        // (self time is wall time, and so is the spin, but start/end probes need the CPU too).
        for (int i = 0; i < threads.size(); i += 2) {
            threads.get(i).start();
            if (i + 1 < threads.size()) threads.get(i + 1).start();
            threads.get(i).join();
            if (i + 1 < threads.size()) threads.get(i + 1).join();
        }
        for (Thread th : threads) truth.thread(th.getName());
        truth.print();
    }
}
