package demo;

import java.util.*;
import java.util.concurrent.*;

public class Sample {
    static class Work implements Runnable {
        final int n;
        Work(int n) { this.n = n; }
        public void run() { Math.sqrt(n); }
    }
    static class Calc implements Callable<Integer> {
        public Integer call() { return 42; }
    }
    public static void main(String[] args) throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(2);
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < 5; i++) fs.add(ex.submit(new Work(i)));
        for (int i = 0; i < 3; i++) fs.add(ex.submit(new Calc()));
        fs.add(ex.submit(() -> System.out.println("lambda")));
        for (Future<?> f : fs) f.get();
        Thread t = new Thread(new Work(7), "worker-t");
        t.start(); t.join();
        System.gc();
        ex.shutdown();
        ex.awaitTermination(5, TimeUnit.SECONDS);
        System.out.println("done");
        if (args.length > 0 && args[0].equals("exit3")) System.exit(3);
        if (args.length > 0 && args[0].equals("throw")) throw new IllegalStateException("boom");
    }
}
