//! One weft agent per JVM.
//!
//! A JVM can be given the agent twice: `weft record -- weft record -- java …` (once
//! through `JAVA_TOOL_OPTIONS`, once as `-agentpath`), or two `-agentpath` options.
//! Two instances would share (same library) or fight over (two copies) the JVM's
//! hooks and record nothing sound, so the first one records and any later one says
//! so and stays off. The same library is loaded once, so a static tells; another
//! copy of the library (another path) is found among the loaded objects by its
//! exported flag.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Set by the instance that records; read by later copies of the library.
#[no_mangle]
pub static WEFT_AGENT_ACTIVE: AtomicBool = AtomicBool::new(false);

/// Where the recording instance writes (for the later instances' message).
static RECORDING_TO: Mutex<Option<String>> = Mutex::new(None);

/// Claims the JVM for this instance, or says which instance has it.
pub fn claim(out: &str) -> Result<(), String> {
    if WEFT_AGENT_ACTIVE.swap(true, Ordering::SeqCst) {
        let first = RECORDING_TO
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_default();
        return Err(format!("recording to {first}"));
    }
    if another_copy_active() {
        WEFT_AGENT_ACTIVE.store(false, Ordering::SeqCst);
        return Err("another copy of the agent library records".into());
    }
    *RECORDING_TO.lock().unwrap_or_else(|e| e.into_inner()) = Some(out.to_string());
    Ok(())
}

unsafe extern "C" fn collect_name(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut c_void,
) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid info and our Vec as data.
    unsafe {
        let names = &mut *(data as *mut Vec<CString>);
        let name = (*info).dlpi_name;
        if !name.is_null() && *name != 0 {
            names.push(CStr::from_ptr(name).to_owned());
        }
    }
    0
}

/// Whether another loaded copy of this library has claimed the JVM.
fn another_copy_active() -> bool {
    let mut names: Vec<CString> = Vec::new();
    // SAFETY: the callback only reads the loader's entries and appends to `names`.
    unsafe {
        libc::dl_iterate_phdr(
            Some(collect_name),
            &mut names as *mut Vec<CString> as *mut c_void,
        )
    };
    let ours = &WEFT_AGENT_ACTIVE as *const AtomicBool as *const c_void;
    names.iter().any(|name| {
        // SAFETY: RTLD_NOLOAD only returns objects already loaded (no code runs);
        // the flag is an AtomicBool exported by a weft agent library.
        unsafe {
            let h = libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
            if h.is_null() {
                return false;
            }
            let sym = libc::dlsym(h, c"WEFT_AGENT_ACTIVE".as_ptr() as *const c_char);
            let active = !sym.is_null()
                && !std::ptr::eq(sym as *const c_void, ours)
                && (*(sym as *const AtomicBool)).load(Ordering::SeqCst);
            libc::dlclose(h);
            active
        }
    })
}
