package weft;

/**
 * Compile-time stand-in for {@code java.util.concurrent.ForkJoinTask} with the field
 * the agent adds at load. build.rs renames every reference to this class in the
 * compiled probe classes to ForkJoinTask and does not embed this class, so that
 * {@link FjProbe} reads the field with a plain getfield/putfield (a VarHandle
 * call that C2 fails to inline in deep fork-join recursion costs ~30 ns).
 */
final class FjStubTask {
    public transient long weft$u;

    private FjStubTask() {}
}
