package weft.workloads;

import com.sun.net.httpserver.HttpServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The JDK's HTTP server on a 2-thread ThreadPoolExecutor, sent {@code n} requests one after
 * the other. Each request is one {@code sun.net.httpserver.ServerImpl$Exchange} the server's
 * dispatcher gives the pool: a JDK class weft does not instrument (it skips {@code sun.*}),
 * whose runs the pool's worker loop records at its call of {@code run()}
 * (docs/task-model.md §Lambdas).
 *
 * <p>Args: [n=100] [work_us=300]
 */
public final class HttpHandlers {
    public static void main(String[] args) throws Exception {
        int n = (int) Truth.arg(args, 0, 100);
        long w = Truth.arg(args, 1, 300) * 1000L;
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        ExecutorService pool = new ThreadPoolExecutor(2, 2, 0L, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>());
        server.setExecutor(pool);
        byte[] ok = "ok".getBytes();
        server.createContext("/", ex -> {
            Truth.spin(w);
            ex.sendResponseHeaders(200, ok.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(ok);
            }
        });
        server.start();
        URL url = new URL("http://127.0.0.1:" + server.getAddress().getPort() + "/");
        int served = 0;
        for (int i = 0; i < n; i++) {
            HttpURLConnection c = (HttpURLConnection) url.openConnection();
            c.setRequestProperty("Connection", "close"); // no keep-alive: no delayed-ACK stalls
            try (InputStream in = c.getInputStream()) {
                in.readAllBytes();
            }
            if (c.getResponseCode() == 200) served++;
        }
        server.stop(0);
        pool.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) throw new AssertionError("pool did not stop");
        if (served != n) throw new AssertionError(served + " of " + n + " served");
        new Truth("HttpHandlers")
                .task("sun.net.httpserver.ServerImpl$Exchange", "runnable", n, 0, n)
                .print();
    }
}
