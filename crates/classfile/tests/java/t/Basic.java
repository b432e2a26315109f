package t;

import java.io.IOException;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import weft.Probe;

@Retention(RetentionPolicy.RUNTIME)
@interface Tag {
    String value();
}

/** Wrapped methods of every shape; probe ids are listed in tests/wrap.rs. */
public class Basic {
    int total;

    @Tag("add")
    public int add(int a, int b) { return a + b; }                                  // 1
    public static long mul(long a, long b) { return a * b; }                         // 2
    public synchronized void incr() { total++; }                                     // 3
    public double avg(double[] xs, long bias, float f) {                             // 4
        double s = bias + f;
        for (double x : xs) s += x;
        return s / xs.length;
    }
    public String concat(String a, Object b) { return a + b; }                      // 5 (pass_arg0)
    public boolean not(boolean z) { return !z; }                                     // 6
    public byte b(byte x) { return (byte) (x + 1); }                                 // 7
    public char c(char x) { return Character.toUpperCase(x); }                       // 8
    public short s(short x) { return (short) (x * 2); }                              // 9
    public float f(float x) { return x / 2; }                                        // 10
    public int[] arr(int n, long[] l, Object[][] o) {                                // 11
        int[] r = new int[n];
        r[0] = l.length + o.length;
        return r;
    }
    public void thrower(int x) throws IOException {                                  // 12
        if (x > 0) throw new IOException("boom " + x);
    }
    public static int parse(String s) { return Integer.parseInt(s); }                // 13 (static, pass_arg0)
    public List<String> names() { return List.of("a", "b"); }                       // 14
    protected void prot() {}                                                         // 15
    private long many(long a, double d, int i, long b, double e, Object o, int[] ia) { // 16
        return a + (long) d + i + b + (long) e + o.hashCode() * 0 + ia.length;
    }
    public static synchronized void sv() {}                                          // 17
    public long callMany() { return many(1, 2.5, 3, 4, 5.5, "x", new int[6]); }
    public Object obj(Object o, int i) { return i == 0 ? null : o; }                 // 18 (pass_arg0)
    public int spin(int n) { while (n > 0) { n--; } return n; }                      // 19 (loop back to 0)
    public static Object fresh(boolean b) { return new StringBuilder(b ? "y" : "n"); } // 20 (new at 0)
    public int multi(int k) {                                                        // 21
        try {
            switch (k) {
                case 0: return 10;
                case 1: throw new IllegalStateException("one");
                case 7: return 70;
                default:
                    for (int i = 0; i < k; i++) { if (i == 3) return 3; }
            }
        } catch (IllegalStateException e) {
            return -1;
        } finally {
            total += 1000;
        }
        return k;
    }
    public synchronized void syncThrow() {                                          // 22
        throw new UnsupportedOperationException("sync");
    }

    public static void main(String[] args) throws Exception {
        Basic x = new Basic();
        System.out.println("add=" + x.add(2, 3) + " self=" + (Probe.self(1) == x) + " arg=" + Probe.arg(1));
        System.out.println("mul=" + mul(6, 7) + " self=" + Probe.self(2));
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> { for (int j = 0; j < 25000; j++) x.incr(); });
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        System.out.println("total=" + x.total);
        System.out.println("avg=" + x.avg(new double[] {1, 2, 3}, 10L, 2f));
        System.out.println("concat=" + x.concat("x", 1) + " arg=" + Probe.arg(5));
        System.out.println("not=" + x.not(false) + " b=" + x.b((byte) 1) + " c=" + x.c('q') + " s=" + x.s((short) 4)
            + " f=" + x.f(3f));
        System.out.println("arr=" + Arrays.toString(x.arr(2, new long[3], new Object[4][])));
        x.thrower(0);
        try {
            x.thrower(1);
        } catch (IOException e) {
            System.out.println("caught " + e.getMessage());
        }
        try {
            parse("nope");
        } catch (NumberFormatException e) {
            System.out.println("caught NumberFormatException");
        }
        System.out.println("parse=" + parse("12") + " arg=" + Probe.arg(13));
        System.out.println("names=" + x.names());
        x.prot();
        System.out.println("many=" + x.callMany());
        sv();
        System.out.println("obj=" + x.obj("o", 1) + " " + x.obj("p", 0) + " arg=" + Probe.arg(18));

        // Reflection sees the wrapper with the original's interface, the original renamed and private.
        Method add = Basic.class.getMethod("add", int.class, int.class);
        System.out.println("tag=" + add.getAnnotation(Tag.class).value());
        System.out.println("throws=" + Arrays.toString(Basic.class.getMethod("thrower", int.class).getExceptionTypes()));
        System.out.println("generic=" + Basic.class.getMethod("names").getGenericReturnType());
        System.out.println("prot=" + Modifier.toString(Basic.class.getDeclaredMethod("prot").getModifiers()));
        System.out.println("incr=" + Modifier.toString(Basic.class.getDeclaredMethod("incr").getModifiers()));
        // In place: the same declared methods, and exceptions show the original frames and lines.
        String[] declared = Arrays.stream(Basic.class.getDeclaredMethods())
            .map(m -> Modifier.toString(m.getModifiers()) + " " + m.getName()).sorted().toArray(String[]::new);
        System.out.println("declared=" + declared.length + " " + String.join(",", declared));
        try {
            x.thrower(2);
        } catch (IOException e) {
            StackTraceElement[] st = e.getStackTrace();
            System.out.println("trace=" + st[0] + " <- " + st[1]);
        }
        System.out.println("spin=" + x.spin(5) + " fresh=" + fresh(true) + fresh(false));
        x.total = 0;
        System.out.println("multi=" + x.multi(0) + " " + x.multi(1) + " " + x.multi(7) + " " + x.multi(5) + " "
            + x.multi(2) + " total=" + x.total);
        Thread other = new Thread(() -> {
            try {
                x.syncThrow();
            } catch (UnsupportedOperationException e) {
                System.out.println("syncThrow=" + e.getMessage() + " line=" + e.getStackTrace()[0].getLineNumber());
            }
        });
        other.start();
        other.join();
        synchronized (x) { System.out.println("monitor free"); } // syncThrow's exit released it

        String[] names = {"", "add", "mul", "incr", "avg", "concat", "not", "b", "c", "s", "f", "arr", "thrower",
            "parse", "names", "prot", "many", "sv", "obj", "spin", "fresh", "multi", "syncThrow"};
        for (int i = 1; i < names.length; i++) System.out.println(Probe.counts(names[i], i));
    }
}
