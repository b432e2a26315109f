//! In-place body rewriting: insert a prologue at a method's entry, a sequence before its returns and
//! a catch-all handler after its code, and relocate everything that holds a code offset (branches,
//! switches, exception table, StackMapTable, LineNumberTable, LocalVariable(Type)Table), widening a
//! 16-bit branch that no longer fits. Only the Code attribute changes: the method keeps its name,
//! modifiers, line numbers and other attributes, so the class keeps its shape (and the result is a
//! valid RetransformClasses redefinition).
//!
//! Not handled (the method, and so the class, is left unchanged with an `Err`): stores to
//! local 0 when the inserted code reads `this` after the entry, a conditional branch that no longer
//! fits 16 bits with no stack map frame after it.

use crate::cpool::ConstantPool;
use crate::error::{Error, Result};
use crate::parse::Attr;
use crate::reader::{Out, Reader};

const RETURN: u8 = 0xb1;
const TABLESWITCH: u8 = 0xaa;
const LOOKUPSWITCH: u8 = 0xab;
const WIDE: u8 = 0xc4;
const GOTO_W: u8 = 0xc8;
const NONE: u32 = u32::MAX;

/// Fixed instruction lengths; 0 = variable-length or invalid.
const LENGTHS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i <= 0xc9 {
        t[i] = 1;
        i += 1;
    }
    let two = [
        0x10, 0x12, 0x15, 0x16, 0x17, 0x18, 0x19, 0x36, 0x37, 0x38, 0x39, 0x3a, 0xa9, 0xbc,
    ];
    let mut j = 0;
    while j < two.len() {
        t[two[j]] = 2;
        j += 1;
    }
    let three = [
        0x11, 0x13, 0x14, 0x84, 0xa7, 0xa8, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xbb, 0xbd,
        0xc0, 0xc1, 0xc6, 0xc7,
    ];
    j = 0;
    while j < three.len() {
        t[three[j]] = 3;
        j += 1;
    }
    i = 0x99;
    while i <= 0xa6 {
        t[i] = 3;
        i += 1;
    }
    t[0xc5] = 4;
    t[0xb9] = 5;
    t[0xba] = 5;
    t[0xc8] = 5;
    t[0xc9] = 5;
    t[TABLESWITCH as usize] = 0;
    t[LOOKUPSWITCH as usize] = 0;
    t[WIDE as usize] = 0;
    t
};

fn is_branch16(op: u8) -> bool {
    matches!(op, 0x99..=0xa8 | 0xc6 | 0xc7)
}

fn i4_at(code: &[u8], at: usize) -> Result<i32> {
    Reader::new(code, at).i4()
}

/// Length of the instruction at `pc`, with its switch padding as it is at `pc`.
fn insn_len(code: &[u8], pc: usize) -> Result<usize> {
    let op = code[pc];
    let len = match op {
        TABLESWITCH => {
            let pad = 3 - pc % 4;
            let low = i4_at(code, pc + 1 + pad + 4)? as i64;
            let high = i4_at(code, pc + 1 + pad + 8)? as i64;
            if high < low {
                return Err(Error::malformed(format!("tableswitch at {pc}: high < low")));
            }
            1 + pad + 12 + 4 * (high - low + 1) as usize
        }
        LOOKUPSWITCH => {
            let pad = 3 - pc % 4;
            let n = i4_at(code, pc + 1 + pad + 4)?;
            if n < 0 {
                return Err(Error::malformed(format!(
                    "lookupswitch at {pc}: npairs < 0"
                )));
            }
            1 + pad + 8 + 8 * n as usize
        }
        WIDE => match code.get(pc + 1) {
            Some(0x84) => 6,
            Some(0x15..=0x19 | 0x36..=0x3a | 0xa9) => 4,
            _ => return Err(Error::malformed(format!("bad wide instruction at {pc}"))),
        },
        _ => match LENGTHS[op as usize] {
            0 => {
                return Err(Error::malformed(format!(
                    "invalid opcode 0x{op:02x} at {pc}"
                )))
            }
            n => n as usize,
        },
    };
    if pc + len > code.len() {
        return Err(Error::malformed(format!(
            "instruction at {pc} runs past the end of the code"
        )));
    }
    Ok(len)
}

const ATHROW: u8 = 0xbf;
const GOTO: u8 = 0xa7;
const JSR: u8 = 0xa8;
const JSR_W: u8 = 0xc9;
const INVOKESTATIC: u8 = 0xb8;
pub(crate) const INVOKEVIRTUAL: u8 = 0xb6;
pub(crate) const INVOKEINTERFACE: u8 = 0xb9;
const NOP: u8 = 0x00;

/// Whether `op` is one of the return instructions (`ireturn` .. `return`).
fn is_return(op: u8) -> bool {
    matches!(op, 0xac..=0xb1)
}

/// The conditional branch with the opposite condition (`ifeq` <-> `ifne`, `ifnull` <-> `ifnonnull`).
fn inverse(op: u8) -> u8 {
    match op {
        0xc6 => 0xc7,
        0xc7 => 0xc6,
        _ if (op - 0x99).is_multiple_of(2) => op + 1,
        _ => op - 1,
    }
}

/// An edit of one method body. Everything that holds a code offset is relocated; nothing outside the
/// Code attribute changes, so the same edit serves first load and RetransformClasses.
pub(crate) struct BodyEdit<'a> {
    /// Inserted before the first instruction. A branch to offset 0 lands after it (a loop back to
    /// the start does not run it again); it must leave the stack and the locals as it found them.
    pub prologue: &'a [u8],
    /// Inserted before every selected return instruction (a branch to the return lands on it). It
    /// must leave the stack as it found it (the return value stays below what it pushes).
    pub before_return: &'a [u8],
    /// Select every `xreturn` (methods) or only `return` (constructors).
    pub all_returns: bool,
    /// A catch-all handler appended after the code.
    pub handler: Option<Handler<'a>>,
    /// The inserted code loads local 0 (`this`) after the entry: a body that stores to local 0 is
    /// refused (Unsupported).
    pub reads_local0: bool,
    /// Stack slots the inserted code needs above what the body had.
    pub extra_stack: u16,
    /// Replaces every `monitorenter` (empty: unchanged). It starts with the object on the stack,
    /// must contain the `monitorenter` and leave the stack as the instruction would; a branch to
    /// the instruction lands at its start, and it is inside the same exception ranges.
    pub monitor_enter: &'a [u8],
    /// Replaces every `monitorexit` (empty: unchanged), as `monitor_enter`.
    pub monitor_exit: &'a [u8],
    /// The last bytes of `monitor_enter` that run with the monitor held (after its
    /// `monitorenter`): they join the exception ranges that begin right after the
    /// `monitorenter` (javac's catch-any that exits the monitor), so that a call there
    /// cannot leave the method with the monitor held (HotSpot's JIT compilers refuse
    /// such a method as unbalanced, and it runs interpreted).
    pub monitor_enter_tail: u32,
    /// The last bytes of `monitor_exit` that run after its `monitorexit`: they leave
    /// the exception ranges that end right after the `monitorexit` (javac's catch-any,
    /// and its handler's range that covers the handler's own `monitorexit`).
    pub monitor_exit_tail: u32,
}

const MONITORENTER: u8 = 0xc2;
const MONITOREXIT: u8 = 0xc3;

/// The sequence replacing the instruction `op`, if the edit replaces it.
fn replacement<'a>(edit: &BodyEdit<'a>, op: u8) -> Option<&'a [u8]> {
    let r = match op {
        MONITORENTER => edit.monitor_enter,
        MONITOREXIT => edit.monitor_exit,
        _ => return None,
    };
    (!r.is_empty()).then_some(r)
}

/// A handler appended after the original code, covering all of it except the inserted
/// `before_return` sequences (and the return each precedes), listed last in the exception table so
/// that the body's own handlers keep precedence. It runs `code` then rethrows (`athrow`).
pub(crate) struct Handler<'a> {
    pub code: &'a [u8],
    /// The handler's stack map frame has `this` (Object(this class)) as its only local, or no
    /// local for a static method: every frame of the body is assignable to it.
    pub this_class: Option<u16>,
    /// Class entry of java/lang/Throwable (the frame's stack).
    pub throwable: u16,
    /// Utf8 entry "StackMapTable" if the class file has stack maps (major >= 50): a frame is
    /// added for the handler, in a new StackMapTable attribute if the body has none.
    pub stack_map_name: Option<u16>,
}

#[derive(Clone, Copy)]
struct Insn {
    pc: u32,
    len: u32,
    op: u8,
}

/// Where old offsets land in the new code. `target[pc]` is where a branch to `pc` lands (the
/// sequence inserted before a return; after the prologue for offset 0); `at[pc]` is where the
/// instruction itself now is. Both hold NONE for offsets inside an instruction;
/// index `code_len` maps the end of the code (exclusive range ends).
struct Layout {
    at: Vec<u32>,
    target: Vec<u32>,
    code_len: usize,
    /// Length of the relocated original code (the handler starts here).
    end: u32,
}

impl Layout {
    fn get(v: &[u32], code_len: usize, old: i64, end_ok: bool, what: &str) -> Result<u32> {
        let limit = if end_ok {
            code_len as i64
        } else {
            code_len as i64 - 1
        };
        if old < 0 || old > limit || v[old as usize] == NONE {
            return Err(Error::malformed(format!(
                "{what} {old} is not an instruction boundary"
            )));
        }
        Ok(v[old as usize])
    }
    /// Where a branch (or a frame, a range, a handler) at old offset `old` lands.
    fn target(&self, old: i64, end_ok: bool, what: &str) -> Result<u32> {
        Self::get(&self.target, self.code_len, old, end_ok, what)
    }
    /// Where the instruction at `old` now is (`new` of an Uninitialized type).
    fn at(&self, old: i64, what: &str) -> Result<u32> {
        Self::get(&self.at, self.code_len, old, false, what)
    }
    /// Read a (start_pc, length) range of a local variable and write it moved.
    fn range(&self, r: &mut Reader<'_>, out: &mut Vec<u8>, what: &str) -> Result<()> {
        let start = r.u2()? as i64;
        let length = r.u2()? as i64;
        let s = self.start(start, what)?;
        let e = self.target(start + length, true, what)?;
        out.u2(s as u16);
        out.u2((e - s) as u16);
        Ok(())
    }
    /// Start offsets (line numbers, local variables): offset 0 stays 0, so the prologue belongs to
    /// the first line and the parameters' scopes cover it.
    fn start(&self, old: i64, what: &str) -> Result<u32> {
        if old == 0 {
            Ok(0)
        } else {
            self.target(old, false, what)
        }
    }
}

fn layout(insns: &[Insn], code_len: usize, edit: &BodyEdit<'_>, wide: &[bool]) -> Layout {
    let mut at = vec![NONE; code_len + 1];
    let mut target = vec![NONE; code_len + 1];
    let k = edit.before_return.len() as u32;
    let mut npc = edit.prologue.len() as u32;
    for (i, ins) in insns.iter().enumerate() {
        let pc = ins.pc as usize;
        target[pc] = npc;
        if selected_return(edit, ins.op) {
            npc += k;
        }
        at[pc] = npc;
        npc += match ins.op {
            TABLESWITCH | LOOKUPSWITCH => {
                let old_pad = 3 - pc % 4;
                let new_pad = 3 - npc as usize % 4;
                ins.len - old_pad as u32 + new_pad as u32
            }
            GOTO | JSR if wide[i] => 5,
            _ if wide[i] => 8,
            op => replacement(edit, op).map_or(ins.len, |r| r.len() as u32),
        };
    }
    at[code_len] = npc;
    target[code_len] = npc;
    Layout {
        at,
        target,
        code_len,
        end: npc,
    }
}

fn selected_return(edit: &BodyEdit<'_>, op: u8) -> bool {
    if edit.all_returns {
        is_return(op)
    } else {
        op == RETURN
    }
}

/// Decode the instructions of a method body (refusing what the rewriter does not handle).
fn decode(code: &[u8], refuse_local0_stores: bool) -> Result<Vec<Insn>> {
    let mut insns = Vec::with_capacity(code.len() / 2);
    let mut pc = 0usize;
    while pc < code.len() {
        let op = code[pc];
        let len = insn_len(code, pc)?;
        match op {
            0x3b | 0x3f | 0x43 | 0x47 | 0x4b if refuse_local0_stores => {
                return Err(Error::unsupported(format!("store to local 0 at {pc}")));
            }
            0x36..=0x3a if refuse_local0_stores && code[pc + 1] == 0 => {
                return Err(Error::unsupported(format!("store to local 0 at {pc}")));
            }
            WIDE if refuse_local0_stores
                && matches!(code[pc + 1], 0x36..=0x3a)
                && code[pc + 2] == 0
                && code[pc + 3] == 0 =>
            {
                return Err(Error::unsupported(format!("store to local 0 at {pc}")));
            }
            _ => {}
        }
        insns.push(Insn {
            pc: pc as u32,
            len: len as u32,
            op,
        });
        pc += len;
    }
    Ok(insns)
}

/// The body of a Code attribute: (max_stack, max_locals, code, reader after the code).
fn code_of<'a>(data: &'a [u8], attr: &Attr<'_>) -> Result<(u16, u16, &'a [u8], Reader<'a>)> {
    let body = &data[attr.body..attr.end()];
    let mut r = Reader::new(body, 0);
    let max_stack = r.u2()?;
    let max_locals = r.u2()?;
    let code_len = r.u4()? as usize;
    if code_len == 0 || code_len > 65535 {
        return Err(Error::malformed(format!("code length {code_len}")));
    }
    let code = r.bytes(code_len)?;
    Ok((max_stack, max_locals, code, r))
}

/// Whether the body calls a static method for which `wanted(class, name, descriptor)` holds
/// (an already instrumented body calls its probes).
pub(crate) fn invokes_static(
    data: &[u8],
    attr: &Attr<'_>,
    cp: &ConstantPool<'_>,
    wanted: impl Fn(&[u8], &[u8], &[u8]) -> bool,
) -> Result<bool> {
    invokes(data, attr, cp, INVOKESTATIC, wanted)
}

/// Whether the body has an `invokevirtual` of a method for which `wanted(class, name,
/// descriptor)` holds.
pub(crate) fn invokes_virtual(
    data: &[u8],
    attr: &Attr<'_>,
    cp: &ConstantPool<'_>,
    wanted: impl Fn(&[u8], &[u8], &[u8]) -> bool,
) -> Result<bool> {
    invokes(data, attr, cp, INVOKEVIRTUAL, wanted)
}

/// Whether the body has an invoke instruction `op` (operand: a member ref) of a method for
/// which `wanted` holds.
fn invokes(
    data: &[u8],
    attr: &Attr<'_>,
    cp: &ConstantPool<'_>,
    op: u8,
    wanted: impl Fn(&[u8], &[u8], &[u8]) -> bool,
) -> Result<bool> {
    let (_, _, code, _) = code_of(data, attr)?;
    let mut pc = 0usize;
    while pc < code.len() {
        let len = insn_len(code, pc)?;
        if code[pc] == op {
            let index = u16::from_be_bytes([code[pc + 1], code[pc + 2]]);
            if let Ok((c, n, d)) = cp.member_ref(index) {
                if wanted(c, n, d) {
                    return Ok(true);
                }
            }
        }
        pc += len;
    }
    Ok(false)
}

/// Whether the body has an `invokeinterface` of a method for which `wanted(class, name,
/// descriptor)` holds.
pub(crate) fn invokes_interface(
    data: &[u8],
    attr: &Attr<'_>,
    cp: &ConstantPool<'_>,
    wanted: impl Fn(&[u8], &[u8], &[u8]) -> bool,
) -> Result<bool> {
    invokes(data, attr, cp, INVOKEINTERFACE, wanted)
}

/// In a whole Code attribute (name index, length, body: as `rewrite_body` returns it),
/// turns each invoke instruction `op` (`invokevirtual #i`, or `invokeinterface #i n 0`)
/// for which `to(i)` gives a Methodref `#s` into `invokestatic #s` (and `nop`s for the
/// rest of an `invokeinterface`), in place: the same length, and the same stack effect
/// when `#s` takes the receiver and the call's arguments and returns what the call
/// returned, so no offset, range or stack map frame moves.
pub(crate) fn redirect_calls(
    attr: &mut [u8],
    op: u8,
    to: impl Fn(u16) -> Option<u16>,
) -> Result<()> {
    if attr.len() < 14 {
        return Err(Error::malformed("Code attribute too short"));
    }
    let code_len = u32::from_be_bytes([attr[10], attr[11], attr[12], attr[13]]) as usize;
    let code = attr
        .get_mut(14..14 + code_len)
        .ok_or_else(|| Error::malformed("Code attribute shorter than its code"))?;
    let mut pc = 0usize;
    while pc < code.len() {
        let len = insn_len(code, pc)?;
        if code[pc] == op && len >= 3 {
            if let Some(s) = to(u16::from_be_bytes([code[pc + 1], code[pc + 2]])) {
                code[pc] = INVOKESTATIC;
                code[pc + 1..pc + 3].copy_from_slice(&s.to_be_bytes());
                code[pc + 3..pc + len].fill(NOP);
            }
        }
        pc += len;
    }
    Ok(())
}

/// Whether the body has one of the instructions `ops`.
pub(crate) fn contains_ops(data: &[u8], attr: &Attr<'_>, ops: &[u8]) -> Result<bool> {
    let (_, _, code, _) = code_of(data, attr)?;
    let mut pc = 0usize;
    while pc < code.len() {
        if ops.contains(&code[pc]) {
            return Ok(true);
        }
        pc += insn_len(code, pc)?;
    }
    Ok(false)
}

/// The offset delta of a stack map frame of type `ft` (read after the type byte).
fn frame_delta(ft: u8, r: &mut Reader<'_>) -> Result<i64> {
    Ok(match ft {
        0..=63 => ft as i64,
        64..=127 => ft as i64 - 64,
        247..=255 => r.u2()? as i64,
        _ => {
            return Err(Error::malformed(format!(
                "reserved StackMapTable frame type {ft}"
            )))
        }
    })
}

/// Offsets of the frames of a StackMapTable (to know where a frame already exists).
fn frame_offsets(a: &[u8]) -> Result<Vec<u32>> {
    let mut r = Reader::new(a, 0);
    let n = r.u2()?;
    let mut v = Vec::with_capacity(n as usize);
    let mut prev: i64 = -1;
    let skip_types = |r: &mut Reader<'_>, k: u16| -> Result<()> {
        for _ in 0..k {
            if matches!(r.u1()?, 7 | 8) {
                r.skip(2)?;
            }
        }
        Ok(())
    };
    for _ in 0..n {
        let ft = r.u1()?;
        let delta = frame_delta(ft, &mut r)?;
        match ft {
            64..=127 | 247 => skip_types(&mut r, 1)?,
            252..=254 => skip_types(&mut r, (ft - 251) as u16)?,
            255 => {
                for _ in 0..2 {
                    let k = r.u2()?;
                    skip_types(&mut r, k)?;
                }
            }
            _ => {}
        }
        prev += delta + 1;
        v.push(prev as u32);
    }
    Ok(v)
}

/// Rewrite the Code attribute `attr` with `edit`. Returns the new attribute bytes (name index
/// included), or None if there is nothing to insert (no prologue, no handler, no selected return).
pub(crate) fn rewrite_body(
    data: &[u8],
    attr: &Attr<'_>,
    cp: &ConstantPool<'_>,
    edit: &BodyEdit<'_>,
) -> Result<Option<Vec<u8>>> {
    let (max_stack, max_locals, code, mut r) = code_of(data, attr)?;
    let code_len = code.len();
    let insns = decode(code, edit.reads_local0)?;
    let returns = insns.iter().filter(|i| selected_return(edit, i.op)).count();
    let inserts_at_returns = returns > 0 && !edit.before_return.is_empty();
    let replaces = insns.iter().any(|i| replacement(edit, i.op).is_some());
    if edit.prologue.is_empty() && edit.handler.is_none() && !inserts_at_returns && !replaces {
        return Ok(None);
    }

    // The exception table and the attributes, read before the layout: widening a conditional
    // branch needs a stack map frame after it (see below).
    let n_exc = r.u2()?;
    let exc = r.bytes(n_exc as usize * 8)?;
    let n_attr = r.u2()?;
    let mut attrs: Vec<(u16, &[u8], &[u8])> = Vec::with_capacity(n_attr as usize);
    for _ in 0..n_attr {
        let name_index = r.u2()?;
        let name = cp.utf8(name_index)?;
        let len = r.u4()? as usize;
        attrs.push((name_index, name, r.bytes(len)?));
    }
    if r.remaining() != 0 {
        return Err(Error::malformed(
            "Code attribute length does not match its content",
        ));
    }
    let stack_map = attrs.iter().find(|a| a.1 == b"StackMapTable");
    let frames = match stack_map {
        Some(a) => frame_offsets(a.2)?,
        None => Vec::new(),
    };
    let has_stack_maps = stack_map.is_some()
        || edit
            .handler
            .as_ref()
            .is_some_and(|h| h.stack_map_name.is_some());

    // Layout, widening the 16-bit branches whose offsets no longer fit: `goto` becomes `goto_w` (and
    // `jsr` `jsr_w`, in old class files: subroutines are relocated like any branch target);
    // `if<c> L` becomes `if<!c> +8; goto_w L`, whose fall-through (the old next instruction) needs a
    // stack map frame: only widened where the body already has one there (always without stack maps).
    let mut wide = vec![false; insns.len()];
    let lay = loop {
        let lay = layout(&insns, code_len, edit, &wide);
        let mut grew = false;
        for (i, ins) in insns.iter().enumerate() {
            if wide[i] || !is_branch16(ins.op) {
                continue;
            }
            let pc = ins.pc as usize;
            let off = i16::from_be_bytes([code[pc + 1], code[pc + 2]]) as i64;
            let t = lay.target(pc as i64 + off, false, "branch target")? as i64;
            if i16::try_from(t - lay.at[pc] as i64).is_ok() {
                continue;
            }
            let next = ins.pc + ins.len;
            if !matches!(ins.op, GOTO | JSR) && has_stack_maps && !frames.contains(&next) {
                return Err(Error::overflow(format!(
                    "conditional branch at {pc} no longer fits 16 bits and the instruction after \
                     it has no stack map frame"
                )));
            }
            wide[i] = true;
            grew = true;
        }
        if !grew {
            break lay;
        }
    };
    // The catch-all ranges: the relocated body minus each inserted exit sequence and the return
    // after it (an exit probe never runs twice). None (e.g. a body that only returns): no handler.
    let mut gaps: Vec<(u32, u32)> = Vec::new();
    if edit.handler.is_some() {
        let mut from = edit.prologue.len() as u32;
        for ins in insns.iter().filter(|i| selected_return(edit, i.op)) {
            let pc = ins.pc as usize;
            if lay.target[pc] > from {
                gaps.push((from, lay.target[pc]));
            }
            from = lay.at[pc] + 1;
        }
        if lay.end > from {
            gaps.push((from, lay.end));
        }
    }
    let handler = edit.handler.as_ref().filter(|_| !gaps.is_empty());
    let handler_len = handler.map_or(0, |h| h.code.len() + 1);
    let total = lay.end as usize + handler_len;
    if total > 65535 {
        return Err(Error::overflow(format!(
            "code length {total} after insertion exceeds 65535"
        )));
    }

    // The code.
    let mut out: Vec<u8> = Vec::with_capacity(total);
    out.extend_from_slice(edit.prologue);
    for (i, ins) in insns.iter().enumerate() {
        let pc = ins.pc as usize;
        let op = ins.op;
        let here = lay.at[pc] as i64;
        let rel = |off: i64| -> Result<i64> {
            Ok(lay.target(pc as i64 + off, false, "branch target")? as i64 - here)
        };
        if let Some(r) = replacement(edit, op) {
            out.extend_from_slice(r);
            continue;
        }
        match op {
            _ if selected_return(edit, op) => {
                out.extend_from_slice(edit.before_return);
                out.push(op);
            }

            _ if is_branch16(op) => {
                let n = rel(i16::from_be_bytes([code[pc + 1], code[pc + 2]]) as i64)?;
                if !wide[i] {
                    out.push(op);
                    out.u2(n as i16 as u16);
                } else if op == GOTO || op == JSR {
                    out.push(if op == GOTO { GOTO_W } else { JSR_W });
                    out.u4(n as i32 as u32);
                } else {
                    out.push(inverse(op));
                    out.u2(8);
                    out.push(GOTO_W);
                    out.u4((n - 3) as i32 as u32);
                }
            }
            GOTO_W | JSR_W => {
                let n = rel(i4_at(code, pc + 1)? as i64)?;
                out.push(op);
                out.u4(n as i32 as u32);
            }
            TABLESWITCH | LOOKUPSWITCH => {
                let old_pad = 3 - pc % 4;
                out.push(op);
                while out.len() & 3 != 0 {
                    out.push(0);
                }
                let mut sr = Reader::new(code, pc + 1 + old_pad);
                out.u4(rel(sr.i4()? as i64)? as i32 as u32);
                if op == TABLESWITCH {
                    let low = sr.i4()?;
                    let high = sr.i4()?;
                    out.u4(low as u32);
                    out.u4(high as u32);
                    for _ in low as i64..=high as i64 {
                        out.u4(rel(sr.i4()? as i64)? as i32 as u32);
                    }
                } else {
                    let n = sr.i4()?;
                    out.u4(n as u32);
                    for _ in 0..n {
                        out.u4(sr.u4()?);
                        out.u4(rel(sr.i4()? as i64)? as i32 as u32);
                    }
                }
            }
            _ => out.extend_from_slice(&code[pc..pc + ins.len as usize]),
        }
    }
    if out.len() != lay.end as usize {
        return Err(Error::malformed("internal: relocated code length mismatch"));
    }
    if let Some(h) = handler {
        out.extend_from_slice(h.code);
        out.push(ATHROW);
    }

    // Exception table: the body's entries moved, then the catch-all ranges.
    let mut tail: Vec<u8> = Vec::with_capacity(exc.len() + 64 + data.len().min(256));
    let mut er = Reader::new(exc, 0);
    let mut entries: Vec<[u16; 4]> = Vec::with_capacity(n_exc as usize + returns + 1);
    // Old pcs right after a replaced `monitorenter`: ranges beginning there begin at the
    // replacement's tail.
    let after = |op: u8, tail: u32| -> Vec<u32> {
        if tail == 0 || replacement(edit, op).is_none() {
            return Vec::new();
        }
        let mut v: Vec<u32> = insns
            .iter()
            .filter(|i| i.op == op)
            .map(|i| i.pc + i.len)
            .collect();
        v.sort_unstable();
        v
    };
    let after_enter = after(MONITORENTER, edit.monitor_enter_tail);
    // Ranges ending right after a replaced `monitorexit` end before its tail.
    let after_exit = after(MONITOREXIT, edit.monitor_exit_tail);
    for _ in 0..n_exc {
        let old_start = er.u2()? as u32;
        let s = lay.target(old_start as i64, false, "exception start_pc")?;
        let s = if after_enter.binary_search(&old_start).is_ok() {
            s - edit.monitor_enter_tail
        } else {
            s
        };
        let old_end = er.u2()? as u32;
        let e = lay.target(old_end as i64, true, "exception end_pc")?;
        let e = if after_exit.binary_search(&old_end).is_ok() {
            e - edit.monitor_exit_tail
        } else {
            e
        };
        let h = lay.target(er.u2()? as i64, false, "exception handler_pc")?;
        if s >= e {
            return Err(Error::malformed(
                "exception table entry with start_pc >= end_pc",
            ));
        }
        entries.push([s as u16, e as u16, h as u16, er.u2()?]);
    }
    for &(from, to) in &gaps {
        entries.push([from as u16, to as u16, lay.end as u16, 0]);
    }
    let n_entries = u16::try_from(entries.len())
        .map_err(|_| Error::overflow("more than 65535 exception table entries"))?;
    tail.u2(n_entries);
    for e in &entries {
        for v in e {
            tail.u2(*v);
        }
    }

    // Code attributes.
    let handler_frame = handler.and_then(|h| {
        h.stack_map_name.map(|_| HandlerFrame {
            pc: lay.end,
            this_class: h.this_class,
            throwable: h.throwable,
        })
    });
    let new_stack_map = stack_map.is_none() && handler_frame.is_some();
    tail.u2(n_attr + u16::from(new_stack_map));
    for (name_index, name, a) in &attrs {
        tail.u2(*name_index);
        let len_at = tail.len();
        tail.u4(0);
        match *name {
            b"StackMapTable" => stack_map_table(a, &lay, handler_frame.as_ref(), &mut tail)?,
            b"LineNumberTable" => {
                let mut ar = Reader::new(a, 0);
                let n = ar.u2()?;
                tail.u2(n);
                for _ in 0..n {
                    tail.u2(lay.start(ar.u2()? as i64, "line number start_pc")? as u16);
                    tail.u2(ar.u2()?);
                }
            }
            b"LocalVariableTable" | b"LocalVariableTypeTable" => {
                let mut ar = Reader::new(a, 0);
                let n = ar.u2()?;
                tail.u2(n);
                for _ in 0..n {
                    lay.range(&mut ar, &mut tail, "local variable")?;
                    tail.extend_from_slice(ar.bytes(6)?);
                }
            }
            b"RuntimeVisibleTypeAnnotations" | b"RuntimeInvisibleTypeAnnotations" => {
                type_annotations(a, &lay, &mut tail)?
            }
            _ => tail.extend_from_slice(a),
        }
        let alen = (tail.len() - len_at - 4) as u32;
        tail[len_at..len_at + 4].copy_from_slice(&alen.to_be_bytes());
    }
    if new_stack_map {
        if let (Some(f), Some(name)) = (&handler_frame, handler.and_then(|h| h.stack_map_name)) {
            tail.u2(name);
            let len_at = tail.len();
            tail.u4(0);
            tail.u2(1);
            f.write(-1, &mut tail);
            let alen = (tail.len() - len_at - 4) as u32;
            tail[len_at..len_at + 4].copy_from_slice(&alen.to_be_bytes());
        }
    }

    let new_stack = max_stack
        .checked_add(edit.extra_stack)
        .ok_or_else(|| Error::overflow("max_stack exceeds 65535"))?;
    let mut attr_out = Vec::with_capacity(14 + out.len() + tail.len());
    attr_out.extend_from_slice(&data[attr.start..attr.start + 2]);
    let attr_len = u32::try_from(8 + out.len() + tail.len())
        .map_err(|_| Error::overflow("Code attribute too long"))?;
    attr_out.u4(attr_len);
    attr_out.u2(new_stack);
    attr_out.u2(max_locals);
    attr_out.u4(out.len() as u32);
    attr_out.extend_from_slice(&out);
    attr_out.extend_from_slice(&tail);
    Ok(Some(attr_out))
}

/// The stack map frame of the appended handler.
struct HandlerFrame {
    pc: u32,
    this_class: Option<u16>,
    throwable: u16,
}

impl HandlerFrame {
    /// A full_frame after the frame at `prev` (-1: none).
    fn write(&self, prev: i64, out: &mut Vec<u8>) {
        out.push(255);
        out.u2((self.pc as i64 - prev - 1) as u16);
        match self.this_class {
            Some(c) => {
                out.u2(1);
                out.push(7);
                out.u2(c);
            }
            None => out.u2(0),
        }
        out.u2(1);
        out.push(7);
        out.u2(self.throwable);
    }
}

/// Re-encode the type annotations of a Code attribute (JVMS 4.7.20) with their offsets moved:
/// local variable ranges like the LocalVariableTable, instruction offsets (`instanceof`, `new`,
/// casts, method references) to where the instruction now is. Exception table indexes stay valid
/// (the catch-all entries are appended after the body's).
fn type_annotations(a: &[u8], map: &Layout, out: &mut Vec<u8>) -> Result<()> {
    let mut r = Reader::new(a, 0);
    let n = r.u2()?;
    out.u2(n);
    for _ in 0..n {
        let target = r.u1()?;
        out.push(target);
        match target {
            0x40 | 0x41 => {
                let k = r.u2()?;
                out.u2(k);
                for _ in 0..k {
                    map.range(&mut r, out, "type annotation")?;
                    out.u2(r.u2()?);
                }
            }
            0x42 => out.u2(r.u2()?),
            0x43..=0x46 => out.u2(map.at(r.u2()? as i64, "type annotation offset")? as u16),
            0x47..=0x4b => {
                out.u2(map.at(r.u2()? as i64, "type annotation offset")? as u16);
                out.push(r.u1()?);
            }
            _ => {
                return Err(Error::malformed(format!(
                    "type annotation target 0x{target:02x} in a Code attribute"
                )))
            }
        }
        let path_len = r.u1()?;
        out.push(path_len);
        out.extend_from_slice(r.bytes(path_len as usize * 2)?);
        // type_index, element-value pairs: copied as they are.
        let from = r.pos();
        crate::annotations::annotation(&mut r, 0)?;
        out.extend_from_slice(&a[from..r.pos()]);
    }
    if r.remaining() != 0 {
        return Err(Error::malformed(
            "type annotations attribute length does not match its content",
        ));
    }
    Ok(())
}

fn verification_type(r: &mut Reader<'_>, map: &Layout, out: &mut Vec<u8>) -> Result<()> {
    let tag = r.u1()?;
    out.push(tag);
    match tag {
        0..=6 => {}
        7 => out.u2(r.u2()?),
        8 => {
            let off = r.u2()? as i64;
            out.u2(map.at(off, "uninitialized offset")? as u16);
        }
        _ => {
            return Err(Error::malformed(format!(
                "bad verification type tag {tag} in StackMapTable"
            )))
        }
    }
    Ok(())
}

/// Re-encode a StackMapTable with every frame moved to its new offset, and the handler's frame
/// appended.
fn stack_map_table(
    a: &[u8],
    map: &Layout,
    handler: Option<&HandlerFrame>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let mut r = Reader::new(a, 0);
    let n = r.u2()?;
    out.u2(n
        .checked_add(u16::from(handler.is_some()))
        .ok_or_else(|| Error::overflow("more than 65535 stack map frames"))?);
    let mut prev_old: i64 = -1;
    let mut prev_new: i64 = -1;
    for _ in 0..n {
        let ft = r.u1()?;
        let delta = frame_delta(ft, &mut r)?;
        let old = prev_old + delta + 1;
        prev_old = old;
        let new = map.target(old, false, "stack map frame offset")? as i64;
        let nd = new - prev_new - 1;
        prev_new = new;
        if !(0..=65535).contains(&nd) {
            return Err(Error::malformed("stack map frames out of order"));
        }
        let nd16 = nd as u16;
        match ft {
            0..=63 | 251 => {
                if nd <= 63 {
                    out.push(nd as u8);
                } else {
                    out.push(251);
                    out.u2(nd16);
                }
            }
            64..=127 | 247 => {
                if nd <= 63 {
                    out.push(64 + nd as u8);
                } else {
                    out.push(247);
                    out.u2(nd16);
                }
                verification_type(&mut r, map, out)?;
            }
            248..=250 => {
                out.push(ft);
                out.u2(nd16);
            }
            252..=254 => {
                out.push(ft);
                out.u2(nd16);
                for _ in 0..ft - 251 {
                    verification_type(&mut r, map, out)?;
                }
            }
            _ => {
                out.push(255);
                out.u2(nd16);
                for _ in 0..2 {
                    let k = r.u2()?;
                    out.u2(k);
                    for _ in 0..k {
                        verification_type(&mut r, map, out)?;
                    }
                }
            }
        }
    }
    if r.remaining() != 0 {
        return Err(Error::malformed(
            "StackMapTable length does not match its frames",
        ));
    }
    if let Some(h) = handler {
        h.write(prev_new, out);
    }
    Ok(())
}
