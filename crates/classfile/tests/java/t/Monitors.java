package t;

/** synchronized blocks and methods in every shape the monitor probes must keep working. */
public class Monitors {
    static final Object LOCK = new Object();
    static int counter;
    int value = 7;

    synchronized int recurse(int n) {
        return n == 0 ? value : 1 + recurse(n - 1);
    }

    static synchronized void bump() {
        counter++;
    }

    synchronized void boom() {
        throw new IllegalStateException("boom");
    }

    static int blocks(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            synchronized (LOCK) {
                if (i == 2) continue;
                if (i == 7) break;
                s += i;
            }
        }
        return s;
    }

    static int nested() {
        synchronized (LOCK) {
            synchronized (LOCK) {
                synchronized (new Object()) {
                    return Thread.holdsLock(LOCK) ? 3 : -3;
                }
            }
        }
    }

    static String throwing() {
        try {
            synchronized (LOCK) {
                throw new RuntimeException("inside");
            }
        } catch (RuntimeException e) {
            return e.getMessage() + " released=" + !Thread.holdsLock(LOCK);
        }
    }

    static int pingPong() throws InterruptedException {
        final int[] turn = {0};
        final int rounds = 10;
        Thread other = new Thread(() -> {
            for (int i = 0; i < rounds; i++) {
                synchronized (turn) {
                    while (turn[0] != 1) {
                        try {
                            turn.wait();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    turn[0] = 0;
                    turn.notifyAll();
                }
            }
        });
        other.start();
        int done = 0;
        for (int i = 0; i < rounds; i++) {
            synchronized (turn) {
                turn[0] = 1;
                turn.notifyAll();
                while (turn[0] != 0) turn.wait();
                done++;
            }
        }
        other.join();
        return done;
    }

    public static void main(String[] args) throws Exception {
        Monitors m = new Monitors();
        System.out.println("recurse=" + m.recurse(5));
        bump();
        bump();
        bump();
        System.out.println("counter=" + counter);
        try {
            m.boom();
        } catch (IllegalStateException e) {
            System.out.println("boom=" + e.getMessage() + " released=" + !Thread.holdsLock(m));
        }
        System.out.println("blocks=" + blocks(10));
        System.out.println("nested=" + nested());
        System.out.println("throwing=" + throwing());
        System.out.println("pingPong=" + pingPong());
        System.out.println("free=" + !Thread.holdsLock(LOCK));
        try {
            LOCK.notify();
            System.out.println("notify outside the monitor: returned");
        } catch (IllegalMonitorStateException e) {
            System.out.println("notify outside the monitor: IllegalMonitorStateException");
        }
        Class<?> p = Class.forName("weft.MonitorProbe");
        StringBuilder sb = new StringBuilder("probe");
        for (String f : new String[] {"ENTER", "ENTERED", "EXIT", "NOTIFY", "OUT_OF_ORDER"}) {
            sb.append(' ').append(f.toLowerCase()).append('=').append(p.getField(f).get(null));
        }
        System.out.println(sb);
    }
}
