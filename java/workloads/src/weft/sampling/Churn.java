package weft.sampling;

import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.IntUnaryOperator;

/**
 * The sampling engine's stress workload (docs/sampling.md): threads started and
 * ended constantly, classes loaded (through throw-away class loaders, so that
 * they can be unloaded), hidden classes and lambdas defined, garbage collected,
 * all while the sampler's signals arrive. Prints one line whose value does not
 * depend on timing: {@code churn <rounds> <checksum>}.
 */
public final class Churn {
    /** Loaded again and again by fresh loaders (only references java.*). */
    public static final class Payload implements IntUnaryOperator {
        @Override
        public int applyAsInt(int x) {
            int h = x;
            for (int i = 0; i < 2000; i++) {
                h = h * 31 + i;
            }
            return h;
        }
    }

    static final class OneShot extends ClassLoader {
        OneShot() {
            super(null);
        }

        Class<?> define(String name, byte[] b) {
            return defineClass(name, b, 0, b.length);
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        byte[] bytes;
        try (InputStream in = Churn.class.getResourceAsStream("Churn$Payload.class")) {
            bytes = in.readAllBytes();
        }
        long sum = 0;
        for (int r = 0; r < rounds; r++) {
            List<Thread> threads = new ArrayList<>();
            long[] results = new long[4];
            for (int t = 0; t < results.length; t++) {
                final int slot = t;
                final int seed = r * 10 + t;
                Thread th = new Thread(() -> results[slot] = oneThread(bytes, seed), "churn-" + r + "-" + t);
                threads.add(th);
                th.start();
            }
            for (Thread th : threads) {
                th.join();
            }
            for (long v : results) {
                sum = sum * 7 + v;
            }
            if (r % 10 == 9) {
                System.gc();
            }
        }
        System.out.println("churn " + rounds + " " + sum);
    }

    static long oneThread(byte[] bytes, int seed) {
        try {
            // A class of its own loader: loaded, linked, run, and unloadable after.
            Class<?> c = new OneShot().define("weft.sampling.Churn$Payload", bytes);
            IntUnaryOperator op = (IntUnaryOperator) c.getDeclaredConstructor().newInstance();
            long v = op.applyAsInt(seed);
            // A hidden class from the same bytes.
            Class<?> h = MethodHandles.lookup().defineHiddenClass(bytes, true).lookupClass();
            IntUnaryOperator hop = (IntUnaryOperator) h.getDeclaredConstructor().newInstance();
            v += hop.applyAsInt(seed + 1);
            // Lambdas and a little allocation.
            IntSupplier s = () -> seed * 3;
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 200; i++) {
                sb.append(i ^ s.getAsInt());
            }
            return v + sb.length();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
