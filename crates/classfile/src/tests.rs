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
    assert_eq!(names, vec![("m$weft", 0x100a), ("m", 0x0009)]);
    // Wrapping again is a no-op: m$weft exists.
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
        dont_inline: false,
    };
    for (enter, exit) in [(true, false), (false, true), (true, true)] {
        let what = Instrumentation {
            wraps: vec![WrapRequest {
                name: "m".into(),
                descriptor: "(J)V".into(),
                probe_id: 70000,
                pass_arg0: false,
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
        // static m: aconst_null (this) + invokestatic enter; lload_0 + invokestatic m$weft.
        let calls = ops.iter().filter(|&&b| b == 0xb8).count();
        assert!(calls >= 1 + usize::from(enter) + usize::from(exit));
        let handlers = u16::from_be_bytes([body[8 + len], body[9 + len]]);
        // Without an exit hook, no exception handler (and no stack map).
        assert_eq!(handlers, u16::from(exit));
        // No probe id is pushed (70000 would be an ldc of an Integer constant).
        assert!(!ops.contains(&0x12) && !ops.contains(&0x13));
    }
}

/// `dont_inline` gives the wrapper (only) a `@DontInline` in RuntimeVisibleAnnotations.
#[test]
fn hooked_wrapper_can_be_marked_dont_inline() {
    let c = class();
    let what = Instrumentation {
        wraps: vec![WrapRequest {
            name: "m".into(),
            descriptor: "(J)V".into(),
            probe_id: 70000,
            pass_arg0: false,
            hooks: Some(Hooks {
                class: "weft/FjProbe".into(),
                enter: Some(("fork".to_string(), "(Ljava/lang/Object;)V".to_string())),
                exit: None,
                dont_inline: true,
            }),
        }],
        constructor_probe: None,
    };
    let r = instrument(&c, &what).unwrap();
    let cf = ClassFile::parse(&r.bytes).unwrap();
    let ann = |name: &[u8]| {
        let m = cf.methods.iter().find(|m| m.name == name).unwrap();
        let rva: Vec<_> = m
            .attrs
            .iter()
            .filter(|a| a.name == b"RuntimeVisibleAnnotations")
            .collect();
        assert!(rva.len() <= 1, "one attribute of a kind");
        rva.first().map(|a| cf.data[a.body..a.end()].to_vec())
    };
    let w = ann(b"m").expect("the wrapper is annotated");
    assert_eq!(u16::from_be_bytes([w[0], w[1]]), 1);
    let ty = u16::from_be_bytes([w[2], w[3]]);
    assert_eq!(
        cf.cp.utf8(ty).unwrap(),
        b"Ljdk/internal/vm/annotation/DontInline;"
    );
    assert!(
        ann(b"m$weft").is_none(),
        "the original body is not annotated"
    );
}
