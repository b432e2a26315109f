package weft.workloads.advice;

/** CPU work of a known number of rounds for the advice workloads. */
final class Arith {
    private Arith() {}

    /** {@code n} rounds of dependent square roots (~3 ns each here); returns the sum. */
    static double work(int n) {
        double s = 0;
        for (int i = 0; i < n; i++) {
            s += Math.sqrt(i + s);
        }
        return s;
    }
}
