//! A byte-level class-file patcher for weft's JVMTI agent (used inside ClassFileLoadHook).
//!
//! It copies the original bytes and edits only what it must: it appends constant-pool entries and
//! rewrites the Code attributes of the instrumented methods in place (entry probe, exit probe before
//! each return and in a catch-all handler that rethrows; the constructor probe before each `return`
//! of `<init>`). Names, modifiers, members and every other attribute stay as they were, so
//! [`instrument`] serves both first load and the retransformation of loaded classes. It is not a
//! general class-file model: nothing it does not edit is decoded. Any class it cannot handle yields
//! an `Err`; the caller then keeps the original bytes. See `docs/rewriter.md` for the exact shapes.

#![forbid(unsafe_code)]

mod annotations;
mod code;
mod cpool;
mod descriptor;
mod error;
mod monitors;
mod mutf8;
mod parse;
mod reader;
mod task_calls;
mod wrap;

pub use error::{Error, ErrorKind};
pub use monitors::{instrument_monitors, MONITOR_PROBE_CLASS};
pub use task_calls::redirect_runnable_runs;

use cpool::{Appender, ConstantPool};
use error::Result;
use parse::*;
use reader::{Out, Reader};

/// The probe class the generated code calls.
pub const PROBE_CLASS: &str = "weft/Probe";
/// `static void enter(int probe, Object self, Object arg0)`.
pub const ENTER_DESC: &str = "(ILjava/lang/Object;Ljava/lang/Object;)V";
/// `static void exit(int probe, Object self)`.
pub const EXIT_DESC: &str = "(ILjava/lang/Object;)V";
/// `static void exitInt(int result, int probe, Object self)` ([`WrapRequest::pass_result`]).
pub const EXIT_INT_DESC: &str = "(IILjava/lang/Object;)V";
/// `static void exitLong(long result, int probe, Object self)` ([`WrapRequest::pass_result`]).
pub const EXIT_LONG_DESC: &str = "(JILjava/lang/Object;)V";
/// `static void created(int probe, Object self)`.
pub const CREATED_DESC: &str = "(ILjava/lang/Object;)V";

/// The `weft.Probe` methods a probe's entry and exit call (descriptors [`ENTER_DESC`],
/// [`EXIT_DESC`]), by its kind (bits 24..27 of its id): one entry point per kind, each
/// the size of one case of the generic `enter`/`exit` dispatchers, which C2 otherwise
/// inlined whole into every instrumented method (at 100,000 virtual threads, 9 of the
/// 37 KB of bytecode C2 inlined; BENCHMARKS.md, session 27). Kinds without their own
/// go through the dispatchers.
pub fn probe_entry_names(probe_id: i32) -> (&'static [u8], &'static [u8]) {
    match (probe_id >> 24) & 0xF {
        1 => (b"execEnter", b"execExit"),
        2 => (b"plumbEnter", b"plumbExit"),
        3 => (b"submitEnter", b"submitExit"),
        6 => (b"joinEnter", b"joinExit"),
        7 => (b"lockEnter", b"lockExit"),
        9 => (b"loopEnter", b"loopExit"),
        _ => (b"enter", b"exit"),
    }
}

/// What a class declares, as read from its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassSummary {
    /// Internal form, `a/b/C`.
    pub name: String,
    pub super_name: Option<String>,
    pub interfaces: Vec<String>,
    pub access: u16,
    pub major: u16,
    pub methods: Vec<MethodSummary>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodSummary {
    pub name: String,
    pub descriptor: String,
    pub access: u16,
}

/// Read a class's name, supertypes and methods.
pub fn summarize(class_bytes: &[u8]) -> std::result::Result<ClassSummary, Error> {
    let cf = ClassFile::parse(class_bytes)?;
    let name = mutf8::decode(cf.cp.class_name(cf.this_class)?)?;
    let super_name = if cf.super_class == 0 {
        None
    } else {
        Some(mutf8::decode(cf.cp.class_name(cf.super_class)?)?)
    };
    let interfaces = cf
        .interfaces
        .iter()
        .map(|&i| mutf8::decode(cf.cp.class_name(i)?))
        .collect::<Result<Vec<_>>>()?;
    let methods = cf
        .methods
        .iter()
        .map(|m| {
            Ok(MethodSummary {
                name: mutf8::decode(m.name)?,
                descriptor: mutf8::decode(m.desc)?,
                access: m.access,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ClassSummary {
        name,
        super_name,
        interfaces,
        access: cf.access,
        major: cf.major,
        methods,
    })
}

/// Instrument one method in place (matched by exact name and descriptor): its body is wrapped in
/// the entry and exit probes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrapRequest {
    pub name: String,
    pub descriptor: String,
    pub probe_id: i32,
    /// Pass the first reference argument to `Probe.enter` (null if the method has none).
    pub pass_arg0: bool,
    /// Call these static methods instead of `Probe.enter/exit` (None: the default probes).
    pub hooks: Option<Hooks>,
    /// With the default probes, the exit probe of a method returning `int` or `long` also
    /// gets its result: `Probe.exitInt(result, P, this)` / `Probe.exitLong` before every
    /// return, with 0 in the catch-all handler (a lock slow path's result says whether it
    /// acquired). Other return types: `Probe.exit` as without it.
    pub pass_result: bool,
}

/// Custom probe methods of one instrumented method. The entry hook gets `this` (null in a
/// static method) and, with `pass_arg0`, the first reference argument (null if none); the exit
/// hook gets `this`, before every return and in the catch-all handler. No probe id is passed.
/// Descriptors must match: `(Ljava/lang/Object;)V`, `(Ljava/lang/Object;Ljava/lang/Object;)V`
/// (or narrower parameter types the verifier accepts for `this` and the argument).
/// Without an exit hook the body gets no exception handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hooks {
    /// Internal name of the class declaring the hooks, e.g. `weft/FjProbe`.
    pub class: String,
    /// (name, descriptor) of the entry hook.
    pub enter: Option<(String, String)>,
    /// (name, descriptor) of the exit hook.
    pub exit: Option<(String, String)>,
    /// With `pass_arg0`: the entry hook gets the *last* reference argument instead of the
    /// first (`ThreadPoolExecutor.beforeExecute(Thread, Runnable)`'s task).
    pub last_ref_arg: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instrumentation {
    pub wraps: Vec<WrapRequest>,
    /// Call `Probe.created(P, this)` before every `return` of every constructor.
    pub constructor_probe: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instrumented {
    /// The transformed class (a copy of the input if nothing applied).
    pub bytes: Vec<u8>,
    /// (name, descriptor) of each method actually instrumented, in request order.
    pub wrapped: Vec<(String, String)>,
    /// How many constructors got the exit probe.
    pub constructors: usize,
}

impl Instrumented {
    /// Whether anything was changed.
    pub fn changed(&self) -> bool {
        !self.wrapped.is_empty() || self.constructors > 0
    }
}

/// Why a requested method is not instrumented (None: it can be).
fn skip_reason(
    cf: &ClassFile<'_>,
    m: &Method<'_>,
    caller_sensitive: Option<u16>,
) -> Result<Option<&'static str>> {
    if m.name.first() == Some(&b'<') {
        return Ok(Some("constructor or class initializer"));
    }
    if m.access & (ACC_ABSTRACT | ACC_NATIVE) != 0 {
        return Ok(Some("abstract or native"));
    }
    if m.access & ACC_BRIDGE != 0 {
        return Ok(Some("bridge"));
    }
    if cf.access & ACC_INTERFACE != 0 && cf.major < 52 {
        return Ok(Some("interface method in a class file older than 52"));
    }
    if !m.attrs.iter().any(|a| a.name == b"Code") {
        return Ok(Some("no Code attribute"));
    }
    if let Some(cs) = caller_sensitive {
        for a in &m.attrs {
            if a.name == b"RuntimeVisibleAnnotations"
                && annotations::has_annotation(&cf.data[a.body..a.end()], cs)?
            {
                return Ok(Some("@CallerSensitive"));
            }
        }
    }
    Ok(None)
}

struct Plan<'a> {
    method: usize,
    req: &'a WrapRequest,
    desc: descriptor::MethodDesc<'a>,
}

/// Instrument the requested methods in place and/or add the constructor probe.
///
/// Only Code attributes change (and constant-pool entries are appended): no method or field is
/// added, renamed or removed, and no modifier or other attribute changes, so the class keeps its
/// shape (reflection, default serialVersionUID, stack traces, StackWalker) and the result is also
/// a valid RetransformClasses redefinition of an already loaded class. Requested methods that do
/// not exist or cannot be instrumented (static initializer, constructor, abstract, native, bridge,
/// @CallerSensitive, interface methods below class version 52, a body that already calls the
/// requested probes) are skipped; `wrapped` lists the rest.
pub fn instrument(
    class_bytes: &[u8],
    what: &Instrumentation,
) -> std::result::Result<Instrumented, Error> {
    let cf = ClassFile::parse(class_bytes)?;
    let data = cf.data;
    let caller_sensitive = cf.cp.find_utf8(b"Ljdk/internal/reflect/CallerSensitive;");

    let mut plans: Vec<Plan<'_>> = Vec::new();
    for req in &what.wraps {
        let name = mutf8::encode(&req.name);
        let desc = mutf8::encode(&req.descriptor);
        let Some(mi) = cf
            .methods
            .iter()
            .position(|m| m.name == name && m.desc == desc)
        else {
            continue;
        };
        if plans.iter().any(|p| p.method == mi) {
            continue;
        }
        let m = &cf.methods[mi];
        let ctx = |e: Error| e.context(format!("method {}{}", req.name, req.descriptor));
        if skip_reason(&cf, m, caller_sensitive)
            .map_err(ctx)?
            .is_some()
        {
            continue;
        }
        if already_instrumented(&cf, m, req).map_err(ctx)? {
            continue;
        }
        let md = descriptor::parse_method(m.desc).map_err(ctx)?;
        plans.push(Plan {
            method: mi,
            req,
            desc: md,
        });
    }
    let ctors: Vec<usize> = match what.constructor_probe {
        Some(_) => (0..cf.methods.len())
            .filter(|&i| cf.methods[i].name == b"<init>")
            .collect(),
        None => Vec::new(),
    };
    if plans.is_empty() && ctors.is_empty() {
        return Ok(Instrumented {
            bytes: class_bytes.to_vec(),
            wrapped: Vec::new(),
            constructors: 0,
        });
    }

    let mut app = Appender::new(cf.cp.count());
    // (method, Code attribute index, new attribute bytes, is a constructor)
    let mut new_code: Vec<(usize, usize, Vec<u8>, bool)> = Vec::new();

    // Constructors: the probe before every `return`.
    if let Some(p) = what.constructor_probe {
        let probe_class = app.class(PROBE_CLASS.as_bytes())?;
        let created = app.method_ref(probe_class, b"created", CREATED_DESC.as_bytes(), false)?;
        let mut insert = wrap::push_int(p, &mut app);
        insert.push(0x2a); // aload_0
        insert.push(0xb8);
        insert.u2(created);
        let edit = code::BodyEdit {
            prologue: &[],
            before_return: &insert,
            all_returns: false,
            handler: None,
            reads_local0: true,
            extra_stack: 3,
            monitor_enter: &[],
            monitor_exit: &[],
            monitor_enter_tail: 0,
            monitor_exit_tail: 0,
        };
        for &mi in &ctors {
            let m = &cf.methods[mi];
            if let Some(ai) = m.attrs.iter().position(|a| a.name == b"Code") {
                let ctx = |e: Error| {
                    e.context(format!("constructor {}", String::from_utf8_lossy(m.desc)))
                };
                if let Some(bytes) =
                    code::rewrite_body(data, &m.attrs[ai], &cf.cp, &edit).map_err(ctx)?
                {
                    new_code.push((mi, ai, bytes, true));
                }
            }
        }
    }

    // Methods: entry probe, exit probe before every return and in a catch-all handler.
    if !plans.is_empty() {
        let throwable = app.class(b"java/lang/Throwable")?;
        let stack_map_name = if cf.major >= 50 {
            Some(match cf.cp.find_utf8(b"StackMapTable") {
                Some(i) => i,
                None => app.utf8(b"StackMapTable")?,
            })
        } else {
            None
        };
        for p in &plans {
            let m = &cf.methods[p.method];
            let ctx = |e: Error| e.context(format!("method {}{}", p.req.name, p.req.descriptor));
            let calls = match &p.req.hooks {
                Some(h) => {
                    let c = app.class(&mutf8::encode(&h.class))?;
                    let mut r = |x: &Option<(String, String)>| -> Result<Option<u16>> {
                        Ok(match x {
                            Some((n, d)) => Some(app.method_ref(
                                c,
                                &mutf8::encode(n),
                                &mutf8::encode(d),
                                false,
                            )?),
                            None => None,
                        })
                    };
                    wrap::Calls {
                        push_id: Vec::new(),
                        enter: r(&h.enter)?,
                        exit: r(&h.exit)?,
                        enter_takes_arg: p.req.pass_arg0,
                        pass_arg0: p.req.pass_arg0,
                        last_ref_arg: h.last_ref_arg,
                        result: None,
                    }
                }
                None => {
                    let probe_class = app.class(PROBE_CLASS.as_bytes())?;
                    let result = if !p.req.pass_result {
                        None
                    } else if p.req.descriptor.ends_with(")I") {
                        Some(wrap::Result::Int)
                    } else if p.req.descriptor.ends_with(")J") {
                        Some(wrap::Result::Long)
                    } else {
                        None
                    };
                    let (enter, exit_by_kind) = probe_entry_names(p.req.probe_id);
                    let (exit, exit_desc) = match result {
                        None => (exit_by_kind, EXIT_DESC),
                        Some(wrap::Result::Int) => (&b"exitInt"[..], EXIT_INT_DESC),
                        Some(wrap::Result::Long) => (&b"exitLong"[..], EXIT_LONG_DESC),
                    };
                    wrap::Calls {
                        push_id: wrap::push_int(p.req.probe_id, &mut app),
                        enter: Some(app.method_ref(
                            probe_class,
                            enter,
                            ENTER_DESC.as_bytes(),
                            false,
                        )?),
                        exit: Some(app.method_ref(
                            probe_class,
                            exit,
                            exit_desc.as_bytes(),
                            false,
                        )?),
                        enter_takes_arg: true,
                        pass_arg0: p.req.pass_arg0,
                        last_ref_arg: false,
                        result,
                    }
                }
            };
            let is_static = m.access & ACC_STATIC != 0;
            let (prologue, exit_seq, handler_seq) = wrap::sequences(&calls, &p.desc, is_static);
            let handler = calls.exit.map(|_| code::Handler {
                code: &handler_seq,
                this_class: (!is_static).then_some(cf.this_class),
                throwable,
                stack_map_name,
            });
            let edit = code::BodyEdit {
                prologue: &prologue,
                before_return: &exit_seq,
                all_returns: true,
                reads_local0: !is_static && calls.exit.is_some(),
                // The entry call pushes up to 3 on an empty stack, the exit call 3 above a return
                // value, the handler 3 above the Throwable; with the result, its copy (a long's
                // two slots) below the exit call's 2.
                extra_stack: 3
                    + u16::from(handler.is_some())
                    + if calls.result.is_some() { 2 } else { 0 },
                handler,
                monitor_enter: &[],
                monitor_exit: &[],
                monitor_enter_tail: 0,
                monitor_exit_tail: 0,
            };
            let ai = m
                .attrs
                .iter()
                .position(|a| a.name == b"Code")
                .ok_or_else(|| Error::malformed("no Code attribute"))?;
            if let Some(bytes) =
                code::rewrite_body(data, &m.attrs[ai], &cf.cp, &edit).map_err(ctx)?
            {
                new_code.push((p.method, ai, bytes, false));
            }
        }
    }

    let wrapped = plans
        .iter()
        .filter(|p| new_code.iter().any(|c| c.0 == p.method))
        .map(|p| (p.req.name.clone(), p.req.descriptor.clone()))
        .collect();
    let constructors = new_code.iter().filter(|c| c.3).count();
    let code: Vec<(usize, usize, Vec<u8>)> =
        new_code.into_iter().map(|(m, a, b, _)| (m, a, b)).collect();
    Ok(Instrumented {
        bytes: assemble(&cf, &app, &code)?,
        wrapped,
        constructors,
    })
}

/// The original bytes with the appended constant-pool entries and the new Code attributes
/// (method index, Code attribute index, new attribute bytes).
fn assemble(
    cf: &ClassFile<'_>,
    app: &Appender,
    new_code: &[(usize, usize, Vec<u8>)],
) -> Result<Vec<u8>> {
    let data = cf.data;
    let cp_count = app.count()?;
    let grown: usize = new_code.iter().map(|c| c.2.len()).sum();
    let mut out: Vec<u8> = Vec::with_capacity(data.len() + app.bytes.len() + grown);
    out.extend_from_slice(&data[..8]);
    out.u2(cp_count);
    out.extend_from_slice(&data[10..cf.cp_end]);
    out.extend_from_slice(&app.bytes);
    out.extend_from_slice(&data[cf.cp_end..cf.methods_count_at + 2]);
    for (mi, m) in cf.methods.iter().enumerate() {
        if let Some((_, ai, bytes)) = new_code.iter().find(|c| c.0 == mi) {
            let a = &m.attrs[*ai];
            out.extend_from_slice(&data[m.start..a.start]);
            out.extend_from_slice(bytes);
            out.extend_from_slice(&data[a.end()..m.end]);
        } else {
            out.extend_from_slice(&data[m.start..m.end]);
        }
    }
    out.extend_from_slice(&data[cf.methods_end..]);
    Ok(out)
}

/// Whether the body of `m` already calls the probes `req` asks for (the class was instrumented
/// before): instrumenting is then a no-op for that method.
fn already_instrumented(cf: &ClassFile<'_>, m: &Method<'_>, req: &WrapRequest) -> Result<bool> {
    let Some(code) = m.attrs.iter().find(|a| a.name == b"Code") else {
        return Ok(false);
    };
    type NameAndDesc = (Vec<u8>, Vec<u8>);
    let (class, names): (Vec<u8>, Vec<NameAndDesc>) = match &req.hooks {
        Some(h) => (
            mutf8::encode(&h.class),
            [&h.enter, &h.exit]
                .into_iter()
                .flatten()
                .map(|(n, d)| (mutf8::encode(n), mutf8::encode(d)))
                .collect(),
        ),
        None => {
            let (enter, exit) = probe_entry_names(req.probe_id);
            (
                PROBE_CLASS.as_bytes().to_vec(),
                vec![
                    (b"enter".to_vec(), ENTER_DESC.as_bytes().to_vec()),
                    (b"exit".to_vec(), EXIT_DESC.as_bytes().to_vec()),
                    (enter.to_vec(), ENTER_DESC.as_bytes().to_vec()),
                    (exit.to_vec(), EXIT_DESC.as_bytes().to_vec()),
                ],
            )
        }
    };
    code::invokes_static(cf.data, code, &cf.cp, |c, n, d| {
        c == class.as_slice() && names.iter().any(|(nn, dd)| nn == n && dd == d)
    })
}

/// A field to add to a class (see [`add_fields`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequest {
    pub access: u16,
    pub name: String,
    pub descriptor: String,
}

/// Append fields (no attributes: they start as 0/null) to a class. A field whose name already
/// exists is skipped (the class was already patched). Only valid at first load (RetransformClasses
/// cannot add fields). Returns the new bytes and how many fields were added.
pub fn add_fields(
    class_bytes: &[u8],
    fields: &[FieldRequest],
) -> std::result::Result<(Vec<u8>, usize), Error> {
    let cf = ClassFile::parse(class_bytes)?;
    let data = cf.data;
    let at = cf.fields_count_at;
    let nf = u16::from_be_bytes([data[at], data[at + 1]]);
    let mut existing: Vec<&[u8]> = Vec::new();
    let mut r = Reader::new(data, at + 2);
    for _ in 0..nf {
        r.skip(2)?;
        let name = r.u2()?;
        existing.push(cf.cp.utf8(name)?);
        r.skip(2)?;
        let n = r.u2()?;
        for _ in 0..n {
            r.skip(2)?;
            let len = r.u4()?;
            r.skip(len as usize)?;
        }
    }
    let mut app = Appender::new(cf.cp.count());
    let mut infos: Vec<u8> = Vec::new();
    let mut added = 0usize;
    for f in fields {
        let name = mutf8::encode(&f.name);
        if existing.contains(&name.as_slice()) {
            continue;
        }
        let as_param = format!("({})V", f.descriptor);
        let md = descriptor::parse_method(as_param.as_bytes())
            .map_err(|e| e.context(format!("field {}", f.name)))?;
        if md.params.len() != 1 {
            return Err(Error::malformed(format!(
                "field {}: bad descriptor {}",
                f.name, f.descriptor
            )));
        }
        let ni = app.utf8(&name)?;
        let di = app.utf8(&mutf8::encode(&f.descriptor))?;
        infos.u2(f.access);
        infos.u2(ni);
        infos.u2(di);
        infos.u2(0);
        added += 1;
    }
    if added == 0 {
        return Ok((class_bytes.to_vec(), 0));
    }
    let total = u16::try_from(nf as usize + added)
        .map_err(|_| Error::overflow("more than 65535 fields".to_string()))?;
    let cp_count = app.count()?;
    let mut out = Vec::with_capacity(data.len() + app.bytes.len() + infos.len());
    out.extend_from_slice(&data[..8]);
    out.u2(cp_count);
    out.extend_from_slice(&data[10..cf.cp_end]);
    out.extend_from_slice(&app.bytes);
    out.extend_from_slice(&data[cf.cp_end..at]);
    out.u2(total);
    out.extend_from_slice(&data[at + 2..cf.methods_count_at]);
    out.extend_from_slice(&infos);
    out.extend_from_slice(&data[cf.methods_count_at..]);
    Ok((out, added))
}

/// Resolve the Methodref/InterfaceMethodref at `index` of a raw constant pool (the entries in
/// class-file format, as JVMTI GetConstantPool returns them; `cp_count` = constant_pool_count).
/// Returns (class, name, descriptor), the class in internal form.
pub fn resolve_member_ref(
    cp_count: u16,
    cp_bytes: &[u8],
    index: u16,
) -> std::result::Result<(String, String, String), Error> {
    let mut r = Reader::new(cp_bytes, 0);
    let cp = ConstantPool::parse(&mut r, cp_bytes, cp_count)?;
    let (c, n, d) = cp.member_ref(index)?;
    Ok((mutf8::decode(c)?, mutf8::decode(n)?, mutf8::decode(d)?))
}

/// The raw constant pool of a class file: (constant_pool_count, the entries' bytes), the same shape
/// JVMTI GetConstantPool returns and [`resolve_member_ref`] takes.
pub fn constant_pool(class_bytes: &[u8]) -> std::result::Result<(u16, &[u8]), Error> {
    let cf = ClassFile::parse(class_bytes)?;
    Ok((cf.cp.count(), &class_bytes[10..cf.cp_end]))
}

#[cfg(test)]
mod tests;
