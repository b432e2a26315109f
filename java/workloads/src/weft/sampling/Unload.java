package weft.sampling;

import java.io.InputStream;
import java.lang.ref.WeakReference;
import java.util.function.LongUnaryOperator;

/**
 * A class that burns CPU and is then unloaded before the program ends: its
 * sampled frames must keep their names (the sampler resolves them when the
 * class is prepared, not only at the end when its methods are gone).
 *
 * <p>Args: [millis=400]. Prints {@code UNLOAD-RESULT <n>} and, once the class is
 * collected, {@code UNLOADED true} (false when no GC unloaded it).
 */
public final class Unload {
    /** Defined by a throw-away loader ({@link Churn.OneShot}; references only java.*). */
    public static final class Burner implements LongUnaryOperator {
        @Override
        public long applyAsLong(long millis) {
            long end = System.nanoTime() + millis * 1_000_000L;
            long h = 1;
            while (System.nanoTime() < end) {
                h = spinInBurner(h);
            }
            return h;
        }

        static long spinInBurner(long h) {
            for (int i = 0; i < 20_000; i++) {
                h = h * 31 + i;
            }
            return h;
        }
    }

    public static void main(String[] args) throws Exception {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 400;
        byte[] bytes;
        try (InputStream in = Unload.class.getResourceAsStream("Unload$Burner.class")) {
            bytes = in.readAllBytes();
        }
        WeakReference<Class<?>> ref = run(bytes, millis);
        for (int i = 0; i < 20 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        System.out.println("UNLOADED " + (ref.get() == null));
    }

    static WeakReference<Class<?>> run(byte[] bytes, long millis) throws Exception {
        Class<?> c = new Churn.OneShot().define("weft.sampling.Unload$Burner", bytes);
        LongUnaryOperator op = (LongUnaryOperator) c.getDeclaredConstructor().newInstance();
        System.out.println("UNLOAD-RESULT " + (op.applyAsLong(millis) != 0 ? "done" : "zero"));
        return new WeakReference<>(c);
    }
}
