package weft.workloads;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The ground truth of a workload, computed from its own deterministic control
 * flow (never from timing), printed as the single stdout line
 * {@code WEFT-TRUTH <json>}.
 *
 * <p>JSON shape (read by crates/cli/tests/common/mod.rs):
 * <pre>
 * { "workload": "PoolTasks",
 *   "classes": { "&lt;class&gt;": { "kind": "runnable"|"callable"|"forkjoin"|"thread"|null,
 *                              "executions": N,   // every completed call, aggregated ones included
 *                              "aggregated": A,   // of which folded into an enclosing execution/thread
 *                              "submitted": S } },
 *   "self_ns": { "&lt;class&gt;": W },   // known self time of each reported execution of that class
 *   "threads": [ "&lt;thread name&gt;" ],  // threads this workload started and joined
 *   "min_gc_pauses": G }
 * </pre>
 * A class with {@code "executions": 0} must not appear in the report (or with 0
 * executions). {@code "kind": null} means the task model does not settle it.
 * Classes are keyed by binary name (dots, {@code $} for nested classes); lambdas
 * by {@code <declaring class>$$Lambda[<enclosing method>:<line>]}.
 *
 * <p>This class is deliberately not a task (no Runnable/Callable).
 */
final class Truth {
    private final String workload;
    private final Map<String, String> kinds = new LinkedHashMap<>();
    private final Map<String, long[]> counts = new LinkedHashMap<>();
    private final Map<String, Long> selfNs = new LinkedHashMap<>();
    private final List<String> threads = new ArrayList<>();
    private long minGcPauses;

    Truth(String workload) {
        this.workload = workload;
    }

    /** Adds executions/aggregated/submitted to a class (creating it). */
    Truth task(String cls, String kind, long executions, long aggregated, long submitted) {
        if (kinds.containsKey(cls) && !java.util.Objects.equals(kinds.get(cls), kind)) {
            throw new IllegalArgumentException("kind mismatch for " + cls);
        }
        kinds.put(cls, kind);
        long[] c = counts.computeIfAbsent(cls, k -> new long[3]);
        c[0] += executions;
        c[1] += aggregated;
        c[2] += submitted;
        return this;
    }

    Truth task(Class<?> cls, String kind, long executions, long aggregated, long submitted) {
        return task(cls.getName(), kind, executions, aggregated, submitted);
    }

    /** Every reported execution of {@code cls} has self time {@code ns} (busy-spun). */
    Truth self(String cls, long ns) {
        selfNs.put(cls, ns);
        return this;
    }

    Truth self(Class<?> cls, long ns) {
        return self(cls.getName(), ns);
    }

    Truth thread(String name) {
        threads.add(name);
        return this;
    }

    Truth minGcPauses(long n) {
        minGcPauses = n;
        return this;
    }

    void print() {
        StringBuilder sb = new StringBuilder("WEFT-TRUTH {");
        sb.append("\"workload\":").append(q(workload)).append(",\"classes\":{");
        boolean first = true;
        for (Map.Entry<String, long[]> e : counts.entrySet()) {
            if (!first) sb.append(',');
            first = false;
            long[] c = e.getValue();
            String kind = kinds.get(e.getKey());
            sb.append(q(e.getKey())).append(":{\"kind\":").append(kind == null ? "null" : q(kind))
                    .append(",\"executions\":").append(c[0])
                    .append(",\"aggregated\":").append(c[1])
                    .append(",\"submitted\":").append(c[2]).append('}');
        }
        sb.append("},\"self_ns\":{");
        first = true;
        for (Map.Entry<String, Long> e : selfNs.entrySet()) {
            if (!first) sb.append(',');
            first = false;
            sb.append(q(e.getKey())).append(':').append(e.getValue());
        }
        sb.append("},\"threads\":[");
        for (int i = 0; i < threads.size(); i++) {
            if (i > 0) sb.append(',');
            sb.append(q(threads.get(i)));
        }
        sb.append("],\"min_gc_pauses\":").append(minGcPauses).append('}');
        System.out.println(sb);
        System.out.flush();
    }

    private static String q(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') sb.append('\\');
            sb.append(ch);
        }
        return sb.append('"').toString();
    }

    // ---- helpers shared by the workloads ----

    /** Report name of a lambda body declared in {@code declaring}, method {@code method}, at {@code line}. */
    static String lambda(Class<?> declaring, String method, int line) {
        return declaring.getName() + "$$Lambda[" + method + ":" + line + "]";
    }

    /** The source line of the caller: put it on the same line as the lambda it names. */
    static int line() {
        return new Throwable().getStackTrace()[1].getLineNumber();
    }

    /** Busy-waits until {@code ns} nanoseconds of wall time have passed (the task's known work). */
    static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    /** {@code args[i]} as a long, or {@code def}. */
    static long arg(String[] args, int i, long def) {
        return args.length > i ? Long.parseLong(args[i]) : def;
    }
}
