package weft.workloads;

/** The trivial program: JVM start-up cost with and without weft. No tasks. */
public final class Hello {
    public static void main(String[] args) {
        System.out.println("hello");
        new Truth("Hello").print();
    }
}
