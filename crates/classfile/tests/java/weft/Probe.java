package weft;

/**
 * Test stub of weft's probe class: counts calls per probe id. It touches nothing but its own static
 * arrays, so it can be called from instrumented java.base classes without recursion.
 */
public final class Probe {
    public static final int N = 4096;
    public static final int[] ENTER = new int[N];
    public static final int[] EXIT = new int[N];
    public static final int[] CREATED = new int[N];
    public static final Object[] SELF = new Object[N];
    public static final Object[] ARG = new Object[N];

    private Probe() {}

    public static synchronized void enter(int id, Object self, Object arg0) {
        int i = id & (N - 1);
        ENTER[i]++;
        SELF[i] = self;
        ARG[i] = arg0;
    }

    public static synchronized void exit(int id, Object self) {
        EXIT[id & (N - 1)]++;
    }

    public static synchronized void created(int id, Object self) {
        int i = id & (N - 1);
        CREATED[i]++;
        SELF[i] = self;
    }

    public static synchronized int enters(int id) { return ENTER[id & (N - 1)]; }
    public static synchronized int exits(int id) { return EXIT[id & (N - 1)]; }
    public static synchronized int created(int id) { return CREATED[id & (N - 1)]; }
    public static synchronized Object self(int id) { return SELF[id & (N - 1)]; }
    public static synchronized Object arg(int id) { return ARG[id & (N - 1)]; }

    public static int runTasks;
    public static int hiddenRuns;

    /** The redirect of `Runnable.run()` calls (task_calls.rs): counts them, then runs. */
    public static void runTask(Runnable r) {
        synchronized (Probe.class) {
            runTasks++;
            if (r != null && r.getClass().isHidden()) hiddenRuns++;
        }
        r.run();
    }

    /** "name: enter=E exit=X" for a wrapped method's probe. */
    public static String counts(String name, int id) {
        return name + ": enter=" + enters(id) + " exit=" + exits(id);
    }
}
