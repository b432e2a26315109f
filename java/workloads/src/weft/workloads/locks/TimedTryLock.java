package weft.workloads.locks;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.StampedLock;

/**
 * Timed acquisitions that give up: while a holder keeps each lock for {@code hold_ms},
 * {@code threads} threads each try it {@code tries} times with a timeout of
 * {@code timeout_ms} (shorter than the hold: every try runs out of time), then take it
 * for good once the holder let go. Per kind: a {@link ReentrantLock}
 * ({@code tryLock(timeout)}, AQS's int slow path), a {@link Semaphore}
 * ({@code tryAcquire(timeout)}, its shared side), a {@link StampedLock}
 * ({@code tryWriteLock(timeout)}, a long slow path), and a {@link CountDownLatch}
 * {@code await(timeout)} that runs out (a wait, not a lock). The truth counts the
 * attempts that gave up and the acquisitions that succeeded after the hold.
 *
 * <p>Args: [threads=2] [tries=3] [timeout_ms=20] [hold_ms=400]
 */
public final class TimedTryLock {
    public static void main(String[] argv) throws Exception {
        java.util.Map<String, Long> a = new java.util.HashMap<>();
        a.put("threads", 2L);
        a.put("tries", 3L);
        a.put("timeout_ms", 20L);
        a.put("hold_ms", 400L);
        for (String s : argv) {
            int eq = s.indexOf('=');
            if (eq < 0 || !a.containsKey(s.substring(0, eq))) {
                System.err.println("bad argument " + s);
                System.exit(2);
            }
            a.put(s.substring(0, eq), Long.parseLong(s.substring(eq + 1)));
        }
        int threads = a.get("threads").intValue();
        int tries = a.get("tries").intValue();
        long timeout = a.get("timeout_ms");
        long hold = a.get("hold_ms");

        ReentrantLock lock = new ReentrantLock();
        Semaphore permits = new Semaphore(1);
        StampedLock stamped = new StampedLock();
        CountDownLatch never = new CountDownLatch(1);

        int[] gaveUp = new int[3];
        int[] acquired = new int[3];
        int[] latchTimeouts = new int[1];

        // The holder takes all three, then lets them go after hold_ms.
        CountDownLatch held = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            lock.lock();
            permits.acquireUninterruptibly();
            long stamp = stamped.writeLock();
            held.countDown();
            try {
                Thread.sleep(hold);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            } finally {
                stamped.unlockWrite(stamp);
                permits.release();
                lock.unlock();
            }
        }, "holder");
        holder.start();
        held.await();

        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                try {
                    for (int i = 0; i < tries; i++) {
                        if (lock.tryLock(timeout, TimeUnit.MILLISECONDS)) {
                            lock.unlock();
                        } else {
                            synchronized (gaveUp) { gaveUp[0]++; }
                        }
                        if (permits.tryAcquire(timeout, TimeUnit.MILLISECONDS)) {
                            permits.release();
                        } else {
                            synchronized (gaveUp) { gaveUp[1]++; }
                        }
                        long s = stamped.tryWriteLock(timeout, TimeUnit.MILLISECONDS);
                        if (s != 0L) {
                            stamped.unlockWrite(s);
                        } else {
                            synchronized (gaveUp) { gaveUp[2]++; }
                        }
                        if (!never.await(timeout, TimeUnit.MILLISECONDS)) {
                            synchronized (gaveUp) { latchTimeouts[0]++; }
                        }
                    }
                    holder.join();
                    lock.lock();
                    lock.unlock();
                    permits.acquire();
                    permits.release();
                    stamped.unlockWrite(stamped.writeLock());
                    synchronized (gaveUp) {
                        acquired[0]++;
                        acquired[1]++;
                        acquired[2]++;
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "trier-" + t);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        holder.join();
        // The tries fit in the hold only if tries x 4 x timeout < hold (else some succeed).
        System.out.println("WEFT-TRUTH {\"workload\":\"TimedTryLock\",\"gave_up\":{\"reentrant_lock\":" + gaveUp[0]
                + ",\"semaphore\":" + gaveUp[1] + ",\"stamped_lock\":" + gaveUp[2] + "},\"acquired_after\":"
                + acquired[0] + ",\"latch_timeouts\":" + latchTimeouts[0] + "}");
    }
}
