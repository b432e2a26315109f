package weft;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Compile-time stand-in for {@code jdk.internal.vm.annotation.DontInline} (not
 * exported, and {@code --add-exports} does not combine with {@code --release}):
 * build.rs renames it in the compiled probe classes. HotSpot honours the annotation
 * for classes of the boot loader, where the agent puts the probe classes.
 *
 * <p>Why the fork-join hooks are not inlined into the program's {@code compute}:
 * inlined, they double the size of the compiled method (C2 time), and a branch of a
 * hook first taken late (an "unstable if") deoptimizes and recompiles the whole
 * caller; a call costs ~1 ns.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@interface FjStubDontInline {}
