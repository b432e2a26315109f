package weft.workloads.advice;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Waits of known kinds, objects and sites (like a database's row locks): each of
 * {@code threads} workers waits {@code rounds} times in {@code Object.wait} on a
 * {@code Row} (in {@code Row.lockRow}) and {@code rounds} times in
 * {@code LockSupport.park} with a {@code Gate} as blocker (in {@code Gate.pass}), and
 * {@code rounds} times in {@code Condition.await} of a {@code ReentrantLock} (in
 * {@code Mailbox.take}).
 * The main thread releases a worker only once it is inside that wait (or, for the
 * gate, inside {@code park(gate)}), so every wait really happens, whatever the load.
 * Args: {@code [threads=3] [rounds=20]}.
 */
public final class KnownWaits {
    /** A row lock: granted by the main thread. */
    static final class Row {
        private boolean granted;
        /** Set under the monitor before waiting: once the main thread holds the
         * monitor after seeing it, the worker is inside wait(). */
        volatile boolean waiting;

        synchronized void lockRow() throws InterruptedException {
            waiting = true;
            while (!granted) {
                wait();
            }
            granted = false;
        }

        synchronized void grant() {
            waiting = false;
            granted = true;
            notifyAll();
        }
    }

    /** A gate that a worker passes when the main thread opens it. */
    static final class Gate {
        volatile boolean open;

        void pass() {
            while (!open) {
                LockSupport.park(this);
            }
            open = false;
        }
    }

    /** A one-slot mailbox: a condition of a ReentrantLock. */
    static final class Mailbox {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition ready = lock.newCondition();
        private boolean full;

        void take() throws InterruptedException {
            lock.lock();
            try {
                while (!full) {
                    ready.await();
                }
                full = false;
            } finally {
                lock.unlock();
            }
        }

        /** Whether a taker is inside await (it released the lock to wait). */
        boolean hasTaker() {
            lock.lock();
            try {
                return lock.hasWaiters(ready);
            } finally {
                lock.unlock();
            }
        }

        void put() {
            lock.lock();
            try {
                full = true;
                ready.signal();
            } finally {
                lock.unlock();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        Row[] rows = new Row[threads];
        Gate[] gates = new Gate[threads];
        Mailbox[] boxes = new Mailbox[threads];
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            Row row = rows[t] = new Row();
            Gate gate = gates[t] = new Gate();
            Mailbox box = boxes[t] = new Mailbox();
            workers[t] = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        row.lockRow();
                        gate.pass();
                        box.take();
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "waiter-" + t);
            workers[t].start();
        }
        for (int r = 0; r < rounds; r++) {
            for (int t = 0; t < threads; t++) {
                Thread w = workers[t];
                while (!rows[t].waiting) {
                    Thread.onSpinWait();
                }
                Thread.sleep(2);
                rows[t].grant();
                // Set by LockSupport.park(gate) before it parks: the park is certain.
                while (LockSupport.getBlocker(w) != gates[t]) {
                    Thread.onSpinWait();
                }
                Thread.sleep(2);
                gates[t].open = true;
                LockSupport.unpark(w);
                // Inside await and parked (WAITING): the signal finds it parked.
                while (!(boxes[t].hasTaker() && w.getState() == Thread.State.WAITING)) {
                    Thread.onSpinWait();
                }
                Thread.sleep(2);
                boxes[t].put();
            }
        }
        for (Thread w : workers) {
            w.join();
        }
        System.out.println("KnownWaits done: " + threads * rounds * 3 + " waits");
    }
}
