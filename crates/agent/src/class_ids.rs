//! Class ids of objects seen by native code, without running Java code.
//!
//! `Probe.classIdOf` (a lock-free `ClassTable`) gives every class its id; asking it from
//! native code is a JNI up-call (~0.3-1 µs with its transitions), and the
//! plumbing unwrap and VirtualThreadStart asked it several times per task. This
//! table remembers the id of each class under the identity hash of its class
//! object (JVMTI GetObjectHashCode), with a weak reference that tells two classes
//! of one hash apart (JNI IsSameObject) and lets an unloaded class go. Lookups
//! take no lock; a miss takes the up-call once and inserts under a mutex.

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

/// The id remembered for class object `c` of identity hash `hash`.
pub fn lookup(jni: Jni, c: jobject, hash: i32) -> Option<u32> {
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
                return Some(key as u32);
            }
        }
    }
    None
}

/// Remembers `id` for class object `c` (a no-op when the slots near its hash are full).
pub fn remember(jni: Jni, c: jobject, hash: i32, id: u32) {
    if id == 0 {
        return;
    }
    let _g = INSERT.lock().unwrap_or_else(|e| e.into_inner());
    if lookup(jni, c, hash).is_some() {
        return;
    }
    let h = home(hash);
    for k in 0..PROBES {
        let i = (h + k) & (SLOTS - 1);
        if KEYS[i].load(Ordering::Relaxed) != 0 {
            continue;
        }
        let w = jni.new_weak_global_ref(c);
        if w.is_null() {
            return;
        }
        WEAK[i].store(w as usize, Ordering::Relaxed);
        KEYS[i].store(
            (u64::from(hash as u32) << 32) | u64::from(id),
            Ordering::Release,
        );
        return;
    }
}

/// Class id of `o` from the table, `slow` (the up-call) on a miss, which is then
/// remembered. 0 when unknown.
pub fn class_id(jni: Jni, jvmti: Jvmti, o: jobject, slow: impl FnOnce() -> u32) -> u32 {
    let c = jni.get_object_class(o);
    if c.is_null() {
        return 0;
    }
    let id = match jvmti.get_object_hash_code(c) {
        Ok(h) => lookup(jni, c, h).unwrap_or_else(|| {
            let id = slow();
            remember(jni, c, h, id);
            id
        }),
        Err(_) => slow(),
    };
    jni.delete_local_ref(c);
    id
}
