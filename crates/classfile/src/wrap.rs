//! The wrapper method: `m` calls the entry probe, invokes the renamed original `m$weft` inside a
//! catch-all handler, and calls the exit probe on both the normal and the exceptional path.

use crate::cpool::Appender;
use crate::descriptor::{Kind, MethodDesc};
use crate::error::Result;
use crate::reader::Out;

/// Constant-pool indexes the wrapper code refers to.
#[derive(Clone)]
pub(crate) struct Refs {
    pub this_class: u16,
    pub enter: u16,
    pub exit: u16,
    pub throwable: u16,
    pub code_name: u16,
    /// Some for class files with major >= 50.
    pub stack_map_name: Option<u16>,
    /// Custom hooks (instead of `enter`/`exit`).
    pub hooks: Option<HookRefs>,
}

/// Methodrefs of a wrapper's custom hooks ([`crate::Hooks`]).
#[derive(Clone, Copy)]
pub(crate) struct HookRefs {
    pub enter: Option<u16>,
    pub exit: Option<u16>,
}

/// The instruction(s) pushing the int `p`.
pub(crate) fn push_int(p: i32, app: &mut Appender) -> Vec<u8> {
    match p {
        -1..=5 => vec![(0x03 + p) as u8],
        -128..=127 => vec![0x10, p as u8],
        -32768..=32767 => {
            let b = (p as i16).to_be_bytes();
            vec![0x11, b[0], b[1]]
        }
        _ => {
            let i = app.integer(p);
            if i < 256 {
                vec![0x12, i as u8]
            } else {
                let b = i.to_be_bytes();
                vec![0x13, b[0], b[1]]
            }
        }
    }
}

fn load(code: &mut Vec<u8>, kind: Kind<'_>, slot: u16) {
    let (short, long) = match kind {
        Kind::Int => (0x1a, 0x15),
        Kind::Long => (0x1e, 0x16),
        Kind::Float => (0x22, 0x17),
        Kind::Double => (0x26, 0x18),
        Kind::Ref(_) => (0x2a, 0x19),
    };
    if slot <= 3 {
        code.push(short + slot as u8);
    } else {
        // Parameter slots are <= 255 (checked when the descriptor was parsed).
        code.push(long);
        code.push(slot as u8);
    }
}

fn return_op(kind: Option<Kind<'_>>) -> u8 {
    match kind {
        None => 0xb1,
        Some(Kind::Int) => 0xac,
        Some(Kind::Long) => 0xad,
        Some(Kind::Float) => 0xae,
        Some(Kind::Double) => 0xaf,
        Some(Kind::Ref(_)) => 0xb0,
    }
}

/// The complete Code attribute (name index included) of the wrapper.
#[allow(clippy::too_many_arguments)]
pub(crate) fn wrapper_code(
    refs: &Refs,
    app: &mut Appender,
    desc: &MethodDesc<'_>,
    is_static: bool,
    probe: i32,
    pass_arg0: bool,
    target: u16,
) -> Result<Vec<u8>> {
    let this_or_null = if is_static { 0x01 } else { 0x2a };
    let first_slot: u16 = if is_static { 0 } else { 1 };
    // Custom hooks: no probe id; without an exit hook, no handler.
    let (push_p, enter, exit) = match refs.hooks {
        Some(h) => (Vec::new(), h.enter, h.exit),
        None => (push_int(probe, app), Some(refs.enter), Some(refs.exit)),
    };

    let mut code: Vec<u8> = Vec::with_capacity(64);
    // The first reference parameter (ForkJoinPool.poolSubmit(boolean, ForkJoinTask) on 21+).
    let mut arg_slot = first_slot;
    let mut first_ref = None;
    for &k in &desc.params {
        if matches!(k, Kind::Ref(_)) {
            first_ref = Some((k, arg_slot));
            break;
        }
        arg_slot += k.slots();
    }
    if let Some(enter) = enter {
        code.extend_from_slice(&push_p);
        code.push(this_or_null);
        match first_ref {
            Some((k, s)) if pass_arg0 => load(&mut code, k, s),
            // The default probe always takes the argument (null); a hook only with pass_arg0.
            _ if refs.hooks.is_none() || pass_arg0 => code.push(0x01),
            _ => {}
        }
        code.push(0xb8);
        code.u2(enter);
    }
    let l_start = code.len();
    if !is_static {
        code.push(0x2a);
    }
    let mut slot = first_slot;
    for &k in &desc.params {
        load(&mut code, k, slot);
        slot += k.slots();
    }
    code.push(if is_static { 0xb8 } else { 0xb7 });
    code.u2(target);
    let l_end = code.len();
    let max_locals = slot;
    let ret_slots = desc.ret.map_or(0, |k| k.slots());
    let max_stack = 3.max(max_locals).max(ret_slots + 2);
    let Some(exit) = exit else {
        // Entry hook only: call, invoke, return; no handler, no stack map.
        code.push(return_op(desc.ret));
        let mut attr: Vec<u8> = Vec::with_capacity(32 + code.len());
        attr.u2(refs.code_name);
        attr.u4((8 + code.len() + 2 + 2) as u32);
        attr.u2(max_stack);
        attr.u2(max_locals);
        attr.u4(code.len() as u32);
        attr.extend_from_slice(&code);
        attr.u2(0);
        attr.u2(0);
        return Ok(attr);
    };
    code.extend_from_slice(&push_p);
    code.push(this_or_null);
    code.push(0xb8);
    code.u2(exit);
    code.push(return_op(desc.ret));
    let l_handler = code.len();
    code.extend_from_slice(&push_p);
    code.push(this_or_null);
    code.push(0xb8);
    code.u2(exit);
    code.push(0xbf);

    let mut smt: Vec<u8> = Vec::new();
    if let Some(name) = refs.stack_map_name {
        let mut frame: Vec<u8> = Vec::with_capacity(32);
        frame.u2(1);
        frame.push(255);
        frame.u2(l_handler as u16);
        frame.u2(desc.params.len() as u16 + u16::from(!is_static));
        if !is_static {
            frame.push(7);
            frame.u2(refs.this_class);
        }
        for &k in &desc.params {
            match k {
                Kind::Int => frame.push(1),
                Kind::Float => frame.push(2),
                Kind::Double => frame.push(3),
                Kind::Long => frame.push(4),
                Kind::Ref(name) => {
                    frame.push(7);
                    frame.u2(app.class(name)?);
                }
            }
        }
        frame.u2(1);
        frame.push(7);
        frame.u2(refs.throwable);
        smt.u2(name);
        smt.u4(frame.len() as u32);
        smt.extend_from_slice(&frame);
    }

    let mut attr: Vec<u8> = Vec::with_capacity(32 + code.len() + smt.len());
    attr.u2(refs.code_name);
    // max_stack, max_locals, code_length, code, one exception entry, attributes_count, attributes.
    attr.u4((8 + code.len() + 2 + 8 + 2 + smt.len()) as u32);
    attr.u2(max_stack);
    attr.u2(max_locals);
    attr.u4(code.len() as u32);
    attr.extend_from_slice(&code);
    attr.u2(1);
    attr.u2(l_start as u16);
    attr.u2(l_end as u16);
    attr.u2(l_handler as u16);
    attr.u2(0);
    attr.u2(u16::from(!smt.is_empty()));
    attr.extend_from_slice(&smt);
    Ok(attr)
}
