package weft.workloads;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.RecursiveTask;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A long-running program for {@code weft attach} (crates/cli/tests/attach.rs). It runs
 * a warm-up phase (so every class is loaded before an attach), prints {@code READY},
 * then runs phase k each time the file {@code <dir>/go<k>} appears, and ends when
 * {@code <dir>/quit} appears. Each phase runs, with known counts:
 * <ul>
 * <li>{@code Job} executor tasks (jobs) on a fixed pool of 4;
 * <li>a fork-join {@code Sum} over 1..2^16 split down to 1024 (64 leaves);
 * <li>4 threads taking a {@code ReentrantLock} and a {@code synchronized} monitor
 *     ({@code Shared}) 25 times each, holding them 1 ms (contended).
 * </ul>
 * and prints {@code PHASE k jobs=J sum=S locked=L methods=M}: the results (equal in
 * every phase) and the number of declared methods of {@code Job} (reflection sees
 * the class as it is, attached or not); then it creates {@code <dir>/done<k>}.
 *
 * <p>Args: dir [jobs=200]
 */
public final class AttachTarget {
    static final class Job implements Runnable {
        final int i;
        volatile long out;

        Job(int i) { this.i = i; }

        public void run() {
            long x = i;
            for (int k = 0; k < 2000; k++) x = x * 6364136223846793005L + 1442695040888963407L;
            out = x;
        }
    }

    static final class Sum extends RecursiveTask<Long> {
        final int from, to;

        Sum(int from, int to) { this.from = from; this.to = to; }

        protected Long compute() {
            if (to - from <= 1024) {
                long s = 0;
                for (int i = from; i < to; i++) s += i;
                return s;
            }
            int mid = (from + to) >>> 1;
            Sum left = new Sum(from, mid);
            left.fork();
            long right = new Sum(mid, to).compute();
            return right + left.join();
        }
    }

    static final class Shared {
        int count;
    }

    static final ReentrantLock LOCK = new ReentrantLock();
    static final Shared SHARED = new Shared();
    static int locked;

    static void sleep1() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static final class Locker implements Runnable {
        public void run() {
            for (int k = 0; k < 25; k++) {
                LOCK.lock();
                try {
                    locked++;
                    sleep1();
                } finally {
                    LOCK.unlock();
                }
                synchronized (SHARED) {
                    SHARED.count++;
                    sleep1();
                }
            }
        }
    }

    static String phase(ExecutorService pool, ForkJoinPool fj, int jobs) throws Exception {
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < jobs; i++) fs.add(pool.submit(new Job(i)));
        for (Future<?> f : fs) f.get();
        // Lambdas given to execute: the pool's threads started in phase 0, before any
        // attach, so their worker loop is the one without weft (crates/agent/src/pool_tasks.rs).
        CountDownLatch lambdas = new CountDownLatch(jobs);
        for (int i = 0; i < jobs; i++) {
            int seed = i;
            pool.execute(() -> {
                long x = seed;
                for (int k = 0; k < 2000; k++) x = x * 6364136223846793005L + 1442695040888963407L;
                if (x == 42) System.out.print("");
                lambdas.countDown();
            });
        }
        lambdas.await();
        long sum = fj.invoke(new Sum(0, 1 << 16));
        locked = 0;
        SHARED.count = 0;
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(new Locker(), "locker-" + i);
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        return "jobs=" + fs.size() + " sum=" + sum + " locked=" + (locked + SHARED.count)
                + " methods=" + Job.class.getDeclaredMethods().length;
    }

    static void waitFor(File f, File quit) throws InterruptedException {
        while (!f.exists() && !quit.exists()) Thread.sleep(10);
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        int jobs = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        ExecutorService pool = Executors.newFixedThreadPool(4);
        ForkJoinPool fj = new ForkJoinPool(2);
        File quit = new File(dir, "quit");
        System.out.println("PHASE 0 " + phase(pool, fj, jobs));
        System.out.println("READY");
        System.out.flush();
        for (int k = 1; ; k++) {
            waitFor(new File(dir, "go" + k), quit);
            if (quit.exists()) break;
            System.out.println("PHASE " + k + " " + phase(pool, fj, jobs));
            System.out.flush();
            new File(dir, "done" + k).createNewFile();
        }
        pool.shutdown();
        fj.shutdown();
        System.out.println("BYE");
    }
}
