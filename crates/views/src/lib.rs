//! weft's views: an [`weft_analysis::Analysis`] rendered as a JSON report
//! ([`report_json`]) or a terminal summary ([`report_text`]).
//!
//! Formatting only: every number shown is computed in `weft-analysis`.

mod chrome;
mod collapsed;
mod flamegraph;
mod forkjoin_json;
mod forkjoin_text;
mod html;
mod html_jvms;
mod json;
mod jvms;
mod perfetto;
mod sampled;
mod speedups_html;
mod speedups_json;
mod speedups_text;
mod text;
mod whatif;

pub use json::{report_json, REPORT_VERSION};
pub use jvms::{report_json_jvms, report_text_jvms};
pub use speedups_json::speedups_json;
pub use speedups_text::speedups_full_text;
pub use text::{report_text, window_line};
pub use whatif::{whatif_json, whatif_text};

// Issue 5: HTML report and exports (docs/views.md).
pub use chrome::chrome_trace;
pub use collapsed::collapsed_stacks;
pub use flamegraph::flamegraph_svg;
pub use html::{report_html, report_html_with};
pub use html_jvms::report_html_jvms;
pub use perfetto::perfetto_trace;
// Issue 19: sampled stacks (docs/sampling.md).
pub use sampled::{profile_collapsed, profile_flamegraph, profile_speedscope};

#[cfg(test)]
mod tests;
