import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

/**
 * Jetty 9 (Debian libjetty9-java) serving one servlet that counts hits per path in
 * a HashMap shared by every request thread, under one lock, with some work done
 * while holding it (formatting the reply): the classic lock-bound web endpoint.
 * GET /stop stops the server. Usage: HashMapServlet PORT
 */
public final class HashMapServlet extends HttpServlet {
    private static final Map<String, Integer> HITS = new HashMap<>();
    private static Server server;

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (req.getRequestURI().equals("/stop")) {
            resp.getWriter().println("stopping");
            new Thread(() -> {
                try {
                    server.stop();
                } catch (Exception e) {
                    e.printStackTrace();
                }
            }, "stopper").start();
            return;
        }
        String body;
        synchronized (HITS) {
            int n = HITS.merge(req.getRequestURI(), 1, Integer::sum);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 200; i++) {
                sb.append(Integer.toHexString(n * 31 + i));
            }
            body = "hits " + n + " " + sb.length();
        }
        resp.setContentType("text/plain");
        resp.getWriter().println(body);
    }

    public static void main(String[] args) throws Exception {
        server = new Server(Integer.parseInt(args[0]));
        ServletContextHandler ctx = new ServletContextHandler();
        ctx.addServlet(new ServletHolder(new HashMapServlet()), "/*");
        server.setHandler(ctx);
        server.start();
        server.join();
        synchronized (HITS) {
            System.out.println("total hits " + HITS.values().stream().mapToInt(Integer::intValue).sum());
        }
    }
}
