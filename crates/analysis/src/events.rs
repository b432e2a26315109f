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

/// `LockAcquired`'s flag bit: the thread gave up (`LockGaveUp`), it did not acquire.
pub const LOCK_GAVE_UP: u8 = 2;

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
    /// Acquired the lock it blocked on: b = lock, flag = 1 if it parked; with
    /// [`LOCK_GAVE_UP`] it stopped waiting without the lock (`LockGaveUp`: a timed
    /// `tryLock` ran out of time): the blocked period ends, no hold begins.
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
    /// thread id (0 unknown), b = how long the call took, ns (0: not measured).
    /// Ends that thread's park, or gives it a permit.
    Unpark,
    /// `--lock-detail`: about to enter a monitor: b = lock (LockDef id).
    MonitorEnter,
    /// `--lock-detail`: the last `MonitorEnter` acquired (after a spin or a block).
    MonitorEntered,
    /// `--lock-detail`: the innermost entered monitor was released.
    MonitorExit,
    /// `--lock-detail`: this thread notified a monitor's waiters: b = lock (LockDef
    /// id), flag = 1 for `notifyAll`.
    MonitorNotify,
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

/// One thread's events, in order, packed into bytes (docs/model.md "Events"):
/// per event a header byte (the kind, and which of `a`, `b`/`c` and `flag` are
/// there), the time as a zigzag varint difference from the previous event's, `a`
/// as a zigzag varint difference from the previous event's `a` (usage ids and
/// objects of a thread are near each other), `b` and `c + 1` as varints (so
/// [`NONE`] costs one byte), `flag` as a byte. A fork-join task's three events
/// take about 17 bytes (26 each as columns). Analyses read events in order
/// ([`ThreadEvents::iter`]), never by index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadEvents {
    pub thread: ThreadIndex,
    bytes: Vec<u8>,
    len: usize,
    /// Which kinds are there (bit `kind as u8`): an analysis skips a thread, or a
    /// whole pass, without the kinds it reads.
    kinds: u32,
    /// The last pushed event's time and `a` (the bases of the next differences).
    last_ts: u64,
    last_a: u64,
}

/// One event, decoded.
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

/// Every kind, by its `u8` value (the header byte's low 5 bits).
const KINDS: [EventKind; 31] = [
    EventKind::ThreadStart,
    EventKind::ThreadEnd,
    EventKind::TaskBegin,
    EventKind::TaskEnd,
    EventKind::Submit,
    EventKind::Created,
    EventKind::Fork,
    EventKind::JoinBegin,
    EventKind::JoinEnd,
    EventKind::FjFork,
    EventKind::FjSubmit,
    EventKind::FjRunBegin,
    EventKind::FjRunEnd,
    EventKind::FjCancel,
    EventKind::FjReinit,
    EventKind::FjJoinBegin,
    EventKind::FjJoinEnd,
    EventKind::LockBlock,
    EventKind::LockAcquired,
    EventKind::WaitBegin,
    EventKind::WaitEnd,
    EventKind::VtStart,
    EventKind::VtEnd,
    EventKind::VtMount,
    EventKind::VtUnmount,
    EventKind::VtPinned,
    EventKind::Unpark,
    EventKind::MonitorEnter,
    EventKind::MonitorEntered,
    EventKind::MonitorExit,
    EventKind::MonitorNotify,
];

/// The last kind: a new kind must be added to [`KINDS`] (this match stops
/// compiling until it is looked at; the test checks the table's order).
#[cfg(test)]
const fn is_last_kind(k: EventKind) -> bool {
    match k {
        EventKind::MonitorNotify => true,
        EventKind::MonitorExit
        | EventKind::Unpark
        | EventKind::MonitorEnter
        | EventKind::MonitorEntered
        | EventKind::ThreadStart
        | EventKind::ThreadEnd
        | EventKind::TaskBegin
        | EventKind::TaskEnd
        | EventKind::Submit
        | EventKind::Created
        | EventKind::Fork
        | EventKind::JoinBegin
        | EventKind::JoinEnd
        | EventKind::FjFork
        | EventKind::FjSubmit
        | EventKind::FjRunBegin
        | EventKind::FjRunEnd
        | EventKind::FjCancel
        | EventKind::FjReinit
        | EventKind::FjJoinBegin
        | EventKind::FjJoinEnd
        | EventKind::LockBlock
        | EventKind::LockAcquired
        | EventKind::WaitBegin
        | EventKind::WaitEnd
        | EventKind::VtStart
        | EventKind::VtEnd
        | EventKind::VtMount
        | EventKind::VtUnmount
        | EventKind::VtPinned => false,
    }
}
const KIND_MASK: u8 = 0x1f;

/// The bits of `kinds` in [`ThreadEvents::kinds`].
fn kind_bits(kinds: &[EventKind]) -> u32 {
    kinds.iter().fold(0, |m, &k| m | 1 << (k as u8))
}
const HAS_A: u8 = 0x20;
const HAS_BC: u8 = 0x40;
const HAS_FLAG: u8 = 0x80;

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn get_varint(bytes: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = bytes[*pos];
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// The difference `to - from` as a zigzag number (small either way).
pub(crate) fn zigzag(from: u64, to: u64) -> u64 {
    let d = to.wrapping_sub(from) as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

pub(crate) fn unzigzag(from: u64, z: u64) -> u64 {
    let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
    from.wrapping_add(d as u64)
}

impl ThreadEvents {
    pub fn new(thread: ThreadIndex) -> ThreadEvents {
        ThreadEvents {
            thread,
            ..ThreadEvents::default()
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether any event is of one of `kinds`.
    pub fn has_any(&self, kinds: &[EventKind]) -> bool {
        self.kinds & kind_bits(kinds) != 0
    }

    /// Bytes the events take.
    pub fn bytes(&self) -> usize {
        self.bytes.len()
    }

    pub fn push(&mut self, e: Event) {
        let has_a = e.a != self.last_a;
        let c1 = e.c.wrapping_add(1);
        let has_bc = e.b != 0 || c1 != 0;
        let mut head = e.kind as u8;
        if has_a {
            head |= HAS_A;
        }
        if has_bc {
            head |= HAS_BC;
        }
        if e.flag != 0 {
            head |= HAS_FLAG;
        }
        self.bytes.push(head);
        put_varint(&mut self.bytes, zigzag(self.last_ts, e.ts));
        if has_a {
            put_varint(&mut self.bytes, zigzag(self.last_a, e.a));
        }
        if has_bc {
            put_varint(&mut self.bytes, u64::from(e.b));
            put_varint(&mut self.bytes, u64::from(c1));
        }
        if e.flag != 0 {
            self.bytes.push(e.flag);
        }
        self.last_ts = e.ts;
        self.last_a = e.a;
        self.len += 1;
        self.kinds |= 1 << (e.kind as u8);
    }

    /// The events in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            bytes: &self.bytes,
            pos: 0,
            ts: 0,
            a: 0,
        }
    }

    fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
    }

    /// The events with `f` applied to the ones at `indices` (a rare correction:
    /// the stream is decoded and packed again once).
    pub fn map_events(&mut self, indices: &[usize], mut f: impl FnMut(&mut Event)) {
        let mut events: Vec<Event> = self.iter().collect();
        for &i in indices {
            if let Some(e) = events.get_mut(i) {
                f(e);
            }
        }
        *self = ThreadEvents::from_events(self.thread, events);
    }

    fn from_events(thread: ThreadIndex, events: impl IntoIterator<Item = Event>) -> ThreadEvents {
        let mut out = ThreadEvents::new(thread);
        for e in events {
            out.push(e);
        }
        out.shrink();
        out
    }

    /// Puts the events in time order (stable). A virtual thread's stream comes
    /// from several carriers' blocks, which need not be written in time order.
    pub fn sort_by_time(&mut self) {
        let mut events: Vec<Event> = self.iter().collect();
        if events.windows(2).all(|w| w[0].ts <= w[1].ts) {
            return;
        }
        events.sort_by_key(|e| e.ts);
        *self = ThreadEvents::from_events(self.thread, events);
    }

    /// Merges a thread's fork-join events (`fj`, in their own order) into its other
    /// events (`self`, in file order) by time: an event of `self` goes first when its
    /// time is not later. The fork-join events are written in batches, so their
    /// place among the thread's other records in the file is not their place in time.
    pub fn merge(&self, fj: &ThreadEvents) -> ThreadEvents {
        self.merge_fixing(fj, &[], |_| {})
    }

    /// [`ThreadEvents::merge`], with `fix` applied to the fork-join events at
    /// `indices` (positions in `fj`, ascending) on the way: a rare correction made
    /// in the one pass instead of decoding and packing `fj` again.
    pub fn merge_fixing(
        &self,
        fj: &ThreadEvents,
        indices: &[usize],
        mut fix: impl FnMut(&mut Event),
    ) -> ThreadEvents {
        if !indices.is_empty() && self.is_empty() {
            let mut fj = fj.clone();
            fj.map_events(indices, fix);
            return self.merge(&fj);
        }
        if fj.is_empty() {
            let mut own = self.clone();
            own.shrink();
            return own;
        }
        if self.is_empty() {
            let mut fj = fj.clone();
            fj.thread = self.thread;
            fj.shrink();
            return fj;
        }
        let mut out = ThreadEvents::new(self.thread);
        out.bytes.reserve_exact(self.bytes.len() + fj.bytes.len());
        let (mut own, mut other) = (self.iter(), fj.iter());
        let (mut x, mut y) = (own.next_packed(), other.next_packed());
        // The position in `fj` of `y`, and the next of `indices` to fix.
        let (mut at, mut next_fix) = (0usize, indices.iter().peekable());
        loop {
            let take_own = match (&x, &y) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(a), Some(b)) => a.event.ts <= b.event.ts,
            };
            let p = if take_own {
                std::mem::replace(&mut x, own.next_packed())
            } else {
                std::mem::replace(&mut y, other.next_packed())
            };
            if let Some(mut p) = p {
                if !take_own {
                    let mut fixed = false;
                    while next_fix.next_if(|&&i| i <= at).is_some() {
                        fixed = true;
                    }
                    at += 1;
                    if fixed {
                        fix(&mut p.event);
                        out.push(p.event);
                        continue;
                    }
                }
                let bytes = if take_own { &self.bytes } else { &fj.bytes };
                out.push_packed(&p, &bytes[p.from..p.to]);
            }
        }
        out.shrink();
        out
    }

    /// Appends an event read from another stream: its bytes as they are when they
    /// were packed against the same previous time and `a` (a run of one side's
    /// events in a merge: most events), else packed again.
    fn push_packed(&mut self, p: &Packed, bytes: &[u8]) {
        if p.base == (self.last_ts, self.last_a) {
            self.bytes.extend_from_slice(bytes);
            self.last_ts = p.event.ts;
            self.last_a = p.event.a;
            self.len += 1;
            self.kinds |= 1 << (p.event.kind as u8);
        } else {
            self.push(p.event);
        }
    }
}

/// An event as read from a stream: where its bytes are, and the previous time and
/// `a` they were packed against.
struct Packed {
    event: Event,
    from: usize,
    to: usize,
    base: (u64, u64),
}

/// Decodes a [`ThreadEvents`] in order.
pub struct Iter<'a> {
    bytes: &'a [u8],
    pos: usize,
    ts: u64,
    a: u64,
}

impl Iter<'_> {
    fn next_packed(&mut self) -> Option<Packed> {
        let (from, base) = (self.pos, (self.ts, self.a));
        let event = self.next()?;
        Some(Packed {
            event,
            from,
            to: self.pos,
            base,
        })
    }
}

impl Iterator for Iter<'_> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        let &head = self.bytes.get(self.pos)?;
        self.pos += 1;
        let kind = KINDS[usize::from(head & KIND_MASK)];
        self.ts = unzigzag(self.ts, get_varint(self.bytes, &mut self.pos));
        if head & HAS_A != 0 {
            self.a = unzigzag(self.a, get_varint(self.bytes, &mut self.pos));
        }
        // Neither there: b = 0 and c = NONE (see `push`).
        let (mut b, mut c) = (0, NONE);
        if head & HAS_BC != 0 {
            b = get_varint(self.bytes, &mut self.pos) as u32;
            c = (get_varint(self.bytes, &mut self.pos) as u32).wrapping_sub(1);
        }
        let mut flag = 0;
        if head & HAS_FLAG != 0 {
            flag = self.bytes[self.pos];
            self.pos += 1;
        }
        Some(Event {
            kind,
            ts: self.ts,
            a: self.a,
            b,
            c,
            flag,
        })
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
        let m = own.merge(&fj);
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

    #[test]
    fn packed_events_read_back_as_pushed() {
        for (i, &k) in KINDS.iter().enumerate() {
            assert_eq!(k as usize, i);
        }
        assert!(is_last_kind(KINDS[KINDS.len() - 1]));
        assert!(KINDS.len() <= usize::from(KIND_MASK) + 1);
        let events = [
            Event {
                a: u64::MAX,
                b: u32::MAX,
                c: 0,
                flag: 255,
                ..ev(EventKind::LockBlock, u64::MAX)
            },
            Event {
                a: 1 << 40 | 7,
                b: 3,
                c: NONE,
                ..ev(EventKind::FjFork, 5)
            },
            Event {
                a: 1 << 40 | 7,
                b: 3,
                c: 0,
                ..ev(EventKind::FjRunBegin, 4)
            },
            ev(EventKind::FjRunEnd, 4),
            Event {
                a: 9,
                b: 0,
                c: 12,
                ..ev(EventKind::Created, 0)
            },
            Event {
                flag: 1,
                ..ev(EventKind::VtPinned, 1 << 63)
            },
        ];
        let mut t = ThreadEvents::new(1);
        for e in events {
            t.push(e);
        }
        assert_eq!(t.len(), events.len());
        assert_eq!(t.iter().collect::<Vec<_>>(), events);
        t.map_events(&[3], |e| e.b = 44);
        assert_eq!(t.iter().nth(3).map(|e| e.b), Some(44));
        assert_eq!(t.iter().nth(4), Some(events[4]));
    }

    #[test]
    fn a_merge_reads_back_as_the_events_in_time_order() {
        let fork = |ts: u64, usage: u64| Event {
            a: 1 << 40 | usage,
            b: 7,
            c: NONE,
            ..ev(EventKind::FjFork, ts)
        };
        let own_events = [
            Event {
                a: 5,
                b: 2,
                c: 9,
                ..ev(EventKind::TaskBegin, 3)
            },
            Event {
                b: 4,
                flag: 2,
                ..ev(EventKind::LockBlock, 20)
            },
            ev(EventKind::ThreadEnd, 90),
        ];
        let fj_events = [
            fork(1, 1),
            fork(4, 2),
            fork(5, 3),
            ev(EventKind::FjRunEnd, 25),
            fork(95, 4),
        ];
        let (mut own, mut fj) = (ThreadEvents::new(2), ThreadEvents::new(2));
        own_events.iter().for_each(|&e| own.push(e));
        fj_events.iter().for_each(|&e| fj.push(e));
        let mut expected: Vec<Event> = own_events.iter().chain(&fj_events).copied().collect();
        expected.sort_by_key(|e| e.ts);
        let merged = own.merge(&fj);
        assert_eq!(merged.len(), expected.len());
        assert_eq!(merged.iter().collect::<Vec<_>>(), expected);
        // A fix on the way (fork-join events 1 and 4) is the fix made before.
        let fixed = own.merge_fixing(&fj, &[1, 4], |e| e.b = 8);
        for e in expected.iter_mut() {
            if e.kind == EventKind::FjFork && [2, 4].contains(&(e.a & 0xff)) {
                e.b = 8;
            }
        }
        assert_eq!(fixed.iter().collect::<Vec<_>>(), expected);
    }
}
