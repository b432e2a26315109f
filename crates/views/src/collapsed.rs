//! Collapsed stacks (`frame;frame;frame value`, one stack per line), the input
//! of flame graph tools (flamegraph.pl, inferno, speedscope): task self time in
//! ns by `kind;class;site` (see `timeline::self_time_stacks`).

use weft_analysis::{timeline, Analysis};

/// A frame as a collapsed-stack token: no `;` (the separator) and no newline.
fn frame(s: &str) -> String {
    s.replace(';', ":").replace(['\n', '\r'], " ")
}

/// The stacks as `(frames, value)`, value in ns, sorted by frames.
pub fn stacks(a: &Analysis) -> Vec<(Vec<String>, u64)> {
    // HOOK(locks, issue 4): add lock blocked time by site as `lock;site;lock class`
    // stacks once `Analysis` has `locks`.
    timeline::self_time_stacks(&a.tasks)
        .into_iter()
        .map(|(f, v)| (f.iter().map(|s| frame(s)).collect(), v))
        .collect()
}

/// Collapsed stacks of task self time (ns), one `frames value` line each.
pub fn collapsed_stacks(a: &Analysis) -> String {
    let mut out = String::new();
    for (frames, v) in stacks(a) {
        out.push_str(&frames.join(";"));
        out.push(' ');
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}
