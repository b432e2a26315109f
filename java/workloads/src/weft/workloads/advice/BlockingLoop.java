package weft.workloads.advice;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Two tasks of the same wall length on a pool of two threads: {@code Acceptor}
 * loops on a blocking {@code accept()} + {@code read()} (off-CPU, no recorded
 * wait: what a server's acceptor does), {@code Crunch} computes for the same
 * time. Only {@code Crunch} may ever be called too coarse-grained; the acceptor
 * is a blocking loop. Args: {@code [wall_ms=1200] [connections=12]}.
 */
public final class BlockingLoop {
    static volatile long sink;

    /** Accepts {@code n} connections and reads each until it closes. */
    static final class Acceptor implements Runnable {
        final ServerSocket server;
        final int n;

        Acceptor(ServerSocket server, int n) {
            this.server = server;
            this.n = n;
        }

        public void run() {
            try {
                for (int i = 0; i < n; i++) {
                    try (Socket s = server.accept(); InputStream in = s.getInputStream()) {
                        while (in.read() >= 0) {
                            // drain
                        }
                    }
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }
    }

    /** Busy for {@code ms} of wall time. */
    static final class Crunch implements Runnable {
        final long ms;

        Crunch(long ms) {
            this.ms = ms;
        }

        public void run() {
            long end = System.nanoTime() + ms * 1_000_000L;
            long x = 0;
            while (System.nanoTime() - end < 0) {
                for (int i = 0; i < 1000; i++) {
                    x += i * 31L ^ x;
                }
            }
            sink = x;
        }
    }

    public static void main(String[] args) throws Exception {
        long wallMs = args.length > 0 ? Long.parseLong(args[0]) : 1200;
        int conns = args.length > 1 ? Integer.parseInt(args[1]) : 12;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            pool.submit(new Acceptor(server, conns));
            pool.submit(new Crunch(wallMs));
            // One client connection every wall/conns ms, each sending a few bytes.
            for (int i = 0; i < conns; i++) {
                Thread.sleep(wallMs / conns);
                try (Socket c = new Socket(server.getInetAddress(), server.getLocalPort())) {
                    c.getOutputStream().write(new byte[] {1, 2, 3});
                }
            }
            pool.shutdown();
            if (!pool.awaitTermination(1, TimeUnit.MINUTES)) {
                throw new IllegalStateException("pool did not finish");
            }
        }
        System.out.println("BlockingLoop done");
    }
}
