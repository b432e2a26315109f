package demo;

import java.util.concurrent.*;

/** Runs tasks until killed. */
public class Busy {
    public static void main(String[] args) throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(2);
        long n = 0;
        while (true) {
            ex.submit(() -> Math.sqrt(42)).get();
            if (++n == 2000) System.out.println("ready");
        }
    }
}
