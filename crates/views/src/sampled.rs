//! Sampled-stack exports (docs/sampling.md): collapsed stacks, a flame graph
//! (drawn by the `inferno` crate) and speedscope JSON of one profile mode (CPU
//! or wall), from `Analysis::profile`. Counts are samples.

use std::collections::HashMap;

use serde_json::json;
use weft_analysis::profile::{Mode, Profile, SampleFilter};
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
        filter.keeps(s, &a.model, &a.tasks, &a.locks)
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
        if s.mode != mode || !filter.keeps(s, &a.model, &a.tasks, &a.locks) {
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

fn methods_json(v: &[weft_analysis::profile::MethodShare]) -> serde_json::Value {
    v.iter()
        .map(|m| json!({ "method": m.method, "samples": m.samples, "share": m.share }))
        .collect()
}

/// The `profile` object of the JSON report.
pub fn profile_json(p: &Profile) -> serde_json::Value {
    json!({
        "cpu_period_ns": p.cpu_period_ns,
        "wall_period_ns": p.wall_period_ns,
        "cpu_samples": p.cpu_samples,
        "wall_samples": p.wall_samples,
        "cpu_broken": p.cpu_broken,
        "wall_broken": p.wall_broken,
        "cpu_broken_share": p.broken_share(Mode::Cpu),
        "wall_broken_share": p.broken_share(Mode::Wall),
        "cpu_partial": p.cpu_partial,
        "wall_partial": p.wall_partial,
        "cpu_not_in_java": p.cpu_not_in_java,
        "task_classes": p.task_classes.iter().map(|c| json!({
            "class": c.class,
            "cpu_samples": c.cpu_samples,
            "cpu_ns": c.cpu_ns,
            "top_methods": methods_json(&c.top_methods),
        })).collect::<Vec<_>>(),
        "lock_holders": p.lock_holders.iter().map(|l| json!({
            "lock": l.lock,
            "holder_samples": l.holder_samples,
            "top_methods": methods_json(&l.top_methods),
        })).collect::<Vec<_>>(),
        "task_overheads": p.overheads.iter().map(|o| json!({
            "class": o.class,
            "work_samples": o.work_samples,
            "dispatch_samples": o.dispatch_samples,
            "submit_samples": o.submit_samples,
            "overhead_share": o.overhead_share(),
        })).collect::<Vec<_>>(),
    })
}

/// The "Sampled stacks" section of the text report.
pub fn profile_text(out: &mut String, p: &Profile) {
    use std::fmt::Write as _;
    if p.is_empty() {
        return;
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    let _ = writeln!(
        out,
        "\nSampled stacks: {} CPU samples (every ~{:.1} ms of CPU), {} wall samples (every ~{:.0} ms); broken walks {:.1}% (CPU), {:.1}% (wall); CPU samples outside Java code {}",
        p.cpu_samples,
        ms(p.cpu_period_ns),
        p.wall_samples,
        ms(p.wall_period_ns),
        100.0 * p.broken_share(Mode::Cpu),
        100.0 * p.broken_share(Mode::Wall),
        p.cpu_not_in_java,
    );
    if !p.task_classes.is_empty() {
        let _ = writeln!(
            out,
            "  Where task classes spend their CPU (self, top 5 methods):"
        );
    }
    for c in p.task_classes.iter().take(10) {
        let _ = writeln!(
            out,
            "  {} ({} samples, ~{:.0} ms)",
            c.class,
            c.cpu_samples,
            ms(c.cpu_ns)
        );
        for m in &c.top_methods {
            let _ = writeln!(out, "    {:5.1}%  {}", 100.0 * m.share, m.method);
        }
    }
    if !p.lock_holders.is_empty() {
        let _ = writeln!(
            out,
            "  What lock holders ran while others waited (CPU samples):"
        );
    }
    for l in p.lock_holders.iter().take(10) {
        let _ = writeln!(out, "  {} ({} samples)", l.lock, l.holder_samples);
        for m in &l.top_methods {
            let _ = writeln!(out, "    {:5.1}%  {}", 100.0 * m.share, m.method);
        }
    }
    let shown: Vec<_> = p
        .overheads
        .iter()
        .filter(|o| o.dispatch_samples + o.submit_samples > 0)
        .take(10)
        .collect();
    if !shown.is_empty() {
        let _ = writeln!(
            out,
            "  Work vs overhead of submitted task classes (CPU samples: in the task / the pool taking it / submitting it):"
        );
    }
    for o in shown {
        let _ = writeln!(
            out,
            "  {}: work {}, dispatch {}, submit {} ({:.1}% overhead)",
            o.class,
            o.work_samples,
            o.dispatch_samples,
            o.submit_samples,
            100.0 * o.overhead_share()
        );
    }
}
