//! What-if estimation (issue 17, docs/whatif.md): the run rebuilt as an
//! execution graph ([`graph`], built from the analyses by [`build`]), the
//! recorded critical path ([`critical`]), a schedule simulator ([`sim`]), the
//! edits of `weft whatif --edit` ([`edit`]) and the candidate search ([`search`]).
//!
//! The small API other analyses use (docs/whatif.md §API):
//! ```ignore
//! let g = weft_whatif::build::build(&analysis);            // the graph
//! let base = weft_whatif::sim::simulate(&g, &Overlay::identity(&g), SimParams::default());
//! let edit = weft_whatif::edit::Edit::parse("lock:L@1:remove")?;
//! let ov = edit.overlay(&g)?;                              // an overlay, never a copy
//! let after = weft_whatif::sim::simulate(&g, &ov, SimParams::default());
//! let gain = base.makespan_ns as f64 / after.makespan_ns as f64;
//! ```

pub mod build;
pub mod cpu_share;
pub mod critical;
pub mod edit;
pub mod graph;
pub mod schedule;
pub mod search;
pub mod sim;
pub mod speedups;

pub use edit::Edit;
pub use graph::{ExecGraph, Op, Pool, Runs, Strand};
pub use schedule::{Bar, Schedule};
pub use search::{estimate, whatif, Confidence, Estimate, WhatIf};
pub use sim::{simulate, Overlay, SimParams, SimResult};

#[cfg(test)]
mod sim_tests;
