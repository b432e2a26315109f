package weft.workloads.advice;

import java.util.ArrayDeque;
import java.util.concurrent.CyclicBarrier;

/**
 * Waits in the JDK's synchronizers and monitors, from the application's own code:
 * <ul>
 * <li>three parties meet at a {@link CyclicBarrier} {@code rounds} times; party
 *     {@code slow} works 4 ms a round, the others 1 ms, so the others wait ~3 ms
 *     a round for it (a barrier imbalance);
 * <li>two producers and two consumers hand {@code items} each through a one-slot
 *     buffer guarded by a plain {@code new Object()} with {@code wait}/{@code notifyAll}
 *     (waits on a JDK object, in the application's code);
 * <li>meanwhile two pacers pause 40 times each with {@code wait(5)} on a {@link Pause}
 *     that nobody notifies: timed waits that run out, a sleep, not a wait for another
 *     thread (a class of its own: the agent samples wait sites per class, and the
 *     hand-off's thousands of waits on {@code Object} would take them all).
 * </ul>
 * Args: {@code [rounds=60] [items=5000]}.
 */
public final class Barriers {
    /** What the pacers wait on. */
    static final class Pause {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
        int items = args.length > 1 ? Integer.parseInt(args[1]) : 5_000;
        CyclicBarrier barrier = new CyclicBarrier(3);
        Thread[] parties = new Thread[3];
        for (int p = 0; p < parties.length; p++) {
            long work = p == 2 ? 4_000_000 : 1_000_000;
            parties[p] = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        Spin.spin(work);
                        barrier.await();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, p == 2 ? "slow" : "party-" + p);
        }
        for (Thread t : parties) {
            t.start();
        }
        for (Thread t : parties) {
            t.join();
        }

        Object lock = new Object();
        ArrayDeque<Integer> slot = new ArrayDeque<>();
        Thread[] ends = new Thread[4];
        for (int k = 0; k < ends.length; k++) {
            boolean producer = k < 2;
            ends[k] = new Thread(() -> {
                for (int i = 0; i < items; i++) {
                    synchronized (lock) {
                        while (producer ? !slot.isEmpty() : slot.isEmpty()) {
                            try {
                                lock.wait();
                            } catch (InterruptedException e) {
                                throw new RuntimeException(e);
                            }
                        }
                        if (producer) {
                            slot.add(i);
                        } else {
                            slot.poll();
                        }
                        lock.notifyAll();
                    }
                }
            }, (producer ? "producer-" : "consumer-") + k);
        }
        Pause pause = new Pause();
        Thread[] pacers = new Thread[2];
        for (int k = 0; k < pacers.length; k++) {
            pacers[k] = new Thread(() -> {
                for (int i = 0; i < 40; i++) {
                    synchronized (pause) {
                        try {
                            pause.wait(5);
                        } catch (InterruptedException e) {
                            throw new RuntimeException(e);
                        }
                    }
                }
            }, "pacer-" + k);
        }
        for (Thread t : pacers) {
            t.start();
        }
        for (Thread t : ends) {
            t.start();
        }
        for (Thread t : ends) {
            t.join();
        }
        for (Thread t : pacers) {
            t.join();
        }
        System.out.println("Barriers done");
    }
}
