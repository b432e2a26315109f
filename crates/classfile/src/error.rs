//! The crate's error type: what is wrong with a class file, or what the rewriter does not handle.

use std::fmt;

/// Why a class file could not be read or rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The bytes end before a structure is complete.
    Truncated,
    /// The bytes violate the class-file format (bad magic, bad index, bad descriptor, ...).
    Malformed,
    /// Valid input the rewriter deliberately does not handle (jsr/ret, unknown cp tag, ...).
    Unsupported,
    /// The result would exceed a class-file limit (constant pool, code length, branch offset).
    Overflow,
}

/// An error from reading or rewriting a class file. The message says what and where.
/// (Boxed so that `Result<T, Error>` stays small on the hot parsing paths.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    msg: String,
}

impl Error {
    #[cold]
    pub(crate) fn new(kind: ErrorKind, msg: impl Into<String>) -> Error {
        Error(Box::new(Inner {
            kind,
            msg: msg.into(),
        }))
    }
    pub(crate) fn malformed(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::Malformed, msg)
    }
    pub(crate) fn unsupported(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::Unsupported, msg)
    }
    pub(crate) fn overflow(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::Overflow, msg)
    }
    /// Prefix the message with where the error happened ("method run()V: ...").
    pub(crate) fn context(mut self, what: impl fmt::Display) -> Error {
        self.0.msg = format!("{what}: {}", self.0.msg);
        self
    }

    /// The category of the error.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }
    /// The message without the category.
    pub fn message(&self) -> &str {
        &self.0.msg
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.0.kind {
            ErrorKind::Truncated => "truncated class file",
            ErrorKind::Malformed => "malformed class file",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Overflow => "class-file limit exceeded",
        };
        write!(f, "{kind}: {}", self.0.msg)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
