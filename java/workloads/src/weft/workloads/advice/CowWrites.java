package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Write-heavy use of a copy-on-write list: {@code tasks} pool tasks on {@code tasks}
 * threads each add {@code adds} items to one shared {@code CopyOnWriteArrayList}; every
 * add copies the whole array under the list's lock. With {@code perThread=true} each task
 * fills its own {@code ArrayList} and the lists are merged once (the fix). Prints the size
 * and the elapsed time. Args: {@code [tasks=4] [adds=8000] [perThread=false]}.
 */
public final class CowWrites {
    public static void main(String[] args) throws Exception {
        int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int adds = args.length > 1 ? Integer.parseInt(args[1]) : 8000;
        boolean perThread = args.length > 2 && Boolean.parseBoolean(args[2]);
        List<Integer> shared = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(tasks);
        long t0 = System.nanoTime();
        List<Future<List<Integer>>> fs = new ArrayList<>();
        for (int t = 0; t < tasks; t++) {
            fs.add(pool.submit(() -> {
                List<Integer> mine = perThread ? new ArrayList<>() : shared;
                for (int i = 0; i < adds; i++) {
                    mine.add(i);
                }
                return mine;
            }));
        }
        List<Integer> all = perThread ? new ArrayList<>() : shared;
        for (Future<List<Integer>> f : fs) {
            List<Integer> l = f.get();
            if (perThread) {
                all.addAll(l);
            }
        }
        pool.shutdown();
        System.out.println("size " + all.size() + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }
}
