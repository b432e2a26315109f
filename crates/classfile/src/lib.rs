//! A byte-level class-file patcher for weft's JVMTI agent (used inside ClassFileLoadHook).
//!
//! It copies the original bytes and edits only what it must: it appends constant-pool entries,
//! renames wrapped methods to `m$weft`, appends wrapper methods, and (for the constructor probe)
//! rewrites the Code attribute of `<init>` methods. It is not a general class-file model: nothing
//! it does not edit is decoded. Any class it cannot handle yields an `Err`; the caller then keeps
//! the original bytes. See `docs/rewriter.md` for the exact shapes.

#![forbid(unsafe_code)]

mod annotations;
mod code;
mod cpool;
mod descriptor;
mod error;
mod mutf8;
mod parse;
mod reader;
mod wrap;

pub use error::{Error, ErrorKind};

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
/// `static void created(int probe, Object self)`.
pub const CREATED_DESC: &str = "(ILjava/lang/Object;)V";
/// Suffix appended to the name of a wrapped method.
pub const RENAME_SUFFIX: &str = "$weft";

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

/// Wrap one method (matched by exact name and descriptor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrapRequest {
    pub name: String,
    pub descriptor: String,
    pub probe_id: i32,
    /// Pass the first reference argument to `Probe.enter` (null if the method has none).
    pub pass_arg0: bool,
    /// Call these static methods instead of `Probe.enter/exit` (None: the default probes).
    pub hooks: Option<Hooks>,
}

/// Custom probe methods of one wrapper. The entry hook gets `this` (null in a static
/// method) and, with `pass_arg0`, the first reference argument (null if none); the exit
/// hook gets `this`, on the normal and the exceptional path. No probe id is passed.
/// Descriptors must match: `(Ljava/lang/Object;)V`, `(Ljava/lang/Object;Ljava/lang/Object;)V`
/// (or narrower parameter types the verifier accepts for `this` and the argument).
/// Without an exit hook the wrapper has no exception handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hooks {
    /// Internal name of the class declaring the hooks, e.g. `weft/FjProbe`.
    pub class: String,
    /// (name, descriptor) of the entry hook.
    pub enter: Option<(String, String)>,
    /// (name, descriptor) of the exit hook.
    pub exit: Option<(String, String)>,
    /// Mark the wrapper `@jdk.internal.vm.annotation.DontInline` (honoured by HotSpot
    /// for boot and platform classes only): callers then hold one call instead of the
    /// wrapper's probe calls inlined into them.
    pub dont_inline: bool,
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
    /// (name, descriptor) of each method actually wrapped, in request order.
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

/// Why a requested method is not wrapped (None: it can be).
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

/// Attributes that describe the method's interface: they go to the wrapper.
fn moves_to_wrapper(name: &[u8]) -> bool {
    matches!(
        name,
        b"Exceptions"
            | b"Signature"
            | b"RuntimeVisibleAnnotations"
            | b"RuntimeInvisibleAnnotations"
            | b"RuntimeVisibleParameterAnnotations"
            | b"RuntimeInvisibleParameterAnnotations"
            | b"AnnotationDefault"
    )
}

/// Attributes both methods carry (parameter names for reflection; deprecation).
fn copies_to_wrapper(name: &[u8]) -> bool {
    matches!(name, b"MethodParameters" | b"Deprecated")
}

struct Plan<'a> {
    method: usize,
    req: &'a WrapRequest,
    desc: descriptor::MethodDesc<'a>,
}

/// Wrap the requested methods and/or add the constructor probe. Requested methods that do not exist
/// or cannot be wrapped (static initializer, constructor, abstract, native, bridge, @CallerSensitive,
/// interface methods below class version 52, already wrapped) are skipped; `wrapped` lists the rest.
pub fn instrument(
    class_bytes: &[u8],
    what: &Instrumentation,
) -> std::result::Result<Instrumented, Error> {
    let cf = ClassFile::parse(class_bytes)?;
    let data = cf.data;
    let is_interface = cf.access & ACC_INTERFACE != 0;
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
        let mut renamed = name.clone();
        renamed.extend_from_slice(RENAME_SUFFIX.as_bytes());
        if cf
            .methods
            .iter()
            .any(|o| o.name == renamed && o.desc == desc)
        {
            continue; // already wrapped
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
    let probe_class = app.class(PROBE_CLASS.as_bytes())?;

    // Constructors: rewrite their Code attributes in place.
    let mut ctor_code: Vec<(usize, usize, Vec<u8>)> = Vec::new(); // (method, attr, new bytes)
    if let Some(p) = what.constructor_probe {
        let created = app.method_ref(probe_class, b"created", CREATED_DESC.as_bytes(), false)?;
        let mut insert = wrap::push_int(p, &mut app);
        insert.push(0x2a); // aload_0
        insert.push(0xb8);
        insert.u2(created);
        for &mi in &ctors {
            let m = &cf.methods[mi];
            if let Some(ai) = m.attrs.iter().position(|a| a.name == b"Code") {
                let ctx = |e: Error| {
                    e.context(format!("constructor {}", String::from_utf8_lossy(m.desc)))
                };
                if let Some(bytes) =
                    code::insert_before_returns(data, &m.attrs[ai], &cf.cp, &insert, 3)
                        .map_err(ctx)?
                {
                    ctor_code.push((mi, ai, bytes));
                }
            }
        }
    }

    // Wrappers.
    let mut renamed_names: Vec<u16> = Vec::with_capacity(plans.len());
    let mut wrappers: Vec<u8> = Vec::new();
    if !plans.is_empty() {
        let code_name = match cf.cp.find_utf8(b"Code") {
            Some(i) => i,
            None => app.utf8(b"Code")?,
        };
        let stack_map_name = if cf.major >= 50 {
            Some(match cf.cp.find_utf8(b"StackMapTable") {
                Some(i) => i,
                None => app.utf8(b"StackMapTable")?,
            })
        } else {
            None
        };
        let refs = wrap::Refs {
            this_class: cf.this_class,
            enter: app.method_ref(probe_class, b"enter", ENTER_DESC.as_bytes(), false)?,
            exit: app.method_ref(probe_class, b"exit", EXIT_DESC.as_bytes(), false)?,
            throwable: app.class(b"java/lang/Throwable")?,
            code_name,
            stack_map_name,
            hooks: None,
        };
        for p in &plans {
            let m = &cf.methods[p.method];
            let mut refs = refs.clone();
            if let Some(h) = &p.req.hooks {
                let c = app.class(&mutf8::encode(&h.class))?;
                let r = |app: &mut Appender, x: &Option<(String, String)>| -> Result<Option<u16>> {
                    Ok(match x {
                        Some((n, d)) => {
                            Some(app.method_ref(c, &mutf8::encode(n), &mutf8::encode(d), false)?)
                        }
                        None => None,
                    })
                };
                refs.hooks = Some(wrap::HookRefs {
                    enter: r(&mut app, &h.enter)?,
                    exit: r(&mut app, &h.exit)?,
                });
            }
            let mut renamed = m.name.to_vec();
            renamed.extend_from_slice(RENAME_SUFFIX.as_bytes());
            let new_name = app.utf8(&renamed)?;
            renamed_names.push(new_name);
            let target = app.method_ref(cf.this_class, &renamed, m.desc, is_interface)?;
            let is_static = m.access & ACC_STATIC != 0;
            let code = wrap::wrapper_code(
                &refs,
                &mut app,
                &p.desc,
                is_static,
                p.req.probe_id,
                p.req.pass_arg0,
                target,
            )?;
            wrappers.u2(m.access & !(ACC_SYNCHRONIZED | ACC_ABSTRACT | ACC_NATIVE));
            wrappers.u2(m.name_index);
            wrappers.u2(m.desc_index);
            let carried: Vec<&Attr<'_>> = m
                .attrs
                .iter()
                .filter(|a| moves_to_wrapper(a.name) || copies_to_wrapper(a.name))
                .collect();
            let dont_inline = p.req.hooks.as_ref().is_some_and(|h| h.dont_inline);
            let has_rva = carried
                .iter()
                .any(|a| a.name == b"RuntimeVisibleAnnotations");
            let extra = u16::from(dont_inline && !has_rva);
            wrappers.u2(1 + carried.len() as u16 + extra);
            wrappers.extend_from_slice(&code);
            // annotation: type_index u2, num_element_value_pairs u2 (0).
            let mut dont_inline_ann = Vec::new();
            if dont_inline {
                dont_inline_ann.u2(app.utf8(b"Ljdk/internal/vm/annotation/DontInline;")?);
                dont_inline_ann.u2(0);
            }
            for a in carried {
                if dont_inline && a.name == b"RuntimeVisibleAnnotations" {
                    // Append to the method's own annotations: one attribute of a kind.
                    let body = &data[a.body..a.end()];
                    let n = u16::from_be_bytes([body[0], body[1]]);
                    let len = u32::try_from(body.len() + dont_inline_ann.len())
                        .map_err(|_| Error::overflow("annotations".to_string()))?;
                    wrappers.extend_from_slice(&data[a.start..a.start + 2]);
                    wrappers.extend_from_slice(&len.to_be_bytes());
                    wrappers.u2(n.checked_add(1).ok_or_else(|| {
                        Error::overflow("65535 annotations on one method".to_string())
                    })?);
                    wrappers.extend_from_slice(&body[2..]);
                    wrappers.extend_from_slice(&dont_inline_ann);
                } else {
                    wrappers.extend_from_slice(&data[a.start..a.end()]);
                }
            }
            if extra == 1 {
                wrappers.u2(app.utf8(b"RuntimeVisibleAnnotations")?);
                wrappers.extend_from_slice(&(2 + dont_inline_ann.len() as u32).to_be_bytes());
                wrappers.u2(1);
                wrappers.extend_from_slice(&dont_inline_ann);
            }
        }
    }

    // Assemble.
    let cp_count = app.count()?;
    let methods_count = cf.methods.len() + plans.len();
    let methods_count = u16::try_from(methods_count)
        .map_err(|_| Error::overflow(format!("{methods_count} methods (limit 65535)")))?;
    let mut out: Vec<u8> =
        Vec::with_capacity(data.len() + app.bytes.len() + wrappers.len() + 64 * ctor_code.len());
    out.extend_from_slice(&data[..8]);
    out.u2(cp_count);
    out.extend_from_slice(&data[10..cf.cp_end]);
    out.extend_from_slice(&app.bytes);
    out.extend_from_slice(&data[cf.cp_end..cf.methods_count_at]);
    out.u2(methods_count);
    for (mi, m) in cf.methods.iter().enumerate() {
        if let Some(pi) = plans.iter().position(|p| p.method == mi) {
            let access = (m.access & !(ACC_PUBLIC | ACC_PROTECTED)) | ACC_PRIVATE | ACC_SYNTHETIC;
            out.u2(access);
            out.u2(renamed_names[pi]);
            out.u2(m.desc_index);
            let kept: Vec<&Attr<'_>> = m
                .attrs
                .iter()
                .filter(|a| !moves_to_wrapper(a.name))
                .collect();
            out.u2(kept.len() as u16);
            for a in kept {
                out.extend_from_slice(&data[a.start..a.end()]);
            }
        } else if let Some((_, ai, bytes)) = ctor_code.iter().find(|c| c.0 == mi) {
            let a = &m.attrs[*ai];
            out.extend_from_slice(&data[m.start..a.start]);
            out.extend_from_slice(bytes);
            out.extend_from_slice(&data[a.end()..m.end]);
        } else {
            out.extend_from_slice(&data[m.start..m.end]);
        }
    }
    out.extend_from_slice(&wrappers);
    out.extend_from_slice(&data[cf.methods_end..]);

    let wrapped = plans
        .iter()
        .map(|p| (p.req.name.clone(), p.req.descriptor.clone()))
        .collect();
    Ok(Instrumented {
        bytes: out,
        wrapped,
        constructors: ctor_code.len(),
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
