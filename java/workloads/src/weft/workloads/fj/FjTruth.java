package weft.workloads.fj;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;

/**
 * Ground truth of a fork-join workload, printed as the single stdout line
 * {@code WEFT-TRUTH <json>}. Every number is computed from the workload's own
 * control flow (counters in the task code, or a sequential shadow of a
 * data-independent split), never from timing. A field the program cannot know
 * exactly is left out (see README.md for the meaning of each key).
 *
 * <p>This class is not a task.
 */
final class FjTruth {
    private final String workload;
    private final long[] args;
    private String result;
    private Long forks, external, tasks, cancelled, reinitialized, reused, neverRun;
    private final List<String> computations = new ArrayList<>();
    private boolean computationsKnown;
    private final Map<String, Long> classes = new LinkedHashMap<>();
    private boolean classesKnown;
    private Long workNsPerLeaf;
    private final Map<String, String> extra = new LinkedHashMap<>();

    FjTruth(String workload, long... args) {
        this.workload = workload;
        this.args = args.clone();
    }

    FjTruth result(long v) { result = Long.toString(v); return this; }

    FjTruth result(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) throw new AssertionError("result " + v);
        result = Double.toString(v);
        return this;
    }

    FjTruth forks(long n) { forks = n; return this; }
    FjTruth externalSubmissions(long n) { external = n; return this; }
    FjTruth tasks(long n) { tasks = n; return this; }
    FjTruth cancelled(long n) { cancelled = n; return this; }
    FjTruth reinitialized(long n) { reinitialized = n; return this; }
    FjTruth reused(long n) { reused = n; return this; }
    FjTruth neverRun(long n) { neverRun = n; return this; }

    /** One computation (a root usage: an external submission or a fork outside any run). */
    FjTruth computation(Class<?> root, long tasks) { return computation(root.getName(), tasks); }

    FjTruth computation(String root, long tasks) {
        computationsKnown = true;
        computations.add("{\"root_class\":" + q(root) + ",\"tasks\":" + tasks + "}");
        return this;
    }

    /** A computation whose task count the program cannot know (JDK internals). */
    FjTruth computation(String root) {
        computationsKnown = true;
        computations.add("{\"root_class\":" + q(root) + "}");
        return this;
    }

    /** Adds tasks (usages that ran through exec) of a class; classes with 0 tasks are not listed. */
    FjTruth classTasks(Class<?> cls, long n) { return classTasks(cls.getName(), n); }

    FjTruth classTasks(String cls, long n) {
        classesKnown = true;
        if (n > 0) classes.merge(cls, n, Long::sum);
        return this;
    }

    FjTruth workNsPerLeaf(long ns) { workNsPerLeaf = ns; return this; }

    /** An extra top-level key with a raw JSON value. */
    FjTruth extra(String key, String json) { extra.put(key, json); return this; }

    void print() {
        StringBuilder sb = new StringBuilder("WEFT-TRUTH {\"workload\":").append(q(workload));
        sb.append(",\"args\":[");
        for (int i = 0; i < args.length; i++) sb.append(i == 0 ? "" : ",").append(args[i]);
        sb.append(']');
        if (result != null) sb.append(",\"result\":").append(result);
        sb.append(",\"forkjoin\":{");
        int n0 = sb.length();
        num(sb, "forks", forks);
        num(sb, "external_submissions", external);
        num(sb, "tasks", tasks);
        num(sb, "cancelled", cancelled);
        num(sb, "reinitialized", reinitialized);
        num(sb, "reused", reused);
        num(sb, "never_run", neverRun);
        if (computationsKnown) {
            sep(sb, n0).append("\"computations\":[").append(String.join(",", computations)).append(']');
        }
        if (classesKnown) {
            sep(sb, n0).append("\"classes\":{");
            boolean first = true;
            for (Map.Entry<String, Long> e : classes.entrySet()) {
                if (!first) sb.append(',');
                first = false;
                sb.append(q(e.getKey())).append(":{\"tasks\":").append(e.getValue()).append('}');
            }
            sb.append('}');
        }
        sb.append('}');
        if (workNsPerLeaf != null) sb.append(",\"work_ns_per_leaf\":").append(workNsPerLeaf);
        for (Map.Entry<String, String> e : extra.entrySet()) {
            sb.append(',').append(q(e.getKey())).append(':').append(e.getValue());
        }
        sb.append('}');
        System.out.println(sb);
        System.out.flush();
    }

    private static StringBuilder sep(StringBuilder sb, int n0) {
        if (sb.length() > n0) sb.append(',');
        return sb;
    }

    private static void num(StringBuilder sb, String key, Long v) {
        if (v == null) return;
        if (sb.charAt(sb.length() - 1) != '{') sb.append(',');
        sb.append(q(key)).append(':').append(v);
    }

    static String q(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') sb.append('\\');
            sb.append(c);
        }
        return sb.append('"').toString();
    }

    // ---- helpers shared by the workloads (not tasks) ----

    /** {@code args[i]} as a long, or {@code def} when absent, empty or {@code "-"}. */
    static long arg(String[] args, int i, long def) {
        if (args.length <= i || args[i].isEmpty() || args[i].equals("-")) return def;
        return Long.parseLong(args[i].replace("_", ""));
    }

    /** Pool parallelism: {@code args[i]}, default the number of available processors. */
    static int parallelism(String[] args, int i) {
        int p = (int) arg(args, i, Runtime.getRuntime().availableProcessors());
        if (p < 1) throw new IllegalArgumentException("parallelism " + p);
        return p;
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    static void shutdown(ForkJoinPool pool) throws InterruptedException {
        pool.shutdown();
        check(pool.awaitTermination(60, TimeUnit.SECONDS), "pool did not stop");
    }

    /** Busy-waits {@code ns} of wall-clock time (System.nanoTime), no allocation, no blocking. */
    static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }
}
