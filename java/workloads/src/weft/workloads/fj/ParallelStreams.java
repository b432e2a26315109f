package weft.workloads.fj;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.stream.LongStream;

/**
 * Corner case: JDK-internal fork-join users on the common pool, started from
 * main: a parallel {@code LongStream} reduction ({@code reps} times) and
 * {@code Arrays.parallelSort}. How many tasks the JDK creates, forks, or runs
 * and how it splits them are JDK internals (they depend on the JDK version, the
 * common pool's parallelism and the spliterator): the program cannot know them,
 * so the truth carries ONLY the results. (In JDK 17 the stream's root task is
 * {@code invoke()}d directly by main - not a usage - and its children are
 * forked from main into the common pool's external queue, so each such fork is
 * a root without a parent; main may also run tasks while joining.)
 *
 * <p>A profiler run should show fork-join activity in the common pool with
 * tasks of JDK classes (java.util.stream.*Task / *Op$*Task,
 * java.util.ArraysParallelSortHelpers$*), and no exact count is asserted.
 *
 * <p>Args: [n=20000000] [sort_n=2000000] [parallelism=ignored: the common pool] [reps=3]
 */
public final class ParallelStreams {
    public static void main(String[] args) {
        long n = FjTruth.arg(args, 0, 20_000_000L);
        int sortN = (int) FjTruth.arg(args, 1, 2_000_000);
        int reps = (int) FjTruth.arg(args, 3, 3);
        long sum = 0;
        for (int r = 0; r < reps; r++) {
            sum += LongStream.range(0, n).parallel().map(x -> (x * x) % 1_000_003).sum();
        }
        long expect = 0;
        for (long x = 0; x < n; x++) expect += (x * x) % 1_000_003;
        FjTruth.check(sum == reps * expect, "stream sum");

        long[] a = new long[sortN];
        SplittableRandom rnd = new SplittableRandom(99);
        for (int i = 0; i < sortN; i++) a[i] = rnd.nextLong();
        Arrays.parallelSort(a);
        long check = 0;
        for (int i = 0; i < sortN; i++) {
            if (i > 0) FjTruth.check(a[i - 1] <= a[i], "not sorted");
            check = check * 31 + a[i];
        }
        new FjTruth("parallel-streams", n, sortN, 0, reps)
                .result(sum)
                .extra("sort_checksum", Long.toString(check))
                .print();
    }
}
