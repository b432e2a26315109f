//! Collapsed stacks (`frame;frame;frame value`, one stack per line), the input
//! of flame graph tools (flamegraph.pl, inferno, speedscope): task self time in
//! ns by `kind;class;site` (see `timeline::self_time_stacks`), and lock blocked
//! time in ns by `lock;lock class;site` (`LockAnalysis::blocked_by_site`; site
//! `site not sampled` for acquisitions whose stack the agent did not capture).

use weft_analysis::{timeline, Analysis};

/// A frame as a collapsed-stack token: no `;` (the separator) and no newline.
fn frame(s: &str) -> String {
    s.replace(';', ":").replace(['\n', '\r'], " ")
}

/// The stacks as `(frames, value)`, value in ns, sorted by frames.
pub fn stacks(a: &Analysis) -> Vec<(Vec<String>, u64)> {
    let mut v: Vec<(Vec<String>, u64)> = timeline::self_time_stacks(&a.tasks)
        .into_iter()
        .map(|(f, v)| (f.iter().map(|s| frame(s)).collect(), v))
        .collect();
    // Locks of one class and kind share a frame.
    let mut locks: std::collections::BTreeMap<Vec<String>, u64> = Default::default();
    for (l, site, ns) in a.locks.blocked_by_site() {
        let lock = &a.locks.locks[l];
        let key = vec![
            "lock".to_string(),
            frame(&format!("{} ({})", lock.class, lock.kind)),
            frame(site.as_deref().unwrap_or("site not sampled")),
        ];
        *locks.entry(key).or_default() += ns;
    }
    v.extend(locks.into_iter().filter(|x| x.1 > 0));
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
