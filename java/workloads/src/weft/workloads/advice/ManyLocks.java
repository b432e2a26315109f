package weft.workloads.advice;

/**
 * Thousands of lock instances, each contended once at the same site (like a
 * database's lock table: one lock object per row). For each {@code Entry},
 * a holder thread takes its monitor and keeps it until the main thread is
 * BLOCKED entering it, so every instance is contended exactly once, whatever
 * the machine's load. Args: {@code [entries=2000]}.
 */
public final class ManyLocks {
    /** One lock per entry. */
    static final class Entry {
        int value;
    }

    /** The entry the holder holds, and the last one main entered. */
    static volatile Entry held;
    static volatile Entry entered;

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        Entry[] entries = new Entry[n];
        for (int i = 0; i < n; i++) {
            entries[i] = new Entry();
        }
        Thread mainThread = Thread.currentThread();
        Thread holder = new Thread(() -> {
            Entry prev = null;
            for (Entry e : entries) {
                synchronized (e) {
                    // Main is past the previous entry (so BLOCKED below means on this one).
                    while (entered != prev) {
                        Thread.yield();
                    }
                    held = e;
                    // Keep it until main blocks on it.
                    while (mainThread.getState() != Thread.State.BLOCKED) {
                        Thread.yield();
                    }
                    e.value++;
                }
                prev = e;
            }
        }, "holder");
        holder.start();
        for (Entry e : entries) {
            while (held != e) {
                Thread.yield();
            }
            update(e);
        }
        holder.join();
        long sum = 0;
        for (Entry e : entries) {
            sum += e.value;
        }
        System.out.println("ManyLocks done: " + sum);
    }

    /** The one site where every entry is contended. */
    static void update(Entry e) {
        synchronized (e) {
            e.value++;
            entered = e;
        }
    }
}
