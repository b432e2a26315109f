//! Readable names of hidden (lambda) classes, docs/task-model.md §Lambdas.

use crate::jni::{jclass, jobject, Jni};
use crate::jvmti::Jvmti;

/// `a.b.C$$Lambda$14/0x0000000800c03000` -> `a.b.C$$Lambda` (also the JDK 21+ form without `$14`).
pub fn strip_hidden_suffix(name: &str) -> String {
    let base = match name.find('/') {
        Some(i) => &name[..i],
        None => name,
    };
    if let Some(i) = base.find("$$Lambda") {
        return base[..i + "$$Lambda".len()].to_string();
    }
    // Other hidden classes: drop a trailing `$<digits>`.
    match base.rfind('$') {
        Some(i) if i + 1 < base.len() && base[i + 1..].bytes().all(|b| b.is_ascii_digit()) => {
            base[..i].to_string()
        }
        _ => base.to_string(),
    }
}

/// Length of the instruction at `code[pc]`, None for variable-length ones.
pub(crate) fn insn_len(op: u8) -> Option<usize> {
    Some(match op {
        0x10 | 0x12 | 0x15..=0x19 | 0x36..=0x3a | 0xa9 | 0xbc => 2,
        0x11
        | 0x13
        | 0x14
        | 0x84
        | 0x99..=0xa8
        | 0xb2..=0xb8
        | 0xbb
        | 0xbd
        | 0xc0
        | 0xc1
        | 0xc6
        | 0xc7 => 3,
        0xc5 => 4,
        0xb9 | 0xba | 0xc8 | 0xc9 => 5,
        0xaa | 0xab | 0xc4 => return None,
        0xcb..=0xff => return None,
        _ => 1,
    })
}

/// Constant-pool index of the first invoke{virtual,special,static,interface}.
pub fn first_invoke(code: &[u8]) -> Option<u16> {
    let mut pc = 0;
    while pc < code.len() {
        let op = code[pc];
        if (0xb6..=0xb9).contains(&op) {
            return Some(u16::from_be_bytes([*code.get(pc + 1)?, *code.get(pc + 2)?]));
        }
        pc += insn_len(op)?;
    }
    None
}

/// `Ldemo/Sample;` -> `demo.Sample`.
pub fn sig_to_name(sig: &str) -> String {
    sig.strip_prefix('L')
        .and_then(|s| s.strip_suffix(';'))
        .unwrap_or(sig)
        .replace('/', ".")
}

fn first_line(jvmti: Jvmti, m: crate::jni::jmethodID) -> Option<i32> {
    let t = jvmti.get_line_number_table(m).ok()?;
    t.iter().min_by_key(|e| e.0).map(|e| e.1)
}

/// Readable name of a hidden class `c` named `name`, nest host `host`.
pub fn lambda_name(jvmti: Jvmti, jni: Jni, c: jclass, name: &str, host: jobject) -> String {
    let fallback = strip_hidden_suffix(name);
    if !name.contains("$$Lambda") || host.is_null() {
        return fallback;
    }
    resolve(jvmti, jni, c, host).unwrap_or(fallback)
}

fn resolve(jvmti: Jvmti, jni: Jni, c: jclass, host: jobject) -> Option<String> {
    let host_sig = jvmti.get_class_signature(host).ok()?;
    let host_internal = host_sig.strip_prefix('L')?.strip_suffix(';')?.to_string();
    let host_name = host_internal.replace('/', ".");
    let body = jvmti.get_class_methods(c).ok()?.into_iter().find(|&m| {
        jvmti
            .get_method_name(m)
            .map(|(n, _)| !n.starts_with('<'))
            .unwrap_or(false)
    })?;
    let code = jvmti.get_bytecodes(body).ok()?;
    let idx = first_invoke(&code)?;
    let (count, cp) = jvmti.get_constant_pool(c).ok()?;
    let (owner, method, _desc) = weft_classfile::resolve_member_ref(count, &cp, idx).ok()?;
    let _ = jni;
    if let Some(rest) = method.strip_prefix("lambda$") {
        if owner == host_internal {
            let enc = rest.rsplit_once('$').map(|(e, _)| e).unwrap_or(rest);
            // The host's lambda bodies of the same enclosing method: (ordinal, first line).
            let prefix = format!("lambda${enc}$");
            let ordinal_of = |name: &str| name.strip_prefix(prefix.as_str())?.parse::<u32>().ok();
            let bodies: Vec<(u32, Option<i32>)> = jvmti
                .get_class_methods(host)
                .ok()?
                .into_iter()
                .filter_map(|m| {
                    let (n, _) = jvmti.get_method_name(m).ok()?;
                    Some((ordinal_of(&n)?, first_line(jvmti, m)))
                })
                .collect();
            let own = ordinal_of(&method);
            let line = bodies.iter().find(|b| Some(b.0) == own).and_then(|b| b.1);
            return Some(match line {
                Some(l) => {
                    // Two lambdas on one line (`runAsync(() -> a()).thenRunAsync(() -> b())`)
                    // would share a name, and their rows would merge: the second and later,
                    // in javac's numbering, get `#2`, `#3`.
                    let rank = bodies
                        .iter()
                        .filter(|b| b.1 == Some(l) && own.is_some_and(|o| b.0 < o))
                        .count();
                    if rank == 0 {
                        format!("{host_name}$$Lambda[{enc}:{l}]")
                    } else {
                        format!("{host_name}$$Lambda[{enc}:{l}#{}]", rank + 1)
                    }
                }
                None => format!("{host_name}$$Lambda[{enc}]"),
            });
        }
    }
    let m = if method == "<init>" {
        "new"
    } else {
        method.as_str()
    };
    Some(format!(
        "{host_name}$$Lambda[{}::{m}]",
        owner.replace('/', ".")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips() {
        assert_eq!(
            strip_hidden_suffix("demo.S$$Lambda$14/0x0000000800c03000"),
            "demo.S$$Lambda"
        );
        assert_eq!(
            strip_hidden_suffix("demo.S$$Lambda/0x0000000800c03000"),
            "demo.S$$Lambda"
        );
        assert_eq!(strip_hidden_suffix("demo.Hidden$3/0x1"), "demo.Hidden");
    }

    #[test]
    fn finds_invoke() {
        // aload_0; getfield #2; invokestatic #7; return
        let code = [0x2a, 0xb4, 0, 2, 0xb8, 0, 7, 0xb1];
        assert_eq!(first_invoke(&code), Some(7));
        assert_eq!(first_invoke(&[0xb1]), None);
        assert_eq!(sig_to_name("Ldemo/Sample;"), "demo.Sample");
    }
}
