//! weft's views: an [`weft_analysis::Analysis`] rendered as a JSON report
//! ([`report_json`]) or a terminal summary ([`report_text`]).
//!
//! Formatting only: every number shown is computed in `weft-analysis`.

mod json;
mod text;

pub use json::{report_json, REPORT_VERSION};
pub use text::report_text;
