package t;

import java.util.ArrayList;
import java.util.List;

/** Calls of Runnable.run() in several shapes: lambdas, a named class, a null, one that throws,
 * inside try/catch, a loop and an interface default method. Prints what the program sees. */
public class RunCalls {
    interface Runner {
        default void runIt(Runnable r) {
            r.run();
        }
    }

    static final class Named implements Runnable {
        int n;

        public void run() {
            n++;
        }
    }

    static int count;

    static void runAll(List<Runnable> rs) {
        for (Runnable r : rs) r.run();
    }

    public static void main(String[] args) {
        List<Runnable> rs = new ArrayList<>();
        for (int i = 0; i < 5; i++) rs.add(() -> count++);
        Named named = new Named();
        rs.add(named);
        runAll(rs);
        new Runner() {}.runIt(() -> count += 10);
        Runnable boom = () -> {
            throw new IllegalStateException("boom");
        };
        try {
            boom.run();
        } catch (IllegalStateException e) {
            StackTraceElement top = e.getStackTrace()[0];
            System.out.println("caught " + e.getMessage() + " at " + top.getMethodName());
        }
        Runnable none = null;
        try {
            none.run();
        } catch (NullPointerException e) {
            System.out.println("npe");
        }
        System.out.println("count=" + count + " named=" + named.n);
        System.out.println("probe runTasks=" + weft.Probe.runTasks + " hidden=" + weft.Probe.hiddenRuns);
    }
}
