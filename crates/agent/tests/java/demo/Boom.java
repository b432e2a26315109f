package demo;

public class Boom {
    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> System.out.println("in thread"));
        t.start();
        t.join();
        System.out.println("out");
        System.err.println("err line");
        if (args.length > 0 && args[0].equals("exit3")) System.exit(3);
        throw new IllegalStateException("boom");
    }
}
