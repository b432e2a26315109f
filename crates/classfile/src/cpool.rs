//! The constant pool: an index of the original entries (read-only, by byte offset) and an appender for
//! new entries. Original entries are never rewritten, so every index in the original bytes stays valid.

use crate::error::{Error, Result};
use crate::reader::{Out, Reader};

pub(crate) const UTF8: u8 = 1;
pub(crate) const INTEGER: u8 = 3;
pub(crate) const CLASS: u8 = 7;
pub(crate) const METHODREF: u8 = 10;
pub(crate) const INTERFACE_METHODREF: u8 = 11;
pub(crate) const NAME_AND_TYPE: u8 = 12;

/// Offsets of the entries of a constant pool inside some byte buffer.
pub(crate) struct ConstantPool<'a> {
    data: &'a [u8],
    /// Offset of each entry's tag byte; index 0 and the second slot of Long/Double hold `u32::MAX`.
    offsets: Vec<u32>,
}

impl<'a> ConstantPool<'a> {
    /// Parse `count - 1` entries starting at `r`'s position (count = constant_pool_count).
    pub fn parse(r: &mut Reader<'a>, data: &'a [u8], count: u16) -> Result<ConstantPool<'a>> {
        if count == 0 {
            return Err(Error::malformed("constant_pool_count is 0"));
        }
        let mut offsets = vec![u32::MAX; count as usize];
        let mut i: usize = 1;
        while i < count as usize {
            let at = r.pos();
            offsets[i] = at as u32;
            let tag = r.u1()?;
            let size = match tag {
                UTF8 => r.u2()? as usize,
                3 | 4 => 4,
                5 | 6 => 8,
                7 | 8 | 16 | 19 | 20 => 2,
                9..=12 | 17 | 18 => 4,
                15 => 3,
                _ => {
                    return Err(Error::unsupported(format!(
                        "unsupported constant pool tag {tag} at entry {i}"
                    )))
                }
            };
            r.skip(size)?;
            if tag == 5 || tag == 6 {
                i += 1;
                if i >= count as usize {
                    return Err(Error::malformed(format!(
                        "Long/Double at entry {} has no second slot",
                        i - 1
                    )));
                }
            }
            i += 1;
        }
        Ok(ConstantPool { data, offsets })
    }

    pub fn count(&self) -> u16 {
        self.offsets.len() as u16
    }

    #[inline]
    fn entry(&self, index: u16) -> Result<(u8, Reader<'a>)> {
        let off = *self
            .offsets
            .get(index as usize)
            .filter(|&&o| o != u32::MAX)
            .ok_or_else(|| Error::malformed(format!("invalid constant pool index {index}")))?;
        let mut r = Reader::new(self.data, off as usize);
        let tag = r.u1()?;
        Ok((tag, r))
    }

    #[inline]
    fn expect(&self, index: u16, want: u8, what: &str) -> Result<Reader<'a>> {
        let (tag, r) = self.entry(index)?;
        if tag != want {
            return Err(Error::malformed(format!(
                "constant pool entry {index} has tag {tag}, expected {what}"
            )));
        }
        Ok(r)
    }

    /// The raw (modified UTF-8) bytes of a Utf8 entry.
    #[inline]
    pub fn utf8(&self, index: u16) -> Result<&'a [u8]> {
        let mut r = self.expect(index, UTF8, "Utf8")?;
        let len = r.u2()? as usize;
        r.bytes(len)
    }

    /// The raw name of a Class entry.
    pub fn class_name(&self, index: u16) -> Result<&'a [u8]> {
        let mut r = self.expect(index, CLASS, "Class")?;
        let name = r.u2()?;
        self.utf8(name)
    }

    /// (name, descriptor) of a NameAndType entry.
    pub fn name_and_type(&self, index: u16) -> Result<(&'a [u8], &'a [u8])> {
        let mut r = self.expect(index, NAME_AND_TYPE, "NameAndType")?;
        let n = r.u2()?;
        let d = r.u2()?;
        Ok((self.utf8(n)?, self.utf8(d)?))
    }

    /// (class, name, descriptor) of a Methodref or InterfaceMethodref entry.
    pub fn member_ref(&self, index: u16) -> Result<(&'a [u8], &'a [u8], &'a [u8])> {
        let (tag, mut r) = self.entry(index)?;
        if tag != METHODREF && tag != INTERFACE_METHODREF {
            return Err(Error::malformed(format!(
                "constant pool entry {index} has tag {tag}, expected Methodref or InterfaceMethodref"
            )));
        }
        let c = r.u2()?;
        let nt = r.u2()?;
        let (n, d) = self.name_and_type(nt)?;
        Ok((self.class_name(c)?, n, d))
    }

    /// The index of an existing Utf8 entry equal to `s`, if any.
    pub fn find_utf8(&self, s: &[u8]) -> Option<u16> {
        for (i, &off) in self.offsets.iter().enumerate() {
            if off == u32::MAX {
                continue;
            }
            let off = off as usize;
            let d = self.data;
            if d.get(off) == Some(&UTF8) && off + 3 <= d.len() {
                let len = u16::from_be_bytes([d[off + 1], d[off + 2]]) as usize;
                if len == s.len() && d.get(off + 3..off + 3 + len) == Some(s) {
                    return Some(i as u16);
                }
            }
        }
        None
    }
}

/// New constant-pool entries, numbered after the original ones, deduplicated among themselves.
pub(crate) struct Appender {
    next: u32,
    pub bytes: Vec<u8>,
    utf8: Vec<(Vec<u8>, u16)>,
    /// (tag, a, b) -> index for Class (b = 0), NameAndType and method refs.
    refs: Vec<(u8, u16, u16, u16)>,
    ints: Vec<(i32, u16)>,
}

impl Appender {
    pub fn new(original_count: u16) -> Appender {
        Appender {
            next: original_count as u32,
            bytes: Vec::with_capacity(256),
            utf8: Vec::new(),
            refs: Vec::new(),
            ints: Vec::new(),
        }
    }

    /// constant_pool_count after the appended entries.
    pub fn count(&self) -> Result<u16> {
        u16::try_from(self.next).map_err(|_| {
            Error::overflow(format!(
                "constant pool would need {} entries (limit 65535)",
                self.next
            ))
        })
    }

    fn alloc(&mut self) -> u16 {
        let i = self.next;
        self.next += 1;
        // Indexes past u16 are caught by count(); keep the value small meanwhile.
        (i & 0xffff) as u16
    }

    pub fn utf8(&mut self, s: &[u8]) -> Result<u16> {
        if let Some((_, i)) = self.utf8.iter().find(|(k, _)| k == s) {
            return Ok(*i);
        }
        let len = u16::try_from(s.len())
            .map_err(|_| Error::overflow("Utf8 constant longer than 65535 bytes"))?;
        let i = self.alloc();
        self.bytes.u1(UTF8);
        self.bytes.u2(len);
        self.bytes.extend_from_slice(s);
        self.utf8.push((s.to_vec(), i));
        Ok(i)
    }

    fn pair(&mut self, tag: u8, a: u16, b: u16) -> u16 {
        if let Some(&(_, _, _, i)) = self
            .refs
            .iter()
            .find(|&&(t, x, y, _)| t == tag && x == a && y == b)
        {
            return i;
        }
        let i = self.alloc();
        self.bytes.u1(tag);
        self.bytes.u2(a);
        if tag != CLASS {
            self.bytes.u2(b);
        }
        self.refs.push((tag, a, b, i));
        i
    }

    pub fn class(&mut self, name: &[u8]) -> Result<u16> {
        let n = self.utf8(name)?;
        Ok(self.pair(CLASS, n, 0))
    }

    pub fn name_and_type(&mut self, name: &[u8], desc: &[u8]) -> Result<u16> {
        let n = self.utf8(name)?;
        let d = self.utf8(desc)?;
        Ok(self.pair(NAME_AND_TYPE, n, d))
    }

    /// A Methodref (or InterfaceMethodref if `interface`) to `class_index`.name:desc.
    pub fn method_ref(
        &mut self,
        class_index: u16,
        name: &[u8],
        desc: &[u8],
        interface: bool,
    ) -> Result<u16> {
        let nt = self.name_and_type(name, desc)?;
        let tag = if interface {
            INTERFACE_METHODREF
        } else {
            METHODREF
        };
        Ok(self.pair(tag, class_index, nt))
    }

    pub fn integer(&mut self, v: i32) -> u16 {
        if let Some(&(_, i)) = self.ints.iter().find(|&&(k, _)| k == v) {
            return i;
        }
        let i = self.alloc();
        self.bytes.u1(INTEGER);
        self.bytes.u4(v as u32);
        self.ints.push((v, i));
        i
    }
}
