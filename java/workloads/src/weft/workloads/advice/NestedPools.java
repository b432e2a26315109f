package weft.workloads.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A pool waiting on a smaller one: {@code outer} (4 threads) runs {@code tasks}
 * {@link Outer} tasks that each spin 0.2 ms, then submit a {@link Sub} of 1 ms to
 * {@code inner} (1 thread) and wait for it. The outer tasks mostly wait, and what they
 * wait for is the one busy inner thread. Args: {@code [tasks=300]}.
 */
public final class NestedPools {
    static final ExecutorService INNER = Executors.newFixedThreadPool(1, r -> new Thread(r, "inner"));

    static final class Sub implements Callable<Long> {
        @Override
        public Long call() {
            return Spin.spin(1_000_000);
        }
    }

    static final class Outer implements Callable<Long> {
        @Override
        public Long call() throws Exception {
            Spin.spin(200_000);
            return INNER.submit(new Sub()).get();
        }
    }

    public static void main(String[] args) throws Exception {
        int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        ExecutorService outer = Executors.newFixedThreadPool(4, r -> new Thread(r, "outer"));
        List<Future<Long>> fs = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            fs.add(outer.submit(new Outer()));
        }
        long s = 0;
        for (Future<Long> f : fs) {
            s += f.get();
        }
        outer.shutdown();
        INNER.shutdown();
        System.out.println("NestedPools done " + (s != 0));
    }
}
