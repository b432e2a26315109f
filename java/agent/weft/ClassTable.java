package weft;

import java.lang.ref.WeakReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A map from classes to values that takes no lock, for the probes' per-class facts.
 *
 * <p>Not a {@link ClassValue}: its first use on a class takes a JDK-wide monitor
 * ({@code ClassValue.initializeMap}), which threads meeting new classes together
 * (a burst of class loading, each task class's first run) contend on, and that
 * contention showed in the profiled program's lock report as the program's own.
 *
 * <p>Fixed buckets of immutable chains: a lookup reads a bucket and follows its chain;
 * an insert replaces a bucket's chain with a CAS (copying the chain, leaving out
 * entries of unloaded classes). Keys are weak, so classes stay unloadable. Probes
 * see the task, executor and future classes of a program (hundreds to a few thousand):
 * with 4096 buckets chains stay short and no resize is needed.
 */
final class ClassTable<V> {
    private static final int BUCKETS = 4096;

    private static final class Entry<V> extends WeakReference<Class<?>> {
        final V value;
        final Entry<V> next;

        Entry(Class<?> c, V value, Entry<V> next) {
            super(c);
            this.value = value;
            this.next = next;
        }
    }

    private final AtomicReferenceArray<Entry<V>> buckets = new AtomicReferenceArray<>(BUCKETS);

    private static int bucket(Class<?> c) {
        int h = System.identityHashCode(c);
        return (h ^ (h >>> 12)) & (BUCKETS - 1);
    }

    /** The value of {@code c}, or null when none was put. */
    V get(Class<?> c) {
        for (Entry<V> e = buckets.get(bucket(c)); e != null; e = e.next) {
            if (e.refersTo(c)) return e.value;
        }
        return null;
    }

    /**
     * Puts {@code value} for {@code c} unless a value is there already; returns the
     * value the table holds for {@code c} afterwards (the first one put wins a race).
     */
    V putIfAbsent(Class<?> c, V value) {
        int b = bucket(c);
        while (true) {
            Entry<V> head = buckets.get(b);
            Entry<V> chain = null;
            for (Entry<V> e = head; e != null; e = e.next) {
                if (e.refersTo(c)) return e.value;
                if (!e.refersTo(null)) chain = new Entry<>(e.get(), e.value, chain);
            }
            if (buckets.compareAndSet(b, head, new Entry<>(c, value, chain))) return value;
        }
    }
}
