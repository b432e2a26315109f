//! Bounds-checked big-endian reading of a byte slice. Every read returns `Err` past the end.

use crate::error::{Error, ErrorKind, Result};

#[derive(Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], pos: usize) -> Reader<'a> {
        Reader { buf, pos }
    }
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }
    #[inline]
    fn need(&self, n: usize) -> Result<()> {
        if self.remaining() < n {
            Err(self.truncated(n))
        } else {
            Ok(())
        }
    }
    #[cold]
    #[inline(never)]
    fn truncated(&self, n: usize) -> Error {
        Error::new(
            ErrorKind::Truncated,
            format!(
                "need {n} bytes at offset {} but only {} remain",
                self.pos,
                self.remaining()
            ),
        )
    }
    #[inline]
    pub fn u1(&mut self) -> Result<u8> {
        self.need(1)?;
        let v = self.buf[self.pos];
        self.pos += 1;
        Ok(v)
    }
    #[inline]
    pub fn u2(&mut self) -> Result<u16> {
        self.need(2)?;
        let v = u16::from_be_bytes([self.buf[self.pos], self.buf[self.pos + 1]]);
        self.pos += 2;
        Ok(v)
    }
    #[inline]
    pub fn u4(&mut self) -> Result<u32> {
        self.need(4)?;
        let b = &self.buf[self.pos..self.pos + 4];
        self.pos += 4;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    #[inline]
    pub fn i4(&mut self) -> Result<i32> {
        Ok(self.u4()? as i32)
    }
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        self.need(n)?;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.need(n)?;
        self.pos += n;
        Ok(())
    }
}

/// Append helpers for building output.
pub(crate) trait Out {
    fn u1(&mut self, v: u8);
    fn u2(&mut self, v: u16);
    fn u4(&mut self, v: u32);
}

impl Out for Vec<u8> {
    fn u1(&mut self, v: u8) {
        self.push(v);
    }
    fn u2(&mut self, v: u16) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn u4(&mut self, v: u32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
}
