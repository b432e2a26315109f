package weft.workloads.advice;

/**
 * A consumer thread that busy-waits for each of {@code items} hand-offs from
 * {@code main} with {@code Thread.yield()} in a loop on a volatile counter, then does
 * {@code consume} units of work; {@code main} does {@code produce} units per item. The
 * consumer's spinning is waiting, not work: the what-if says so. Args: [items=2000]
 * [produce=60000] [consume=20000]. Prints {@code handed <items>}.
 */
public final class YieldSpin {
    static volatile long ready;

    public static void main(String[] args) throws Exception {
        int items = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int produce = args.length > 1 ? Integer.parseInt(args[1]) : 60_000;
        int consume = args.length > 2 ? Integer.parseInt(args[2]) : 20_000;
        double[] sink = new double[2];
        Thread consumer = new Thread(() -> {
            long seen = 0;
            while (seen < items) {
                while (ready == seen) {
                    Thread.yield();
                }
                seen++;
                sink[1] += Arith.work(consume);
            }
        }, "consumer");
        consumer.start();
        for (int i = 0; i < items; i++) {
            sink[0] += Arith.work(produce);
            ready = i + 1;
        }
        consumer.join();
        System.out.println("handed " + items + (sink[0] + sink[1] == 42 ? "!" : ""));
    }
}
