//! The "Possible speedups" section of the HTML report: Gomes' chart (the
//! current speedup, each limitation removed, the ideal) at the recorded core
//! count, and the same across core counts (eq. 11 with the efficiencies held).

use std::fmt::Write as _;

use weft_analysis::human_ns;
use weft_analysis::speedups::{Limitation, Speedups, Status};

use crate::html::esc;

fn colour(l: Limitation) -> usize {
    match l {
        Limitation::Serial => 1,
        Limitation::Imbalance => 2,
        Limitation::Locks => 3,
        Limitation::Overhead => 4,
        Limitation::Oversubscription => 5,
        Limitation::Gc => 6,
    }
}

fn fmt(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.2}"))
}

/// Horizontal bars: speedup over the reference work, current, each line, ideal.
fn bars_svg(s: &Speedups) -> String {
    let current = s.calculated_ns.map(|c| s.reference_ns / c);
    let ideal = s.threads_effective.max(1.0);
    let mut rows: Vec<(String, f64, usize)> = Vec::new();
    if let Some(c) = current {
        rows.push(("current (calculated)".into(), c, 0));
    }
    for l in &s.lines {
        if let Some(p) = l.possible_speedup {
            rows.push((format!("no {}", l.remove.label()), p, colour(l.remove)));
        }
    }
    rows.push((format!("ideal ({ideal:.1} threads)"), ideal, 7));
    let max = rows.iter().map(|r| r.1).fold(1.0, f64::max);
    let (w, lw, rh) = (640.0, 170.0, 22.0);
    let h = rows.len() as f64 * rh + 8.0;
    let mut svg = format!(
        "<svg class=\"spd\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\">"
    );
    for (i, (name, v, c)) in rows.iter().enumerate() {
        let y = i as f64 * rh + 4.0;
        let bw = (w - lw - 60.0) * v / max;
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" class=\"nm\">{}</text><rect x=\"{lw}\" y=\"{}\" width=\"{bw:.1}\" height=\"{}\" class=\"c{c}\"/><text x=\"{:.1}\" y=\"{}\" class=\"v\">×{v:.2}</text>",
            lw - 6.0,
            y + 14.0,
            esc(name),
            y + 2.0,
            rh - 6.0,
            lw + bw + 4.0,
            y + 14.0,
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Lines across core counts (x: cores, y: speedup over the reference work).
fn cores_svg(s: &Speedups) -> String {
    let pts = &s.across_cores;
    let Some(last) = pts.last() else {
        return String::new();
    };
    let (w, h, l, b, t) = (640.0, 270.0, 40.0, 24.0, 22.0);
    let xmax = last.cores as f64;
    let ymax = pts
        .iter()
        .flat_map(|p| {
            p.removed
                .iter()
                .filter_map(|x| x.1)
                .chain([p.current, p.ideal])
        })
        .fold(1.0, f64::max);
    let x_of = |c: f64| l + (w - l - 12.0) * (c - 1.0) / (xmax - 1.0).max(1.0);
    let y_of = |v: f64| h - b - (h - b - t) * v / ymax;
    let mut svg = format!(
        "<svg class=\"spd\" viewBox=\"0 0 {w} {h2}\" width=\"{w}\" height=\"{h2}\" role=\"img\">\
<line x1=\"{l}\" y1=\"{y0}\" x2=\"{x2}\" y2=\"{y0}\" class=\"axis\"/><line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{y0}\" class=\"axis\"/>\
<text x=\"{xm}\" y=\"{xt}\" class=\"tl\">cores</text><text x=\"{l}\" y=\"{yt}\" class=\"tl\">speedup</text>",
        h2 = h + 14.0,
        y0 = h - b,
        x2 = w - 12.0,
        xm = (l + w) / 2.0,
        xt = h + 10.0,
        yt = t - 10.0,
    );
    // A tick at every 1, 2, 5, 10… step that gives at most 8 ticks.
    let step = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        .into_iter()
        .find(|st| ymax / st <= 8.0)
        .unwrap_or(200.0);
    let mut v = 0.0;
    while v <= ymax + 1e-9 {
        let _ = write!(
            svg,
            "<line x1=\"{l}\" y1=\"{y:.1}\" x2=\"{x2}\" y2=\"{y:.1}\" class=\"grid\"/><text x=\"{tx}\" y=\"{ty:.1}\" class=\"yl\">×{v:.0}</text>",
            y = y_of(v),
            x2 = w - 12.0,
            tx = l - 4.0,
            ty = y_of(v) + 4.0,
        );
        v += step;
    }
    for p in pts {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\" class=\"tl\">{}</text>",
            x_of(p.cores as f64),
            h - 8.0,
            p.cores
        );
    }
    let poly = |vals: Vec<(f64, f64)>, class: &str| -> String {
        let d: Vec<String> = vals
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", x_of(*x), y_of(*y)))
            .collect();
        format!("<polyline points=\"{}\" class=\"{class}\"/>", d.join(" "))
    };
    svg.push_str(&poly(
        pts.iter().map(|p| (p.cores as f64, p.ideal)).collect(),
        "ln ideal",
    ));
    let names: Vec<Limitation> = last.removed.iter().map(|x| x.0).collect();
    for (k, lim) in names.iter().enumerate() {
        let vals: Vec<(f64, f64)> = pts
            .iter()
            .filter_map(|p| Some((p.cores as f64, p.removed.get(k)?.1?)))
            .collect();
        if !vals.is_empty() {
            svg.push_str(&poly(vals, &format!("ln s{}", colour(*lim))));
        }
    }
    svg.push_str(&poly(
        pts.iter().map(|p| (p.cores as f64, p.current)).collect(),
        "ln s0 cur",
    ));
    svg.push_str("</svg>");
    svg
}

/// Each line's gain: eq. 11 (closed form) beside the execution graph simulated
/// with the limitation removed.
fn lines_table(s: &Speedups) -> String {
    let mut h = String::from(
        "<table class=\"grid\"><thead><tr><th>if removed</th><th>gain (eq. 11)</th><th>gain (simulated)</th><th>possible speedup</th></tr></thead><tbody>",
    );
    let gain = |x: Option<f64>| x.map_or("-".into(), |v| format!("×{v:.2}"));
    for l in &s.lines {
        let _ = write!(
            h,
            "<tr><td><span class=\"sw c{}\"></span> {}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            colour(l.remove),
            esc(l.remove.label()),
            gain(l.closed_form_gain),
            gain(l.simulated_gain),
            gain(l.possible_speedup),
        );
    }
    h.push_str("</tbody></table><p class=\"muted small\">Gain: how much faster than the calculated time; simulated: the same limitation removed in the execution graph and the graph simulated (docs/speedups.md); possible speedup: over the reference work (Gomes' form).</p>");
    h
}

pub fn speedups_section(s: &Speedups) -> String {
    let mut h = String::from("<section id=\"speedups\"><h2>Possible speedups</h2>");
    if s.status != Status::Ok {
        for n in &s.notes {
            let _ = write!(h, "<p class=\"muted\">{}.</p>", esc(n));
        }
        h.push_str("</section>\n");
        return h;
    }
    let e = &s.efficiencies;
    let _ = write!(
        h,
        "<p class=\"muted small\">How much faster the run could be if one limitation were gone (Gomes' eq. 11 in time units; docs/speedups.md). \
Each is an <b>upper bound</b>: removing one limitation can raise another. {} {} · team of {:.1} threads ({} distinct) · CPU shares {} · {}.</p>",
        esc(&s.window_source),
        human_ns(s.observed_ns),
        s.threads_effective,
        s.threads,
        s.cpu_source.as_str(),
        if s.baseline == "none" { "no baseline run (overhead not visible)".to_string() } else { format!("baseline: {}", s.baseline) }
    );
    let _ = write!(
        h,
        "<table class=\"grid\"><thead><tr><th>parallel fraction</th><th>load balance</th><th>lock contention</th><th>cores</th><th>serial overhead</th><th>parallel overhead</th><th>calculated</th><th>observed</th><th>residual</th></tr></thead>\
<tbody><tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr></tbody></table>",
        fmt(e.parallel_fraction),
        fmt(e.load_balance),
        fmt(e.lock_contention),
        fmt(e.cores),
        fmt(e.serial_overhead),
        fmt(e.parallel_overhead),
        s.calculated_ns.map_or("-".into(), |c| human_ns(c as u64)),
        human_ns(s.observed_ns),
        s.residual.map_or("-".into(), |r| format!("{:+.0}%", r * 100.0)),
    );
    h.push_str("<h3>Speedup over the reference work, at the recorded core count</h3>");
    h.push_str(&bars_svg(s));
    h.push_str(&lines_table(s));
    for n in &s.notes {
        let _ = write!(h, "<p class=\"muted small\">Note: {}.</p>", esc(n));
    }
    h.push_str("<h3>Across core counts</h3><p class=\"muted small\">Eq. 11 with the efficiencies held at their measured values and one thread per core: an extrapolation. Thick: current; dashed: ideal; one line per limitation removed (colours as above).</p>");
    h.push_str(&cores_svg(s));
    h.push_str("<div class=\"muted small\"><span class=\"sw c0\"></span> current");
    for l in Limitation::ALL {
        if l != Limitation::Oversubscription {
            let _ = write!(
                h,
                " · <span class=\"sw c{}\"></span> no {}",
                colour(l),
                l.label()
            );
        }
    }
    h.push_str(" · - - ideal</div>");
    h.push_str("</section>\n");
    h
}
