//! A flame graph (SVG) of the collapsed stacks of [`crate::collapsed_stacks`]:
//! task self time by kind, class and site. Written by hand (no dependency):
//! one rectangle per frame, width proportional to time, a tooltip per frame.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use weft_analysis::{human_ns, Analysis};

use crate::collapsed::stacks;
use crate::html::esc;

const WIDTH: f64 = 1200.0;
const ROW: f64 = 18.0;
const PAD: f64 = 10.0;
const TOP: f64 = 40.0;

#[derive(Default)]
struct Node {
    value: u64,
    children: BTreeMap<String, Node>,
}

fn colour(name: &str, depth: usize) -> String {
    // Warm colours as in flame graphs; a stable hash of the name picks the shade.
    let h = name
        .bytes()
        .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
    let r = 205 + (h % 50) as u8;
    let g = 90 + ((h >> 8) % 110) as u8;
    let b = 40 + ((h >> 16) % 50) as u8 + (depth as u8 % 3) * 10;
    format!("rgb({r},{g},{b})")
}

/// The flame graph as a standalone SVG document.
pub fn flamegraph_svg(a: &Analysis, title: &str) -> String {
    let mut root = Node::default();
    for (frames, v) in stacks(a) {
        root.value += v;
        let mut n = &mut root;
        for f in frames {
            n = n.children.entry(f).or_default();
            n.value += v;
        }
    }
    let depth = max_depth(&root);
    let height = TOP + (depth as f64 + 1.0) * ROW + PAD * 2.0;
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="{w}" height="{height}" viewBox="0 0 {w} {height}" xmlns="http://www.w3.org/2000/svg" font-family="Verdana, sans-serif" font-size="12">
<rect x="0" y="0" width="{w}" height="{height}" fill="#fdfdfd"/>
<text x="{cx}" y="24" text-anchor="middle" font-size="16">{t}</text>
"##,
        w = WIDTH + 2.0 * PAD,
        cx = (WIDTH + 2.0 * PAD) / 2.0,
        t = esc(title)
    );
    if root.value == 0 {
        out.push_str("<text x=\"20\" y=\"60\">no task time recorded</text>\n</svg>\n");
        return out;
    }
    let scale = WIDTH / root.value as f64;
    // Root ("all") at the bottom, children above.
    let mut stack = vec![("all".to_string(), &root, PAD, 0usize)];
    while let Some((name, n, x, d)) = stack.pop() {
        let w = n.value as f64 * scale;
        if w < 0.3 {
            continue;
        }
        let y = height - PAD - (d as f64 + 1.0) * ROW;
        let pct = n.value as f64 * 100.0 / root.value as f64;
        let _ = write!(
            out,
            "<g><title>{} — {} ({:.1}%)</title><rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{}\" rx=\"2\" fill=\"{}\"/>",
            esc(&name),
            human_ns(n.value),
            pct,
            ROW - 1.0,
            colour(&name, d)
        );
        // Fit the label: ~7 px per character.
        let chars = ((w - 6.0) / 7.0).floor() as usize;
        if chars >= 3 {
            let label: String = if name.chars().count() > chars {
                let mut s: String = name.chars().take(chars.saturating_sub(2)).collect();
                s.push_str("..");
                s
            } else {
                name.clone()
            };
            let _ = write!(
                out,
                "<text x=\"{:.2}\" y=\"{:.1}\">{}</text>",
                x + 3.0,
                y + ROW - 5.0,
                esc(&label)
            );
        }
        out.push_str("</g>\n");
        let mut cx = x;
        let kids: Vec<(&String, &Node)> = n.children.iter().collect();
        let mut placed = Vec::new();
        for (k, c) in kids {
            placed.push((k.clone(), c, cx, d + 1));
            cx += c.value as f64 * scale;
        }
        stack.extend(placed.into_iter().rev());
    }
    out.push_str("</svg>\n");
    out
}

fn max_depth(n: &Node) -> usize {
    n.children
        .values()
        .map(|c| 1 + max_depth(c))
        .max()
        .unwrap_or(0)
}
