package weft.workloads.locks;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Threads that only wait; nothing ever blocks on a held lock, so the truth is
 * zero lock contention (the measured acquisitions take ns) and a list of waits
 * by kind and duration. W = {@code wait_ms}; main busy-spins between its signals:
 *
 * <ul>
 * <li>{@code cond-waiter}: {@code Condition.await} on {@link ReentrantLock} "cond-lock",
 *     signalled by main at W (the re-acquisition inside await is part of the wait);
 * <li>{@code latch-waiter}: {@code CountDownLatch.await}, counted down by main at 2W;
 * <li>{@code monitor-waiter}: {@code Object.wait()} on a {@link WaitMonitor}, notified by
 *     main at 3W (the monitor re-entry inside wait() is part of the wait);
 * <li>{@code parker}: {@code LockSupport.park}, unparked by main at 4W;
 * <li>{@code sleeper}: {@code Thread.sleep(2.5 W)} (a wait that Free Lunch counts as running);
 * <li>{@code timed-waiter}: {@code Object.wait(3.5 W)} on a {@link TimedMonitor}, times out;
 * <li>{@code pool-worker-0}: the one worker of a ThreadPoolExecutor; runs one 1 ms task,
 *     then idles in {@code LinkedBlockingQueue.take} (park) until main shuts the pool
 *     down at 6W. Its idle wait = task end to thread end (includes µs of pool bookkeeping).
 * <li>{@code main}: {@code awaitTermination} (park) and {@code Thread.join} (Object.wait).
 * </ul>
 *
 * <p>Args: [wait_ms=150]
 */
public final class NoContentionWaits {
    static {
        Ground.programStart(); // the truth's main account starts here (Ground.programStart)
    }

    static final class WaitMonitor {}

    static final class TimedMonitor {}

    static volatile boolean condFlag, monFlag, parkFlag;
    static volatile long taskEnd;
    static volatile Thread poolThread;

    public static void main(String[] argv) throws Exception {
        Ground g = new Ground("NoContentionWaits");
        Args args = new Args(g, argv, "wait_ms=150");
        long w = args.num("wait_ms") * 1_000_000L;

        ReentrantLock condLock = new ReentrantLock();
        Condition cond = condLock.newCondition();
        CountDownLatch latch = new CountDownLatch(1);
        WaitMonitor waitMon = new WaitMonitor();
        TimedMonitor timedMon = new TimedMonitor();
        int lCond = g.lock("cond-lock", condLock, "reentrant_lock", null, ReentrantLock.class.getName() + "$NonfairSync");
        int lMon = g.lock("wait-monitor", waitMon, "monitor", null, null);
        int lTimed = g.lock("timed-monitor", timedMon, "monitor", null, null);
        Ground.Acct main = g.mainAcct();
        long t0 = g.t0;

        Ground.Acct aCond = g.acct("cond-waiter");
        Thread condWaiter = new Thread(() -> {
            aCond.begin();
            long a = System.nanoTime();
            condLock.lock();
            aCond.blocked(lCond, a, System.nanoTime());
            try {
                while (!condFlag) {
                    long s = System.nanoTime();
                    cond.awaitUninterruptibly();
                    aCond.waited(Ground.Wait.CONDITION_AWAIT, s, System.nanoTime());
                }
            } finally {
                condLock.unlock();
            }
            aCond.end();
        }, "cond-waiter");

        Ground.Acct aLatch = g.acct("latch-waiter");
        Thread latchWaiter = new Thread(() -> {
            aLatch.begin();
            while (latch.getCount() > 0) {
                long s = System.nanoTime();
                try {
                    latch.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                aLatch.waited(Ground.Wait.LATCH_AWAIT, s, System.nanoTime());
            }
            aLatch.end();
        }, "latch-waiter");

        Ground.Acct aMon = g.acct("monitor-waiter");
        Thread monWaiter = new Thread(() -> {
            aMon.begin();
            long a = System.nanoTime(), b;
            synchronized (waitMon) {
                b = System.nanoTime();
                while (!monFlag) {
                    long s = System.nanoTime();
                    try {
                        waitMon.wait();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    aMon.waited(Ground.Wait.OBJECT_WAIT, s, System.nanoTime());
                }
            }
            aMon.blocked(lMon, a, b);
            aMon.end();
        }, "monitor-waiter");

        Ground.Acct aPark = g.acct("parker");
        Thread parker = new Thread(() -> {
            aPark.begin();
            while (!parkFlag) {
                long s = System.nanoTime();
                LockSupport.park(NoContentionWaits.class);
                aPark.waited(Ground.Wait.PARK, s, System.nanoTime());
            }
            aPark.end();
        }, "parker");

        Ground.Acct aSleep = g.acct("sleeper");
        Thread sleeper = new Thread(() -> {
            aSleep.begin();
            long s = System.nanoTime();
            try {
                Thread.sleep(w * 5 / 2 / 1_000_000L);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            aSleep.waited(Ground.Wait.SLEEP, s, System.nanoTime());
            aSleep.end();
        }, "sleeper");

        Ground.Acct aTimed = g.acct("timed-waiter");
        Thread timedWaiter = new Thread(() -> {
            aTimed.begin();
            long a = System.nanoTime(), b;
            synchronized (timedMon) {
                b = System.nanoTime();
                long deadline = System.nanoTime() + w * 7 / 2;
                long left;
                while ((left = deadline - System.nanoTime()) > 0) {
                    long s = System.nanoTime();
                    try {
                        timedMon.wait(Math.max(1, left / 1_000_000L));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    aTimed.waited(Ground.Wait.OBJECT_WAIT_TIMED, s, System.nanoTime());
                }
            }
            aTimed.blocked(lTimed, a, b);
            aTimed.end();
        }, "timed-waiter");

        Ground.Acct aPool = g.acct("pool-worker-0");
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(() -> {
                aPool.begin();
                r.run();
                aPool.end();
                aPool.waited(Ground.Wait.POOL_IDLE, taskEnd, aPool.end);
            }, "pool-worker-0");
            poolThread = t;
            return t;
        });

        Thread[] ts = {condWaiter, latchWaiter, monWaiter, parker, sleeper, timedWaiter};
        for (Thread t : ts) t.start();
        pool.execute(() -> {
            Work.spin(1_000_000);
            taskEnd = System.nanoTime();
        });

        Work.spinUntil(t0 + w);
        long a = System.nanoTime();
        condLock.lock();
        main.blocked(lCond, a, System.nanoTime());
        try {
            condFlag = true;
            cond.signalAll();
        } finally {
            condLock.unlock();
        }

        Work.spinUntil(t0 + 2 * w);
        latch.countDown();

        Work.spinUntil(t0 + 3 * w);
        a = System.nanoTime();
        long b;
        synchronized (waitMon) {
            b = System.nanoTime();
            monFlag = true;
            waitMon.notifyAll();
        }
        main.blocked(lMon, a, b);

        Work.spinUntil(t0 + 4 * w);
        parkFlag = true;
        LockSupport.unpark(parker);

        Work.spinUntil(t0 + 6 * w);
        pool.shutdown();
        long s = System.nanoTime();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) throw new IllegalStateException("pool did not terminate");
        main.waited(Ground.Wait.AWAIT_TERMINATION, s, System.nanoTime());
        ts = java.util.Arrays.copyOf(ts, ts.length + 1);
        ts[ts.length - 1] = poolThread; // awaitTermination returns before the worker thread ends
        for (Thread t : ts) {
            s = System.nanoTime();
            t.join();
            main.waited(Ground.Wait.JOIN, s, System.nanoTime());
        }
        g.print();
    }
}
