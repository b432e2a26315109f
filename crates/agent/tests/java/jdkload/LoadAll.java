import java.io.BufferedReader;
import java.io.FileReader;
import java.util.Optional;

/**
 * Loads and links every class named in a list file (lines "module binary.Name"), in its module,
 * without initializing it: Class.forName(Module, String) loads, getDeclaredMethods() links (and so
 * verifies, under -Xverify:all). Prints one line per failure ("FAIL module name Throwable: msg")
 * and a summary line "classes N loaded N failed N".
 */
public class LoadAll {
    public static void main(String[] args) throws Exception {
        int n = 0, loaded = 0, failed = 0;
        try (BufferedReader r = new BufferedReader(new FileReader(args[0]))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isEmpty()) continue;
                n++;
                int sp = line.indexOf(' ');
                String mod = line.substring(0, sp), name = line.substring(sp + 1);
                Optional<Module> m = ModuleLayer.boot().findModule(mod);
                if (m.isEmpty()) {
                    failed++;
                    System.out.println("FAIL " + mod + " " + name + " module not in the boot layer");
                    continue;
                }
                try {
                    Class<?> c = Class.forName(m.get(), name);
                    if (c == null) {
                        failed++;
                        System.out.println("FAIL " + mod + " " + name + " not found");
                        continue;
                    }
                    c.getDeclaredMethods();
                    loaded++;
                } catch (Throwable t) {
                    failed++;
                    String msg = String.valueOf(t.getMessage()).replace('\n', ' ');
                    if (msg.length() > 300) msg = msg.substring(0, 300);
                    System.out.println("FAIL " + mod + " " + name + " " + t.getClass().getName() + ": " + msg);
                }
            }
        }
        System.out.println("classes " + n + " loaded " + loaded + " failed " + failed);
    }
}
