package weft.workloads.advice;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A program that mostly waits for its schedule, as a server's housekeeping does: a
 * {@code ScheduledThreadPoolExecutor} of 2 threads runs a periodic task every
 * {@code period_ms} ({@code work} units each) and {@code n} one-shot tasks at spread
 * delays, for {@code ticks} periods; {@code main} waits for a last one-shot, then
 * lingers {@code linger_ms} (a grace period: a sleep) before it shuts the pool down.
 * The CPUs idle nearly all the time, one thread at most works at once: no serial
 * phase (nobody works), no pool too small, nothing to change.
 * Args: [ticks=20] [period_ms=50] [n=10] [work=200000] [linger_ms=300]. Prints
 * {@code ticks <periodic runs> <one-shot runs>}.
 */
public final class ScheduledTicks {
    public static void main(String[] args) throws Exception {
        int ticks = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        long period = args.length > 1 ? Long.parseLong(args[1]) : 50;
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        int work = args.length > 3 ? Integer.parseInt(args[3]) : 200_000;
        long linger = args.length > 4 ? Long.parseLong(args[4]) : 300;
        ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(2);
        AtomicInteger periodic = new AtomicInteger();
        AtomicInteger oneShots = new AtomicInteger();
        ScheduledFuture<?> tick = pool.scheduleAtFixedRate(() -> {
            Arith.work(work);
            periodic.incrementAndGet();
        }, 0, period, TimeUnit.MILLISECONDS);
        for (int i = 0; i < n; i++) {
            pool.schedule(() -> {
                Arith.work(2 * work);
                oneShots.incrementAndGet();
            }, period / 2 + i * ticks * period / n, TimeUnit.MILLISECONDS);
        }
        ScheduledFuture<Integer> last = pool.schedule(() -> {
            Arith.work(work);
            return oneShots.incrementAndGet();
        }, ticks * period, TimeUnit.MILLISECONDS);
        last.get();
        Thread.sleep(linger);
        tick.cancel(false);
        pool.shutdown();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        System.out.println("ticks " + periodic.get() + " " + oneShots.get());
    }
}
