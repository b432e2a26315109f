//! Class ids of objects seen by native code, without running Java code.
//!
//! `Probe.classIdOf` (a lock-free `ClassTable`) gives every class its id; asking it from
//! native code is a JNI up-call (~0.3-1 µs with its transitions), and the
//! plumbing unwrap and VirtualThreadStart asked it several times per task. This
//! table remembers the id of each class under the identity hash of its class
//! object (JVMTI GetObjectHashCode), with a weak reference that tells two classes
//! of one hash apart (JNI IsSameObject) and lets an unloaded class go. Lookups
//! take no lock; a miss takes the up-call once and inserts under a mutex.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::jni::{jobject, Jni};
use crate::jvmti::Jvmti;

const SLOTS: usize = 4096;
/// Slots probed from a hash's home slot before giving up (then: the up-call).
const PROBES: usize = 8;

/// A slot: `hash << 32 | id` (0: empty), published after its weak reference.
static KEYS: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
static WEAK: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static INSERT: Mutex<()> = Mutex::new(());

fn home(hash: i32) -> usize {
    (hash as u32 as usize).wrapping_mul(0x9E37_79B9) >> 20 & (SLOTS - 1)
}

/// The slot and id remembered for class object `c` of identity hash `hash`.
fn find(jni: Jni, c: jobject, hash: i32) -> Option<(usize, u32)> {
    let h = home(hash);
    for k in 0..PROBES {
        let i = (h + k) & (SLOTS - 1);
        let key = KEYS[i].load(Ordering::Acquire);
        if key == 0 {
            return None;
        }
        if (key >> 32) as u32 == hash as u32 {
            let w = WEAK[i].load(Ordering::Relaxed) as jobject;
            if jni.is_same_object(w, c) {
                return Some((i, key as u32));
            }
        }
    }
    None
}

/// Remembers `id` for class object `c` (a no-op when the slots near its hash are full);
/// returns its slot.
fn remember(jni: Jni, c: jobject, hash: i32, id: u32) -> Option<usize> {
    if id == 0 {
        return None;
    }
    let _g = INSERT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((i, _)) = find(jni, c, hash) {
        return Some(i);
    }
    let h = home(hash);
    for k in 0..PROBES {
        let i = (h + k) & (SLOTS - 1);
        if KEYS[i].load(Ordering::Relaxed) != 0 {
            continue;
        }
        let w = jni.new_weak_global_ref(c);
        if w.is_null() {
            return None;
        }
        WEAK[i].store(w as usize, Ordering::Relaxed);
        KEYS[i].store(
            (u64::from(hash as u32) << 32) | u64::from(id),
            Ordering::Release,
        );
        return Some(i);
    }
    None
}

// ---------------------------------------------------------------- per-thread order

/// Slots a thread hit recently, each with the one it hit next last time. The
/// VirtualThreadStart callback asks the same classes in the same order at every
/// virtual thread (the executor's wrapper, its adapter, the task): following that
/// order, a look-up is one JNI IsSameObject against the predicted slot's weak
/// reference instead of JVMTI GetObjectHashCode, the table's probe and that
/// IsSameObject (BENCHMARKS.md, Session 11). A slot's key and reference never
/// change once published, so a hit is always right; a miss takes the hash path.
const RECENT: usize = 4;

#[derive(Clone, Copy)]
struct Recent {
    /// slot + 1 (0: empty).
    slots: [u16; RECENT],
    /// The entry hit after each entry, last time.
    next: [u8; RECENT],
    /// The entry hit last.
    last: u8,
    /// The entry a new slot replaces next.
    victim: u8,
}

thread_local! {
    static ORDER: Cell<Recent> = const {
        Cell::new(Recent { slots: [0; RECENT], next: [0; RECENT], last: 0, victim: 0 })
    };
}

/// The id of the slot predicted to follow this thread's last hit, if `c` is its class.
fn predicted(jni: Jni, c: jobject) -> Option<u32> {
    let r = ORDER.try_with(Cell::get).ok()?;
    let e = r.next[r.last as usize] as usize;
    let slot = (r.slots[e] as usize).checked_sub(1)?;
    let key = KEYS[slot].load(Ordering::Acquire);
    let w = WEAK[slot].load(Ordering::Relaxed) as jobject;
    if key == 0 || !jni.is_same_object(w, c) {
        return None;
    }
    let mut hit = r;
    hit.last = e as u8;
    let _ = ORDER.try_with(|o| o.set(hit));
    Some(key as u32)
}

/// Notes that this thread hit `slot` after its last hit.
fn note_hit(slot: usize) {
    let _ = ORDER.try_with(|o| {
        let mut r = o.get();
        let tag = (slot + 1) as u16;
        let e = match r.slots.iter().position(|&s| s == tag) {
            Some(e) => e,
            None => {
                let e = r.victim as usize;
                r.victim = ((e + 1) % RECENT) as u8;
                r.slots[e] = tag;
                e
            }
        };
        r.next[r.last as usize] = e as u8;
        r.last = e as u8;
        o.set(r);
    });
}

/// Class id of `o` from the table, `slow` (the up-call) on a miss, which is then
/// remembered. 0 when unknown. The class's local reference is left to the caller's
/// frame (every caller is a JNI native or a JVMTI callback, whose frame frees it on
/// return; the VirtualThreadStart callback makes three look-ups): deleting it cost a
/// JNI call per look-up. A loop over many objects in one frame should push a local
/// frame of its own.
pub fn class_id(jni: Jni, jvmti: Jvmti, o: jobject, slow: impl FnOnce() -> u32) -> u32 {
    let c = jni.get_object_class(o);
    if c.is_null() {
        return 0;
    }
    match predicted(jni, c) {
        Some(id) => id,
        None => match jvmti.get_object_hash_code(c) {
            Ok(h) => match find(jni, c, h) {
                Some((slot, id)) => {
                    note_hit(slot);
                    id
                }
                None => {
                    let id = slow();
                    if let Some(slot) = remember(jni, c, h, id) {
                        note_hit(slot);
                    }
                    id
                }
            },
            Err(_) => slow(),
        },
    }
}
