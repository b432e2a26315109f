package t;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.RecursiveTask;
import weft.Probe;

class Work implements Runnable {
    static int done;
    public void run() { synchronized (Work.class) { done++; } }          // 20
}

class Comp implements Callable<Integer> {
    public Integer call() { return 42; }                                 // 21; bridge call()Object is 22
}

class Fib extends RecursiveTask<Integer> {
    final int n;
    Fib(int n) { this.n = n; }
    protected Integer compute() {                                        // 23; bridge is 24
        if (n < 2) return n;
        Fib a = new Fib(n - 1);
        a.fork();
        return new Fib(n - 2).compute() + a.join();
    }
}

interface Greeter {
    default String greet(String who) { return "hi " + who; }            // 25 (pass_arg0)
    static int twice(int x) { return 2 * x; }                            // 26
}

class G implements Greeter {}

class Boom implements Runnable {
    public void run() { throw new IllegalStateException("boom"); }      // 27
}

/** Tasks through threads, executors and fork/join; probe ids are listed in tests/wrap.rs. */
public class Tasks {
    public static void main(String[] args) throws Exception {
        Thread t = new Thread(new Work());
        t.start();
        t.join();
        ExecutorService ex = Executors.newFixedThreadPool(3);
        for (int i = 0; i < 5; i++) ex.submit(new Work()).get();
        int sum = 0;
        for (int i = 0; i < 3; i++) {
            Future<Integer> f = ex.submit(new Comp());
            sum += f.get();
        }
        Callable<Object> raw = (Callable) new Comp();
        sum += (Integer) raw.call();
        Future<?> boom = ex.submit(new Boom());
        try {
            boom.get();
        } catch (java.util.concurrent.ExecutionException e) {
            System.out.println("boom: " + e.getCause().getMessage());
        }
        ex.shutdown();
        System.out.println("work done=" + Work.done + " sum=" + sum);
        System.out.println("fib=" + new ForkJoinPool(4).invoke(new Fib(15)));
        System.out.println(new G().greet("bob") + " arg=" + Probe.arg(25) + " twice=" + Greeter.twice(4));
        System.out.println(Probe.counts("run", 20));
        System.out.println(Probe.counts("call", 21));
        System.out.println(Probe.counts("call-bridge", 22));
        System.out.println(Probe.counts("compute", 23));
        System.out.println(Probe.counts("compute-bridge", 24));
        System.out.println(Probe.counts("greet", 25));
        System.out.println(Probe.counts("twice", 26));
        System.out.println(Probe.counts("boom", 27));
    }
}
