//! Method descriptors (JVMS 4.3.3): parameter kinds, local-slot sizes and verification types.

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind<'a> {
    /// boolean, byte, char, short, int.
    Int,
    Float,
    Long,
    Double,
    /// A class name (`java/lang/String`) or an array descriptor (`[I`, `[Ljava/lang/Object;`),
    /// i.e. what a CONSTANT_Class entry holds for this type.
    Ref(&'a [u8]),
}

impl Kind<'_> {
    pub fn slots(self) -> u16 {
        match self {
            Kind::Long | Kind::Double => 2,
            _ => 1,
        }
    }
}

pub(crate) struct MethodDesc<'a> {
    pub params: Vec<Kind<'a>>,
}

impl MethodDesc<'_> {
    pub fn param_slots(&self) -> u16 {
        self.params.iter().map(|k| k.slots()).sum()
    }
}

fn field_type<'a>(d: &'a [u8], i: &mut usize) -> Result<Kind<'a>> {
    let bad = || Error::malformed(format!("bad descriptor {}", String::from_utf8_lossy(d)));
    let start = *i;
    let mut dims = 0;
    while d.get(*i) == Some(&b'[') {
        dims += 1;
        *i += 1;
    }
    if dims > 255 {
        return Err(bad());
    }
    let c = *d.get(*i).ok_or_else(bad)?;
    *i += 1;
    let k = match c {
        b'Z' | b'B' | b'C' | b'S' | b'I' => Kind::Int,
        b'F' => Kind::Float,
        b'J' => Kind::Long,
        b'D' => Kind::Double,
        b'L' => {
            let semi = d[*i..].iter().position(|&b| b == b';').ok_or_else(bad)?;
            if semi == 0 {
                return Err(bad());
            }
            let name = &d[*i..*i + semi];
            *i += semi + 1;
            Kind::Ref(name)
        }
        _ => return Err(bad()),
    };
    Ok(if dims > 0 {
        Kind::Ref(&d[start..*i])
    } else {
        k
    })
}

pub(crate) fn parse_method(d: &[u8]) -> Result<MethodDesc<'_>> {
    let bad = || {
        Error::malformed(format!(
            "bad method descriptor {}",
            String::from_utf8_lossy(d)
        ))
    };
    if d.first() != Some(&b'(') {
        return Err(bad());
    }
    let mut i = 1;
    let mut params = Vec::new();
    loop {
        match d.get(i) {
            None => return Err(bad()),
            Some(b')') => {
                i += 1;
                break;
            }
            Some(_) => params.push(field_type(d, &mut i)?),
        }
    }
    // The return type is checked, not kept (the inserted code leaves the return value alone).
    if d.get(i) == Some(&b'V') {
        i += 1;
    } else {
        field_type(d, &mut i)?;
    }
    if i != d.len() {
        return Err(bad());
    }
    let md = MethodDesc { params };
    if md.param_slots() > 255 {
        return Err(Error::malformed(format!(
            "descriptor {} has more than 255 parameter slots",
            String::from_utf8_lossy(d)
        )));
    }
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors() {
        let m = parse_method(b"(IJ[ILjava/lang/String;[[Ljava/lang/Object;D)Z").unwrap();
        assert_eq!(
            m.params,
            vec![
                Kind::Int,
                Kind::Long,
                Kind::Ref(b"[I"),
                Kind::Ref(b"java/lang/String"),
                Kind::Ref(b"[[Ljava/lang/Object;"),
                Kind::Double
            ]
        );
        assert_eq!(m.param_slots(), 8);
        assert!(parse_method(b"()V").unwrap().params.is_empty());
        for bad in [
            &b""[..],
            b"(",
            b"()",
            b"(L;)V",
            b"(Lx)V",
            b"(Q)V",
            b"()VV",
            b"I)V",
            b"([)V",
        ] {
            assert!(
                parse_method(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
