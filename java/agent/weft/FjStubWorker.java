package weft;

/** Compile-time stand-in for {@code java.util.concurrent.ForkJoinWorkerThread} (see {@link FjStubTask}). */
final class FjStubWorker {
    public transient Object weft$b;

    private FjStubWorker() {}
}
