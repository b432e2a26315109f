package weft.workloads.locks;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Measured ground truth of a lock workload, printed as the single stdout line
 * {@code WEFT-TRUTH <json>} (shape: README.md in this directory).
 *
 * <p>Nothing here is assumed from the program's structure: every blocked and
 * waiting period is the {@link System#nanoTime()} difference taken immediately
 * around the acquisition ({@code synchronized} enter, {@code lock()},
 * {@code acquire()}, ...) or the wait, by the thread itself, into its own
 * {@link Acct} (thread-confined; read by main after {@code join}).
 *
 * <p>Periods are split exactly over the phases, whose boundaries are
 * {@link System#nanoTime()} values fixed before the threads that use them start
 * (or, for sequential thread groups, between the groups).
 */
final class Ground {
    /** An acquisition that blocked at least this long counts as contended. */
    static final long CONTENDED_NS = 10_000;

    /** Kinds of non-lock waits, and whether Free Lunch/issue 4 remove them from running time. */
    enum Wait {
        OBJECT_WAIT("Object.wait", true),
        OBJECT_WAIT_TIMED("Object.wait(timeout)", true),
        JOIN("Thread.join (Object.wait)", true),
        CONDITION_AWAIT("Condition.await (park)", true),
        LATCH_AWAIT("CountDownLatch.await (park)", true),
        PARK("LockSupport.park", true),
        POOL_IDLE("idle ThreadPoolExecutor worker (LinkedBlockingQueue.take, park)", true),
        AWAIT_TERMINATION("ThreadPoolExecutor.awaitTermination (park)", true),
        SLEEP("Thread.sleep", false);

        final String label;
        /** Free Lunch: running = lifetime - Object.wait - park; sleep counts as running. */
        final boolean subtracted;

        Wait(String label, boolean subtracted) {
            this.label = label;
            this.subtracted = subtracted;
        }
    }

    /** One lock (or one side of a read-write lock). */
    static final class Lock {
        final String name, cls, kind, side, syncClass;
        final int identityHash;
        /** Blocking on it parks the thread (j.u.c.), as opposed to a monitor's entry queue. */
        final boolean parks;

        Lock(String name, Object obj, String kind, String side, String syncClass) {
            this.name = name;
            this.cls = obj.getClass().getName();
            this.kind = kind;
            this.side = side;
            this.syncClass = syncClass;
            this.identityHash = System.identityHashCode(obj);
            this.parks = !kind.equals("monitor");
        }
    }

    final String workload;
    final long t0;          // System.nanoTime() at program start
    final long t0Before;    // nanoTime just before reading the wall clock
    final Instant wall;     // wall clock at program start
    final long t0After;     // nanoTime just after
    final Map<String, String> args = new LinkedHashMap<>();
    final List<Lock> locks = new ArrayList<>();
    final List<Acct> accts = new ArrayList<>();
    final Map<String, String> extra = new LinkedHashMap<>(); // raw JSON values
    String[] phaseNames = {"run"};
    /** bounds[p] = start of phase p (absolute nanoTime); phase p ends at bounds[p+1], the last one at the end. */
    long[] bounds;
    boolean measured = true;
    Acct main;
    private long end;

    /**
     * nanoTime when the main class was initialised ({@link #programStart}), 0 if not
     * called: the main thread's account starts there, not when main() gets to
     * {@code new Ground}, so that the main thread's set-up (class loading, lock and
     * thread creation) is running time as it is for a profiler (docs/locks.md).
     */
    private static long programStart;

    /** Called from the main class's static initialiser. */
    static void programStart() {
        if (programStart == 0) programStart = System.nanoTime();
    }

    /** nanoTime at the wall-clock reading. */
    private final long wallNano;

    Ground(String workload) {
        this.t0Before = System.nanoTime();
        this.wall = Instant.now();
        this.t0After = System.nanoTime();
        this.wallNano = t0Before + (t0After - t0Before) / 2;
        this.t0 = programStart != 0 ? programStart : wallNano;
        this.workload = workload;
        this.bounds = new long[] {t0};
    }

    /** Declares the phases; {@code starts[0]} is replaced by the program start. */
    void phases(String[] names, long[] starts) {
        if (!accts.isEmpty()) throw new IllegalStateException("phases after threads");
        phaseNames = names.clone();
        bounds = starts.clone();
        bounds[0] = t0;
    }

    /** Registers a lock (before any thread account is created). Returns its index. */
    int lock(String name, Object obj, String kind, String side, String syncClass) {
        if (!accts.isEmpty()) throw new IllegalStateException("lock after threads");
        locks.add(new Lock(name, obj, kind, side, syncClass));
        return locks.size() - 1;
    }

    /** A new thread account (created by main, before the thread starts). */
    synchronized Acct acct(String thread) {
        Acct a = new Acct(this, thread);
        accts.add(a);
        return a;
    }

    /** The main thread's account, alive since the program start. */
    Acct mainAcct() {
        main = acct(Thread.currentThread().getName());
        main.start = t0;
        return main;
    }

    void arg(String k, Object v) {
        args.put(k, String.valueOf(v));
    }

    int phaseCount() {
        return bounds.length;
    }

    long phaseStart(int p) {
        return bounds[p];
    }

    long phaseEnd(int p) {
        return p + 1 < bounds.length ? bounds[p + 1] : end;
    }

    // ---------------------------------------------------------------- output

    /**
     * Ends main's account and prints the WEFT-TRUTH line. The line is formatted twice:
     * the first, unmeasured pass pays for class loading, string-concatenation
     * bootstraps and the like; main's account ends just before the second, so that
     * only the warm formatting, the println and main's return are outside it.
     */
    void print() {
        if (main != null && main.end == 0) {
            main.end();
            render();
            main.end();
        }
        String line = "WEFT-TRUTH " + render();
        System.out.println(line);
        System.out.flush();
    }

    private String render() {
        end = t0;
        for (Acct a : accts) {
            if (a.end == 0) throw new IllegalStateException("thread " + a.name + " never ended");
            end = Math.max(end, a.end);
        }
        int np = phaseCount(), nl = locks.size(), nw = Wait.values().length;

        // Per phase: lifetime, subtracted waits, parked-for-lock, blocked per lock.
        long[] life = new long[np], waitSub = new long[np], waitAll = new long[np], parked = new long[np];
        long[][] blocked = new long[nl][np], blockedC = new long[nl][np];
        for (Acct a : accts) {
            for (int p = 0; p < np; p++) {
                long s = Math.max(a.start, phaseStart(p)), e = Math.min(a.end, p + 1 < np ? bounds[p + 1] : Long.MAX_VALUE);
                if (e > s) life[p] += e - s;
                for (int w = 0; w < nw; w++) {
                    waitAll[p] += a.waits[w][p];
                    if (Wait.values()[w].subtracted) waitSub[p] += a.waits[w][p];
                }
                parked[p] += a.parked[p];
                for (int l = 0; l < nl; l++) {
                    blocked[l][p] += a.blocked[l][p];
                    blockedC[l][p] += a.blockedContended[l][p];
                }
            }
        }
        long[] runFl = new long[np], runIssue = new long[np];
        long totLife = 0, totWaitSub = 0, totWaitAll = 0, totParked = 0, totRunFl = 0, totRunIssue = 0;
        for (int p = 0; p < np; p++) {
            runFl[p] = life[p] - waitSub[p];
            runIssue[p] = runFl[p] - parked[p];
            totLife += life[p];
            totWaitSub += waitSub[p];
            totWaitAll += waitAll[p];
            totParked += parked[p];
            totRunFl += runFl[p];
            totRunIssue += runIssue[p];
        }

        Json j = new Json();
        j.open();
        j.key("workload").str(workload);
        j.key("args").open();
        for (Map.Entry<String, String> e : args.entrySet()) j.key(e.getKey()).str(e.getValue());
        j.close();
        j.key("start_nano_ns").num(t0);
        j.key("start_nano_uncertainty_ns").num((t0After - t0Before + 1) / 2);
        j.key("start_epoch_ns").num(wall.getEpochSecond() * 1_000_000_000L + wall.getNano() - (wallNano - t0));
        j.key("start_wall").str(wall.toString());
        j.key("end_ns").num(end - t0);
        j.key("available_processors").num(Runtime.getRuntime().availableProcessors());
        j.key("java_version").str(System.getProperty("java.version"));
        j.key("measured").bool(measured);
        j.key("contended_threshold_ns").num(CONTENDED_NS);

        // Locks, grouped by name (the sides of a read-write lock share one entry).
        j.key("locks").arr();
        List<String> names = new ArrayList<>();
        for (Lock l : locks) if (!names.contains(l.name)) names.add(l.name);
        for (String name : names) {
            List<Integer> idx = new ArrayList<>();
            for (int l = 0; l < nl; l++) if (locks.get(l).name.equals(name)) idx.add(l);
            Lock first = locks.get(idx.get(0));
            j.open();
            j.key("name").str(name);
            j.key("class").str(first.cls);
            j.key("kind").str(first.kind);
            j.key("sync_class").strOrNull(first.syncClass);
            j.key("identity_hash").num(first.identityHash);
            lockStats(j, idx, blocked, totRunFl, totRunIssue);
            if (idx.size() > 1 || first.side != null) {
                j.key("sides").open();
                for (int l : idx) {
                    j.key(locks.get(l).side).open();
                    lockStats(j, List.of(l), blocked, totRunFl, totRunIssue);
                    j.close();
                }
                j.close();
            }
            j.close();
        }
        j.close();

        // Phases.
        j.key("phases").arr();
        for (int p = 0; p < np; p++) {
            j.open();
            j.key("name").str(phaseNames[p]);
            j.key("start_ns").num(phaseStart(p) - t0);
            j.key("end_ns").num(phaseEnd(p) - t0);
            j.key("lifetime_ns").num(life[p]);
            j.key("waits_ns").num(waitSub[p]);
            j.key("parked_for_lock_ns").num(parked[p]);
            j.key("running_ns_free_lunch").num(runFl[p]);
            j.key("running_ns_issue").num(runIssue[p]);
            long sum = 0, sumC = 0;
            j.key("locks").open();
            for (String name : names) {
                long b = 0, bc = 0;
                for (int l = 0; l < nl; l++) {
                    if (!locks.get(l).name.equals(name)) continue;
                    b += blocked[l][p];
                    bc += blockedC[l][p];
                }
                sum += b;
                sumC += bc;
                j.key(name).open();
                j.key("blocked_ns").num(b);
                j.key("blocked_ns_contended").num(bc);
                j.key("csp_free_lunch").ratio(b, runFl[p]);
                j.key("csp_issue").ratio(b, runIssue[p]);
                j.key("csp_free_lunch_contended_only").ratio(bc, runFl[p]);
                j.key("csp_issue_contended_only").ratio(bc, runIssue[p]);
                j.close();
            }
            j.close();
            j.key("blocked_ns").num(sum);
            j.key("blocked_ns_contended").num(sumC);
            j.key("csp_free_lunch").ratio(sum, runFl[p]);
            j.key("csp_issue").ratio(sum, runIssue[p]);
            j.key("csp_free_lunch_contended_only").ratio(sumC, runFl[p]);
            j.key("csp_issue_contended_only").ratio(sumC, runIssue[p]);
            j.close();
        }
        j.close();

        // Threads.
        j.key("threads").arr();
        for (Acct a : accts) {
            long ws = 0, wa = 0, pk = 0, bl = 0;
            for (int p = 0; p < np; p++) {
                for (int w = 0; w < nw; w++) {
                    wa += a.waits[w][p];
                    if (Wait.values()[w].subtracted) ws += a.waits[w][p];
                }
                pk += a.parked[p];
                for (int l = 0; l < nl; l++) bl += a.blocked[l][p];
            }
            long lt = a.end - a.start;
            j.open();
            j.key("name").str(a.name);
            j.key("start_ns").num(a.start - t0);
            j.key("end_ns").num(a.end - t0);
            j.key("lifetime_ns").num(lt);
            j.key("blocked_ns").num(bl);
            j.key("waits_ns").num(ws);
            j.key("waits_not_subtracted_ns").num(wa - ws);
            j.key("parked_for_lock_ns").num(pk);
            j.key("running_ns_free_lunch").num(lt - ws);
            j.key("running_ns_issue").num(lt - ws - pk);
            j.close();
        }
        j.close();

        // Non-lock waits, per thread and kind.
        j.key("waits").arr();
        for (Acct a : accts) {
            for (Wait w : Wait.values()) {
                if (a.waitCount[w.ordinal()] == 0) continue;
                long ns = 0;
                for (int p = 0; p < np; p++) ns += a.waits[w.ordinal()][p];
                j.open();
                j.key("thread").str(a.name);
                j.key("kind").str(w.label);
                j.key("count").num(a.waitCount[w.ordinal()]);
                j.key("ns").num(ns);
                j.key("max_ns").num(a.waitMax[w.ordinal()]);
                j.key("subtracted_from_running").bool(w.subtracted);
                j.close();
            }
        }
        j.close();

        long totBlocked = 0, totBlockedC = 0;
        for (int l = 0; l < nl; l++) {
            for (int p = 0; p < np; p++) {
                totBlocked += blocked[l][p];
                totBlockedC += blockedC[l][p];
            }
        }
        j.key("totals").open();
        j.key("threads").num(accts.size());
        j.key("lifetime_ns").num(totLife);
        j.key("waits_ns").num(totWaitSub);
        j.key("waits_not_subtracted_ns").num(totWaitAll - totWaitSub);
        j.key("parked_for_lock_ns").num(totParked);
        j.key("running_ns_free_lunch").num(totRunFl);
        j.key("running_ns_issue").num(totRunIssue);
        j.key("blocked_ns").num(totBlocked);
        j.key("blocked_ns_contended").num(totBlockedC);
        j.key("csp_free_lunch").ratio(totBlocked, totRunFl);
        j.key("csp_issue").ratio(totBlocked, totRunIssue);
        j.key("csp_free_lunch_contended_only").ratio(totBlockedC, totRunFl);
        j.key("csp_issue_contended_only").ratio(totBlockedC, totRunIssue);
        j.close();

        // Other live Java threads (JVM system threads), NOT in the totals above.
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) root = root.getParent();
        Thread[] live = new Thread[root.activeCount() + 16];
        int nLive = root.enumerate(live, true);
        j.key("other_threads_not_counted").arr();
        for (int i = 0; i < nLive; i++) {
            Thread t = live[i];
            boolean ours = false;
            for (Acct a : accts) ours |= a.name.equals(t.getName());
            if (ours) continue;
            j.open();
            j.key("name").str(t.getName());
            j.key("state").str(t.getState().name());
            j.key("daemon").bool(t.isDaemon());
            j.close();
        }
        j.close();

        for (Map.Entry<String, String> e : extra.entrySet()) j.key(e.getKey()).raw(e.getValue());
        j.close();
        return j.toString();
    }

    private void lockStats(Json j, List<Integer> idx, long[][] blocked, long runFl, long runIssue) {
        long acq = 0, cont = 0, b = 0, bc = 0, max = 0;
        Map<String, Long> perThread = new LinkedHashMap<>();
        for (Acct a : accts) {
            long tb = 0;
            boolean used = false;
            for (int l : idx) {
                acq += a.acquisitions[l];
                cont += a.contended[l];
                for (long v : a.blockedContended[l]) bc += v;
                max = Math.max(max, a.max[l]);
                used |= a.acquisitions[l] > 0;
                for (long v : a.blocked[l]) tb += v;
            }
            b += tb;
            if (used) perThread.put(a.name, tb);
        }
        j.key("threads_acquiring").num(perThread.size());
        j.key("acquisitions").num(acq);
        j.key("contended").num(cont);
        j.key("blocked_ns").num(b);
        j.key("blocked_ns_contended").num(bc);
        j.key("max_blocked_ns").num(max);
        j.key("blocked_ns_per_thread").open();
        for (Map.Entry<String, Long> e : perThread.entrySet()) j.key(e.getKey()).num(e.getValue());
        j.close();
        j.key("csp_free_lunch").ratio(b, runFl);
        j.key("csp_issue").ratio(b, runIssue);
        j.key("csp_free_lunch_contended_only").ratio(bc, runFl);
        j.key("csp_issue_contended_only").ratio(bc, runIssue);
    }

    // ---------------------------------------------------------------- per-thread account

    /** Written only by its thread (and by main before start / after join). */
    static final class Acct {
        final Ground g;
        final String name;
        long start, end;
        final long[][] blocked;      // [lock][phase]
        final long[] acquisitions, contended, max; // [lock]
        final long[][] blockedContended; // [lock][phase], acquisitions that blocked >= CONTENDED_NS
        final long[][] waits;        // [wait kind][phase]
        final long[] waitCount, waitMax;
        final long[] parked;         // [phase] contended j.u.c. acquisitions (parked for a lock)

        Acct(Ground g, String name) {
            this.g = g;
            this.name = name;
            int nl = g.locks.size(), np = g.phaseCount(), nw = Wait.values().length;
            blocked = new long[nl][np];
            acquisitions = new long[nl];
            contended = new long[nl];
            blockedContended = new long[nl][np];
            max = new long[nl];
            waits = new long[nw][np];
            waitCount = new long[nw];
            waitMax = new long[nw];
            parked = new long[np];
        }

        void begin() {
            start = System.nanoTime();
        }

        void end() {
            end = System.nanoTime();
        }

        /** Thread was trying to acquire lock {@code l} from {@code a} to {@code b} (nanoTime). */
        void blocked(int l, long a, long b) {
            long d = b - a;
            acquisitions[l]++;
            if (d > max[l]) max[l] = d;
            if (d >= CONTENDED_NS) {
                contended[l]++;
                split(blockedContended[l], a, b);
                if (g.locks.get(l).parks) split(parked, a, b);
            }
            split(blocked[l], a, b);
        }

        /** Thread was in a non-lock wait of kind {@code w} from {@code a} to {@code b}. */
        void waited(Wait w, long a, long b) {
            int k = w.ordinal();
            waitCount[k]++;
            if (b - a > waitMax[k]) waitMax[k] = b - a;
            split(waits[k], a, b);
        }

        private void split(long[] perPhase, long a, long b) {
            long[] bd = g.bounds;
            int n = bd.length;
            if (a >= bd[n - 1]) {
                perPhase[n - 1] += b - a;
                return;
            }
            for (int p = 0; p < n; p++) {
                long lo = p == 0 ? Long.MIN_VALUE : bd[p];
                long hi = p + 1 < n ? bd[p + 1] : Long.MAX_VALUE;
                long s = Math.max(a, lo), e = Math.min(b, hi);
                if (e > s) perPhase[p] += e - s;
            }
        }
    }

    // ---------------------------------------------------------------- tiny JSON writer

    static final class Json {
        private final StringBuilder sb = new StringBuilder();
        private final java.util.ArrayDeque<Character> stack = new java.util.ArrayDeque<>();
        private boolean comma;

        private Json sep() {
            if (comma) sb.append(',');
            comma = true;
            return this;
        }

        Json open() {
            sep();
            sb.append('{');
            stack.push('{');
            comma = false;
            return this;
        }

        Json arr() {
            sep();
            sb.append('[');
            stack.push('[');
            comma = false;
            return this;
        }

        /** Closes the innermost object or array. */
        Json close() {
            sb.append(stack.pop() == '{' ? '}' : ']');
            comma = true;
            return this;
        }

        Json key(String k) {
            sep();
            quote(k);
            sb.append(':');
            comma = false;
            return this;
        }

        Json str(String s) {
            sep();
            quote(s);
            return this;
        }

        Json strOrNull(String s) {
            return s == null ? raw("null") : str(s);
        }

        Json num(long v) {
            sep();
            sb.append(v);
            return this;
        }

        Json bool(boolean v) {
            return raw(Boolean.toString(v));
        }

        Json ratio(long a, long b) {
            if (b <= 0) return raw("null");
            return raw(String.format(java.util.Locale.ROOT, "%.6f", (double) a / b));
        }

        Json raw(String v) {
            sep();
            sb.append(v);
            return this;
        }

        private void quote(String s) {
            sb.append('"');
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') sb.append('\\').append(c);
                else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                else sb.append(c);
            }
            sb.append('"');
        }

        @Override
        public String toString() {
            if (!stack.isEmpty()) throw new IllegalStateException("unclosed JSON");
            return sb.toString();
        }
    }
}
