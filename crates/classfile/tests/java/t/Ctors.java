package t;

import weft.Probe;

/** Constructors with branches, switches, loops and handlers for the constructor probe. */
public class Ctors {
    int v;
    String s = "init";
    long acc;

    public Ctors() { this(1); }

    public Ctors(int x) {
        if (x < 0) {
            v = -1;
            return;
        }
        switch (x) {
            case 1: v = 10; break;
            case 2: v = 20; break;
            case 3: v = 30; return;
            case 4: v = 40; break;
            default: v = x;
        }
        s = "int";
    }

    public Ctors(String k) {
        switch (k) {
            case "alpha": v = 1; break;
            case "beta": v = 2; break;
            case "gamma": v = 3; return;
            default:
                switch (k.length()) {
                    case 1: v = 100; break;
                    case 1000: v = 1000; break;
                    case 100000: v = 100000; return;
                    default: v = -3;
                }
        }
        try {
            v += Integer.parseInt(k);
        } catch (NumberFormatException e) {
            v += 1000;
            if (k.isEmpty()) return;
        } finally {
            s = k;
        }
    }

    public Ctors(long n) {
        for (long i = 0; i < n; i++) {
            if (i % 3 == 0) continue;
            acc += i;
            if (acc > 1000) return;
        }
        while (acc < 50) acc *= 2 + 1;
        v = acc > 20 ? 1 : 2;
    }

    Ctors(int a, int b) {
        super();
        v = a > b ? a : b;
        Object o = a == b ? (Object) "eq" : Integer.valueOf(a);
        s = String.valueOf(o);
    }

    public Ctors(boolean f) {
        try {
            if (f) throw new IllegalStateException();
            v = 1;
        } catch (IllegalStateException e) {
            v = 2;
            return;
        }
        v = 3;
    }

    public Ctors(double d) {
        throw new UnsupportedOperationException("never returns");
    }

    public static void main(String[] args) {
        int id = Integer.parseInt(args[0]);
        StringBuilder sb = new StringBuilder();
        int[] ints = {-5, 1, 2, 3, 4, 9};
        for (int i : ints) sb.append(new Ctors(i).v).append(' ');
        sb.append(new Ctors().v).append(' ');
        String[] keys = {"alpha", "beta", "gamma", "7", "x", "", "42"};
        for (String k : keys) sb.append(new Ctors(k).v).append('/').append(new Ctors(k).s).append(' ');
        sb.append(new Ctors(10L).acc).append(' ').append(new Ctors(100L).acc).append(' ');
        sb.append(new Ctors(3, 4).s).append(' ').append(new Ctors(4, 4).s).append(' ');
        sb.append(new Ctors(true).v).append(' ').append(new Ctors(false).v).append(' ');
        try {
            new Ctors(1.0);
        } catch (UnsupportedOperationException e) {
            sb.append("uoe ");
        }
        sb.append(new Sub().v);
        System.out.println(sb);
        System.out.println("created=" + Probe.created(id) + " sub=" + Probe.created(id + 1)
            + " last=" + Probe.self(id + 1).getClass().getSimpleName());
    }
}

class Sub extends Ctors {
    Sub() { super(7); }
}
