package t;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.ArrayList;
import java.util.List;
import weft.Probe;

@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE_USE)
@interface Nn {}

/** Type annotations inside a Code attribute (local variables, `new`, casts, instanceof). */
public class TypeAnn implements Runnable {
    Object seen;

    @Override
    public void run() {
        @Nn List<String> xs = new @Nn ArrayList<>();
        xs.add("a");
        Object o = xs;
        if (o instanceof @Nn List) {
            seen = (@Nn List<?>) o;
        }
    }

    public static void main(String[] args) {
        TypeAnn t = new TypeAnn();
        t.run();
        System.out.println("seen=" + t.seen + " " + Probe.counts("run", 40));
    }
}
