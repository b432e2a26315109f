import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * 8 JDBC clients of a Derby network server (Debian libderbyclient-java): each
 * runs transactions for SECS seconds that move 1 from one of 16 accounts to
 * another (row locks: clients wait for each other's rows) and read a total.
 * Prints "transactions N, total T": T must stay 16 × 1000 (money is conserved)
 * and N > 0. Usage: DerbyClients PORT SECS
 */
public final class DerbyClients {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:derby://127.0.0.1:" + args[0] + "/weftdb;create=true";
        long secs = Long.parseLong(args[1]);
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            try {
                s.executeUpdate("DROP TABLE accounts");
            } catch (SQLException absent) {
                // first run
            }
            s.executeUpdate("CREATE TABLE accounts (id INT PRIMARY KEY, balance INT)");
            for (int i = 0; i < 16; i++) {
                s.executeUpdate("INSERT INTO accounts VALUES (" + i + ", 1000)");
            }
        }
        AtomicLong done = new AtomicLong();
        long end = System.nanoTime() + secs * 1_000_000_000L;
        Thread[] clients = new Thread[8];
        for (int t = 0; t < clients.length; t++) {
            clients[t] = new Thread(() -> {
                try (Connection c = DriverManager.getConnection(url)) {
                    c.setAutoCommit(false);
                    PreparedStatement upd = c.prepareStatement(
                            "UPDATE accounts SET balance = balance + ? WHERE id = ?");
                    while (System.nanoTime() < end) {
                        int a = ThreadLocalRandom.current().nextInt(16);
                        int b = (a + 1 + ThreadLocalRandom.current().nextInt(15)) % 16;
                        try {
                            upd.setInt(1, -1);
                            upd.setInt(2, a);
                            upd.executeUpdate();
                            upd.setInt(1, 1);
                            upd.setInt(2, b);
                            upd.executeUpdate();
                            c.commit();
                            done.incrementAndGet();
                        } catch (SQLException deadlockOrTimeout) {
                            c.rollback();
                        }
                    }
                } catch (SQLException e) {
                    throw new RuntimeException(e);
                }
            }, "client-" + t);
            clients[t].start();
        }
        for (Thread t : clients) {
            t.join();
        }
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT SUM(balance) FROM accounts")) {
            r.next();
            System.out.println("transactions " + done.get() + ", total " + r.getInt(1));
        }
    }
}
