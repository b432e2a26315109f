package demo;

import java.util.concurrent.*;

/** Fork/join, CompletableFuture and a custom Executor. */
public class Pools {
    static class Fib extends RecursiveTask<Integer> {
        final int n;
        Fib(int n) { this.n = n; }
        protected Integer compute() {
            if (n < 2) return n;
            Fib a = new Fib(n - 1);
            a.fork();
            return new Fib(n - 2).compute() + a.join();
        }
    }

    static class Direct implements Executor {
        public void execute(Runnable r) { r.run(); }
    }

    public static void main(String[] args) throws Exception {
        ForkJoinPool pool = new ForkJoinPool(2);
        System.out.println("fib=" + pool.invoke(new Fib(10)));
        CompletableFuture.runAsync(() -> System.out.println("async"), pool).get();
        new Direct().execute(Pools::hello);
        pool.shutdown();
        // get() returns once the async task completed its future, which it does before
        // its run() returns: without waiting, a loaded machine can end the JVM with the
        // worker still inside it (a begin without an end, truthfully recorded).
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    static void hello() { System.out.println("hello"); }
}
