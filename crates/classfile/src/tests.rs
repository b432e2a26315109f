//! Unit tests on hand-built class files (the javac-based tests live in tests/).

use super::*;

fn utf8(out: &mut Vec<u8>, s: &str) {
    out.push(1);
    out.u2(s.len() as u16);
    out.extend_from_slice(s.as_bytes());
}

/// Constant pool: 1 "A", 2 Class A, 3 "java/lang/Object", 4 Class Object, 5 "m", 6 "(J)V",
/// 7 NameAndType m:(J)V, 8-9 Long, 10 Methodref A.m, 11 InterfaceMethodref Object.m, 12 "Code".
fn pool() -> (u16, Vec<u8>) {
    let mut cp = Vec::new();
    utf8(&mut cp, "A");
    cp.extend_from_slice(&[7, 0, 1]);
    utf8(&mut cp, "java/lang/Object");
    cp.extend_from_slice(&[7, 0, 3]);
    utf8(&mut cp, "m");
    utf8(&mut cp, "(J)V");
    cp.extend_from_slice(&[12, 0, 5, 0, 6]);
    cp.extend_from_slice(&[5, 0, 0, 0, 0, 0, 0, 0, 1]);
    cp.extend_from_slice(&[10, 0, 2, 0, 7]);
    cp.extend_from_slice(&[11, 0, 4, 0, 7]);
    utf8(&mut cp, "Code");
    (13, cp)
}

/// public class A { static void m(long) { return; } }
fn class() -> Vec<u8> {
    let (n, cp) = pool();
    let mut c = vec![0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52];
    c.u2(n);
    c.extend_from_slice(&cp);
    c.u2(0x21);
    c.u2(2);
    c.u2(4);
    c.u2(0); // interfaces
    c.u2(0); // fields
    c.u2(1); // methods
    c.u2(0x0009);
    c.u2(5);
    c.u2(6);
    c.u2(1);
    c.u2(12);
    c.u4(13);
    c.u2(0); // max_stack
    c.u2(2); // max_locals
    c.u4(1);
    c.push(0xb1);
    c.u2(0);
    c.u2(0);
    c.u2(0); // class attributes
    c
}

/// A method's Code attribute, decoded for the assertions below.
struct CodeView {
    max_stack: u16,
    max_locals: u16,
    ops: Vec<u8>,
    exceptions: Vec<[u16; 4]>,
    /// (name, body) of the Code attribute's attributes.
    attrs: Vec<(String, Vec<u8>)>,
}

fn code_of(class: &[u8], method: &str) -> CodeView {
    let cf = ClassFile::parse(class).unwrap();
    let m = cf
        .methods
        .iter()
        .find(|m| m.name == method.as_bytes())
        .unwrap();
    let a = m.attrs.iter().find(|a| a.name == b"Code").unwrap();
    let mut r = Reader::new(&cf.data[a.body..a.end()], 0);
    let max_stack = r.u2().unwrap();
    let max_locals = r.u2().unwrap();
    let n = r.u4().unwrap() as usize;
    let ops = r.bytes(n).unwrap().to_vec();
    let ne = r.u2().unwrap();
    let exceptions = (0..ne)
        .map(|_| {
            [
                r.u2().unwrap(),
                r.u2().unwrap(),
                r.u2().unwrap(),
                r.u2().unwrap(),
            ]
        })
        .collect();
    let na = r.u2().unwrap();
    let attrs = (0..na)
        .map(|_| {
            let name = cf.cp.utf8(r.u2().unwrap()).unwrap();
            let len = r.u4().unwrap() as usize;
            (
                String::from_utf8(name.to_vec()).unwrap(),
                r.bytes(len).unwrap().to_vec(),
            )
        })
        .collect();
    assert_eq!(r.remaining(), 0);
    CodeView {
        max_stack,
        max_locals,
        ops,
        exceptions,
        attrs,
    }
}

#[test]
fn resolves_member_refs() {
    let (n, cp) = pool();
    let r = resolve_member_ref(n, &cp, 10).unwrap();
    assert_eq!(r, ("A".into(), "m".into(), "(J)V".into()));
    let r = resolve_member_ref(n, &cp, 11).unwrap();
    assert_eq!(r.0, "java/lang/Object");
    for bad in [0, 1, 8, 9, 13, 400] {
        assert!(resolve_member_ref(n, &cp, bad).is_err(), "index {bad}");
    }
    assert!(resolve_member_ref(n, &cp[..cp.len() - 3], 10).is_err());
    let c = class();
    let (n2, cp2) = constant_pool(&c).unwrap();
    assert_eq!((n2, cp2), (n, &cp[..]));
}

#[test]
fn summarizes_and_rejects_garbage() {
    let c = class();
    let s = summarize(&c).unwrap();
    assert_eq!(s.name, "A");
    assert_eq!(s.super_name.as_deref(), Some("java/lang/Object"));
    assert_eq!(s.major, 52);
    assert_eq!(s.methods.len(), 1);
    assert_eq!(s.methods[0].descriptor, "(J)V");
    for len in 0..c.len() {
        let e = summarize(&c[..len]).unwrap_err();
        assert!(!e.to_string().is_empty());
    }
    let mut bad = c.clone();
    bad[0] = 0;
    assert!(summarize(&bad).unwrap_err().to_string().contains("magic"));
    let mut bad = c.clone();
    bad[10] = 21; // tag of entry 1
    let e = summarize(&bad).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(
        e.to_string()
            .contains("unsupported constant pool tag 21 at entry 1"),
        "{e}"
    );
    let mut extra = c.clone();
    extra.push(0);
    assert!(summarize(&extra).is_err());
}

#[test]
fn wraps_static_method_of_hand_built_class() {
    let c = class();
    let what = Instrumentation {
        wraps: vec![WrapRequest {
            name: "m".into(),
            descriptor: "(J)V".into(),
            probe_id: 70000,
            pass_arg0: true,
            pass_result: false,
            hooks: None,
        }],
        constructor_probe: Some(1),
    };
    let r = instrument(&c, &what).unwrap();
    assert_eq!(r.wrapped, vec![("m".to_string(), "(J)V".to_string())]);
    assert_eq!(r.constructors, 0);
    let s = summarize(&r.bytes).unwrap();
    let names: Vec<_> = s
        .methods
        .iter()
        .map(|m| (m.name.as_str(), m.access))
        .collect();
    // In place: the same single method, same name and modifiers.
    assert_eq!(names, vec![("m", 0x0009)]);
    let code = code_of(&r.bytes, "m");
    // iconst/ldc id, aconst_null (static), aconst_null (no reference arg), invokestatic enter;
    // then the exit sequence before the return, then the handler: exit sequence + athrow.
    assert_eq!(code.ops[0], 0x12, "ldc of 70000");
    assert_eq!(&code.ops[2..4], &[0x01, 0x01]);
    assert_eq!(code.ops[4], 0xb8);
    assert_eq!(code.ops[7], 0x12);
    assert_eq!(code.ops[13], 0xb1);
    // The body is only `return`: nothing to cover, so no handler, no stack map.
    assert_eq!(code.ops.len(), 7 + 6 + 1);
    assert!(code.exceptions.is_empty());
    assert_eq!(code.max_stack, 4);
    // Instrumenting again is a no-op: the body already calls the probes.
    let again = instrument(&r.bytes, &what).unwrap();
    assert!(again.wrapped.is_empty());
    // Nothing requested: the bytes come back unchanged.
    let none = instrument(&c, &Instrumentation::default()).unwrap();
    assert!(!none.changed() && none.bytes == c);
}

#[test]
fn constant_pool_overflow_is_an_error() {
    // A pool of 65530 entries: appending the probe constants overflows.
    let mut c = vec![0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52];
    let (_, cp) = pool();
    let filler = 65530 - 13;
    c.u2(13 + filler as u16);
    c.extend_from_slice(&cp);
    for _ in 0..filler {
        c.extend_from_slice(&[3, 0, 0, 0, 0]);
    }
    let tail = &class()[10 + cp.len()..];
    c.extend_from_slice(tail);
    assert!(summarize(&c).is_ok());
    let what = Instrumentation {
        wraps: vec![WrapRequest {
            name: "m".into(),
            descriptor: "(J)V".into(),
            probe_id: 1,
            pass_arg0: false,
            pass_result: false,
            hooks: None,
        }],
        constructor_probe: None,
    };
    let e = instrument(&c, &what).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow, "{e}");
}

/// The names and descriptors of a class's fields, read back from its bytes.
fn fields_of(bytes: &[u8]) -> Vec<(u16, String, String)> {
    let cf = ClassFile::parse(bytes).unwrap();
    let data = cf.data;
    let at = cf.fields_count_at;
    let n = u16::from_be_bytes([data[at], data[at + 1]]);
    let mut r = Reader::new(data, at + 2);
    let mut out = Vec::new();
    for _ in 0..n {
        let access = r.u2().unwrap();
        let name = cf.cp.utf8(r.u2().unwrap()).unwrap().to_vec();
        let desc = cf.cp.utf8(r.u2().unwrap()).unwrap().to_vec();
        let attrs = r.u2().unwrap();
        assert_eq!(attrs, 0);
        out.push((
            access,
            String::from_utf8(name).unwrap(),
            String::from_utf8(desc).unwrap(),
        ));
    }
    out
}

#[test]
fn adds_fields_once() {
    let c = class();
    let req = |name: &str, desc: &str| FieldRequest {
        access: 0x0081,
        name: name.into(),
        descriptor: desc.into(),
    };
    let (b, n) = add_fields(
        &c,
        &[req("weft$u", "J"), req("weft$b", "Ljava/lang/Object;")],
    )
    .unwrap();
    assert_eq!(n, 2);
    assert_eq!(
        fields_of(&b),
        vec![
            (0x0081, "weft$u".into(), "J".into()),
            (0x0081, "weft$b".into(), "Ljava/lang/Object;".into()),
        ]
    );
    // Methods and the rest of the class are intact.
    let s = summarize(&b).unwrap();
    assert_eq!(s.methods.len(), 1);
    assert_eq!(s.name, "A");
    // Adding again: nothing (the names exist); a new one is appended after them.
    let (b2, n2) = add_fields(&b, &[req("weft$u", "J")]).unwrap();
    assert_eq!((n2, b2 == b), (0, true));
    let (b3, n3) = add_fields(&b, &[req("weft$u", "J"), req("x", "I")]).unwrap();
    assert_eq!(n3, 1);
    assert_eq!(fields_of(&b3).len(), 3);
    // A bad descriptor is an error, not a broken class.
    assert!(add_fields(&c, &[req("bad", "Q")]).is_err());
    assert!(add_fields(&c, &[req("bad", "JJ")]).is_err());
    // The fields survive a later wrap of the class.
    let what = Instrumentation {
        wraps: vec![WrapRequest {
            name: "m".into(),
            descriptor: "(J)V".into(),
            probe_id: 3,
            pass_arg0: false,
            pass_result: false,
            hooks: None,
        }],
        constructor_probe: None,
    };
    let w = instrument(&b, &what).unwrap();
    assert_eq!(fields_of(&w.bytes).len(), 2);
}

#[test]
fn wraps_with_custom_hooks() {
    let c = class();
    let hooks = |enter: bool, exit: bool| Hooks {
        class: "weft/FjProbe".into(),
        enter: enter.then(|| ("fork".to_string(), "(Ljava/lang/Object;)V".to_string())),
        exit: exit.then(|| ("forkEnd".to_string(), "(Ljava/lang/Object;)V".to_string())),
        last_ref_arg: false,
    };
    for (enter, exit) in [(true, false), (false, true), (true, true)] {
        let what = Instrumentation {
            wraps: vec![WrapRequest {
                name: "m".into(),
                descriptor: "(J)V".into(),
                probe_id: 70000,
                pass_arg0: false,
                pass_result: false,
                hooks: Some(hooks(enter, exit)),
            }],
            constructor_probe: None,
        };
        let r = instrument(&c, &what).unwrap();
        assert_eq!(r.wrapped.len(), 1);
        let cf = ClassFile::parse(&r.bytes).unwrap();
        // The hooks are referenced, Probe.enter/exit are not.
        assert_eq!(cf.cp.find_utf8(b"fork").is_some(), enter);
        assert_eq!(cf.cp.find_utf8(b"forkEnd").is_some(), exit);
        assert!(cf.cp.find_utf8(b"weft/FjProbe").is_some());
        let m = cf.methods.iter().find(|m| m.name == b"m").unwrap();
        let code = m.attrs.iter().find(|a| a.name == b"Code").unwrap();
        let body = &cf.data[code.body..code.end()];
        let len = u32::from_be_bytes([body[4], body[5], body[6], body[7]]) as usize;
        let ops = &body[8..8 + len];
        // static m: aconst_null (this) + invokestatic enter; aconst_null + invokestatic exit.
        let calls = ops.iter().filter(|&&b| b == 0xb8).count();
        assert_eq!(calls, usize::from(enter) + usize::from(exit));
        let handlers = u16::from_be_bytes([body[8 + len], body[9 + len]]);
        // The body is only `return`: the exit hook runs before it, no handler is needed.
        assert_eq!(handlers, 0);
        // No probe id is pushed (70000 would be an ldc of an Integer constant).
        assert!(!ops.contains(&0x12) && !ops.contains(&0x13));
    }
}

/// `public class B { static int k(int) }` with a loop back to offset 0, a branch, a tableswitch
/// and three returns (see `relocates_a_body` for the code).
fn class_with_body() -> Vec<u8> {
    let mut cp = Vec::new();
    utf8(&mut cp, "B"); // 1
    cp.extend_from_slice(&[7, 0, 1]); // 2
    utf8(&mut cp, "java/lang/Object"); // 3
    cp.extend_from_slice(&[7, 0, 3]); // 4
    utf8(&mut cp, "k"); // 5
    utf8(&mut cp, "(I)I"); // 6
    utf8(&mut cp, "Code"); // 7
    utf8(&mut cp, "StackMapTable"); // 8
    utf8(&mut cp, "LineNumberTable"); // 9
    let mut code = vec![
        0x1a, // 0: iload_0
        0x9e, 0, 9, // 1: ifle -> 10
        0x84, 0, 0xff, // 4: iinc 0, -1
        0xa7, 0xff, 0xf9, // 7: goto -> 0
        0x1a, // 10: iload_0
        0xaa, // 11: tableswitch (no padding at 12)
    ];
    for v in [25i32, 0, 1, 21, 23] {
        code.extend_from_slice(&v.to_be_bytes()); // default -> 36, low 0, high 1, -> 32, -> 34
    }
    code.extend_from_slice(&[0x04, 0xac, 0x05, 0xac, 0x02, 0xac]); // 32, 34, 36: iconst; ireturn
    assert_eq!(code.len(), 38);
    // Frames at 0, 10, 32, 34, 36: all same_frame.
    let smt: Vec<u8> = vec![0, 5, 0, 9, 21, 1, 1];
    let lnt: Vec<u8> = vec![0, 2, 0, 0, 0, 7, 0, 32, 0, 9];
    let mut c = vec![0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52];
    c.u2(10);
    c.extend_from_slice(&cp);
    c.u2(0x21);
    c.u2(2);
    c.u2(4);
    c.u2(0);
    c.u2(0);
    c.u2(1);
    c.u2(0x0009);
    c.u2(5);
    c.u2(6);
    c.u2(1);
    c.u2(7);
    c.u4((12 + code.len() + 6 + smt.len() + 6 + lnt.len()) as u32);
    c.u2(1); // max_stack
    c.u2(1); // max_locals
    c.u4(code.len() as u32);
    c.extend_from_slice(&code);
    c.u2(0);
    c.u2(2);
    c.u2(8);
    c.u4(smt.len() as u32);
    c.extend_from_slice(&smt);
    c.u2(9);
    c.u4(lnt.len() as u32);
    c.extend_from_slice(&lnt);
    c.u2(0);
    c
}

/// Default probes (id 5) on `B.k(I)I`.
fn probe_k() -> Instrumentation {
    Instrumentation {
        wraps: vec![WrapRequest {
            name: "k".into(),
            descriptor: "(I)I".into(),
            probe_id: 5,
            pass_arg0: false,
            pass_result: false,
            hooks: None,
        }],
        constructor_probe: None,
    }
}

/// Every offset of the body moves to the exact place the layout gives (offsets worked out by hand).
#[test]
fn relocates_a_body() {
    let c = class_with_body();
    assert!(summarize(&c).is_ok());
    let what = probe_k();
    let r = instrument(&c, &what).unwrap();
    assert_eq!(r.wrapped.len(), 1);
    let v = code_of(&r.bytes, "k");
    let enter = u16::from_be_bytes([v.ops[4], v.ops[5]]);
    let exit = u16::from_be_bytes([v.ops[44], v.ops[45]]);
    let [e0, e1] = enter.to_be_bytes();
    let [x0, x1] = exit.to_be_bytes();
    let mut want = vec![
        0x08, 0x01, 0x01, 0xb8, e0, e1,   // 0: iconst_5, null, null, invokestatic enter
        0x1a, // 6: iload_0 (old 0)
        0x9e, 0, 9, // 7: ifle -> 16
        0x84, 0, 0xff, // 10: iinc
        0xa7, 0xff, 0xf9, // 13: goto -> 6 (after the prologue)
        0x1a, // 16: iload_0 (old 10)
        0xaa, 0, 0, // 17: tableswitch, 2 bytes of padding at its new address
    ];
    for v in [37i32, 0, 1, 23, 30] {
        want.extend_from_slice(&v.to_be_bytes());
    }
    for k in [0x04, 0x05, 0x02] {
        // 40, 47, 54 (old 32, 34, 36): iconst, then the exit sequence before the ireturn.
        want.extend_from_slice(&[k, 0x08, 0x01, 0xb8, x0, x1, 0xac]);
    }
    assert_eq!(want.len(), 61);
    want.extend_from_slice(&[0x08, 0x01, 0xb8, x0, x1, 0xbf]); // 61: handler
    assert_eq!(v.ops, want);
    // Catch-all: the body minus each exit sequence and its ireturn.
    assert_eq!(
        v.exceptions,
        vec![[6, 41, 61, 0], [47, 48, 61, 0], [54, 55, 61, 0]]
    );
    assert_eq!((v.max_stack, v.max_locals), (5, 1));
    let smt = &v.attrs.iter().find(|a| a.0 == "StackMapTable").unwrap().1;
    let cls = |n: &str| {
        let cf = ClassFile::parse(&r.bytes).unwrap();
        (1..cf.cp.count())
            .find(|&i| cf.cp.class_name(i).is_ok_and(|x| x == n.as_bytes()))
            .unwrap()
    };
    let [t0, t1] = cls("java/lang/Throwable").to_be_bytes();
    // Frames at 6, 16, 40, 47, 54 (old 0, 10, 32, 34, 36), then the handler's full frame at 61:
    // no locals (static), stack [Throwable].
    assert_eq!(
        smt,
        &vec![0, 6, 6, 9, 23, 6, 6, 255, 0, 6, 0, 0, 0, 1, 7, t0, t1]
    );
    let lnt = &v.attrs.iter().find(|a| a.0 == "LineNumberTable").unwrap().1;
    // Line 7 starts at 0 (the prologue belongs to the first line); line 9 at old 32 -> 40.
    assert_eq!(lnt, &vec![0, 2, 0, 0, 0, 7, 0, 40, 0, 9]);
}

/// An old class file (major 49, no stack maps) with a subroutine: `jsr` and `ret` are relocated
/// like any branch.
#[test]
fn relocates_a_subroutine() {
    let mut c = class_with_body();
    c[6..8].copy_from_slice(&49u16.to_be_bytes());
    // k's code (38 bytes, padded with nops) becomes a call of a subroutine that keeps its return
    // address in local 1.
    let cf = ClassFile::parse(&c).unwrap();
    let m = cf.methods.iter().find(|m| m.name == b"k").unwrap();
    let a = m.attrs.iter().find(|a| a.name == b"Code").unwrap();
    let mut code = vec![
        0xa8, 0, 6,    // 0: jsr -> 6
        0x1a, // 3: iload_0
        0xac, // 4: ireturn
        0x00, // 5: nop
        0x4c, // 6: astore_1 (the return address)
        0xa9, 1, // 7: ret 1
    ];
    code.resize(38, 0x00);
    let at = a.body + 8;
    let mut c2 = c.clone();
    c2[a.body + 2..a.body + 4].copy_from_slice(&2u16.to_be_bytes()); // max_locals
    c2[at..at + 38].copy_from_slice(&code);
    let what = probe_k();
    let r = instrument(&c2, &what).unwrap();
    let v = code_of(&r.bytes, "k");
    // Prologue (6), jsr at 6 -> old 6 = 6 + 3 + 1 + 5 + 1 + 1 = 17: +11.
    assert_eq!(&v.ops[6..9], &[0xa8, 0, 11]);
    assert_eq!(v.ops[17], 0x4c);
    assert_eq!(&v.ops[18..20], &[0xa9, 1]);
    // The handler after the 38 relocated bytes (+ prologue 6 + exit 5), covering the body but
    // the exit sequence and its ireturn; no frame is added for it (major 49: no stack maps).
    assert_eq!(v.exceptions, vec![[6, 10, 49, 0], [16, 49, 49, 0]]);
    let smt = &v.attrs.iter().find(|a| a.0 == "StackMapTable").unwrap().1;
    assert_eq!(
        u16::from_be_bytes([smt[0], smt[1]]),
        5,
        "the body's own frames only"
    );
}
