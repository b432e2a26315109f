package weft.workloads.advice;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code n} tiny Runnables handed one by one to a {@code ForkJoinPool} of 2 in
 * async mode ({@code execute}, as an event loop would): too fine-grained tasks,
 * submitted, not forked. The pool wraps each in a
 * {@code ForkJoinTask$RunnableExecuteAction}; the finding names the Runnable's class
 * and where it is submitted, not the wrapper and a sequential cutoff.
 * Prints {@code executed <n> <sum>}.
 */
public final class ExecuteOnForkJoin {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        ForkJoinPool pool = new ForkJoinPool(2, ForkJoinPool.defaultForkJoinWorkerThreadFactory, null, true);
        LongAdder sum = new LongAdder();
        CountDownLatch done = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            final int v = i;
            pool.execute(() -> {
                sum.add(v % 7);
                done.countDown();
            });
        }
        done.await();
        pool.shutdown();
        System.out.println("executed " + n + " " + sum.sum());
    }
}
