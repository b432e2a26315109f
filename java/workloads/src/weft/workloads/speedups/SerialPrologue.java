package weft.workloads.speedups;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * A serial prologue on main, then tasks on a pool, for some rounds (WHATIF W7).
 * Knob {@code split=true}: the serial part is split into the round's tasks.
 * Args: threads=2 tasks=32 serial=200000 parallel=800000 rounds=2 split=false
 * (serial and parallel in burn units of ~1.3 µs here).
 */
public final class SerialPrologue {
    static {
        Ledger.start();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Ledger.parse(argv, "threads=2", "tasks=32", "serial=200000", "parallel=800000", "rounds=2", "split=false");
        int threads = Integer.parseInt(a.get("threads")), tasks = Integer.parseInt(a.get("tasks"));
        long serial = Long.parseLong(a.get("serial")), parallel = Long.parseLong(a.get("parallel"));
        int rounds = Integer.parseInt(a.get("rounds"));
        boolean split = Boolean.parseBoolean(a.get("split"));
        Ledger l = new Ledger("SerialPrologue", threads);
        a.forEach(l::arg);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        ((ThreadPoolExecutor) pool).prestartAllCoreThreads();
        for (int r = 0; r < rounds; r++) {
            if (!split) Ledger.burn(serial);
            long each = (parallel + (split ? serial : 0)) / tasks;
            final int section = r;
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < tasks; t++) fs.add(pool.submit(() -> l.timed(section, () -> Ledger.burn(each))));
            for (Future<?> f : fs) f.get();
        }
        pool.shutdown();
        l.print(split ? "split" : "serial");
    }
}
