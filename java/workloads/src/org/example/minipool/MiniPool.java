package org.example.minipool;

/**
 * A stand-in for a third-party library (a connection pool) outside the
 * application's packages: weft knows nothing about it by name. {@link #borrow}
 * holds the pool's one lock while it "opens" a connection; {@link #stats} takes
 * another lock seven library frames below the caller (deeper than the frames
 * weft records per lock site).
 */
public final class MiniPool {
    private final Object stats = new Object();
    private long borrowed;
    private long counted;

    /** Busy work under the pool's lock (a connection's setup), ~{@code micros} µs. */
    public synchronized long borrow(int micros) {
        borrowed++;
        return spin(micros);
    }

    /** Counts through seven library frames, then under the stats lock. */
    public long stats(int micros) {
        return level1(micros);
    }

    private long level1(int micros) { return level2(micros) + 1; }
    private long level2(int micros) { return level3(micros) + 1; }
    private long level3(int micros) { return level4(micros) + 1; }
    private long level4(int micros) { return level5(micros) + 1; }
    private long level5(int micros) { return level6(micros) + 1; }
    private long level6(int micros) { return count(micros) + 1; }

    private long count(int micros) {
        synchronized (stats) {
            counted++;
            return spin(micros);
        }
    }

    static long spin(int micros) {
        long end = System.nanoTime() + micros * 1_000L;
        long x = 0;
        while (System.nanoTime() < end) {
            x++;
        }
        return x;
    }
}
