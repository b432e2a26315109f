package weft.workloads.fj;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RecursiveAction;

/**
 * Keeps the other workers of a pool busy so that tasks forked afterwards by the
 * current worker stay in its queue (deterministic cancel / tryUnfork). Call
 * {@link #fork} from inside a task running in a pool of parallelism p: it forks
 * p - 1 {@code Blocker}s FIRST. Thieves take the oldest task of a queue, so any
 * worker that steals from this queue takes a Blocker and spins (no blocking, so
 * no compensation thread) until {@link #release}; with p - 1 Blockers for at
 * most p - 1 thieves, nothing forked later can be stolen. {@link #joinAll}
 * (after release) joins them: each Blocker runs through exec exactly once,
 * stolen or popped by the joiner. Not a task itself.
 */
final class Blockers {
    static final class Blocker extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        final Blockers owner;

        Blocker(Blockers owner) { this.owner = owner; }

        @Override
        protected void compute() {
            while (!owner.released) Thread.onSpinWait();
        }
    }

    private volatile boolean released;
    private final List<Blocker> list = new ArrayList<>();

    /** Forks parallelism - 1 Blockers; returns how many (= forks made). */
    int fork(int parallelism) {
        for (int i = 0; i < parallelism - 1; i++) {
            Blocker b = new Blocker(this);
            b.fork();
            list.add(b);
        }
        return list.size();
    }

    void release() { released = true; }

    void joinAll() {
        for (Blocker b : list) b.join();
    }
}
