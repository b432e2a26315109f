package weft.workloads;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Virtual threads (JDK 21+), compiled for 17: the JDK 21 API is reached by
 * reflection.
 *
 * <ul>
 * <li>{@code Work}: n tasks submitted to {@code newVirtualThreadPerTaskExecutor()},
 *     each spinning work_us (one virtual thread each).
 * <li>{@code Started}: n/10 Runnables started with {@code Thread.ofVirtual().start(r)}
 *     and joined, each spinning work_us, then sleeping 1 ms (unmounted), then
 *     spinning work_us again: mounted time 2 x work_us.
 * <li>{@code Pinner}: p virtual threads that each sleep sleep_ms inside
 *     {@code synchronized (LOCK)} in {@link Pinner#run}, in a helper it calls there,
 *     {@link Pinner#pause} (pinned on 21-23: the carrier is held while the thread
 *     sleeps; the pinned park is in {@code pause}, the monitor it holds is entered
 *     in {@code run}).
 * <li>{@code Platform}: 2 platform threads spinning work_us, beside them.
 * </ul>
 *
 * <p>Args: [n=2000] [work_us=20] [pinners=4] [sleep_ms=20]
 */
public final class VirtualTasks {
    static long workNs;
    static long sleepMs;
    static final Object LOCK = new Object();

    static final class Work implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    static final class Started implements Runnable {
        public void run() {
            Truth.spin(workNs);
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
            Truth.spin(workNs);
        }
    }

    static final class Pinner implements Runnable {
        public void run() {
            synchronized (LOCK) {
                pause();
            }
        }

        static void pause() {
            try {
                Thread.sleep(sleepMs);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }
    }

    static final class Platform extends Thread {
        Platform(String name) { super(name); }
        public void run() { Truth.spin(workNs); }
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        workNs = (args.length > 1 ? Long.parseLong(args[1]) : 20) * 1000;
        int pinners = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        sleepMs = args.length > 3 ? Long.parseLong(args[3]) : 20;

        Platform p1 = new Platform("platform-1");
        Platform p2 = new Platform("platform-2");
        p1.start();
        p2.start();

        ExecutorService ex = (ExecutorService)
                Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            fs.add(ex.submit(new Work()));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        ex.shutdown();

        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < n / 10; i++) {
            ts.add((Thread) start.invoke(builder, new Started()));
        }
        for (int i = 0; i < pinners; i++) {
            ts.add((Thread) start.invoke(builder, new Pinner()));
        }
        for (Thread t : ts) {
            t.join();
        }
        p1.join();
        p2.join();

        new Truth("VirtualTasks")
                .task(Work.class, "runnable", n, 0, n)
                .task(Started.class, "virtual-thread", n / 10, 0, 0)
                .task(Pinner.class, "virtual-thread", pinners, 0, 0)
                .task(Platform.class, "thread", 2, 0, 0)
                .self(Work.class, workNs)
                .self(Started.class, 2 * workNs)
                .thread("platform-1")
                .thread("platform-2")
                .print();
    }
}
