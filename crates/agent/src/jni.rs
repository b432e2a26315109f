//! Minimal hand-written JNI FFI: the function table as an array of pointers
//! indexed by the slot numbers of `jni.h` (stable across JDK versions), and
//! typed wrappers for the calls the agent makes.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void, CStr, CString};

pub type jint = i32;
pub type jlong = i64;
pub type jboolean = u8;
pub type jobject = *mut c_void;
pub type jclass = jobject;
pub type jstring = jobject;
pub type jmethodID = *mut c_void;
pub type jfieldID = *mut c_void;

pub const JNI_OK: jint = 0;
pub const JNI_ERR: jint = -1;
pub const JNI_VERSION_1_8: jint = 0x0001_0008;

#[repr(C)]
#[derive(Clone, Copy)]
pub union jvalue {
    pub z: jboolean,
    pub i: jint,
    pub j: jlong,
    pub l: jobject,
}

/// `JNIEnv` as C sees it: a pointer to the function table.
#[repr(C)]
pub struct JNIEnv {
    functions: *const [*const c_void; 240],
}

/// `JavaVM` as C sees it: a pointer to the invoke interface.
#[repr(C)]
pub struct JavaVM {
    functions: *const [*const c_void; 8],
}

mod slot {
    pub const FIND_CLASS: usize = 6;
    pub const IS_ASSIGNABLE_FROM: usize = 11;
    pub const EXCEPTION_CLEAR: usize = 17;
    pub const NEW_GLOBAL_REF: usize = 21;
    pub const DELETE_LOCAL_REF: usize = 23;
    pub const GET_OBJECT_CLASS: usize = 31;
    pub const GET_METHOD_ID: usize = 33;
    pub const CALL_LONG_METHOD_A: usize = 54;
    pub const GET_FIELD_ID: usize = 94;
    pub const GET_OBJECT_FIELD: usize = 95;
    pub const GET_LONG_FIELD: usize = 101;
    pub const GET_STATIC_METHOD_ID: usize = 113;
    pub const CALL_STATIC_OBJECT_METHOD_A: usize = 116;
    pub const CALL_STATIC_INT_METHOD_A: usize = 131;
    pub const GET_STATIC_FIELD_ID: usize = 144;
    pub const SET_STATIC_BOOLEAN_FIELD: usize = 155;
    pub const SET_STATIC_INT_FIELD: usize = 159;
    pub const NEW_STRING_UTF: usize = 167;
    pub const GET_STRING_UTF_CHARS: usize = 169;
    pub const RELEASE_STRING_UTF_CHARS: usize = 170;
    pub const GET_JAVA_VM: usize = 219;
    pub const NEW_WEAK_GLOBAL_REF: usize = 226;
    pub const EXCEPTION_CHECK: usize = 228;
    // JavaVM
    pub const VM_GET_ENV: usize = 6;
}

/// A JNI environment of the current thread. Valid only on that thread and
/// only for the duration of the callback or native call that received it.
#[derive(Clone, Copy)]
pub struct Jni(*mut JNIEnv);

macro_rules! jfn {
    ($self:ident, $slot:expr, fn($($t:ty),*) -> $r:ty) => {{
        // SAFETY: `self.0` is a live JNIEnv of this thread (type invariant), its
        // table has at least 235 slots, and `$slot` is the index from jni.h of
        // a function with exactly this C signature.
        unsafe {
            let table = &*(*$self.0).functions;
            std::mem::transmute::<*const c_void, unsafe extern "system" fn(*mut JNIEnv, $($t),*) -> $r>(table[$slot])
        }
    }};
}

impl Jni {
    /// # Safety
    /// `env` must be the JNIEnv the JVM passed to the current callback/native.
    pub unsafe fn from_raw(env: *mut JNIEnv) -> Option<Jni> {
        if env.is_null() {
            None
        } else {
            Some(Jni(env))
        }
    }

    /// Clears a pending exception; true if there was one.
    pub fn check_clear(self) -> bool {
        let check = jfn!(self, slot::EXCEPTION_CHECK, fn() -> jboolean);
        // SAFETY: valid env (type invariant); no arguments.
        let pending = unsafe { check(self.0) } != 0;
        if pending {
            let clear = jfn!(self, slot::EXCEPTION_CLEAR, fn() -> ());
            // SAFETY: as above.
            unsafe { clear(self.0) };
        }
        pending
    }

    pub fn find_class(self, name: &str) -> Option<jclass> {
        let c = CString::new(name).ok()?;
        let f = jfn!(self, slot::FIND_CLASS, fn(*const c_char) -> jclass);
        // SAFETY: valid env; `c` is a NUL-terminated string alive for the call.
        let r = unsafe { f(self.0, c.as_ptr()) };
        if self.check_clear() || r.is_null() {
            None
        } else {
            Some(r)
        }
    }

    pub fn new_global_ref(self, o: jobject) -> jobject {
        let f = jfn!(self, slot::NEW_GLOBAL_REF, fn(jobject) -> jobject);
        // SAFETY: valid env; `o` is a live reference or null.
        unsafe { f(self.0, o) }
    }

    /// A weak global reference (does not keep `o` alive; compares equal to null once
    /// `o` is collected). Null if the JVM is out of memory.
    pub fn new_weak_global_ref(self, o: jobject) -> jobject {
        let f = jfn!(self, slot::NEW_WEAK_GLOBAL_REF, fn(jobject) -> jobject);
        // SAFETY: valid env; `o` is a live reference or null.
        unsafe { f(self.0, o) }
    }

    /// The JavaVM of this environment.
    pub fn java_vm(self) -> Option<*mut JavaVM> {
        let f = jfn!(self, slot::GET_JAVA_VM, fn(*mut *mut JavaVM) -> jint);
        let mut vm: *mut JavaVM = std::ptr::null_mut();
        // SAFETY: valid env and out-pointer.
        let r = unsafe { f(self.0, &mut vm) };
        (r == JNI_OK && !vm.is_null()).then_some(vm)
    }

    pub fn delete_local_ref(self, o: jobject) {
        if o.is_null() {
            return;
        }
        let f = jfn!(self, slot::DELETE_LOCAL_REF, fn(jobject) -> ());
        // SAFETY: valid env; `o` is a local reference owned by this frame.
        unsafe { f(self.0, o) }
    }

    pub fn is_assignable_from(self, sub: jclass, sup: jclass) -> bool {
        let f = jfn!(
            self,
            slot::IS_ASSIGNABLE_FROM,
            fn(jclass, jclass) -> jboolean
        );
        // SAFETY: valid env; both are live class references.
        unsafe { f(self.0, sub, sup) != 0 }
    }

    pub fn get_object_class(self, o: jobject) -> jclass {
        let f = jfn!(self, slot::GET_OBJECT_CLASS, fn(jobject) -> jclass);
        // SAFETY: valid env; `o` is a live non-null reference (callers check).
        unsafe { f(self.0, o) }
    }

    pub fn get_method_id(self, c: jclass, name: &str, sig: &str) -> Option<jmethodID> {
        let (n, s) = (CString::new(name).ok()?, CString::new(sig).ok()?);
        let f = jfn!(
            self,
            slot::GET_METHOD_ID,
            fn(jclass, *const c_char, *const c_char) -> jmethodID
        );
        // SAFETY: valid env; live class; NUL-terminated strings alive for the call.
        let r = unsafe { f(self.0, c, n.as_ptr(), s.as_ptr()) };
        if self.check_clear() || r.is_null() {
            None
        } else {
            Some(r)
        }
    }

    pub fn get_static_method_id(self, c: jclass, name: &str, sig: &str) -> Option<jmethodID> {
        let (n, s) = (CString::new(name).ok()?, CString::new(sig).ok()?);
        let f = jfn!(
            self,
            slot::GET_STATIC_METHOD_ID,
            fn(jclass, *const c_char, *const c_char) -> jmethodID
        );
        // SAFETY: as get_method_id.
        let r = unsafe { f(self.0, c, n.as_ptr(), s.as_ptr()) };
        if self.check_clear() || r.is_null() {
            None
        } else {
            Some(r)
        }
    }

    pub fn get_field_id(self, c: jclass, name: &str, sig: &str) -> Option<jfieldID> {
        let (n, s) = (CString::new(name).ok()?, CString::new(sig).ok()?);
        let f = jfn!(
            self,
            slot::GET_FIELD_ID,
            fn(jclass, *const c_char, *const c_char) -> jfieldID
        );
        // SAFETY: as get_method_id.
        let r = unsafe { f(self.0, c, n.as_ptr(), s.as_ptr()) };
        if self.check_clear() || r.is_null() {
            None
        } else {
            Some(r)
        }
    }

    pub fn get_static_field_id(self, c: jclass, name: &str, sig: &str) -> Option<jfieldID> {
        let (n, s) = (CString::new(name).ok()?, CString::new(sig).ok()?);
        let f = jfn!(
            self,
            slot::GET_STATIC_FIELD_ID,
            fn(jclass, *const c_char, *const c_char) -> jfieldID
        );
        // SAFETY: as get_method_id.
        let r = unsafe { f(self.0, c, n.as_ptr(), s.as_ptr()) };
        if self.check_clear() || r.is_null() {
            None
        } else {
            Some(r)
        }
    }

    /// Reads an object field. `fid` must be an instance field of `o`'s class or a superclass.
    pub fn get_object_field(self, o: jobject, fid: jfieldID) -> jobject {
        let f = jfn!(
            self,
            slot::GET_OBJECT_FIELD,
            fn(jobject, jfieldID) -> jobject
        );
        // SAFETY: valid env; `o` live and non-null; callers pass a field id of o's class.
        unsafe { f(self.0, o, fid) }
    }

    pub fn get_long_field(self, o: jobject, fid: jfieldID) -> i64 {
        let f = jfn!(self, slot::GET_LONG_FIELD, fn(jobject, jfieldID) -> jlong);
        // SAFETY: valid env; `o` live and non-null; callers pass a long field id of o's class.
        unsafe { f(self.0, o, fid) }
    }

    pub fn set_static_boolean_field(self, c: jclass, fid: jfieldID, v: bool) {
        let f = jfn!(
            self,
            slot::SET_STATIC_BOOLEAN_FIELD,
            fn(jclass, jfieldID, jboolean) -> ()
        );
        // SAFETY: valid env; `fid` is a static boolean field of `c`.
        unsafe { f(self.0, c, fid, v as jboolean) }
    }

    pub fn set_static_int_field(self, c: jclass, fid: jfieldID, v: i32) {
        let f = jfn!(
            self,
            slot::SET_STATIC_INT_FIELD,
            fn(jclass, jfieldID, jint) -> ()
        );
        // SAFETY: valid env; `fid` is a static int field of `c`.
        unsafe { f(self.0, c, fid, v) }
    }

    /// Calls a `long` instance method without arguments; None if it threw.
    pub fn call_long_method0(self, o: jobject, m: jmethodID) -> Option<i64> {
        let f = jfn!(
            self,
            slot::CALL_LONG_METHOD_A,
            fn(jobject, jmethodID, *const jvalue) -> jlong
        );
        // SAFETY: valid env; `m` is a no-argument long method of o's class.
        let r = unsafe { f(self.0, o, m, std::ptr::null()) };
        if self.check_clear() {
            None
        } else {
            Some(r)
        }
    }

    /// Calls a static `int m(Object)`; None if it threw.
    pub fn call_static_int_method1(self, c: jclass, m: jmethodID, arg: jobject) -> Option<i32> {
        let f = jfn!(
            self,
            slot::CALL_STATIC_INT_METHOD_A,
            fn(jclass, jmethodID, *const jvalue) -> jint
        );
        let args = [jvalue { l: arg }];
        // SAFETY: valid env; `m` is a static (Object)int method of `c`; `args` outlives the call.
        let r = unsafe { f(self.0, c, m, args.as_ptr()) };
        if self.check_clear() {
            None
        } else {
            Some(r)
        }
    }

    /// `System.getProperty(key)`.
    pub fn system_property(self, key: &str) -> Option<String> {
        let sys = self.find_class("java/lang/System")?;
        let m = self.get_static_method_id(
            sys,
            "getProperty",
            "(Ljava/lang/String;)Ljava/lang/String;",
        )?;
        let k = CString::new(key).ok()?;
        let new_str = jfn!(self, slot::NEW_STRING_UTF, fn(*const c_char) -> jstring);
        // SAFETY: valid env; NUL-terminated string alive for the call.
        let jkey = unsafe { new_str(self.0, k.as_ptr()) };
        if self.check_clear() || jkey.is_null() {
            return None;
        }
        let call = jfn!(
            self,
            slot::CALL_STATIC_OBJECT_METHOD_A,
            fn(jclass, jmethodID, *const jvalue) -> jobject
        );
        let args = [jvalue { l: jkey }];
        // SAFETY: `m` is the static (String)String method of `sys`; args outlive the call.
        let v = unsafe { call(self.0, sys, m, args.as_ptr()) };
        let out = if self.check_clear() {
            None
        } else {
            self.string(v)
        };
        self.delete_local_ref(v);
        self.delete_local_ref(jkey);
        self.delete_local_ref(sys);
        out
    }

    /// Copies a Java string (modified UTF-8; fine for names).
    pub fn string(self, s: jstring) -> Option<String> {
        if s.is_null() {
            return None;
        }
        let get = jfn!(
            self,
            slot::GET_STRING_UTF_CHARS,
            fn(jstring, *mut jboolean) -> *const c_char
        );
        // SAFETY: valid env; `s` is a live java.lang.String.
        let p = unsafe { get(self.0, s, std::ptr::null_mut()) };
        if p.is_null() {
            self.check_clear();
            return None;
        }
        // SAFETY: p is a NUL-terminated buffer owned by the JVM until released below.
        let out = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        let rel = jfn!(
            self,
            slot::RELEASE_STRING_UTF_CHARS,
            fn(jstring, *const c_char) -> ()
        );
        // SAFETY: releases the buffer obtained above exactly once.
        unsafe { rel(self.0, s, p) };
        Some(out)
    }
}

/// Gets the JVMTI environment from the JavaVM.
///
/// # Safety
/// `vm` must be the JavaVM passed to Agent_OnLoad.
pub unsafe fn get_env(vm: *mut JavaVM, version: jint) -> Option<*mut c_void> {
    if vm.is_null() {
        return None;
    }
    let table = &*(*vm).functions;
    let f = std::mem::transmute::<
        *const c_void,
        unsafe extern "system" fn(*mut JavaVM, *mut *mut c_void, jint) -> jint,
    >(table[slot::VM_GET_ENV]);
    let mut env: *mut c_void = std::ptr::null_mut();
    if f(vm, &mut env, version) == JNI_OK && !env.is_null() {
        Some(env)
    } else {
        None
    }
}

// ---------------------------------------------------------------- locks (docs/locks.md)

impl Jni {
    /// Length of the array `a` (a live, non-null array reference).
    pub fn get_array_length(self, a: jobject) -> jint {
        let f = jfn!(self, 171, fn(jobject) -> jint);
        // SAFETY: valid env (type invariant); slot 171 is GetArrayLength; callers pass
        // a live array reference.
        unsafe { f(self.0, a) }
    }

    pub fn is_same_object(self, a: jobject, b: jobject) -> bool {
        let f = jfn!(self, 24, fn(jobject, jobject) -> jboolean);
        // SAFETY: valid env (type invariant); slot 24 is IsSameObject; live refs or null.
        unsafe { f(self.0, a, b) != 0 }
    }
}

/// `JNINativeMethod` of RegisterNatives.
#[repr(C)]
pub struct NativeMethod {
    pub name: *const c_char,
    pub signature: *const c_char,
    pub fn_ptr: *mut c_void,
}

impl Jni {
    /// RegisterNatives(class, one method); true on success.
    pub fn register_native(self, c: jclass, name: &str, sig: &str, f_ptr: *mut c_void) -> bool {
        let (Ok(n), Ok(s)) = (CString::new(name), CString::new(sig)) else {
            return false;
        };
        let m = NativeMethod {
            name: n.as_ptr(),
            signature: s.as_ptr(),
            fn_ptr: f_ptr,
        };
        let f = jfn!(self, 215, fn(jclass, *const NativeMethod, jint) -> jint);
        // SAFETY: slot 215 is RegisterNatives; `m` and its strings live for the call.
        let r = unsafe { f(self.0, c, &m, 1) };
        !self.check_clear() && r == 0
    }
}

// ---- fork-join batches (crates/agent/src/forkjoin.rs) ----
impl Jni {
    /// Calls a static `void m()`; false if it threw (the exception is cleared).
    pub fn call_static_void_method0(self, c: jclass, m: jmethodID) -> bool {
        let f = jfn!(self, 143, fn(jclass, jmethodID, *const jvalue) -> ());
        // SAFETY: valid env; `m` is a static no-argument void method of `c`.
        unsafe { f(self.0, c, m, std::ptr::null()) };
        !self.check_clear()
    }

    /// Lets `f` read the first `n` elements of a `long[]` as little-endian bytes, in
    /// place (Get/ReleasePrimitiveArrayCritical: no copy; `f` must be short and must
    /// not call JNI or wait for Java threads, the GC is held off meanwhile). None if
    /// the array is shorter than `n` or cannot be pinned.
    pub fn with_long_array_bytes<R>(
        self,
        a: jobject,
        n: usize,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        let len = jfn!(self, 171, fn(jobject) -> jint);
        // SAFETY: valid env; `a` is a live array reference (FjProbe passes its long[]).
        let have = unsafe { len(self.0, a) };
        if self.check_clear() || have < 0 || (have as usize) < n {
            return None;
        }
        let get = jfn!(self, 222, fn(jobject, *mut jboolean) -> *mut c_void);
        let release = jfn!(self, 223, fn(jobject, *mut c_void, jint) -> ());
        // SAFETY: valid env and array; the returned pointer stays valid until released.
        let p = unsafe { get(self.0, a, std::ptr::null_mut()) };
        if p.is_null() {
            self.check_clear();
            return None;
        }
        let r = if cfg!(target_endian = "little") {
            // SAFETY: `p` points to at least `n` jlongs (length checked above), pinned
            // until the release below; read as n * 8 bytes, native order = little-endian.
            f(unsafe { std::slice::from_raw_parts(p as *const u8, n * 8) })
        } else {
            // SAFETY: as above, read as `n` aligned jlongs.
            let words = unsafe { std::slice::from_raw_parts(p as *const jlong, n) };
            let le: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            f(&le)
        };
        // SAFETY: `p` came from GetPrimitiveArrayCritical on `a`; JNI_ABORT (2): nothing to copy back.
        unsafe { release(self.0, a, p, 2) };
        Some(r)
    }
}

// ---------------------------------------------------------------- sampling (docs/sampling.md)

impl Jni {
    /// PushLocalFrame: room for `capacity` local references (-Xcheck:jni warns
    /// when a JVMTI call returns more than the current frame's capacity).
    pub fn push_local_frame(self, capacity: jint) -> bool {
        let f = jfn!(self, 19, fn(jint) -> jint);
        // SAFETY: slot 19 is PushLocalFrame; valid env (type invariant).
        unsafe { f(self.0, capacity) == 0 }
    }

    /// PopLocalFrame: frees every local reference of the frame.
    pub fn pop_local_frame(self) {
        let f = jfn!(self, 20, fn(jobject) -> jobject);
        // SAFETY: slot 20 is PopLocalFrame; called once per successful push.
        unsafe { f(self.0, std::ptr::null_mut()) };
    }
}

// ---- attach (crates/agent/src/attach.rs) ----
impl Jni {
    pub fn delete_global_ref(self, o: jobject) {
        if o.is_null() {
            return;
        }
        let f = jfn!(self, 22, fn(jobject) -> ());
        // SAFETY: slot 22 is DeleteGlobalRef; `o` is a global reference we made.
        unsafe { f(self.0, o) }
    }

    /// DefineClass in the bootstrap loader (null loader); the class is not initialized.
    pub fn define_boot_class(self, name: &str, bytes: &[u8]) -> Option<jclass> {
        let n = CString::new(name).ok()?;
        let f = jfn!(
            self,
            5,
            fn(*const c_char, jobject, *const u8, jint) -> jclass
        );
        // SAFETY: slot 5 is DefineClass; name and bytes live for the call.
        let r = unsafe {
            f(
                self.0,
                n.as_ptr(),
                std::ptr::null_mut(),
                bytes.as_ptr(),
                bytes.len() as jint,
            )
        };
        if self.check_clear() || r.is_null() {
            None
        } else {
            Some(r)
        }
    }

    /// The superclass (a local reference; null for Object and interfaces).
    pub fn get_superclass(self, c: jclass) -> jclass {
        let f = jfn!(self, 10, fn(jclass) -> jclass);
        // SAFETY: slot 10 is GetSuperclass; `c` is a live class reference.
        unsafe { f(self.0, c) }
    }

    /// RegisterNatives of several methods of `c`; true on success.
    pub fn register_natives(self, c: jclass, methods: &[(&str, &str, *mut c_void)]) -> bool {
        let strings: Vec<(CString, CString)> = methods
            .iter()
            .filter_map(|(n, s, _)| Some((CString::new(*n).ok()?, CString::new(*s).ok()?)))
            .collect();
        if strings.len() != methods.len() {
            return false;
        }
        let table: Vec<NativeMethod> = strings
            .iter()
            .zip(methods)
            .map(|((n, s), (_, _, p))| NativeMethod {
                name: n.as_ptr(),
                signature: s.as_ptr(),
                fn_ptr: *p,
            })
            .collect();
        let f = jfn!(self, 215, fn(jclass, *const NativeMethod, jint) -> jint);
        // SAFETY: slot 215 is RegisterNatives; the table and its strings live for the call.
        let r = unsafe { f(self.0, c, table.as_ptr(), table.len() as jint) };
        !self.check_clear() && r == 0
    }
}
