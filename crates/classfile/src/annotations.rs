//! Just enough of the annotation format (JVMS 4.7.16) to ask "does this method carry annotation X?".

use crate::error::{Error, Result};
use crate::reader::Reader;

const MAX_DEPTH: u32 = 64;

fn element_value(r: &mut Reader<'_>, depth: u32) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::unsupported("annotation nesting deeper than 64"));
    }
    match r.u1()? {
        b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' | b's' | b'c' => r.skip(2),
        b'e' => r.skip(4),
        b'@' => annotation(r, depth + 1).map(|_| ()),
        b'[' => {
            let n = r.u2()?;
            for _ in 0..n {
                element_value(r, depth + 1)?;
            }
            Ok(())
        }
        t => Err(Error::malformed(format!("bad element_value tag {t}"))),
    }
}

/// Skips one annotation, returning its type index.
pub(crate) fn annotation(r: &mut Reader<'_>, depth: u32) -> Result<u16> {
    let ty = r.u2()?;
    let pairs = r.u2()?;
    for _ in 0..pairs {
        r.skip(2)?;
        element_value(r, depth)?;
    }
    Ok(ty)
}

/// Whether a Runtime(In)VisibleAnnotations body lists an annotation whose type is cp entry `type_index`.
pub(crate) fn has_annotation(body: &[u8], type_index: u16) -> Result<bool> {
    let mut r = Reader::new(body, 0);
    let n = r.u2()?;
    let mut found = false;
    for _ in 0..n {
        found |= annotation(&mut r, 0)? == type_index;
    }
    Ok(found)
}
