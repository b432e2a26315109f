package weft.workloads;

/** Prints one line and exits with the given code (checks that weft record passes it through). Args: [code=3] */
public final class Exit {
    public static void main(String[] args) {
        int code = (int) Truth.arg(args, 0, 3);
        System.out.println("exiting with " + code);
        System.out.flush();
        System.exit(code);
    }
}
