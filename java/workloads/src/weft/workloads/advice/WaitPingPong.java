package weft.workloads.advice;

import java.util.concurrent.SynchronousQueue;

/**
 * The worst case for recording waits: two threads hand a baton back and forth
 * {@code rounds} times with {@code Object.wait}/{@code notify}, then pass
 * {@code rounds} items through a {@link SynchronousQueue} (parks with a blocker).
 * Every hand-off is a wait of a few microseconds. Args: {@code [rounds=50000]}.
 */
public final class WaitPingPong {
    /** Whose turn it is. */
    static final class Baton {
        int turn;
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
        long t0 = System.nanoTime();
        Baton baton = new Baton();
        Thread other = new Thread(() -> play(baton, 1, rounds), "pong");
        other.start();
        play(baton, 0, rounds);
        other.join();
        SynchronousQueue<Integer> q = new SynchronousQueue<>();
        Thread consumer = new Thread(() -> {
            try {
                for (int i = 0; i < rounds; i++) {
                    q.take();
                }
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "consumer");
        consumer.start();
        for (int i = 0; i < rounds; i++) {
            q.put(i);
        }
        consumer.join();
        System.out.println("WaitPingPong done in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }

    static void play(Baton b, int me, int rounds) {
        synchronized (b) {
            for (int i = 0; i < rounds; i++) {
                while (b.turn != me) {
                    try {
                        b.wait();
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
                b.turn = 1 - me;
                b.notify();
            }
        }
    }
}
