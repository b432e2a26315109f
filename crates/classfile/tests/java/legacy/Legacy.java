/** Compiled with --release 7, then patched to major 49 (no StackMapTable verification). */
public class Legacy implements Runnable {
    int n;
    public void run() { for (int i = 0; i < 3; i++) n += i; }
    public static long twice(long x, String s) { return s == null ? x : 2 * x; }
    public static void main(String[] args) {
        Legacy l = new Legacy();
        l.run();
        System.out.println("n=" + l.n + " twice=" + twice(21, "s") + " enter=" + weft.Probe.enters(30)
            + " exit=" + weft.Probe.exits(31));
    }
}
