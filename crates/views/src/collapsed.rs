//! Collapsed stacks (`frame;frame;frame value`, one stack per line), the input
//! of flame graph tools (flamegraph.pl, inferno, speedscope): the self time in
//! ns of every reported task execution, by `kind;class;site;state` (state:
//! running, off-CPU, waiting, or blocked on a lock with the lock's site; see
//! `activity::self_time_stacks`). Each nanosecond is in one stack only: a class's
//! stacks add up to its total self time in the report.

use weft_analysis::{activity, Analysis};

/// A frame as a collapsed-stack token: no `;` (the separator) and no newline.
fn frame(s: &str) -> String {
    s.replace(';', ":").replace(['\n', '\r'], " ")
}

/// The stacks as `(frames, value)`, value in ns, sorted by frames.
pub fn stacks(a: &Analysis) -> Vec<(Vec<String>, u64)> {
    let mut v: Vec<(Vec<String>, u64)> =
        activity::self_time_stacks(&a.tasks, &a.locks, &a.activity)
            .into_iter()
            .map(|(f, v)| (f.iter().map(|s| frame(s)).collect(), v))
            .collect();
    v.sort_by(|x, y| x.0.cmp(&y.0));
    v
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
