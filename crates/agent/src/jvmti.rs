//! Minimal hand-written JVMTI FFI: the function table indexed by the numbers
//! of `jvmti.h` (slot = number - 1; stable across JDK versions), the event
//! callback structure, the capability bits, and typed wrappers for the calls
//! the agent makes. Every buffer JVMTI allocates is copied and deallocated here.

use std::ffi::{c_char, c_void, CStr, CString};

use crate::jni::{jclass, jint, jlong, jmethodID, jobject};

pub const JVMTI_VERSION_11: jint = 0x300B_0000;
pub const JVMTI_ENABLE: jint = 1;

pub const EVENT_VM_INIT: jint = 50;
pub const EVENT_VM_DEATH: jint = 51;
pub const EVENT_THREAD_START: jint = 52;
pub const EVENT_THREAD_END: jint = 53;
pub const EVENT_CLASS_FILE_LOAD_HOOK: jint = 54;
pub const EVENT_VM_START: jint = 57;
pub const EVENT_GC_START: jint = 81;
pub const EVENT_GC_FINISH: jint = 82;

#[repr(C)]
pub struct JvmtiEnvRaw {
    functions: *const [*const c_void; 160],
}

mod slot {
    pub const SET_EVENT_NOTIFICATION_MODE: usize = 1;
    pub const GET_THREAD_INFO: usize = 8;
    pub const GET_CURRENT_THREAD: usize = 17;
    pub const ALLOCATE: usize = 45;
    pub const DEALLOCATE: usize = 46;
    pub const GET_CLASS_SIGNATURE: usize = 47;
    pub const GET_CLASS_METHODS: usize = 51;
    pub const GET_METHOD_NAME: usize = 63;
    pub const GET_METHOD_DECLARING_CLASS: usize = 64;
    pub const GET_LINE_NUMBER_TABLE: usize = 69;
    pub const GET_BYTECODES: usize = 74;
    pub const GET_STACK_TRACE: usize = 103;
    pub const SET_EVENT_CALLBACKS: usize = 121;
    pub const GET_SYSTEM_PROPERTY: usize = 130;
    pub const ADD_CAPABILITIES: usize = 141;
    pub const GET_CONSTANT_POOL: usize = 145;
    pub const ADD_TO_BOOTSTRAP_CLASS_LOADER_SEARCH: usize = 148;
    pub const SET_VERBOSE_FLAG: usize = 149;
    pub const GET_OWNED_MONITOR_STACK_DEPTH_INFO: usize = 152;
}

/// Capability bits (jvmtiCapabilities is a 128-bit bit field; bit n = n-th field of jvmti.h).
pub mod cap {
    pub const CAN_GET_BYTECODES: u32 = 3;
    pub const CAN_GET_SOURCE_FILE_NAME: u32 = 11;
    pub const CAN_GET_LINE_NUMBERS: u32 = 12;
    pub const CAN_GENERATE_ALL_CLASS_HOOK_EVENTS: u32 = 26;
    pub const CAN_GENERATE_MONITOR_EVENTS: u32 = 28;
    pub const CAN_GENERATE_GARBAGE_COLLECTION_EVENTS: u32 = 31;
    pub const CAN_GET_OWNED_MONITOR_STACK_DEPTH_INFO: u32 = 34;
    pub const CAN_GET_CONSTANT_POOL: u32 = 35;
    /// What both a launched agent and an attach session ask for (classes, sites,
    /// locks, GC).
    pub const RECORDING: [u32; 6] = [
        CAN_GET_BYTECODES,
        CAN_GET_CONSTANT_POOL,
        CAN_GET_LINE_NUMBERS,
        CAN_GET_SOURCE_FILE_NAME,
        CAN_GENERATE_GARBAGE_COLLECTION_EVENTS,
        CAN_GENERATE_MONITOR_EVENTS,
    ];
}

/// `jvmtiMonitorStackDepthInfo`.
#[repr(C)]
pub struct MonitorStackDepthInfo {
    pub monitor: jobject,
    pub stack_depth: jint,
}

#[repr(C)]
#[derive(Default)]
struct Capabilities([u32; 4]);

#[repr(C)]
struct ThreadInfoRaw {
    name: *mut c_char,
    priority: jint,
    is_daemon: u8,
    thread_group: jobject,
    context_class_loader: jobject,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct FrameInfo {
    pub method: jmethodID,
    pub location: jlong,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct LineNumberEntry {
    start_location: jlong,
    line_number: jint,
}

/// jvmtiEventCallbacks: one pointer per event 50..=88 (87 and 88, the virtual
/// thread events, exist since JDK 21, weft uses neither: vthreads.rs; older JVMs
/// copy only the size they know).
#[repr(C)]
pub struct Callbacks(pub [*const c_void; 39]);

impl Callbacks {
    pub fn new() -> Callbacks {
        Callbacks([std::ptr::null(); 39])
    }
    pub fn set(&mut self, event: jint, f: *const c_void) {
        self.0[(event - 50) as usize] = f;
    }
}

impl Default for Callbacks {
    fn default() -> Self {
        Self::new()
    }
}

/// A JVMTI environment; usable from any thread (JVMTI envs are global).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Jvmti(*mut JvmtiEnvRaw);

// SAFETY: a jvmtiEnv may be used from any thread (JVMTI specification, "Environment").
unsafe impl Send for Jvmti {}
// SAFETY: as above.
unsafe impl Sync for Jvmti {}

macro_rules! tfn {
    ($self:ident, $slot:expr, fn($($t:ty),*)) => {{
        // SAFETY: `self.0` is a live jvmtiEnv (type invariant) and `$slot` is the
        // jvmti.h index of a function with exactly this C signature.
        unsafe {
            let table = &*(*$self.0).functions;
            std::mem::transmute::<*const c_void, unsafe extern "system" fn(*mut JvmtiEnvRaw, $($t),*) -> jint>(table[$slot])
        }
    }};
}

pub type JvmtiResult<T> = Result<T, jint>;

fn check(e: jint) -> JvmtiResult<()> {
    if e == 0 {
        Ok(())
    } else {
        Err(e)
    }
}

impl Jvmti {
    /// # Safety
    /// `p` must be a jvmtiEnv obtained from GetEnv (it stays valid for the VM's life).
    pub unsafe fn from_raw(p: *mut c_void) -> Jvmti {
        Jvmti(p as *mut JvmtiEnvRaw)
    }

    pub fn add_capabilities(self, bits: &[u32]) -> JvmtiResult<()> {
        let mut caps = Capabilities::default();
        for &b in bits {
            caps.0[(b / 32) as usize] |= 1 << (b % 32);
        }
        let f = tfn!(self, slot::ADD_CAPABILITIES, fn(*const Capabilities));
        // SAFETY: caps is a properly sized jvmtiCapabilities alive for the call.
        check(unsafe { f(self.0, &caps) })
    }

    pub fn set_event_callbacks(self, cb: &Callbacks) -> JvmtiResult<()> {
        let f = tfn!(self, slot::SET_EVENT_CALLBACKS, fn(*const Callbacks, jint));
        // SAFETY: cb is a jvmtiEventCallbacks of the size passed; JVMTI copies it.
        check(unsafe { f(self.0, cb, std::mem::size_of::<Callbacks>() as jint) })
    }

    pub fn enable_event(self, event: jint) -> JvmtiResult<()> {
        self.set_event_mode(JVMTI_ENABLE, event)
    }

    /// SetEventNotificationMode for every thread (mode 1 enable, 0 disable).
    fn set_event_mode(self, mode: jint, event: jint) -> JvmtiResult<()> {
        // SAFETY: slot 1 is SetEventNotificationMode(env, mode, event, thread, ...),
        // a C-variadic function; the extra arguments are unused by HotSpot.
        let r = unsafe {
            let table = &*(*self.0).functions;
            let f = std::mem::transmute::<
                *const c_void,
                unsafe extern "C" fn(*mut JvmtiEnvRaw, jint, jint, jobject, ...) -> jint,
            >(table[slot::SET_EVENT_NOTIFICATION_MODE]);
            f(self.0, mode, event, std::ptr::null_mut())
        };
        check(r)
    }

    /// Turns off the JVM's `jni+resolve` log output (JVMTI_VERBOSE_JNI = 4).
    /// HotSpot maps this flag to the stdout log of the jni+resolve tags.
    pub fn silence_jni_resolve_log(self) -> JvmtiResult<()> {
        let f = tfn!(self, slot::SET_VERBOSE_FLAG, fn(jint, u8));
        // SAFETY: plain values; the flag constant is JVMTI_VERBOSE_JNI.
        check(unsafe { f(self.0, 4, 0) })
    }

    pub fn add_to_bootstrap_class_loader_search(self, path: &str) -> JvmtiResult<()> {
        let c = CString::new(path).map_err(|_| -1)?;
        let f = tfn!(
            self,
            slot::ADD_TO_BOOTSTRAP_CLASS_LOADER_SEARCH,
            fn(*const c_char)
        );
        // SAFETY: NUL-terminated path alive for the call.
        check(unsafe { f(self.0, c.as_ptr()) })
    }

    /// Allocates `len` bytes with JVMTI Allocate and copies `bytes` in (for new class data).
    pub fn allocate_copy(self, bytes: &[u8]) -> JvmtiResult<*mut u8> {
        let f = tfn!(self, slot::ALLOCATE, fn(jlong, *mut *mut u8));
        let mut p: *mut u8 = std::ptr::null_mut();
        // SAFETY: out-pointer valid for the call.
        check(unsafe { f(self.0, bytes.len() as jlong, &mut p) })?;
        if p.is_null() {
            return Err(-1);
        }
        // SAFETY: p points to `bytes.len()` freshly allocated bytes not overlapping `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok(p)
    }

    fn deallocate<T>(self, p: *mut T) {
        if p.is_null() {
            return;
        }
        let f = tfn!(self, slot::DEALLOCATE, fn(*mut u8));
        // SAFETY: p was allocated by this JVMTI env and is released once.
        unsafe { f(self.0, p as *mut u8) };
    }

    /// Takes ownership of a JVMTI-allocated C string.
    fn take_string(self, p: *mut c_char) -> Option<String> {
        if p.is_null() {
            return None;
        }
        // SAFETY: p is a NUL-terminated string allocated by JVMTI.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        self.deallocate(p);
        Some(s)
    }

    pub fn get_system_property(self, key: &str) -> Option<String> {
        let k = CString::new(key).ok()?;
        let f = tfn!(
            self,
            slot::GET_SYSTEM_PROPERTY,
            fn(*const c_char, *mut *mut c_char)
        );
        let mut v: *mut c_char = std::ptr::null_mut();
        // SAFETY: NUL-terminated key, valid out-pointer.
        check(unsafe { f(self.0, k.as_ptr(), &mut v) }).ok()?;
        self.take_string(v)
    }

    /// The current thread (a local reference).
    pub fn get_current_thread(self) -> JvmtiResult<jobject> {
        let f = tfn!(self, slot::GET_CURRENT_THREAD, fn(*mut jobject));
        let mut t: jobject = std::ptr::null_mut();
        // SAFETY: valid out-pointer; called on a live thread.
        check(unsafe { f(self.0, &mut t) })?;
        Ok(t)
    }

    /// (name, is_daemon) of a thread (null = current).
    pub fn get_thread_info(self, thread: jobject) -> JvmtiResult<(String, bool)> {
        let f = tfn!(self, slot::GET_THREAD_INFO, fn(jobject, *mut ThreadInfoRaw));
        let mut info = ThreadInfoRaw {
            name: std::ptr::null_mut(),
            priority: 0,
            is_daemon: 0,
            thread_group: std::ptr::null_mut(),
            context_class_loader: std::ptr::null_mut(),
        };
        // SAFETY: valid out-struct; thread is a live jthread or null.
        check(unsafe { f(self.0, thread, &mut info) })?;
        let name = self.take_string(info.name).unwrap_or_default();
        Ok((name, info.is_daemon != 0))
    }

    /// Class signature, e.g. `Ljava/lang/String;`.
    pub fn get_class_signature(self, c: jclass) -> JvmtiResult<String> {
        let f = tfn!(
            self,
            slot::GET_CLASS_SIGNATURE,
            fn(jclass, *mut *mut c_char, *mut *mut c_char)
        );
        let mut sig: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid out-pointer; generic not requested (null).
        check(unsafe { f(self.0, c, &mut sig, std::ptr::null_mut()) })?;
        self.take_string(sig).ok_or(-1)
    }

    pub fn get_class_methods(self, c: jclass) -> JvmtiResult<Vec<jmethodID>> {
        let f = tfn!(
            self,
            slot::GET_CLASS_METHODS,
            fn(jclass, *mut jint, *mut *mut jmethodID)
        );
        let mut n: jint = 0;
        let mut p: *mut jmethodID = std::ptr::null_mut();
        // SAFETY: valid out-pointers.
        check(unsafe { f(self.0, c, &mut n, &mut p) })?;
        let v = if p.is_null() || n <= 0 {
            Vec::new()
        } else {
            // SAFETY: JVMTI returned an array of n method ids at p.
            unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec()
        };
        self.deallocate(p);
        Ok(v)
    }

    /// (name, signature) of a method.
    pub fn get_method_name(self, m: jmethodID) -> JvmtiResult<(String, String)> {
        let f = tfn!(
            self,
            slot::GET_METHOD_NAME,
            fn(jmethodID, *mut *mut c_char, *mut *mut c_char, *mut *mut c_char)
        );
        let mut name: *mut c_char = std::ptr::null_mut();
        let mut sig: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid out-pointers; generic not requested.
        check(unsafe { f(self.0, m, &mut name, &mut sig, std::ptr::null_mut()) })?;
        Ok((
            self.take_string(name).unwrap_or_default(),
            self.take_string(sig).unwrap_or_default(),
        ))
    }

    /// Declaring class of a method (a local reference).
    pub fn get_method_declaring_class(self, m: jmethodID) -> JvmtiResult<jclass> {
        let f = tfn!(
            self,
            slot::GET_METHOD_DECLARING_CLASS,
            fn(jmethodID, *mut jclass)
        );
        let mut c: jclass = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { f(self.0, m, &mut c) })?;
        Ok(c)
    }

    /// (start_location, line) pairs.
    pub fn get_line_number_table(self, m: jmethodID) -> JvmtiResult<Vec<(i64, i32)>> {
        let f = tfn!(
            self,
            slot::GET_LINE_NUMBER_TABLE,
            fn(jmethodID, *mut jint, *mut *mut LineNumberEntry)
        );
        let mut n: jint = 0;
        let mut p: *mut LineNumberEntry = std::ptr::null_mut();
        // SAFETY: valid out-pointers.
        check(unsafe { f(self.0, m, &mut n, &mut p) })?;
        let v = if p.is_null() || n <= 0 {
            Vec::new()
        } else {
            // SAFETY: JVMTI returned n entries at p.
            unsafe { std::slice::from_raw_parts(p, n as usize) }
                .iter()
                .map(|e| (e.start_location, e.line_number))
                .collect()
        };
        self.deallocate(p);
        Ok(v)
    }

    pub fn get_bytecodes(self, m: jmethodID) -> JvmtiResult<Vec<u8>> {
        let f = tfn!(
            self,
            slot::GET_BYTECODES,
            fn(jmethodID, *mut jint, *mut *mut u8)
        );
        let mut n: jint = 0;
        let mut p: *mut u8 = std::ptr::null_mut();
        // SAFETY: valid out-pointers.
        check(unsafe { f(self.0, m, &mut n, &mut p) })?;
        let v = if p.is_null() || n <= 0 {
            Vec::new()
        } else {
            // SAFETY: JVMTI returned n bytes at p.
            unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec()
        };
        self.deallocate(p);
        Ok(v)
    }

    /// (constant_pool_count, raw entries).
    pub fn get_constant_pool(self, c: jclass) -> JvmtiResult<(u16, Vec<u8>)> {
        let f = tfn!(
            self,
            slot::GET_CONSTANT_POOL,
            fn(jclass, *mut jint, *mut jint, *mut *mut u8)
        );
        let (mut count, mut len): (jint, jint) = (0, 0);
        let mut p: *mut u8 = std::ptr::null_mut();
        // SAFETY: valid out-pointers.
        check(unsafe { f(self.0, c, &mut count, &mut len, &mut p) })?;
        let v = if p.is_null() || len <= 0 {
            Vec::new()
        } else {
            // SAFETY: JVMTI returned len bytes at p.
            unsafe { std::slice::from_raw_parts(p, len as usize) }.to_vec()
        };
        self.deallocate(p);
        Ok((count as u16, v))
    }

    /// Frames of the current thread, innermost first.
    pub fn get_stack_trace_current(self, max: usize) -> JvmtiResult<Vec<FrameInfo>> {
        let f = tfn!(
            self,
            slot::GET_STACK_TRACE,
            fn(jobject, jint, jint, *mut FrameInfo, *mut jint)
        );
        let mut frames = vec![
            FrameInfo {
                method: std::ptr::null_mut(),
                location: 0
            };
            max
        ];
        let mut n: jint = 0;
        // SAFETY: null thread = current thread; buffer holds `max` frames.
        check(unsafe {
            f(
                self.0,
                std::ptr::null_mut(),
                0,
                max as jint,
                frames.as_mut_ptr(),
                &mut n,
            )
        })?;
        frames.truncate(n.max(0) as usize);
        Ok(frames)
    }
}

// ---------------------------------------------------------------- locks (docs/locks.md)

pub const EVENT_NATIVE_METHOD_BIND: jint = 67;
pub const EVENT_MONITOR_WAIT: jint = 73;
pub const EVENT_MONITOR_WAITED: jint = 74;
pub const EVENT_MONITOR_CONTENDED_ENTER: jint = 75;
pub const EVENT_MONITOR_CONTENDED_ENTERED: jint = 76;

/// can_get_monitor_info (GetObjectMonitorUsage).
pub const CAP_GET_MONITOR_INFO: u32 = 7;
/// can_generate_native_method_bind_events.
pub const CAP_NATIVE_METHOD_BIND: u32 = 30;

#[repr(C)]
struct MonitorUsageRaw {
    owner: jobject,
    entry_count: jint,
    waiter_count: jint,
    waiters: *mut jobject,
    notify_waiter_count: jint,
    notify_waiters: *mut jobject,
}

impl Jvmti {
    /// JVMTI GetObjectHashCode (= System.identityHashCode).
    pub fn get_object_hash_code(self, o: jobject) -> JvmtiResult<jint> {
        let f = tfn!(self, 57, fn(jobject, *mut jint));
        let mut h: jint = 0;
        // SAFETY: slot 57 is GetObjectHashCode; valid out-pointer; live object.
        check(unsafe { f(self.0, o, &mut h) })?;
        Ok(h)
    }

    /// The owner thread (a local ref, or null) of an object's monitor. A safepoint operation.
    pub fn get_monitor_owner(self, o: jobject) -> JvmtiResult<jobject> {
        let f = tfn!(self, 58, fn(jobject, *mut MonitorUsageRaw));
        let mut u = MonitorUsageRaw {
            owner: std::ptr::null_mut(),
            entry_count: 0,
            waiter_count: 0,
            waiters: std::ptr::null_mut(),
            notify_waiter_count: 0,
            notify_waiters: std::ptr::null_mut(),
        };
        // SAFETY: slot 58 is GetObjectMonitorUsage; valid out-struct.
        check(unsafe { f(self.0, o, &mut u) })?;
        self.deallocate(u.waiters);
        self.deallocate(u.notify_waiters);
        Ok(u.owner)
    }

    /// The stack depths (0: the current frame) at which the current thread entered the
    /// monitors it holds (needs `can_get_owned_monitor_stack_depth_info`, an OnLoad
    /// capability). The monitors' local references are freed with the caller's frame.
    pub fn owned_monitor_depths(self) -> JvmtiResult<Vec<i32>> {
        let f = tfn!(
            self,
            slot::GET_OWNED_MONITOR_STACK_DEPTH_INFO,
            fn(jobject, *mut jint, *mut *mut MonitorStackDepthInfo)
        );
        let mut n: jint = 0;
        let mut p: *mut MonitorStackDepthInfo = std::ptr::null_mut();
        // SAFETY: null thread = current thread; the JVM allocates the array.
        check(unsafe { f(self.0, std::ptr::null_mut(), &mut n, &mut p) })?;
        let depths = if p.is_null() {
            Vec::new()
        } else {
            // SAFETY: the JVM returned `n` entries at `p`.
            unsafe { std::slice::from_raw_parts(p, n.max(0) as usize) }
                .iter()
                .map(|m| m.stack_depth)
                .collect()
        };
        self.deallocate(p);
        Ok(depths)
    }

    /// Frames of the current thread from `start` (innermost first).
    pub fn get_stack_trace_from(self, start: usize, max: usize) -> JvmtiResult<Vec<FrameInfo>> {
        let f = tfn!(
            self,
            slot::GET_STACK_TRACE,
            fn(jobject, jint, jint, *mut FrameInfo, *mut jint)
        );
        let mut frames = vec![
            FrameInfo {
                method: std::ptr::null_mut(),
                location: 0
            };
            max
        ];
        let mut n: jint = 0;
        // SAFETY: null thread = current thread; buffer holds `max` frames.
        check(unsafe {
            f(
                self.0,
                std::ptr::null_mut(),
                start as jint,
                max as jint,
                frames.as_mut_ptr(),
                &mut n,
            )
        })?;
        frames.truncate(n.max(0) as usize);
        Ok(frames)
    }
}

// ---------------------------------------------------------------- sampling (docs/sampling.md)

pub const EVENT_CLASS_LOAD: jint = 55;
pub const EVENT_CLASS_PREPARE: jint = 56;
pub const EVENT_COMPILED_METHOD_LOAD: jint = 68;
pub const EVENT_COMPILED_METHOD_UNLOAD: jint = 69;
pub const EVENT_DYNAMIC_CODE_GENERATED: jint = 70;
/// can_generate_compiled_method_load_events.
pub const CAP_COMPILED_METHOD_LOAD: u32 = 27;

impl Jvmti {
    /// The defining loader of a class (a local reference; null: the boot loader).
    pub fn get_class_loader(self, c: jclass) -> JvmtiResult<jobject> {
        let f = tfn!(self, 56, fn(jclass, *mut jobject));
        let mut l: jobject = std::ptr::null_mut();
        // SAFETY: slot 56 is GetClassLoader; valid class and out-pointer.
        check(unsafe { f(self.0, c, &mut l) })?;
        Ok(l)
    }

    /// Every live Java thread visible to JVMTI (local references).
    pub fn get_all_threads(self) -> JvmtiResult<Vec<jobject>> {
        // Slot 3 is GetAllThreads(jint*, jthread**).
        self.reference_list(3)
    }

    /// Every loaded class (local references).
    pub fn get_loaded_classes(self) -> JvmtiResult<Vec<jclass>> {
        // Slot 77 is GetLoadedClasses(jint*, jclass**).
        self.reference_list(77)
    }

    /// Calls a JVMTI function of the form `f(env, jint* count, jobject** refs)` and
    /// copies the references it returns (freeing its array).
    fn reference_list(self, slot: usize) -> JvmtiResult<Vec<jobject>> {
        let f = tfn!(self, slot, fn(*mut jint, *mut *mut jobject));
        let mut n: jint = 0;
        let mut p: *mut jobject = std::ptr::null_mut();
        // SAFETY: the callers pass the slot of a function of exactly this shape;
        // valid out-pointers.
        check(unsafe { f(self.0, &mut n, &mut p) })?;
        Ok(self.take_refs(p, n))
    }

    /// Copies a JVMTI-allocated array of `n` references and frees it.
    fn take_refs(self, p: *mut jobject, n: jint) -> Vec<jobject> {
        let v = if p.is_null() || n <= 0 {
            Vec::new()
        } else {
            // SAFETY: JVMTI returned n references at p.
            unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec()
        };
        self.deallocate(p);
        v
    }
}

// ---------------------------------------------------------------- attach (docs/attach.md)

/// can_retransform_classes.
pub const CAP_RETRANSFORM_CLASSES: u32 = 37;

impl Jvmti {
    /// Turns an event off (SetEventNotificationMode JVMTI_DISABLE).
    pub fn disable_event(self, event: jint) -> JvmtiResult<()> {
        self.set_event_mode(0, event)
    }

    /// This environment's thread-local value of `thread` (null: the current thread).
    pub fn get_thread_local_storage(self, thread: jobject) -> usize {
        let f = tfn!(self, 101, fn(jobject, *mut *mut c_void));
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: slot 101 is GetThreadLocalStorage; valid out-pointer.
        let r = unsafe { f(self.0, thread, &mut p) };
        if r == 0 {
            p as usize
        } else {
            0
        }
    }

    /// Sets this environment's thread-local value of `thread` (a plain number here).
    pub fn set_thread_local_storage(self, thread: jobject, value: usize) -> JvmtiResult<()> {
        let f = tfn!(self, 102, fn(jobject, *const c_void));
        // SAFETY: slot 102 is SetThreadLocalStorage; the value is never dereferenced.
        check(unsafe { f(self.0, thread, value as *const c_void) })
    }

    pub fn is_modifiable_class(self, c: jclass) -> bool {
        let f = tfn!(self, 44, fn(jclass, *mut u8));
        let mut b: u8 = 0;
        // SAFETY: slot 44 is IsModifiableClass; valid out-pointer.
        check(unsafe { f(self.0, c, &mut b) }).is_ok() && b != 0
    }

    /// The interfaces a class declares (local references).
    pub fn get_implemented_interfaces(self, c: jclass) -> JvmtiResult<Vec<jclass>> {
        let f = tfn!(self, 53, fn(jclass, *mut jint, *mut *mut jclass));
        let mut n: jint = 0;
        let mut p: *mut jclass = std::ptr::null_mut();
        // SAFETY: slot 53 is GetImplementedInterfaces; valid out-pointers.
        check(unsafe { f(self.0, c, &mut n, &mut p) })?;
        Ok(self.take_refs(p, n))
    }

    /// RetransformClasses: the ClassFileLoadHook of retransformation-capable
    /// environments runs again for each class, from its original bytes.
    pub fn retransform_classes(self, classes: &[jclass]) -> JvmtiResult<()> {
        if classes.is_empty() {
            return Ok(());
        }
        let f = tfn!(self, 151, fn(jint, *const jclass));
        // SAFETY: slot 151 is RetransformClasses; the array lives for the call.
        check(unsafe { f(self.0, classes.len() as jint, classes.as_ptr()) })
    }
}
