//! Simulates a trace's graph with and without an edit under a few parameter
//! variations (a debugging aid): `sim_probe TRACE EDIT`.
fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(edit)) = (args.next(), args.next()) else {
        eprintln!("usage: sim_probe TRACE EDIT");
        std::process::exit(2);
    };
    let trace = match weft_trace::read_trace(std::path::Path::new(&path)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let a = weft_analysis::analyze(&trace);
    let g = weft_whatif::build::build(&a);
    let e = match weft_whatif::edit::Edit::parse(&edit) {
        Ok(e) => e,
        Err(err) => {
            eprintln!("{err}");
            std::process::exit(2);
        }
    };
    let mut variants: Vec<(&str, weft_whatif::ExecGraph)> = vec![("as built", g.clone())];
    let mut no_stalls = g.clone();
    no_stalls.compute_stall_ns.clear();
    variants.push(("no stalls", no_stalls));
    for (label, g) in &variants {
        for scale in [0.0, 1.0] {
            let p = weft_whatif::SimParams {
                latency_scale: scale,
                ..Default::default()
            };
            let base = weft_whatif::simulate(g, &weft_whatif::Overlay::identity(g), p);
            let (eg, ov) = match e.apply(g) {
                Ok(x) => x,
                Err(err) => {
                    eprintln!("{err}");
                    std::process::exit(2);
                }
            };
            let after = weft_whatif::simulate(&eg, &ov, p);
            println!(
                "{label:10} latency x{scale}: base {:.3} s, after {:.3} s, gain x{:.3}",
                base.makespan_ns as f64 / 1e9,
                after.makespan_ns as f64 / 1e9,
                base.makespan_ns as f64 / after.makespan_ns.max(1) as f64
            );
        }
    }
}
