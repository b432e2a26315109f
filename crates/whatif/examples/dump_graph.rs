//! Prints the execution graph of a trace, strand by strand (a debugging aid).
//! `cargo run --release -p weft-whatif --example dump_graph -- TRACE [MAX_STRANDS]`

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: dump_graph TRACE [MAX_STRANDS]");
        std::process::exit(2);
    };
    let max: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let trace = match weft_trace::read_trace(std::path::Path::new(&path)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let a = weft_analysis::analyze(&trace);
    let g = weft_whatif::build::build(&a);
    println!(
        "cores {} effective {:.2} cpu share {:.2} observed {} ns wake {} ns pools {:?}",
        g.cores, g.cores_effective, g.cpu_share, g.observed_ns, g.wake_ns, g.pools
    );
    for (i, s) in g.strands.iter().enumerate().take(max) {
        println!(
            "#{i} {} {:?} thread {} [{}, {}] root {:?}: {:?}",
            g.classes[s.class as usize],
            s.runs,
            s.thread,
            s.observed_begin_ns,
            s.observed_end_ns,
            s.root_start_ns,
            g.ops_of(i as u32)
                .iter()
                .zip(&g.op_begin[s.first as usize..])
                .take(
                    std::env::var("OPS")
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(12)
                )
                .collect::<Vec<_>>()
        );
    }
    // Per strand: compute demand and stalls in all (where an edit's time goes).
    for (i, st) in g.strands.iter().enumerate().take(max) {
        let ops = st.first..st.first + st.len;
        let compute: u64 = g
            .ops_of(i as u32)
            .iter()
            .map(|o| match o {
                weft_whatif::Op::Compute(n) => *n,
                _ => 0,
            })
            .sum();
        let stalls: u64 = g
            .compute_stall_ns
            .iter()
            .filter(|(op, _)| ops.contains(op))
            .map(|x| x.1)
            .sum();
        println!(
            "#{i} {}: compute {compute} ns, stalls {stalls} ns, wall {} ns",
            g.classes[st.class as usize],
            st.observed_end_ns - st.observed_begin_ns
        );
    }
    let max_stalls: usize = std::env::var("STALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    for (op, ns) in g.compute_stall_ns.iter().take(max_stalls) {
        println!("stall after op {op}: {ns} ns");
    }
    // STALL_BUCKET_MS=N: each strand's stalls and compute per N ms of the run (where they happened).
    if let Some(ms) = std::env::var("STALL_BUCKET_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        let bucket = ms.max(1) * 1_000_000;
        for (i, st) in g.strands.iter().enumerate().take(max) {
            let n = (g.observed_ns / bucket + 1) as usize;
            let (mut stall, mut comp) = (vec![0u64; n], vec![0u64; n]);
            for op in st.first..st.first + st.len {
                let b = ((g.op_begin[op as usize] / bucket) as usize).min(n - 1);
                if let weft_whatif::Op::Compute(c) = g.ops[op as usize] {
                    comp[b] += c;
                }
            }
            for &(op, ns) in g
                .compute_stall_ns
                .iter()
                .filter(|(op, _)| (st.first..st.first + st.len).contains(op))
            {
                let b = ((g.op_begin[op as usize] / bucket) as usize).min(n - 1);
                stall[b] += ns;
            }
            let row: Vec<String> = comp
                .iter()
                .zip(&stall)
                .map(|(c, s)| format!("{}/{}", c / 1_000_000, s / 1_000_000))
                .collect();
            println!("#{i} compute/stall ms per {ms} ms: {}", row.join(" "));
        }
    }
}
