//! Sampled-stack exports (docs/sampling.md): collapsed stacks, a flame graph
//! (drawn by the `inferno` crate) and speedscope JSON of one profile mode (CPU
//! or wall), from `Analysis::profile`. Counts are samples.

use std::collections::HashMap;

use serde_json::json;
use weft_analysis::profile::{Mode, SampleFilter};
use weft_analysis::Analysis;

/// A frame as a collapsed-stack token: no `;` (the separator), space or newline
/// inside a frame (a space ends the frames).
fn token(s: &str) -> String {
    s.replace(';', ":").replace([' ', '\n', '\r'], "_")
}

fn lines_of(a: &Analysis, mode: Mode, lines: bool, filter: &SampleFilter) -> Vec<(String, u64)> {
    let p = &a.profile;
    let mut by: HashMap<String, u64> = HashMap::new();
    for (frames, n) in p.collapsed(mode, lines, |s| {
        filter.keeps(s, &a.model, &a.tasks)
    }) {
        let t: Vec<String> = frames.split(';').map(token).collect();
        *by.entry(t.join(";")).or_default() += n;
    }
    let mut v: Vec<(String, u64)> = by.into_iter().collect();
    v.sort();
    v
}

/// Collapsed stacks: `root;…;leaf count` per line (flamegraph.pl, inferno, speedscope).
pub fn profile_collapsed(a: &Analysis, mode: Mode, lines: bool, filter: &SampleFilter) -> String {
    let mut out = String::new();
    for (frames, n) in lines_of(a, mode, lines, filter) {
        out.push_str(&frames);
        out.push(' ');
        out.push_str(&n.to_string());
        out.push('\n');
    }
    out
}

/// An interactive flame graph (SVG) of the samples.
pub fn profile_flamegraph(
    a: &Analysis,
    mode: Mode,
    lines: bool,
    filter: &SampleFilter,
    title: &str,
) -> Result<Vec<u8>, String> {
    let collapsed = profile_collapsed(a, mode, lines, filter);
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "samples".to_string();
    let mut out = Vec::new();
    if collapsed.is_empty() {
        // inferno refuses an empty profile; say so in a valid SVG.
        let msg = format!(
            "<?xml version=\"1.0\" standalone=\"no\"?><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"40\"><text x=\"10\" y=\"24\">no {} samples in this trace</text></svg>\n",
            mode.name()
        );
        return Ok(msg.into_bytes());
    }
    inferno::flamegraph::from_lines(&mut opts, collapsed.lines(), &mut out)
        .map_err(|e| format!("flame graph: {e}"))?;
    Ok(out)
}

/// speedscope JSON (https://www.speedscope.app): one sampled profile per thread.
pub fn profile_speedscope(a: &Analysis, mode: Mode, lines: bool, filter: &SampleFilter) -> String {
    let p = &a.profile;
    let mut frame_index: HashMap<String, usize> = HashMap::new();
    let mut frames: Vec<serde_json::Value> = Vec::new();
    let mut per_thread: std::collections::BTreeMap<u32, (Vec<Vec<usize>>, Vec<u64>)> =
        Default::default();
    let period = match mode {
        Mode::Cpu => p.cpu_period_ns,
        Mode::Wall => p.wall_period_ns,
    };
    for s in &p.samples {
        if s.mode != mode || !filter.keeps(s, &a.model, &a.tasks) {
            continue;
        }
        let idx: Vec<usize> = p
            .stack_names(s.stack, lines)
            .into_iter()
            .map(|name| {
                let next = frame_index.len();
                *frame_index.entry(name.clone()).or_insert_with(|| {
                    frames.push(json!({ "name": name }));
                    next
                })
            })
            .collect();
        let e = per_thread.entry(s.thread).or_default();
        e.0.push(idx);
        e.1.push(period.max(1));
    }
    let profiles: Vec<serde_json::Value> = per_thread
        .into_iter()
        .map(|(t, (samples, weights))| {
            let name = a
                .model
                .threads
                .get(&t)
                .map(|t| t.display_name())
                .unwrap_or_else(|| format!("thread #{t}"));
            let total: u64 = weights.iter().sum();
            json!({
                "type": "sampled",
                "name": format!("{name} ({})", mode.name()),
                "unit": "nanoseconds",
                "startValue": 0,
                "endValue": total,
                "samples": samples,
                "weights": weights,
            })
        })
        .collect();
    json!({
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "name": format!("weft {} profile", mode.name()),
        "exporter": "weft",
        "shared": { "frames": frames },
        "profiles": profiles,
    })
    .to_string()
}
