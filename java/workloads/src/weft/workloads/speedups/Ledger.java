package weft.workloads.speedups;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The measured truth of a possible-speedups workload (docs/speedups.md), printed
 * as the single stdout line {@code WEFT-TRUTH <json>}.
 *
 * <p>Every figure comes from the threads' own measurements: CPU time from
 * {@link ThreadMXBean#getCurrentThreadCpuTime()} and wall time from
 * {@link System#nanoTime()}, taken by the thread around each piece of work (and
 * around each lock acquisition), never from the program's structure. Work is
 * recorded per <i>section</i>: the stretch between two points where the threads
 * meet (a round between barriers, one fork-join phase).
 *
 * <ul>
 * <li>{@code parallel_fraction} = parallel CPU ÷ (serial CPU + parallel CPU); serial
 *     CPU is the main thread's on-CPU time (schedstat) from the main class's
 *     initialiser to the end, minus what it recorded as parallel work;
 * <li>{@code load_balance} = Σ_sections (CPU_j ÷ team) ÷ Σ_sections max_thread CPU;
 * <li>{@code lock_contention} = 1 − blocked ÷ (running + blocked) in the parallel
 *     work (running = wall time of the work minus its blocked time);
 * <li>{@code cores} = Σ_sections max_thread running CPU ÷ Σ_sections max_thread running wall
 *     time (running CPU = CPU minus the CPU spent inside lock acquisitions, whose wall
 *     time is blocked, not running: counted, they made a thread read more than a whole
 *     CPU, 1.03–1.04 on an idle machine).
 * </ul>
 */
final class Ledger {
    /** nanoTime and main's on-CPU time when the workload's class was initialised. */
    static long t0, mainCpu0;
    static volatile long sink;

    /** Loaded on first use: initialising the management classes costs main tens of ms of CPU. */
    private static final class Mx {
        static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    }

    /** Call first in the main class's static initialiser. */
    static void start() {
        t0 = System.nanoTime();
        mainCpu0 = schedstatCpu();
    }

    static long cpu() {
        return Mx.MX.getCurrentThreadCpuTime();
    }

    /**
     * The calling thread's on-CPU ns from /proc/thread-self/schedstat: main's
     * serial CPU is counted from the class initialiser, before the management
     * classes are loaded (which {@link #cpu()} would leave out). 0 off Linux.
     */
    static long schedstatCpu() {
        try {
            String s = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("/proc/thread-self/schedstat")));
            return Long.parseLong(s.substring(0, s.indexOf(' ')));
        } catch (Exception | Error e) {
            return 0;
        }
    }

    /** Deterministic CPU work: {@code units} × 1000 steps of a 64-bit LCG (~1.3 µs a unit here). */
    static long burn(long units) {
        long x = units | 1;
        for (long i = 0; i < units * 1000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        sink += x;
        return x;
    }

    /** Per section, per thread: {cpu, running wall, blocked wall, CPU while blocked}. */
    private final Map<Integer, Map<Long, long[]>> sections = new ConcurrentHashMap<>();
    private final int team;
    private final String workload;
    private final Map<String, String> args = new LinkedHashMap<>();

    Ledger(String workload, int team) {
        this.workload = workload;
        this.team = team;
        // Initialise the management classes here, on main (serial, and counted by
        // schedstat), not in the first worker's first cpu() call: there they cost
        // that worker tens of ms of CPU outside its measured work while the other
        // workers waited for the class initialiser, an imbalance the truth missed.
        cpu();
    }

    void arg(String k, Object v) {
        args.put(k, String.valueOf(v));
    }

    /** Work done by the calling thread in a section. */
    void record(int section, long cpuNs, long wallNs, long blockedNs) {
        record(section, cpuNs, wallNs, blockedNs, 0);
    }

    /** The same, with the CPU time spent inside lock acquisitions ({@code blockedCpuNs}). */
    void record(int section, long cpuNs, long wallNs, long blockedNs, long blockedCpuNs) {
        long[] a = sections.computeIfAbsent(section, k -> new ConcurrentHashMap<>())
                .computeIfAbsent(Thread.currentThread().getId(), k -> new long[4]);
        synchronized (a) {
            a[0] += cpuNs;
            a[1] += wallNs - blockedNs;
            a[2] += blockedNs;
            a[3] += blockedCpuNs;
        }
    }

    /** Measures {@code work} on the calling thread and records it. */
    void timed(int section, Runnable work) {
        long c = cpu(), w = System.nanoTime();
        work.run();
        record(section, cpu() - c, System.nanoTime() - w, 0);
    }

    /** Prints the truth; call on main when the work is done. */
    void print(String knob) {
        long elapsed = System.nanoTime() - t0;
        long mainCpu = schedstatCpu() - mainCpu0;
        long mainId = Thread.currentThread().getId();
        double par = 0, mainPar = 0, balanced = 0, busiest = 0, busiestRunning = 0, busiestWall = 0, running = 0,
                blocked = 0, blockedCpu = 0;
        for (Map<Long, long[]> sec : new TreeMap<>(sections).values()) {
            double c = 0, m = 0, mr = 0, mw = 0;
            for (Map.Entry<Long, long[]> e : sec.entrySet()) {
                long[] a = e.getValue();
                c += a[0];
                if (a[0] > m) {
                    m = a[0];
                    mr = a[0] - a[3];
                    mw = a[1];
                }
                running += a[1];
                blocked += a[2];
                blockedCpu += a[3];
                if (e.getKey() == mainId) mainPar += a[0];
            }
            par += c;
            balanced += Math.min(c / team, m);
            busiest += m;
            busiestRunning += mr;
            busiestWall += mw;
        }
        double serial = Math.max(0, mainCpu - mainPar);
        StringBuilder s = new StringBuilder("WEFT-TRUTH {\"workload\":\"").append(workload)
                .append("\",\"knob\":\"").append(knob).append("\",\"args\":{");
        int i = 0;
        for (Map.Entry<String, String> e : args.entrySet()) {
            if (i++ > 0) s.append(',');
            s.append('"').append(e.getKey()).append("\":\"").append(e.getValue()).append('"');
        }
        s.append("},\"team\":").append(team)
                .append(",\"elapsed_ns\":").append(elapsed)
                .append(",\"cpu_serial_ns\":").append((long) serial)
                .append(",\"cpu_parallel_ns\":").append((long) par)
                .append(",\"cpu_blocked_ns\":").append((long) blockedCpu)
                .append(",\"sections\":").append(sections.size())
                .append(",\"parallel_fraction\":").append(ratio(par, serial + par))
                .append(",\"load_balance\":").append(ratio(balanced, busiest))
                .append(",\"lock_contention\":").append(ratio(running, running + blocked))
                .append(",\"cores\":").append(ratio(busiestRunning, busiestWall))
                .append('}');
        System.out.println(s);
    }

    private static String ratio(double a, double b) {
        return b > 0 ? String.format(java.util.Locale.ROOT, "%.4f", a / b) : "null";
    }

    /** {@code key=value} arguments over defaults. */
    static Map<String, String> parse(String[] argv, String... defaults) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String d : defaults) {
            int eq = d.indexOf('=');
            m.put(d.substring(0, eq), d.substring(eq + 1));
        }
        for (String a : argv) {
            int eq = a.indexOf('=');
            if (eq <= 0 || !m.containsKey(a.substring(0, eq)))
                throw new IllegalArgumentException("unknown argument " + a + "; known: " + m.keySet());
            m.put(a.substring(0, eq), a.substring(eq + 1));
        }
        return m;
    }
}
