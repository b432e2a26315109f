package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code clients} tasks on a pool of as many threads, each making {@code calls}
 * calls to a slow backend ({@code Thread.sleep(ms)}, as a remote call would block
 * in a socket read) with a little CPU work between: the run waits on that I/O,
 * the CPUs idle, and no pool, lock or queue is the cause.
 * Prints {@code backend <calls made>}.
 */
public final class SlowBackend {
    public static void main(String[] args) throws Exception {
        int clients = Integer.parseInt(args[0]);
        int calls = Integer.parseInt(args[1]);
        long ms = Long.parseLong(args[2]);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        List<Future<Integer>> fs = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            fs.add(pool.submit(() -> {
                int made = 0;
                for (int k = 0; k < calls; k++) {
                    Arith.work(20_000);
                    Thread.sleep(ms);
                    made++;
                }
                return made;
            }));
        }
        int made = 0;
        for (Future<Integer> f : fs) {
            made += f.get();
        }
        pool.shutdown();
        System.out.println("backend " + made);
    }
}
