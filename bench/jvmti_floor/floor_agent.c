/* The floor of any JVMTI agent loaded at start-up, for the overhead figures of
 * BENCHMARKS.md ("Session 23", "Session 24"). Options: "" loads and does nothing;
 * "s", "e" and/or "m" enable ThreadStart / ThreadEnd / MonitorContendedEnter with
 * empty callbacks. On JDK 21 any thread-filtered event (ThreadEnd, the monitor
 * events) makes the JVM create and free a JvmtiThreadState for every virtual
 * thread (JvmtiEventController::thread_started from the virtual thread's start);
 * ThreadStart alone does not. */
#include <jvmti.h>
#include <string.h>

static void JNICALL on_thread(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread) {
  (void)jvmti; (void)jni; (void)thread;
}

static void JNICALL on_contended(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object) {
  (void)jvmti; (void)jni; (void)thread; (void)object;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  jvmtiEnv *jvmti = NULL;
  jvmtiEventCallbacks cb;
  (void)reserved;
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return 1;
  memset(&cb, 0, sizeof cb);
  cb.ThreadStart = on_thread;
  cb.ThreadEnd = on_thread;
  cb.MonitorContendedEnter = on_contended;
  if (options != NULL && strchr(options, 'm')) {
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_monitor_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) return 1;
  }
  if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb) != JVMTI_ERROR_NONE) return 1;
  if (options != NULL && strchr(options, 's'))
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_START, NULL);
  if (options != NULL && strchr(options, 'e'))
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_END, NULL);
  if (options != NULL && strchr(options, 'm'))
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, NULL);
  return 0;
}
