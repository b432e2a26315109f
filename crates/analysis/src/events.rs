//! Per-thread ordered events of the model, in columns (docs/model.md).
//!
//! Every timed record of a thread that an analysis reads becomes one event: a kind,
//! a time and up to three small arguments, stored as a struct of arrays (no `Record`,
//! no `String` per event). Thread lifecycle details, definitions and process-wide
//! records (GC, samples, losses) live in the [`crate::Model`] itself.
//!
//! Order: the records a thread wrote in file order, with its fork-join records
//! (written in batches by the Java side) merged in by time; see [`Events::merge`].

use weft_trace::ThreadIndex;

/// What an event is. The meaning of its arguments `a`, `b`, `c` and `flag`
/// (see [`ThreadEvents`]) is given per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EventKind {
    /// The thread started: a = Thread object (class << 32 | ident),
    /// b = target class, c = target ident.
    ThreadStart,
    /// The thread ended.
    ThreadEnd,
    /// An execution method began: a = object (class << 32 | ident), b = probe,
    /// c = index into [`crate::Model::inner_tasks`] of the wrapped task, or [`NONE`].
    TaskBegin,
    /// An execution method ended: a = ident, b = probe.
    TaskEnd,
    /// An outermost submission: a = task (class << 32 | ident), b = probe, c = site.
    Submit,
    /// A task object was constructed: a = object (class << 32 | ident), c = site.
    Created,
    /// `ForkJoinTask.fork` seen by an execution probe: a = object, c = site.
    Fork,
    /// A join/get began: a = target (class << 32 | ident), b = probe.
    JoinBegin,
    /// A join/get returned: b = probe.
    JoinEnd,
    /// A fork-join usage forked by this thread: a = usage, b = class,
    /// c = index into [`crate::Model::fj_push_details`] or [`NONE`].
    FjFork,
    /// A fork-join usage submitted from outside the pool: same arguments as `FjFork`.
    FjSubmit,
    /// A fork-join run began (`doExec`): a = usage (0: a direct execution), b = class.
    FjRunBegin,
    /// The innermost open fork-join run ended.
    FjRunEnd,
    /// A usage was cancelled: a = usage.
    FjCancel,
    /// `reinitialize()`: a = last usage.
    FjReinit,
    /// A fork-join join began: a = usage (0: not a usage).
    FjJoinBegin,
    /// The innermost fork-join join returned.
    FjJoinEnd,
    /// Began blocking on a lock: a = owner's Java thread id (0 unknown), b = lock,
    /// c = site, flag = [`weft_trace::lock_flags`].
    LockBlock,
    /// Acquired the lock it blocked on: b = lock, flag = 1 if it parked.
    LockAcquired,
    /// A wait that is not a lock acquisition began: b = lock, flag = [`weft_trace::wait_kind`],
    /// a = class id of the waited-on object or park blocker, c = site (both from the
    /// `WaitDetail` written before it; 0 unknown).
    WaitBegin,
    /// The wait ended.
    WaitEnd,
    /// A virtual thread started (JDK 21+; its own stream): a = its task
    /// (class << 32 | ident), b = low 32 bits of its Java thread id, c = carrier.
    VtStart,
    /// The virtual thread ended: c = carrier.
    VtEnd,
    /// The virtual thread was mounted again: c = carrier.
    VtMount,
    /// The virtual thread was unmounted (it parked or yielded): c = carrier.
    VtUnmount,
    /// The mounted virtual thread parks its carrier (pinned): c = site. The next
    /// `WaitBegin` is the blocking.
    VtPinned,
    /// This thread unparked another (`LockSupport.unpark`): a = the target's Java
    /// thread id (0 unknown). Ends that thread's park, or gives it a permit.
    Unpark,
}

/// "No value" for an index argument.
pub const NONE: u32 = u32::MAX;

/// Packs (class id, identity hash) into one argument.
pub fn obj(class_id: u32, ident: u32) -> u64 {
    (class_id as u64) << 32 | ident as u64
}

/// (class id, identity hash) of a packed object argument.
pub fn unobj(a: u64) -> (u32, u32) {
    ((a >> 32) as u32, a as u32)
}

/// One thread's events, in order (struct of arrays; index i is one event).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadEvents {
    pub thread: ThreadIndex,
    pub kind: Vec<EventKind>,
    pub ts: Vec<u64>,
    pub a: Vec<u64>,
    pub b: Vec<u32>,
    pub c: Vec<u32>,
    pub flag: Vec<u8>,
}

/// One event, read from the columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    pub ts: u64,
    pub a: u64,
    pub b: u32,
    pub c: u32,
    pub flag: u8,
}

impl Event {
    /// An event with no arguments (set them with struct update syntax).
    pub fn at(kind: EventKind, ts: u64) -> Event {
        Event {
            kind,
            ts,
            a: 0,
            b: 0,
            c: 0,
            flag: 0,
        }
    }
}

impl ThreadEvents {
    pub fn new(thread: ThreadIndex) -> ThreadEvents {
        ThreadEvents {
            thread,
            ..ThreadEvents::default()
        }
    }

    pub fn len(&self) -> usize {
        self.kind.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }

    pub fn push(&mut self, e: Event) {
        self.kind.push(e.kind);
        self.ts.push(e.ts);
        self.a.push(e.a);
        self.b.push(e.b);
        self.c.push(e.c);
        self.flag.push(e.flag);
    }

    pub fn get(&self, i: usize) -> Event {
        Event {
            kind: self.kind[i],
            ts: self.ts[i],
            a: self.a[i],
            b: self.b[i],
            c: self.c[i],
            flag: self.flag[i],
        }
    }

    /// The events in order.
    pub fn iter(&self) -> impl Iterator<Item = Event> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    fn shrink(&mut self) {
        self.kind.shrink_to_fit();
        self.ts.shrink_to_fit();
        self.a.shrink_to_fit();
        self.b.shrink_to_fit();
        self.c.shrink_to_fit();
        self.flag.shrink_to_fit();
    }

    /// Puts the events in time order (stable). A virtual thread's stream comes
    /// from several carriers' blocks, which need not be written in time order.
    pub fn sort_by_time(&mut self) {
        if self.ts.windows(2).all(|w| w[0] <= w[1]) {
            return;
        }
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_by_key(|&i| self.ts[i]);
        let mut out = ThreadEvents::new(self.thread);
        for i in order {
            out.push(self.get(i));
        }
        *self = out;
    }

    /// Merges a thread's fork-join events (`fj`, in their own order) into its other
    /// events (`self`, in file order) by time: an event of `self` goes first when its
    /// time is not later. The fork-join events are written in batches, so their
    /// place among the thread's other records in the file is not their place in time.
    pub fn merge(mut self, fj: ThreadEvents) -> ThreadEvents {
        if fj.is_empty() {
            self.shrink();
            return self;
        }
        if self.is_empty() {
            let mut fj = fj;
            fj.thread = self.thread;
            fj.shrink();
            return fj;
        }
        let mut out = ThreadEvents::new(self.thread);
        let n = self.len() + fj.len();
        out.kind.reserve_exact(n);
        out.ts.reserve_exact(n);
        out.a.reserve_exact(n);
        out.b.reserve_exact(n);
        out.c.reserve_exact(n);
        out.flag.reserve_exact(n);
        let (mut i, mut j) = (0, 0);
        while i < self.len() || j < fj.len() {
            let take_own = j >= fj.len() || (i < self.len() && self.ts[i] <= fj.ts[j]);
            if take_own {
                out.push(self.get(i));
                i += 1;
            } else {
                out.push(fj.get(j));
                j += 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EventKind, ts: u64) -> Event {
        Event::at(kind, ts)
    }

    #[test]
    fn merge_keeps_each_side_in_order_and_puts_own_events_first_on_ties() {
        let mut own = ThreadEvents::new(3);
        own.push(ev(EventKind::TaskBegin, 10));
        own.push(ev(EventKind::TaskEnd, 30));
        let mut fj = ThreadEvents::new(3);
        fj.push(ev(EventKind::FjRunBegin, 10));
        fj.push(ev(EventKind::FjRunEnd, 20));
        fj.push(ev(EventKind::FjJoinBegin, 40));
        let m = own.merge(fj);
        let kinds: Vec<EventKind> = m.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            vec![
                EventKind::TaskBegin,
                EventKind::FjRunBegin,
                EventKind::FjRunEnd,
                EventKind::TaskEnd,
                EventKind::FjJoinBegin
            ]
        );
        assert_eq!(m.thread, 3);
        assert_eq!(obj(7, 9), 7 << 32 | 9);
        assert_eq!(unobj(obj(7, 9)), (7, 9));
    }
}
