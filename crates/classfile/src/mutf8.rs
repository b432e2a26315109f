//! Modified UTF-8 (JVMS 4.4.7), the encoding of CONSTANT_Utf8 entries.

use crate::error::{Error, Result};

/// Decode modified UTF-8. Unpaired surrogates become U+FFFD.
pub(crate) fn decode(bytes: &[u8]) -> Result<String> {
    if bytes.is_ascii() && !bytes.contains(&0) {
        // Fast path: almost every name and descriptor.
        return String::from_utf8(bytes.to_vec())
            .map_err(|_| Error::malformed("invalid modified UTF-8"));
    }
    let mut units: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let bad = |i: usize| Error::malformed(format!("invalid modified UTF-8 at byte {i}"));
    while i < bytes.len() {
        let b = bytes[i];
        if b != 0 && b < 0x80 {
            units.push(b as u16);
            i += 1;
        } else if b & 0xe0 == 0xc0 {
            let c = *bytes.get(i + 1).ok_or_else(|| bad(i))?;
            if c & 0xc0 != 0x80 {
                return Err(bad(i));
            }
            units.push((((b & 0x1f) as u16) << 6) | (c & 0x3f) as u16);
            i += 2;
        } else if b & 0xf0 == 0xe0 {
            let c = *bytes.get(i + 1).ok_or_else(|| bad(i))?;
            let d = *bytes.get(i + 2).ok_or_else(|| bad(i))?;
            if c & 0xc0 != 0x80 || d & 0xc0 != 0x80 {
                return Err(bad(i));
            }
            units
                .push((((b & 0x0f) as u16) << 12) | (((c & 0x3f) as u16) << 6) | (d & 0x3f) as u16);
            i += 3;
        } else {
            return Err(bad(i));
        }
    }
    Ok(String::from_utf16_lossy(&units))
}

/// Encode a string as modified UTF-8.
pub(crate) fn encode(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for u in s.encode_utf16() {
        match u {
            1..=0x7f => out.push(u as u8),
            0 | 0x80..=0x7ff => {
                out.push(0xc0 | (u >> 6) as u8);
                out.push(0x80 | (u & 0x3f) as u8);
            }
            _ => {
                out.push(0xe0 | (u >> 12) as u8);
                out.push(0x80 | ((u >> 6) & 0x3f) as u8);
                out.push(0x80 | (u & 0x3f) as u8);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for s in ["run", "a\u{0}b", "é", "\u{20ac}", "\u{1f600}x", ""] {
            assert_eq!(decode(&encode(s)).unwrap(), s);
        }
        assert_eq!(encode("\u{0}"), vec![0xc0, 0x80]);
        assert_eq!(encode("\u{1f600}").len(), 6);
        assert!(decode(&[0]).is_err());
        assert!(decode(&[0xe0, 0x80]).is_err());
        assert!(decode(&[0xff]).is_err());
    }
}
