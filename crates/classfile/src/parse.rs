//! Locating the parts of a class file: header, constant pool, members and attributes, as byte spans.
//! Nothing is copied; the rewriter copies spans verbatim and replaces only what it edits.

use crate::cpool::ConstantPool;
use crate::error::{Error, Result};
use crate::reader::Reader;

pub(crate) const ACC_STATIC: u16 = 0x0008;
pub(crate) const ACC_BRIDGE: u16 = 0x0040;
pub(crate) const ACC_NATIVE: u16 = 0x0100;
pub(crate) const ACC_INTERFACE: u16 = 0x0200;
pub(crate) const ACC_ABSTRACT: u16 = 0x0400;

/// An attribute: `start` is the offset of its name index, the body is `body..body + len`.
#[derive(Clone, Copy)]
pub(crate) struct Attr<'a> {
    pub name: &'a [u8],
    pub start: usize,
    pub body: usize,
    pub len: usize,
}

impl Attr<'_> {
    pub fn end(&self) -> usize {
        self.body + self.len
    }
}

pub(crate) struct Method<'a> {
    pub start: usize,
    pub end: usize,
    pub access: u16,
    pub name: &'a [u8],
    pub desc: &'a [u8],
    pub attrs: Vec<Attr<'a>>,
}

pub(crate) struct ClassFile<'a> {
    pub data: &'a [u8],
    pub major: u16,
    pub cp: ConstantPool<'a>,
    /// Offset of the first byte after the constant pool (access_flags).
    pub cp_end: usize,
    pub access: u16,
    pub this_class: u16,
    pub super_class: u16,
    pub interfaces: Vec<u16>,
    /// Offset of methods_count.
    /// Offset of `fields_count` (the field table runs to `methods_count_at`).
    pub fields_count_at: usize,
    pub methods_count_at: usize,
    pub methods: Vec<Method<'a>>,
    /// Offset of attributes_count (the end of the methods).
    pub methods_end: usize,
}

/// Skip an attribute table whose content is copied verbatim (fields, class attributes).
fn skip_attributes(r: &mut Reader<'_>) -> Result<()> {
    let n = r.u2()?;
    for _ in 0..n {
        r.skip(2)?;
        let len = r.u4()? as usize;
        r.skip(len)?;
    }
    Ok(())
}

fn attributes<'a>(r: &mut Reader<'a>, cp: &ConstantPool<'a>) -> Result<Vec<Attr<'a>>> {
    let n = r.u2()?;
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let start = r.pos();
        let name = cp.utf8(r.u2()?)?;
        let len = r.u4()? as usize;
        let body = r.pos();
        r.skip(len)?;
        v.push(Attr {
            name,
            start,
            body,
            len,
        });
    }
    Ok(v)
}

impl<'a> ClassFile<'a> {
    pub fn parse(data: &'a [u8]) -> Result<ClassFile<'a>> {
        let mut r = Reader::new(data, 0);
        let magic = r.u4()?;
        if magic != 0xCAFE_BABE {
            return Err(Error::malformed(format!(
                "bad magic 0x{magic:08X} (expected 0xCAFEBABE)"
            )));
        }
        let _minor = r.u2()?;
        let major = r.u2()?;
        if major < 45 {
            return Err(Error::unsupported(format!(
                "class file major version {major}"
            )));
        }
        let count = r.u2()?;
        let cp = ConstantPool::parse(&mut r, data, count)?;
        let cp_end = r.pos();
        let access = r.u2()?;
        let this_class = r.u2()?;
        cp.class_name(this_class)
            .map_err(|e| e.context("this_class"))?;
        let super_class = r.u2()?;
        if super_class != 0 {
            cp.class_name(super_class)
                .map_err(|e| e.context("super_class"))?;
        }
        let ni = r.u2()?;
        let mut interfaces = Vec::with_capacity(ni as usize);
        for _ in 0..ni {
            let i = r.u2()?;
            cp.class_name(i).map_err(|e| e.context("interfaces"))?;
            interfaces.push(i);
        }
        let fields_count_at = r.pos();
        let nf = r.u2()?;
        for f in 0..nf {
            r.skip(6)?;
            skip_attributes(&mut r).map_err(|e| e.context(format!("field {f}")))?;
        }
        let methods_count_at = r.pos();
        let nm = r.u2()?;
        let mut methods = Vec::with_capacity(nm as usize);
        for m in 0..nm {
            let start = r.pos();
            let access = r.u2()?;
            let name_index = r.u2()?;
            let desc_index = r.u2()?;
            let ctx = |e: Error| e.context(format!("method {m}"));
            let name = cp.utf8(name_index).map_err(ctx)?;
            let desc = cp.utf8(desc_index).map_err(ctx)?;
            let attrs = attributes(&mut r, &cp).map_err(ctx)?;
            methods.push(Method {
                start,
                end: r.pos(),
                access,
                name,
                desc,
                attrs,
            });
        }
        let methods_end = r.pos();
        skip_attributes(&mut r).map_err(|e| e.context("class attributes"))?;
        if r.remaining() != 0 {
            return Err(Error::malformed(format!(
                "{} extra bytes after the class attributes",
                r.remaining()
            )));
        }
        Ok(ClassFile {
            data,
            major,
            cp,
            cp_end,
            access,
            this_class,
            super_class,
            interfaces,
            fields_count_at,
            methods_count_at,
            methods,
            methods_end,
        })
    }
}
