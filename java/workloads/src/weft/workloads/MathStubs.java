package weft.workloads;

/**
 * A loop whose time goes into one of the JVM's stubs: {@code Math.sin}, which the
 * JIT compiles into a call of the {@code libmSin} stub. The sampler's walks fail
 * inside the stub and are taken again from its caller, {@link #work}
 * (docs/sampling.md § Failed walks). With {@code rem}, the loop's time goes into a
 * double remainder ({@code %}), which compiled code calls as {@code SharedRuntime::drem}
 * in the VM, a thunk that jumps to the {@code libmFmod} stub (JDK 21+).
 * Args: {@code [ms=1500] [sin|rem]}: how long it runs, and what.
 */
public final class MathStubs {
    static double work(int n) {
        double x = 0;
        for (int i = 0; i < n; i++) {
            x += Math.sin(x + i);
        }
        return x;
    }

    static double rem(int n) {
        double x = 0;
        for (int i = 0; i < n; i++) {
            x += (x + i) % 7.3;
        }
        return x;
    }

    public static void main(String[] args) {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 1500;
        boolean rem = args.length > 1 && args[1].equals("rem");
        long end = System.nanoTime() + ms * 1_000_000;
        double s = 0;
        while (System.nanoTime() < end) {
            s += rem ? rem(10_000) : work(10_000);
        }
        System.out.println("MathStubs " + (s != 0));
    }
}
