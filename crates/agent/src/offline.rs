//! The agent's class rewriting without a JVM: the same decisions as the
//! ClassFileLoadHook (`decide::skip_class`, `plumbing::find`, `decide::decide`,
//! `forkjoin::fields`, then `weft_classfile::instrument`, with the same
//! constructor-probe fallback), with probe ids numbered locally instead of
//! registered with the running agent. Used by the whole-JDK transform test
//! (crates/agent/tests/jdk_transform.rs). Keep in step with `transform` in lib.rs.

use weft_classfile::{instrument, summarize, Instrumentation, WrapRequest};
use weft_trace::ProbeKind;

use crate::{decide, forkjoin, plumbing};

/// What the agent would do to one class.
#[derive(Debug)]
pub enum Outcome {
    /// Skipped by name or nothing to instrument: loaded unchanged.
    Unchanged,
    /// Rewritten bytes, and how many methods were wrapped / constructors probed.
    Changed {
        bytes: Vec<u8>,
        wrapped: usize,
        constructors: usize,
    },
    /// The patcher rejected the class (the agent would load it unchanged).
    Rejected(String),
}

/// A rewriter with its own supertype cache. Call [`Offline::learn`] on classes
/// first to give it the knowledge a long-running agent would have gathered.
#[derive(Default)]
pub struct Offline {
    hierarchy: decide::Hierarchy,
    next: i32,
}

impl Offline {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a class's direct supertypes to the hierarchy cache.
    pub fn learn(&mut self, bytes: &[u8]) -> Result<String, String> {
        let s = summarize(bytes).map_err(|e| e.to_string())?;
        self.hierarchy.add(&s);
        Ok(s.name)
    }

    fn id(&mut self, kind: ProbeKind) -> i32 {
        self.next += 1;
        ((kind.code() as i32 & 0xF) << 24) | (self.next & 0xF_FFFF)
    }

    /// Transforms one class as the agent running on JDK `major` would.
    pub fn transform(&mut self, bytes: &[u8], major: u32) -> Outcome {
        let summary = match summarize(bytes) {
            Ok(s) => s,
            Err(e) => return Outcome::Rejected(format!("summarize: {e}")),
        };
        if decide::skip_class(&summary.name) {
            return Outcome::Unchanged;
        }
        let pl = plumbing::find(major, &summary.name);
        self.hierarchy.add(&summary);
        let decision = decide::decide(&summary, &self.hierarchy, pl.is_some());
        let fj_fields = forkjoin::fields(&summary.name);
        if decision.wraps.is_empty() && !decision.creation {
            if fj_fields.is_empty() {
                return Outcome::Unchanged;
            }
            return match weft_classfile::add_fields(bytes, &fj_fields) {
                Ok((b, _)) => Outcome::Changed {
                    bytes: b,
                    wrapped: 0,
                    constructors: 0,
                },
                Err(e) => Outcome::Rejected(format!("add_fields: {e}")),
            };
        }
        let mut wraps = Vec::new();
        for w in &decision.wraps {
            let id = self.id(w.kind);
            wraps.push(WrapRequest {
                name: w.name.clone(),
                descriptor: w.descriptor.clone(),
                probe_id: id,
                pass_arg0: w.pass_arg0,
                hooks: forkjoin::hooks(w),
            });
        }
        let ctor = decision.creation.then(|| self.id(ProbeKind::Creation));
        let mut what = Instrumentation {
            wraps,
            constructor_probe: ctor,
        };
        let result = match instrument(bytes, &what) {
            Ok(r) => r,
            Err(_) if what.constructor_probe.is_some() => {
                what.constructor_probe = None;
                match instrument(bytes, &what) {
                    Ok(r) => r,
                    Err(e) => return Outcome::Rejected(format!("instrument: {e}")),
                }
            }
            Err(e) => return Outcome::Rejected(format!("instrument: {e}")),
        };
        if result.wrapped.is_empty() && result.constructors == 0 {
            return Outcome::Unchanged;
        }
        let bytes = if fj_fields.is_empty() {
            result.bytes
        } else {
            match weft_classfile::add_fields(&result.bytes, &fj_fields) {
                Ok((b, _)) => b,
                // The agent then keeps the class as it is.
                Err(_) => return Outcome::Unchanged,
            }
        };
        Outcome::Changed {
            bytes,
            wrapped: result.wrapped.len(),
            constructors: result.constructors,
        }
    }
}
