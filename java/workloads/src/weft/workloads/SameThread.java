package weft.workloads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;

/**
 * Tasks run directly, never submitted (R2/R3):
 *
 * <ul>
 * <li>R3 on main: main creates and runs n {@code Local} Runnables and n
 *     {@code LocalCalc} Callables: all aggregated (main has no thread execution).
 * <li>R3 on a started thread: three threads (one after the other) whose target
 *     is a lambda (kind thread, 3 executions) each create and run m
 *     {@code WLocal} of L each: all aggregated into their thread, whose self
 *     time is therefore m*L
 *     (WLocal is loaded by main first, so that class loading is not in it).
 * <li>R2: main creates n {@code Handoff}, passes them through a queue to a
 *     {@code Consumer} thread (class Consumer, kind thread) that runs each one
 *     directly: created on another thread, so reported, self W.
 * <li>R3 needs the same thread: the Consumer creates n {@code Reply} objects;
 *     main runs them after joining it: created on another thread, reported, self W.
 * <li>main calls System.gc() once: at least one GC pause.
 * </ul>
 *
 * <p>Args: [n=100] [work_us=300] [m=20] [local_us=1000]
 */
public final class SameThread {
    static long workNs;

    static final class Local implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    static final class LocalCalc implements Callable<Long> {
        public Long call() { Truth.spin(workNs); return 1L; }
    }

    static long localNs;

    static final class WLocal implements Runnable {
        public void run() { Truth.spin(localNs); }
    }

    static final class Handoff implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    static final class Reply implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    /** Not a Runnable: marks the end of the handoff queue. */
    static final Object END = new Object();

    static final class Consumer implements Runnable {
        final BlockingQueue<Object> queue;
        final List<Reply> replies = new ArrayList<>();

        Consumer(BlockingQueue<Object> queue) { this.queue = queue; }

        public void run() {
            try {
                for (Object o = queue.take(); o != END; o = queue.take()) {
                    ((Handoff) o).run();
                    replies.add(new Reply());
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int n = (int) Truth.arg(args, 0, 100);
        workNs = Truth.arg(args, 1, 300) * 1000L;
        int m = (int) Truth.arg(args, 2, 20);
        localNs = Truth.arg(args, 3, 1000) * 1000L;
        Truth truth = new Truth("SameThread");

        for (int i = 0; i < n; i++) new Local().run();
        for (int i = 0; i < n; i++) new LocalCalc().call();
        truth.task(Local.class, "runnable", n, n, 0);
        truth.task(LocalCalc.class, "callable", n, n, 0);

        Class.forName(WLocal.class.getName(), true, SameThread.class.getClassLoader());
        // Three such threads, one after the other, so that a test's p50 is not a single execution.
        int line = 0;
        for (int t = 0; t < 3; t++) {
            line = Truth.line(); Thread worker = new Thread(() -> { for (int i = 0; i < m; i++) new WLocal().run(); }, "same-thread-worker-" + t);
            worker.start();
            worker.join();
            truth.thread(worker.getName());
        }
        String lambda = Truth.lambda(SameThread.class, "main", line);
        truth.task(lambda, "thread", 3, 0, 0).self(lambda, m * localNs);
        truth.task(WLocal.class, "runnable", 3L * m, 3L * m, 0);

        BlockingQueue<Object> queue = new ArrayBlockingQueue<>(n + 1);
        Consumer consumer = new Consumer(queue);
        Thread ct = new Thread(consumer, "same-thread-consumer");
        ct.start();
        for (int i = 0; i < n; i++) queue.put(new Handoff());
        queue.put(END);
        ct.join();
        truth.task(Consumer.class, "thread", 1, 0, 0).thread("same-thread-consumer");
        truth.task(Handoff.class, "runnable", n, 0, 0).self(Handoff.class, workNs);

        for (Reply r : consumer.replies) r.run();
        truth.task(Reply.class, "runnable", consumer.replies.size(), 0, 0).self(Reply.class, workNs);
        if (consumer.replies.size() != n) throw new AssertionError("replies");

        System.gc();
        truth.minGcPauses(1);
        truth.print();
    }
}
