//! The probe calls inserted into a method body: the entry sequence (the prologue) and the exit
//! sequence (before each return and in the catch-all handler). Neither touches the locals, and
//! each leaves the operand stack as it found it.

use crate::cpool::Appender;
use crate::descriptor::{Kind, MethodDesc};

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

/// What one instrumented method calls: the default probes (`Probe.enter(P, this, arg0)` /
/// `Probe.exit(P, this)`) or custom hooks (`enter(this[, arg0])` / `exit(this)`, no probe id).
pub(crate) struct Calls {
    /// The push of the probe id (empty for custom hooks).
    pub push_id: Vec<u8>,
    pub enter: Option<u16>,
    pub exit: Option<u16>,
    /// The entry call takes the first reference argument (null if none); the default probe
    /// always takes one (null unless requested), a hook only if requested.
    pub enter_takes_arg: bool,
    pub pass_arg0: bool,
    /// The last reference argument instead of the first (`Hooks::last_ref_arg`).
    pub last_ref_arg: bool,
    /// The exit call also takes the method's result (`WrapRequest::pass_result`).
    pub result: Option<Result>,
}

/// The type of a result the exit call takes first.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Result {
    Int,
    Long,
}

/// (prologue, exit sequence before each return, exit sequence of the catch-all handler) of
/// a method. With a result, the one before a return copies the return value under the
/// call's other arguments (`dup`/`dup2`: the value stays below, for the return), the
/// handler's passes 0 (the method threw).
pub(crate) fn sequences(
    calls: &Calls,
    desc: &MethodDesc<'_>,
    is_static: bool,
) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let this_or_null = if is_static { 0x01 } else { 0x2a };
    let mut prologue = Vec::new();
    if let Some(enter) = calls.enter {
        prologue.extend_from_slice(&calls.push_id);
        prologue.push(this_or_null);
        if calls.enter_takes_arg {
            // The first reference parameter (ForkJoinPool.poolSubmit(boolean, ForkJoinTask) on 21+).
            let mut slot: u16 = if is_static { 0 } else { 1 };
            let mut first_ref = None;
            for &k in &desc.params {
                if matches!(k, Kind::Ref(_)) {
                    first_ref = Some((k, slot));
                    if !calls.last_ref_arg {
                        break;
                    }
                }
                slot += k.slots();
            }
            match first_ref {
                Some((k, s)) if calls.pass_arg0 => load(&mut prologue, k, s),
                _ => prologue.push(0x01),
            }
        }
        prologue.push(0xb8);
        prologue.extend_from_slice(&enter.to_be_bytes());
    }
    let mut call = Vec::new();
    if let Some(exit) = calls.exit {
        call.extend_from_slice(&calls.push_id);
        call.push(this_or_null);
        call.push(0xb8);
        call.extend_from_slice(&exit.to_be_bytes());
    }
    let (copy, zero): (&[u8], &[u8]) = match (calls.exit, calls.result) {
        (Some(_), Some(Result::Int)) => (&[0x59], &[0x03]), // dup, iconst_0
        (Some(_), Some(Result::Long)) => (&[0x5c], &[0x09]), // dup2, lconst_0
        _ => (&[], &[]),
    };
    let exit_seq = [copy, &call].concat();
    let handler_seq = [zero, &call].concat();
    (prologue, exit_seq, handler_seq)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::parse_method;

    /// The entry hook's argument: the first reference parameter, or with `last_ref_arg` the
    /// last (`beforeExecute(Thread, Runnable)`'s task, slot 2 of an instance method).
    #[test]
    fn the_entry_hook_gets_the_first_or_the_last_reference_argument() {
        let desc = parse_method(b"(Ljava/lang/Thread;JLjava/lang/Runnable;)V").unwrap();
        let prologue = |last_ref_arg: bool| {
            let calls = Calls {
                push_id: Vec::new(),
                enter: Some(7),
                exit: None,
                enter_takes_arg: true,
                pass_arg0: true,
                last_ref_arg,
                result: None,
            };
            sequences(&calls, &desc, false).0
        };
        // aload_0 (this), aload_1 (the Thread), invokestatic #7.
        assert_eq!(prologue(false), [0x2a, 0x2b, 0xb8, 0, 7]);
        // aload_0, aload 4 (after the Thread and the long's two slots), invokestatic #7.
        assert_eq!(prologue(true), [0x2a, 0x19, 4, 0xb8, 0, 7]);
    }

    /// With the result, the exit call before a return takes a copy of the return value
    /// (`dup`, a long's `dup2`), the handler's takes 0 (`iconst_0`, `lconst_0`): then the
    /// probe id, `this` and the call, as without it.
    #[test]
    fn the_exit_call_gets_the_result_or_zero_in_the_handler() {
        let desc = parse_method(b"(IJ)I").unwrap();
        let seqs = |result| {
            let calls = Calls {
                push_id: vec![0x08],
                enter: None,
                exit: Some(9),
                enter_takes_arg: false,
                pass_arg0: false,
                last_ref_arg: false,
                result,
            };
            let (_, exit, handler) = sequences(&calls, &desc, false);
            (exit, handler)
        };
        let call = [0x08, 0x2a, 0xb8, 0, 9];
        assert_eq!(seqs(None), (call.to_vec(), call.to_vec()));
        assert_eq!(
            seqs(Some(Result::Int)),
            ([&[0x59][..], &call].concat(), [&[0x03][..], &call].concat())
        );
        assert_eq!(
            seqs(Some(Result::Long)),
            ([&[0x5c][..], &call].concat(), [&[0x09][..], &call].concat())
        );
    }
}
