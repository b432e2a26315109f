//! The agent's class rewriting without a JVM: [`crate::pipeline::transform`], the same call as
//! the ClassFileLoadHook, with a supertype cache of its own. Used by the whole-JDK transform test
//! (crates/agent/tests/jdk_transform.rs).

use weft_classfile::summarize;

use crate::decide;
use crate::pipeline::{self, Load};

pub use crate::pipeline::Outcome;

/// A rewriter with its own supertype cache. Call [`Offline::learn`] on classes
/// first to give it the knowledge a long-running agent would have gathered.
#[derive(Default)]
pub struct Offline {
    hierarchy: decide::Hierarchy,
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

    /// Transforms one class as the agent running on JDK `major` would at first load.
    pub fn transform(&mut self, bytes: &[u8], major: u32) -> Outcome {
        self.transform_at(bytes, major, Load::First)
    }

    /// Transforms one class as the agent would at `load` (first load, or retransformation).
    pub fn transform_at(&mut self, bytes: &[u8], major: u32, load: Load) -> Outcome {
        let summary = match summarize(bytes) {
            Ok(s) => s,
            Err(e) => return Outcome::Rejected(format!("summarize: {e}")),
        };
        let h = &mut self.hierarchy;
        pipeline::transform(bytes, &summary, major, load, |s, is_plumbing| {
            h.add(s);
            decide::decide(s, h, is_plumbing)
        })
    }
}
