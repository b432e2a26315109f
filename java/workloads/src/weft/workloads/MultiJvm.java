package weft.workloads;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A launcher that starts child JVMs with {@link ProcessBuilder} (the way build
 * tools and Spark start theirs), each running a known number of tasks.
 *
 * <ul>
 * <li>launcher: {@code Work} Runnables (n_parent), then it starts the children
 *     one after another and waits for each;
 * <li>child k (k = 1..children): k × n_child {@code Work} Runnables.
 * </ul>
 * Prints {@code WEFT-MULTI {"parent":{"pid":P,"tasks":N},"children":[{"pid":p,"tasks":n},…]}}.
 *
 * <p>Args: [children=3] [n_parent=5] [n_child=10] [work_us=200]; a child runs
 * with {@code child <tasks> <work_us>}.
 */
public final class MultiJvm {
    static long workNs;

    static final class Work implements Runnable {
        public void run() { Truth.spin(workNs); }
    }

    static void runTasks(int n) throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        for (int i = 0; i < n; i++) {
            pool.execute(new Work());
        }
        pool.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("pool did not finish");
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("child")) {
            workNs = Long.parseLong(args[2]) * 1000L;
            runTasks(Integer.parseInt(args[1]));
            return;
        }
        int children = (int) Truth.arg(args, 0, 3);
        int nParent = (int) Truth.arg(args, 1, 5);
        int nChild = (int) Truth.arg(args, 2, 10);
        long workUs = Truth.arg(args, 3, 200);
        workNs = workUs * 1000L;
        runTasks(nParent);
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        StringBuilder out = new StringBuilder("WEFT-MULTI {\"parent\":{\"pid\":")
                .append(ProcessHandle.current().pid()).append(",\"tasks\":").append(nParent)
                .append("},\"children\":[");
        List<String> parts = new ArrayList<>();
        for (int k = 1; k <= children; k++) {
            int tasks = k * nChild;
            ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    MultiJvm.class.getName(), "child", Integer.toString(tasks), Long.toString(workUs));
            pb.inheritIO();
            Process p = pb.start();
            int code = p.waitFor();
            if (code != 0) {
                throw new IllegalStateException("child " + k + " exited with " + code);
            }
            parts.add("{\"pid\":" + p.pid() + ",\"tasks\":" + tasks + "}");
        }
        out.append(String.join(",", parts)).append("]}");
        System.out.println(out);
    }
}
