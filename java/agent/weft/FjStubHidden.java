package weft;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Compile-time stand-in for {@code jdk.internal.vm.annotation.Hidden} (renamed by build.rs,
 * as {@link FjStubDontInline}): a frame of a method so marked is left out of stack traces
 * (honoured for classes of the boot loader). {@link Probe#runTask} sits between a caller of
 * {@code Runnable.run()} and the task: an exception thrown by the task shows the frames it
 * showed without weft.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@interface FjStubHidden {}
