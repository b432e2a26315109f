/* Crash protection around the stack walk of the sampling engine
 * (crates/agent/src/sampling_signal.rs). Rust cannot express sigsetjmp (a
 * function that returns twice), so these few lines are C.
 *
 * weft_protected_walk calls walk(trace, depth, ucontext) after saving the
 * context in jb; if the walk faults, the SIGSEGV/SIGBUS handler calls
 * weft_jump_back(jb) and weft_protected_walk returns 1.
 *
 * The signal mask is not saved at each walk (that is a rt_sigprocmask system
 * call per sample): after a fault, the mask the sampling handler runs with is
 * rebuilt from its ucontext (the interrupted code's mask plus the two sampling
 * signals), which also unblocks SIGSEGV/SIGBUS again. */
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <ucontext.h>

typedef void (*weft_walk_fn)(void *trace, int depth, void *ucontext);

int weft_protected_walk(weft_walk_fn walk, void *trace, int depth, void *ucontext, void *jb) {
    if (sigsetjmp(*(sigjmp_buf *)jb, 0) != 0) {
        sigset_t mask;
        if (ucontext != NULL) {
            mask = ((ucontext_t *)ucontext)->uc_sigmask;
        } else {
            sigemptyset(&mask);
        }
        sigaddset(&mask, SIGPROF);
        sigaddset(&mask, SIGVTALRM);
        sigdelset(&mask, SIGSEGV);
        sigdelset(&mask, SIGBUS);
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
        return 1;
    }
    walk(trace, depth, ucontext);
    return 0;
}

void weft_jump_back(void *jb) {
    siglongjmp(*(sigjmp_buf *)jb, 1);
}

size_t weft_jmpbuf_size(void) {
    return sizeof(sigjmp_buf);
}

/* A walk that faults, for the crash-protection test (agent option `samplefault`). */
void weft_faulting_walk(void *trace, int depth, void *ucontext) {
    (void)trace;
    (void)depth;
    (void)ucontext;
    volatile int *volatile bad = (volatile int *)16;
    *bad = 0;
}
