//! Where the return address is when a compiled Java method is stopped in its
//! prologue or epilogue (x86_64), proved by the instructions at the PC only.
//!
//! AsyncGetCallTrace cannot walk from such a PC (`unknown_Java`): the frame is
//! not built yet, or already torn down, so the frame size of the method does
//! not lead to its caller. Here the instruction about to run (and, for a few
//! states, the exact instructions just before it) says where the return
//! address is; a PC that matches none of these stays unwalked (docs/sampling.md
//! § Failed walks). What HotSpot's C1 and C2 emit (JDK 17-25):
//!
//! ```text
//! prologue:  mov [rsp - bang], eax       stack bang(s): frame not begun
//!            push rbp
//!            (mov rbp, rsp)              only with -XX:+PreserveFramePointer
//!            sub rsp, N
//!            (cmp dword [r15 + d8], imm32; jne)   entry barrier, JDK 21+
//! no bang:   sub rsp, F                  (imm32) a method that needs no stack bang
//!            mov [rsp + F - 8], rbp
//!            (entry barrier)
//! epilogue:  add rsp, N
//!            pop rbp
//!            cmp rsp, [r15 + poll]       return poll
//!            ja slow_path
//!            ret
//! ```

/// Where the caller's return address and saved rbp are, in bytes above rsp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unwind {
    pub return_address_at: usize,
    /// The caller's rbp, when the method pushed it (else rbp still holds it).
    pub saved_rbp_at: Option<usize>,
}

/// How far into a method's code its prologue's `push rbp` can be: after the
/// inline-cache check of the unverified entry and the stack bangs.
pub const PROLOGUE_BYTES: usize = 96;

/// Larger frames are not unwound (a bound on how far above rsp the
/// return address is read).
const MAX_FRAME_BYTES: usize = 1 << 16;

/// Bytes needed before and after the PC in the window given to [`unwind`].
pub const BEFORE: usize = 24;
pub const AFTER: usize = 8;

const NOT_BUILT: Unwind = Unwind {
    return_address_at: 0,
    saved_rbp_at: None,
};
const RBP_PUSHED: Unwind = Unwind {
    return_address_at: 8,
    saved_rbp_at: Some(0),
};

/// The unwind rule at the PC, or None when the instructions prove none.
/// `before`: the code bytes up to the PC (at most [`BEFORE`], fewer at the
/// start of the method); `at`: the bytes from the PC on (at most [`AFTER`]);
/// `offset`: how far the PC is from the start of the method's code.
pub fn unwind(before: &[u8], at: &[u8], offset: usize) -> Option<Unwind> {
    let is = |pat: &[u8]| at.starts_with(pat);
    // Epilogue, after `pop rbp`: the return address is at [rsp].
    if is(&[0xc3]) || return_poll(at).is_some() {
        return Some(NOT_BUILT);
    }
    if is(&[0x0f, 0x87]) && ends_with_return_poll(before) {
        return Some(NOT_BUILT);
    }
    // Epilogue, at `pop rbp` right after `add rsp, N`: [rsp] is the saved rbp.
    if is(&[0x5d]) && ends_with_rsp_op(before, 0xc4).is_some() {
        return Some(RBP_PUSHED);
    }
    // Prologue: a stack bang (a store below rsp) is only emitted before the frame.
    if stack_bang(at) {
        return Some(NOT_BUILT);
    }
    if offset >= PROLOGUE_BYTES {
        return None;
    }
    if is(&[0x55]) && (offset == 0 || ends_with_stack_bang(before)) {
        return Some(NOT_BUILT);
    }
    let pushed = before.ends_with(&[0x55]) || before.ends_with(&[0x55, 0x48, 0x89, 0xe5]);
    // A method without a stack bang (a leaf) allocates its frame first, with a
    // 4-byte immediate, and then stores rbp at its top.
    if !pushed && at.len() >= 7 && at.starts_with(&[0x48, 0x81, 0xec]) {
        return Some(NOT_BUILT);
    }
    if let Some(u) = after_frame_first(before, at) {
        return Some(u);
    }
    if pushed && (is(&[0x48, 0x89, 0xe5]) || rsp_op(at, 0xec).is_some()) {
        return Some(RBP_PUSHED);
    }
    // After `sub rsp, N`: at the entry barrier (JDK 21+) or the jump after it.
    let built = without_entry_barrier(before);
    for ins in [4, 7] {
        let Some(head) = built.len().checked_sub(ins) else {
            continue;
        };
        let (pre, sub) = built.split_at(head);
        if let Some(n) = rsp_op(sub, 0xec).filter(|&(_, len)| len == ins) {
            if pre.ends_with(&[0x55]) || pre.ends_with(&[0x55, 0x48, 0x89, 0xe5]) {
                return Some(Unwind {
                    return_address_at: n.0 + 8,
                    saved_rbp_at: Some(n.0),
                });
            }
        }
    }
    None
}

/// The prologue of a method without a stack bang: `sub rsp, F` (imm32 always)
/// then `mov [rsp + F - 8], rbp`. At the `mov`: the return address is at
/// [rsp + F], rbp not saved yet; right after it: saved at [rsp + F - 8].
fn after_frame_first(before: &[u8], at: &[u8]) -> Option<Unwind> {
    let sub_ends_at = |b: &[u8]| {
        let h = b.len().checked_sub(7)?;
        rsp_op(&b[h..], 0xec)
            .filter(|&(_, len)| len == 7)
            .map(|(f, _)| f)
    };
    if let Some(f) = sub_ends_at(before) {
        return (save_rbp(at) == Some(f.checked_sub(8)?)).then_some(Unwind {
            return_address_at: f,
            saved_rbp_at: None,
        });
    }
    let built = without_entry_barrier(before);
    for len in [5, 8] {
        let Some(h) = built.len().checked_sub(len) else {
            continue;
        };
        let (pre, mov) = built.split_at(h);
        let Some(f) = sub_ends_at(pre) else {
            continue;
        };
        if save_rbp(mov) == Some(f.checked_sub(8)?) && mov.len() == len {
            return Some(Unwind {
                return_address_at: f,
                saved_rbp_at: Some(f - 8),
            });
        }
    }
    None
}

/// `mov [rsp + d], rbp` at the start of `b` (d8 or d32 form): d.
fn save_rbp(b: &[u8]) -> Option<usize> {
    match b {
        [0x48, 0x89, 0x6c, 0x24, d, ..] => Some(*d as usize).filter(|_| b.len() >= 5 && *d < 0x80),
        [0x48, 0x89, 0xac, 0x24, a, b2, c, d, ..] => {
            usize::try_from(i32::from_le_bytes([*a, *b2, *c, *d])).ok()
        }
        _ => None,
    }
}

/// `add rsp, imm` (ext 0xc4) or `sub rsp, imm` (0xec) at the start of `b`:
/// (imm, instruction length).
fn rsp_op(b: &[u8], modrm: u8) -> Option<(usize, usize)> {
    match b {
        [0x48, 0x83, m, i, ..] if *m == modrm => Some((*i as i8 as isize as usize, 4)),
        [0x48, 0x81, m, a, b2, c, d, ..] if *m == modrm => {
            Some((i32::from_le_bytes([*a, *b2, *c, *d]) as isize as usize, 7))
        }
        _ => None,
    }
    .filter(|&(n, _)| n > 0 && n < MAX_FRAME_BYTES)
}

/// `b` ends with `add/sub rsp, imm` (of either length): imm.
fn ends_with_rsp_op(b: &[u8], modrm: u8) -> Option<usize> {
    [4, 7].into_iter().find_map(|len| {
        let tail = b.get(b.len().checked_sub(len)?..)?;
        rsp_op(tail, modrm)
            .filter(|&(_, l)| l == len)
            .map(|(n, _)| n)
    })
}

/// The nmethod entry barrier `cmp dword [r15 + d8], imm32` (JDK 21+; its
/// immediate is patched by the GC, so it is always 4 bytes).
const ENTRY_BARRIER_BYTES: usize = 8;

fn entry_barrier(b: &[u8]) -> bool {
    b.len() == ENTRY_BARRIER_BYTES && b.starts_with(&[0x41, 0x81, 0x7f])
}

/// The bytes before the PC without a trailing entry barrier: a PC at the
/// barrier or just after it is still in the prologue the barrier follows.
fn without_entry_barrier(before: &[u8]) -> &[u8] {
    match before.len().checked_sub(ENTRY_BARRIER_BYTES) {
        Some(h) if entry_barrier(&before[h..]) => &before[..h],
        _ => before,
    }
}

/// `cmp rsp, [r15 + disp]` (the return poll) at the start of `b`: its length.
fn return_poll(b: &[u8]) -> Option<usize> {
    match b {
        [0x49, 0x3b, 0x67, ..] => Some(4),
        [0x49, 0x3b, 0xa7, ..] => Some(7),
        _ => None,
    }
}

fn ends_with_return_poll(b: &[u8]) -> bool {
    [4, 7]
        .into_iter()
        .any(|len| b.len().checked_sub(len).and_then(|h| return_poll(&b[h..])) == Some(len))
}

/// `mov [rsp - d32], eax`: a stack bang (compiled code never stores below rsp
/// otherwise).
fn stack_bang(b: &[u8]) -> bool {
    match b {
        [0x89, 0x84, 0x24, a, b2, c, d, ..] => i32::from_le_bytes([*a, *b2, *c, *d]) < 0,
        _ => false,
    }
}

fn ends_with_stack_bang(b: &[u8]) -> bool {
    b.len() >= 7 && stack_bang(&b[b.len() - 7..])
}

/// Bytes before a return address that hold the call: `mov r10, imm64; call r10`
/// (13 bytes, how C2 calls a runtime leaf) or `call rel32` (5).
pub const CALL_SITE_BYTES: usize = 13;

/// The target of the call instruction that ends at `ra` (`b`: the 13 bytes before it).
pub fn call_target(b: &[u8; CALL_SITE_BYTES], ra: usize) -> Option<usize> {
    if b[10..] == [0x41, 0xff, 0xd2] && b[..2] == [0x49, 0xba] {
        let mut imm = [0u8; 8];
        imm.copy_from_slice(&b[2..10]);
        return Some(u64::from_le_bytes(imm) as usize);
    }
    if b[8] == 0xe8 {
        let rel = i32::from_le_bytes([b[9], b[10], b[11], b[12]]);
        return Some(ra.wrapping_add(rel as isize as usize));
    }
    None
}

/// Bytes read at a VM function to see whether it only jumps on ([`thunk_slot`]).
pub const THUNK_BYTES: usize = 9;

/// Where a VM function that only jumps on (`code`: its first bytes, at address
/// `at`) takes the address it jumps to from: `lea rax, [rip+d]; jmp [rax]` (how
/// HotSpot 21+ compiles `SharedRuntime::drem`/`frem`, to `StubRoutines::_fmod`) or
/// `jmp [rip+d]`. Compiled code calls such a function with `mov r10, imm64; call
/// r10`, and the stub runs with that call's return address as its own.
pub fn thunk_slot(code: &[u8; THUNK_BYTES], at: usize) -> Option<usize> {
    let rel = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as isize as usize;
    if code[..3] == [0x48, 0x8d, 0x05] && code[7..9] == [0xff, 0x20] {
        return Some(at.wrapping_add(7).wrapping_add(rel(&code[3..7])));
    }
    if code[..2] == [0xff, 0x25] {
        return Some(at.wrapping_add(6).wrapping_add(rel(&code[2..6])));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thunks_that_jump_through_a_pointer_are_read() {
        // SharedRuntime::drem on JDK 21: lea rax, [rip+0x786331]; jmp [rax]
        let at = 0xdd4c30usize;
        let b = [0x48, 0x8d, 0x05, 0x31, 0x63, 0x78, 0x00, 0xff, 0x20];
        assert_eq!(thunk_slot(&b, at), Some(0x155af68));
        // jmp [rip-0x10]
        let b = [0xff, 0x25, 0xf0, 0xff, 0xff, 0xff, 0, 0, 0];
        assert_eq!(thunk_slot(&b, 0x1000), Some(0x1000 + 6 - 0x10));
        // jmp fmod@plt (a direct jump: not through a pointer)
        let b = [0xe9, 0xbb, 0xd3, 0x56, 0xff, 0x90, 0x66, 0x2e, 0x0f];
        assert_eq!(thunk_slot(&b, 0xce4710), None);
    }

    const BANG: [u8; 7] = [0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff]; // mov [rsp-0x14000], eax
    const PUSH: [u8; 1] = [0x55];
    const SUB: [u8; 4] = [0x48, 0x83, 0xec, 0x20]; // sub rsp, 0x20
    const SUB32: [u8; 7] = [0x48, 0x81, 0xec, 0x10, 0x01, 0, 0]; // sub rsp, 0x110
    const ADD: [u8; 4] = [0x48, 0x83, 0xc4, 0x20];
    const POP: [u8; 1] = [0x5d];
    const POLL: [u8; 4] = [0x49, 0x3b, 0x67, 0x28]; // cmp rsp, [r15+0x28]
    const JA: [u8; 6] = [0x0f, 0x87, 1, 0, 0, 0];
    const RET: [u8; 1] = [0xc3];
    const BARRIER: [u8; 8] = [0x41, 0x81, 0x7f, 0x20, 0, 0, 0, 0];

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn call_targets_are_read_from_the_call_instruction() {
        let ra = 0x7000_1000usize;
        // mov r10, 0x7000_0040; call r10
        let mut b = [0u8; CALL_SITE_BYTES];
        b[..2].copy_from_slice(&[0x49, 0xba]);
        b[2..10].copy_from_slice(&0x7000_0040u64.to_le_bytes());
        b[10..].copy_from_slice(&[0x41, 0xff, 0xd2]);
        assert_eq!(call_target(&b, ra), Some(0x7000_0040));
        // call rel32 (-0x100)
        let mut c = [0x90u8; CALL_SITE_BYTES];
        c[8] = 0xe8;
        c[9..].copy_from_slice(&(-0x100i32).to_le_bytes());
        assert_eq!(call_target(&c, ra), Some(ra - 0x100));
        // Neither: no target.
        assert_eq!(call_target(&[0x90; CALL_SITE_BYTES], ra), None);
    }

    #[test]
    fn prologue_states() {
        let nb = Some(NOT_BUILT);
        assert_eq!(unwind(&[], &BANG, 0), nb);
        assert_eq!(unwind(&BANG, &cat(&[&PUSH, &SUB]), 7), nb);
        assert_eq!(unwind(&[], &cat(&[&PUSH, &SUB]), 0), nb);
        assert_eq!(unwind(&cat(&[&BANG, &PUSH]), &SUB, 8), Some(RBP_PUSHED));
        let after_sub = Some(Unwind {
            return_address_at: 0x28,
            saved_rbp_at: Some(0x20),
        });
        assert_eq!(unwind(&cat(&[&BANG, &PUSH, &SUB]), &BARRIER, 12), after_sub);
        // JDK 21+: at the jump of the entry barrier after the sub.
        let jne = [0x0f, 0x85, 0xeb, 0, 0, 0];
        assert_eq!(
            unwind(&cat(&[&BANG, &PUSH, &SUB, &BARRIER]), &jne, 20),
            after_sub
        );
        let after_sub32 = unwind(&cat(&[&BANG, &PUSH, &SUB32]), &BARRIER, 15);
        assert_eq!(after_sub32.map(|u| u.return_address_at), Some(0x118));
        // With -XX:+PreserveFramePointer.
        let mov = [0x48, 0x89, 0xe5];
        assert_eq!(unwind(&cat(&[&BANG, &PUSH]), &mov, 8), Some(RBP_PUSHED));
        assert_eq!(
            unwind(&cat(&[&BANG, &PUSH, &mov]), &SUB, 11),
            Some(RBP_PUSHED)
        );
    }

    #[test]
    fn prologue_states_without_a_stack_bang() {
        // JDK 25 (seen): UEP, then sub rsp, 0x18; mov [rsp+0x10], rbp.
        let uep = [
            0x66, 0x90, 0x44, 0x8b, 0x56, 0x08, 0x44, 0x3b, 0x50, 0x08, 0x0f, 0x85, 0xd0, 0x62,
            0xab, 0xff,
        ];
        let sub = [0x48, 0x81, 0xec, 0x18, 0, 0, 0];
        let mov = [0x48, 0x89, 0x6c, 0x24, 0x10];
        assert_eq!(unwind(&uep, &cat(&[&sub, &mov]), 16), Some(NOT_BUILT));
        let at_mov = Some(Unwind {
            return_address_at: 0x18,
            saved_rbp_at: None,
        });
        assert_eq!(unwind(&cat(&[&uep, &sub]), &mov, 23), at_mov);
        let built = Some(Unwind {
            return_address_at: 0x18,
            saved_rbp_at: Some(0x10),
        });
        assert_eq!(unwind(&cat(&[&uep, &sub, &mov]), &BARRIER, 28), built);
        let jne = [0x0f, 0x85, 0x10, 0, 0, 0];
        assert_eq!(unwind(&cat(&[&sub, &mov, &BARRIER]), &jne, 36), built);
        // A store of rbp elsewhere than the frame's top proves nothing.
        let other = [0x48, 0x89, 0x6c, 0x24, 0x08];
        assert_eq!(unwind(&cat(&[&uep, &sub]), &other, 23), None);
    }

    #[test]
    fn epilogue_states() {
        let nb = Some(NOT_BUILT);
        assert_eq!(unwind(&ADD, &cat(&[&POP, &POLL]), 300), Some(RBP_PUSHED));
        assert_eq!(unwind(&cat(&[&ADD, &POP]), &POLL, 300), nb);
        assert_eq!(unwind(&cat(&[&ADD, &POP, &POLL]), &JA, 300), nb);
        assert_eq!(unwind(&JA, &RET, 300), nb);
    }

    #[test]
    fn nothing_is_guessed_elsewhere() {
        // A push rbp or a sub rsp far into the code is not the prologue's.
        assert_eq!(unwind(&BANG, &PUSH, 400), None);
        assert_eq!(unwind(&PUSH, &SUB, 400), None);
        // A pop rbp without the frame's release before it, a store above rsp.
        assert_eq!(unwind(&[0x90, 0x90, 0x90, 0x90], &POP, 300), None);
        assert_eq!(unwind(&[], &[0x89, 0x84, 0x24, 0x10, 0, 0, 0], 300), None);
        // A ja that does not follow the return poll.
        assert_eq!(unwind(&[0x48, 0x3b, 0xc1], &JA, 300), None);
        // A push rbp early in the code but not after a stack bang or at the start.
        assert_eq!(unwind(&[0x90], &PUSH, 20), None);
        assert_eq!(unwind(&[], &[0x48, 0x8b, 0x04, 0x24], 0), None);
    }
}
