package weft.workloads.advice;

import org.example.minipool.MiniPool;

/**
 * The application calls a library ({@code org.example.minipool}, outside its
 * package root) from {@code threads} threads: every call of {@code borrow} and
 * {@code stats} takes one of the library's locks for ~{@code micros} µs, so the
 * threads queue on the library's locks. Args: {@code [threads=4] [calls=60] [micros=1500]}.
 */
public final class LibraryCalls {
    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 60;
        int micros = args.length > 2 ? Integer.parseInt(args[2]) : 1500;
        MiniPool pool = new MiniPool();
        Thread[] ts = new Thread[threads];
        long[] sink = new long[threads];
        for (int t = 0; t < threads; t++) {
            int me = t;
            ts[t] = new Thread(() -> sink[me] = handle(pool, calls, micros), "client-" + t);
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        long sum = 0;
        for (long s : sink) {
            sum += s;
        }
        System.out.println("LibraryCalls done " + (sum != 0));
    }

    static long handle(MiniPool pool, int calls, int micros) {
        long x = 0;
        for (int i = 0; i < calls; i++) {
            x += pool.borrow(micros);
            x += pool.stats(micros);
        }
        return x;
    }
}
