//! In-place bytecode insertion for the constructor probe: insert a fixed sequence before every `return`
//! of a method and relocate everything that holds a code offset (branches, switches, exception table,
//! StackMapTable, LineNumberTable, LocalVariable(Type)Table).
//!
//! Not handled (the method, and so the class, is left unchanged with an `Err`): jsr/ret, stores to
//! local 0, a 16-bit branch offset that no longer fits, type annotations inside the Code attribute.

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

/// Old offset -> new offset. A `return` maps to the start of the sequence inserted before it.
struct Map {
    pos: Vec<u32>,
    code_len: usize,
}

impl Map {
    /// Offset of an instruction (`end_ok`: also the code length, for exclusive range ends).
    fn get(&self, old: i64, end_ok: bool, what: &str) -> Result<u32> {
        let limit = if end_ok {
            self.code_len as i64
        } else {
            self.code_len as i64 - 1
        };
        if old < 0 || old > limit || self.pos[old as usize] == NONE {
            return Err(Error::malformed(format!(
                "{what} {old} is not an instruction boundary"
            )));
        }
        Ok(self.pos[old as usize])
    }
}

/// Rewrite the Code attribute `attr`, inserting `insert` before every `return`.
/// Returns the new attribute bytes (name index included), or None if the code has no `return`.
pub(crate) fn insert_before_returns(
    data: &[u8],
    attr: &Attr<'_>,
    cp: &ConstantPool<'_>,
    insert: &[u8],
    extra_stack: u16,
) -> Result<Option<Vec<u8>>> {
    let body = &data[attr.body..attr.end()];
    let mut r = Reader::new(body, 0);
    let max_stack = r.u2()?;
    let max_locals = r.u2()?;
    let code_len = r.u4()? as usize;
    if code_len == 0 || code_len > 65535 {
        return Err(Error::malformed(format!("code length {code_len}")));
    }
    let code = r.bytes(code_len)?;

    // Pass 1: instruction boundaries and their new offsets.
    let k = insert.len() as u32;
    let mut pos = vec![NONE; code_len + 1];
    let mut pc = 0usize;
    let mut npc = 0u32;
    let mut returns = 0;
    while pc < code_len {
        let op = code[pc];
        let len = insn_len(code, pc)?;
        match op {
            0xa8 | 0xa9 | 0xc9 => {
                return Err(Error::unsupported(format!("jsr/ret at {pc}")));
            }
            0x3b | 0x3f | 0x43 | 0x47 | 0x4b => {
                return Err(Error::unsupported(format!("store to local 0 at {pc}")));
            }
            0x36..=0x3a if code[pc + 1] == 0 => {
                return Err(Error::unsupported(format!("store to local 0 at {pc}")));
            }
            WIDE if code[pc + 1] == 0xa9 => {
                return Err(Error::unsupported(format!("ret at {pc}")));
            }
            WIDE if matches!(code[pc + 1], 0x36..=0x3a)
                && code[pc + 2] == 0
                && code[pc + 3] == 0 =>
            {
                return Err(Error::unsupported(format!("store to local 0 at {pc}")));
            }
            _ => {}
        }
        pos[pc] = npc;
        npc += match op {
            RETURN => {
                returns += 1;
                k + 1
            }
            TABLESWITCH | LOOKUPSWITCH => {
                let old_pad = 3 - pc % 4;
                let new_pad = 3 - npc as usize % 4;
                (len - old_pad + new_pad) as u32
            }
            _ => len as u32,
        };
        pc += len;
    }
    if returns == 0 {
        return Ok(None);
    }
    pos[code_len] = npc;
    if npc > 65535 {
        return Err(Error::overflow(format!(
            "code length {npc} after insertion exceeds 65535"
        )));
    }
    let map = Map { pos, code_len };

    // Pass 2: emit the code.
    let mut out: Vec<u8> = Vec::with_capacity(npc as usize);
    pc = 0;
    while pc < code_len {
        let op = code[pc];
        let len = insn_len(code, pc)?;
        let here = map.pos[pc] as i64;
        let rel = |off: i64| -> Result<i64> {
            Ok(map.get(pc as i64 + off, false, "branch target")? as i64 - here)
        };
        match op {
            RETURN => {
                out.extend_from_slice(insert);
                out.push(RETURN);
            }
            _ if is_branch16(op) => {
                let off = i16::from_be_bytes([code[pc + 1], code[pc + 2]]) as i64;
                let n = rel(off)?;
                let n = i16::try_from(n).map_err(|_| {
                    Error::overflow(format!("branch at {pc} no longer fits 16 bits"))
                })?;
                out.push(op);
                out.u2(n as u16);
            }
            GOTO_W => {
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
            _ => out.extend_from_slice(&code[pc..pc + len]),
        }
        pc += len;
    }
    if out.len() != npc as usize {
        return Err(Error::malformed("internal: relocated code length mismatch"));
    }

    // Exception table.
    let n_exc = r.u2()?;
    let mut tail: Vec<u8> = Vec::with_capacity(body.len() - r.pos() + 64);
    tail.u2(n_exc);
    for _ in 0..n_exc {
        let s = map.get(r.u2()? as i64, false, "exception start_pc")?;
        let e = map.get(r.u2()? as i64, true, "exception end_pc")?;
        let h = map.get(r.u2()? as i64, false, "exception handler_pc")?;
        if s >= e {
            return Err(Error::malformed(
                "exception table entry with start_pc >= end_pc",
            ));
        }
        tail.u2(s as u16);
        tail.u2(e as u16);
        tail.u2(h as u16);
        tail.u2(r.u2()?);
    }

    // Code attributes.
    let n_attr = r.u2()?;
    tail.u2(n_attr);
    for _ in 0..n_attr {
        let name_index = r.u2()?;
        let name = cp.utf8(name_index)?;
        let len = r.u4()? as usize;
        let a = r.bytes(len)?;
        tail.u2(name_index);
        let len_at = tail.len();
        tail.u4(0);
        match name {
            b"StackMapTable" => stack_map_table(a, &map, &mut tail)?,
            b"LineNumberTable" => {
                let mut ar = Reader::new(a, 0);
                let n = ar.u2()?;
                tail.u2(n);
                for _ in 0..n {
                    tail.u2(map.get(ar.u2()? as i64, false, "line number start_pc")? as u16);
                    tail.u2(ar.u2()?);
                }
            }
            b"LocalVariableTable" | b"LocalVariableTypeTable" => {
                let mut ar = Reader::new(a, 0);
                let n = ar.u2()?;
                tail.u2(n);
                for _ in 0..n {
                    let start = ar.u2()? as i64;
                    let length = ar.u2()? as i64;
                    let s = map.get(start, false, "local variable start_pc")?;
                    let e = map.get(start + length, true, "local variable end")?;
                    tail.u2(s as u16);
                    tail.u2((e - s) as u16);
                    tail.extend_from_slice(ar.bytes(6)?);
                }
            }
            b"RuntimeVisibleTypeAnnotations" | b"RuntimeInvisibleTypeAnnotations" => {
                return Err(Error::unsupported(
                    "type annotations inside a constructor's Code attribute",
                ));
            }
            _ => tail.extend_from_slice(a),
        }
        let alen = (tail.len() - len_at - 4) as u32;
        tail[len_at..len_at + 4].copy_from_slice(&alen.to_be_bytes());
    }
    if r.remaining() != 0 {
        return Err(Error::malformed(
            "Code attribute length does not match its content",
        ));
    }

    let new_stack = max_stack
        .checked_add(extra_stack)
        .ok_or_else(|| Error::overflow("max_stack exceeds 65535"))?;
    let mut attr_out = Vec::with_capacity(14 + out.len() + tail.len());
    attr_out.extend_from_slice(&data[attr.start..attr.start + 2]);
    let total = u32::try_from(8 + out.len() + tail.len())
        .map_err(|_| Error::overflow("Code attribute too long"))?;
    attr_out.u4(total);
    attr_out.u2(new_stack);
    attr_out.u2(max_locals);
    attr_out.u4(out.len() as u32);
    attr_out.extend_from_slice(&out);
    attr_out.extend_from_slice(&tail);
    Ok(Some(attr_out))
}

fn verification_type(r: &mut Reader<'_>, map: &Map, out: &mut Vec<u8>) -> Result<()> {
    let tag = r.u1()?;
    out.push(tag);
    match tag {
        0..=6 => {}
        7 => out.u2(r.u2()?),
        8 => {
            let off = r.u2()? as i64;
            out.u2(map.get(off, false, "uninitialized offset")? as u16);
        }
        _ => {
            return Err(Error::malformed(format!(
                "bad verification type tag {tag} in StackMapTable"
            )))
        }
    }
    Ok(())
}

/// Re-encode a StackMapTable with every frame moved to its new offset.
fn stack_map_table(a: &[u8], map: &Map, out: &mut Vec<u8>) -> Result<()> {
    let mut r = Reader::new(a, 0);
    let n = r.u2()?;
    out.u2(n);
    let mut prev_old: i64 = -1;
    let mut prev_new: i64 = -1;
    for _ in 0..n {
        let ft = r.u1()?;
        let delta = match ft {
            0..=63 => ft as i64,
            64..=127 => ft as i64 - 64,
            247..=255 => r.u2()? as i64,
            _ => {
                return Err(Error::malformed(format!(
                    "reserved StackMapTable frame type {ft}"
                )))
            }
        };
        let old = prev_old + delta + 1;
        prev_old = old;
        let new = map.get(old, false, "stack map frame offset")? as i64;
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
    Ok(())
}
