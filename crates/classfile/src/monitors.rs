//! The monitor probes of `weft record --lock-detail` (docs/whatif.md §Recording: lock detail):
//! every acquisition and release of a `synchronized` monitor calls `weft/MonitorProbe`.
//!
//! - `monitorenter` becomes `dup; invokestatic enter(Object); monitorenter; invokestatic entered()`:
//!   the request (before the JVM's enter, spinning or blocking) and the acquisition.
//! - `monitorexit` becomes `monitorexit; invokestatic exit()`: the release (after it, so a failing
//!   `monitorexit` calls nothing).
//!
//! The calls that run with the monitor held are inside javac's catch-any range that exits it,
//! and those after the release outside it (`BodyEdit::monitor_enter_tail`/`monitor_exit_tail`):
//! a call left outside while the monitor is held (`entered()` before the range's start), or
//! inside javac's self-covering handler range after its `monitorexit`, made HotSpot's JIT
//! compilers refuse the method ("cannot parse method", "exception handler covers itself"),
//! and it ran interpreted: a loop inside `synchronized` 4.5× slower under `--lock-detail`.
//! - A `synchronized` method (the JVM enters its monitor before the first instruction) calls
//!   `enter(this or its Class)` first thing in its body, with no `entered()` (its request time is
//!   not visible from inside), and `exit()` before each return and in a catch-all handler that
//!   rethrows: both while the monitor is still held.
//!
//! - `invokevirtual notify()` / `notifyAll()` (of any class: Object's are final) becomes
//!   `invokestatic weft/MonitorProbe.notify(Object)` / `notifyAll(Object)`, in place (same
//!   length and stack effect), which notifies and then records it (the waker of an `Object.wait`).
//!
//! Each replacement sits at the instruction's place in the same exception ranges, branch targets
//! and stack map frames (code.rs relocates them); the probes take only the object the instruction
//! already had, so the program's stack, locals and monitors are what they were.

use crate::code::{self, BodyEdit, Handler};
use crate::cpool::Appender;
use crate::error::Error;
use crate::parse::{ClassFile, ACC_ABSTRACT, ACC_NATIVE, ACC_STATIC};
use crate::{assemble, mutf8};

/// The class whose static methods the monitor probes call.
pub const MONITOR_PROBE_CLASS: &str = "weft/MonitorProbe";
const ACC_SYNCHRONIZED: u16 = 0x0020;
const DUP: u8 = 0x59;
const INVOKESTATIC: u8 = 0xb8;
const MONITORENTER: u8 = 0xc2;
const MONITOREXIT: u8 = 0xc3;

/// `Some(all)` when (name, descriptor) is `notify()` (false) or `notifyAll()` (true).
fn notify_call(name: &[u8], desc: &[u8]) -> Option<bool> {
    match (name, desc) {
        (b"notify", b"()V") => Some(false),
        (b"notifyAll", b"()V") => Some(true),
        _ => None,
    }
}

/// Instruments every `synchronized` block and method of a class with the monitor probes. Ok(None):
/// nothing to instrument (or already instrumented). An `Err` (a body the rewriter refuses): the
/// caller keeps the original bytes.
pub fn instrument_monitors(class_bytes: &[u8]) -> std::result::Result<Option<Vec<u8>>, Error> {
    let cf = ClassFile::parse(class_bytes)?;
    let data = cf.data;
    let mut app = Appender::new(cf.cp.count());
    let probe = mutf8::encode(MONITOR_PROBE_CLASS);
    let mut refs: Option<(u16, u16, u16, u16, Option<u16>)> = None;
    let mut notify_refs: Option<(u16, u16)> = None;
    let mut new_code: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    for (mi, m) in cf.methods.iter().enumerate() {
        if m.access & (ACC_ABSTRACT | ACC_NATIVE) != 0 {
            continue;
        }
        let Some(ai) = m.attrs.iter().position(|a| a.name == b"Code") else {
            continue;
        };
        let attr = &m.attrs[ai];
        let ctx = |e: Error| {
            e.context(format!(
                "method {}{}",
                String::from_utf8_lossy(m.name),
                String::from_utf8_lossy(m.desc)
            ))
        };
        let synchronized = m.access & ACC_SYNCHRONIZED != 0;
        let is_static = m.access & ACC_STATIC != 0;
        // `ldc` of a Class constant needs class version 49.
        if synchronized && is_static && cf.major < 49 {
            continue;
        }
        let notifies =
            code::invokes_virtual(data, attr, &cf.cp, |_, n, d| notify_call(n, d).is_some())
                .map_err(ctx)?;
        if !synchronized
            && !notifies
            && !code::contains_ops(data, attr, &[MONITORENTER, MONITOREXIT]).map_err(ctx)?
        {
            continue;
        }
        if code::invokes_static(data, attr, &cf.cp, |c, _, _| c == probe.as_slice()).map_err(ctx)? {
            continue; // instrumented before
        }
        let (enter, entered, exit, throwable, stack_map_name) = match refs {
            Some(r) => r,
            None => {
                let c = app.class(&probe)?;
                let r = (
                    app.method_ref(c, b"enter", b"(Ljava/lang/Object;)V", false)?,
                    app.method_ref(c, b"entered", b"()V", false)?,
                    app.method_ref(c, b"exit", b"()V", false)?,
                    app.class(b"java/lang/Throwable")?,
                    if cf.major >= 50 {
                        Some(match cf.cp.find_utf8(b"StackMapTable") {
                            Some(i) => i,
                            None => app.utf8(b"StackMapTable")?,
                        })
                    } else {
                        None
                    },
                );
                refs = Some(r);
                r
            }
        };
        let call = |r: u16| {
            let b = r.to_be_bytes();
            [INVOKESTATIC, b[0], b[1]]
        };
        let mut monitor_enter = vec![DUP];
        monitor_enter.extend_from_slice(&call(enter));
        monitor_enter.push(MONITORENTER);
        monitor_enter.extend_from_slice(&call(entered));
        let mut monitor_exit = vec![MONITOREXIT];
        monitor_exit.extend_from_slice(&call(exit));
        let exit_call = call(exit);
        let mut prologue = Vec::new();
        if synchronized {
            if is_static {
                let b = cf.this_class.to_be_bytes();
                prologue.extend_from_slice(&[0x13, b[0], b[1]]); // ldc_w this class
            } else {
                prologue.push(0x2a); // aload_0
            }
            prologue.extend_from_slice(&call(enter));
        }
        let edit = BodyEdit {
            prologue: &prologue,
            before_return: if synchronized { &exit_call } else { &[] },
            all_returns: true,
            // The handler's frame has no locals: its code reads none.
            handler: synchronized.then_some(Handler {
                code: &exit_call,
                this_class: None,
                throwable,
                stack_map_name,
            }),
            reads_local0: false,
            // The `dup` before `enter`, and the prologue's object on an empty stack.
            extra_stack: 1,
            monitor_enter: &monitor_enter,
            monitor_exit: &monitor_exit,
            // `invokestatic entered()`, after the `monitorenter`; `exit()` after the
            // `monitorexit`.
            monitor_enter_tail: 3,
            monitor_exit_tail: 3,
        };
        let mut bytes = code::rewrite_body(data, attr, &cf.cp, &edit).map_err(ctx)?;
        if notifies {
            let (notify, notify_all) = match notify_refs {
                Some(r) => r,
                None => {
                    let c = app.class(&probe)?;
                    let r = (
                        app.method_ref(c, b"notify", b"(Ljava/lang/Object;)V", false)?,
                        app.method_ref(c, b"notifyAll", b"(Ljava/lang/Object;)V", false)?,
                    );
                    notify_refs = Some(r);
                    r
                }
            };
            let mut b = bytes.unwrap_or_else(|| data[attr.start..attr.end()].to_vec());
            code::redirect_calls(&mut b, code::INVOKEVIRTUAL, |i| {
                let (_, n, d) = cf.cp.member_ref(i).ok()?;
                notify_call(n, d).map(|all| if all { notify_all } else { notify })
            })
            .map_err(ctx)?;
            bytes = Some(b);
        }
        if let Some(bytes) = bytes {
            new_code.push((mi, ai, bytes));
        }
    }
    if new_code.is_empty() {
        return Ok(None);
    }
    Ok(Some(assemble(&cf, &app, &new_code)?))
}
