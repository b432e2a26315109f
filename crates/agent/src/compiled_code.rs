//! Where the JIT's compiled methods lie (CompiledMethodLoad/Unload: code range ->
//! jmethodID) and the JVM's stubs (DynamicCodeGenerated), readable from the signal handler (sampling_signal.rs uses it to name
//! a compiled frame AsyncGetCallTrace could not walk, docs/sampling.md § Failed walks).
//!
//! The JVMTI callbacks edit a map under a lock; the handler reads an immutable
//! sorted snapshot of it through an atomic pointer. A replaced snapshot is freed
//! only once no handler is reading (a count every reader raises before it loads
//! the pointer and lowers when it is done); until then it waits in a list.
//! Loads are published at the sampler thread's next drain after a failed walk
//! found its PC in no known code, and at least every second (a method compiled
//! since is not known yet, its samples stay as they are); unloads at once (its
//! code may be freed and reused by another method).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;

/// One compiled method's code: [start, end) runs `method` (a jmethodID); or
/// one of the JVM's stubs (DynamicCodeGenerated): `method` is [`STUB`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeRange {
    pub start: usize,
    pub end: usize,
    pub method: usize,
}

/// The `method` of a stub's range (no Java method: a stub is no Java frame).
pub const STUB: usize = 0;

impl CodeRange {
    pub fn is_stub(&self) -> bool {
        self.method == STUB
    }
}

/// The ranges sorted by start, never overlapping.
struct Snapshot {
    ranges: Box<[CodeRange]>,
}

static CURRENT: AtomicPtr<Snapshot> = AtomicPtr::new(std::ptr::null_mut());
static READERS: AtomicUsize = AtomicUsize::new(0);

#[derive(Default)]
struct Table {
    /// start -> (end, method).
    by_start: BTreeMap<usize, (usize, usize)>,
    dirty: bool,
    /// Snapshots replaced while a handler may still read them.
    retired: Vec<*mut Snapshot>,
}

// SAFETY: the retired pointers are owned by the table (Box::into_raw) and only
// freed under its lock.
unsafe impl Send for Table {}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with_table(f: impl FnOnce(&mut Table)) {
    let mut g = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(Table::default));
}

/// CompiledMethodLoad: `method`'s code is [addr, addr + size). A range it
/// overlaps belongs to code freed without our seeing its unload: dropped.
pub fn loaded(method: usize, addr: usize, size: usize) {
    if method != STUB {
        insert(method, addr, size);
    }
}

/// DynamicCodeGenerated: a stub's code is [addr, addr + size).
pub fn stub_generated(addr: usize, size: usize) {
    insert(STUB, addr, size);
}

fn insert(method: usize, addr: usize, size: usize) {
    if addr == 0 || size == 0 {
        return;
    }
    let end = addr.saturating_add(size);
    with_table(|t| {
        let stale: Vec<usize> = t
            .by_start
            .range(..end)
            .rev()
            .take_while(|(_, &(e, _))| e > addr)
            .map(|(&s, _)| s)
            .collect();
        // (take_while above stops at the first range ending before addr; ranges
        // never overlap, so the ones before it end before addr too.)
        for s in stale {
            t.by_start.remove(&s);
        }
        t.by_start.insert(addr, (end, method));
        t.dirty = true;
    });
}

/// CompiledMethodUnload: the code at `addr` is gone (published at once).
pub fn unloaded(method: usize, addr: usize) {
    with_table(|t| {
        if t.by_start.get(&addr).is_some_and(|&(_, m)| m == method) {
            t.by_start.remove(&addr);
            publish(t);
        }
    });
}

/// A handler looked for a PC the snapshot does not hold (a walk that failed
/// in code compiled since the last publish): the next drain publishes.
static WANTED: AtomicBool = AtomicBool::new(false);

/// Says that a failed walk's PC was not in the snapshot (signal handler: one store).
pub fn want_newer() {
    WANTED.store(true, Ordering::Relaxed);
}

/// Loads are published at least this often without a handler asking.
const PUBLISH_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Publishes the loads since the last call (the sampler thread, at each drain)
/// when a handler asked for them or [`PUBLISH_EVERY`] passed: each publish
/// copies the whole table (thousands of ranges), which at every 50 ms drain
/// cost the sampler thread ~2.5 ms of a 2-second run.
pub fn publish_if_dirty() {
    static LAST: Mutex<Option<std::time::Instant>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    let due = last.is_none_or(|t| t.elapsed() >= PUBLISH_EVERY);
    if !(WANTED.swap(false, Ordering::Relaxed) || due) {
        return;
    }
    with_table(|t| {
        if t.dirty {
            publish(t);
        }
    });
    *last = Some(std::time::Instant::now());
}

fn publish(t: &mut Table) {
    let ranges: Box<[CodeRange]> = t
        .by_start
        .iter()
        .map(|(&start, &(end, method))| CodeRange { start, end, method })
        .collect();
    let new = Box::into_raw(Box::new(Snapshot { ranges }));
    let old = CURRENT.swap(new, Ordering::SeqCst);
    t.dirty = false;
    if !old.is_null() {
        t.retired.push(old);
    }
    // A handler that may hold an old snapshot raised READERS before loading
    // it; one that raises it from now on loads the new one.
    if READERS.load(Ordering::SeqCst) == 0 {
        for p in t.retired.drain(..) {
            // SAFETY: p came from Box::into_raw above, was swapped out of
            // CURRENT, and no reader that could have loaded it is left.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// A handler's view of the table, from [`enter`] to [`leave`].
#[derive(Clone, Copy)]
pub struct Ranges {
    ptr: *const CodeRange,
    len: usize,
}

/// Starts reading (signal handler): the snapshot stays alive until [`leave`].
/// Async-signal-safe: two atomics.
pub fn enter() -> Ranges {
    READERS.fetch_add(1, Ordering::SeqCst);
    let p = CURRENT.load(Ordering::SeqCst);
    if p.is_null() {
        return Ranges {
            ptr: std::ptr::null(),
            len: 0,
        };
    }
    // SAFETY: p is a live snapshot: it is freed only when READERS is 0 after
    // it was swapped out, and we raised READERS before loading it.
    let r = unsafe { &(*p).ranges };
    Ranges {
        ptr: r.as_ptr(),
        len: r.len(),
    }
}

/// Ends the reading begun by [`enter`].
pub fn leave() {
    READERS.fetch_sub(1, Ordering::SeqCst);
}

impl Ranges {
    fn ranges(&self) -> &[CodeRange] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: ptr/len describe a live snapshot's ranges (see enter).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The compiled method whose code holds `pc` (a binary search, no allocation).
    pub fn find(&self, pc: usize) -> Option<CodeRange> {
        find_in(self.ranges(), pc)
    }

    /// Whether `addr` is in no known range but near the code the snapshot holds
    /// (code compiled since the last publish could be there): the caller then
    /// asks for a newer snapshot ([`want_newer`]). A stack slot's stale value
    /// (a saved flag register, a small integer) is not near, and asks nothing.
    pub fn unknown_near_code(&self, addr: usize) -> bool {
        let r = self.ranges();
        let (Some(first), Some(last)) = (r.first(), r.last()) else {
            return false;
        };
        addr >= first.start.saturating_sub(CODE_SPAN)
            && addr < last.end.saturating_add(CODE_SPAN)
            && find_in(r, addr).is_none()
    }
}

/// How far from the known code new code may lie: HotSpot's code cache is one
/// reserved region (240 MB by default with tiered compilation).
const CODE_SPAN: usize = 512 << 20;

fn find_in(ranges: &[CodeRange], pc: usize) -> Option<CodeRange> {
    let i = ranges.partition_point(|r| r.start <= pc);
    let r = *ranges.get(i.checked_sub(1)?)?;
    (pc < r.end).then_some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_range_holding_a_pc() {
        let r = [
            CodeRange {
                start: 100,
                end: 150,
                method: 1,
            },
            CodeRange {
                start: 200,
                end: 260,
                method: 2,
            },
        ];
        assert_eq!(find_in(&r, 99), None);
        assert_eq!(find_in(&r, 100).map(|r| r.method), Some(1));
        assert_eq!(find_in(&r, 149).map(|r| r.method), Some(1));
        assert_eq!(find_in(&r, 150), None);
        assert_eq!(find_in(&r, 259).map(|r| r.method), Some(2));
        assert_eq!(find_in(&r, 260), None);
        assert_eq!(find_in(&[], 5), None);
    }

    #[test]
    fn an_address_near_the_code_but_in_no_range_is_unknown_code() {
        let r = [
            CodeRange {
                start: 0x7000_0000,
                end: 0x7000_1000,
                method: STUB,
            },
            CodeRange {
                start: 0x7100_0000,
                end: 0x7100_0400,
                method: 1,
            },
        ];
        let ranges = Ranges {
            ptr: r.as_ptr(),
            len: r.len(),
        };
        assert!(!ranges.unknown_near_code(0x7000_0800), "a known stub");
        assert!(!ranges.unknown_near_code(0x7100_0010), "a known method");
        assert!(ranges.unknown_near_code(0x7080_0000), "between the two");
        assert!(
            ranges.unknown_near_code(0x7200_0000),
            "above, within the span"
        );
        assert!(!ranges.unknown_near_code(0x246), "a flags word");
        assert!(
            !ranges.unknown_near_code(0x7fff_0000_0000),
            "a stack address"
        );
        let empty = Ranges {
            ptr: std::ptr::null(),
            len: 0,
        };
        assert!(!empty.unknown_near_code(0x7000_0800));
    }

    #[test]
    fn loads_replace_what_they_overlap_and_unloads_check_the_method() {
        loaded(7, 1000, 100);
        loaded(8, 1200, 100);
        // Code of 7 freed unseen, its space reused in part by 9.
        loaded(9, 1050, 100);
        publish_if_dirty();
        let r = enter();
        assert_eq!(r.find(1010), None);
        assert_eq!(r.find(1060).map(|r| r.method), Some(9));
        assert_eq!(r.find(1250).map(|r| r.method), Some(8));
        leave();
        // An unload naming another method than the range's is stale: ignored.
        unloaded(7, 1050);
        unloaded(8, 1200);
        let r = enter();
        assert_eq!(r.find(1060).map(|r| r.method), Some(9));
        assert_eq!(r.find(1250), None);
        leave();
    }
}
