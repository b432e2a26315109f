/* ClockCost.rdtsc: a plain rdtsc through JNI, as weft.FjProbe.nTicks reads the
 * agent's clock (crates/agent/src/forkjoin.rs). Built by run.sh. */
#include <jni.h>
#include <x86intrin.h>

JNIEXPORT jlong JNICALL Java_ClockCost_rdtsc(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return (jlong)__rdtsc();
}
