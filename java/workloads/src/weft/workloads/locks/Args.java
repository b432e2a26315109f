package weft.workloads.locks;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Workload arguments: positional in the declared order, or {@code key=value}
 * (both may be mixed; a key=value wins). Unknown keys are an error. The values
 * used are recorded in the ground truth's {@code "args"}.
 */
final class Args {
    private final Map<String, String> values = new LinkedHashMap<>();

    /** {@code spec} entries are {@code "name=default"}, in positional order. */
    Args(Ground g, String[] argv, String... spec) {
        String[] names = new String[spec.length];
        for (int i = 0; i < spec.length; i++) {
            int eq = spec[i].indexOf('=');
            names[i] = spec[i].substring(0, eq);
            values.put(names[i], spec[i].substring(eq + 1));
        }
        int pos = 0;
        for (String a : argv) {
            int eq = a.indexOf('=');
            if (eq > 0) {
                String k = a.substring(0, eq);
                if (!values.containsKey(k)) throw new IllegalArgumentException("unknown arg " + k + "; known: " + values.keySet());
                values.put(k, a.substring(eq + 1));
            } else {
                if (pos >= names.length) throw new IllegalArgumentException("too many args; known: " + values.keySet());
                values.put(names[pos++], a);
            }
        }
        for (Map.Entry<String, String> e : values.entrySet()) g.arg(e.getKey(), e.getValue());
    }

    long num(String k) {
        return Long.parseLong(get(k));
    }

    int integer(String k) {
        return Integer.parseInt(get(k));
    }

    String get(String k) {
        String v = values.get(k);
        if (v == null) throw new IllegalArgumentException("no arg " + k);
        return v;
    }
}
