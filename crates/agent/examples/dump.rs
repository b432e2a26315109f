//! Prints a trace: header, record counts per kind, and (with `-v`) every record.
//! `cargo run -p weft-agent --example dump -- [-v] TRACE`

use std::collections::BTreeMap;

fn kind(r: &weft_trace::Record) -> String {
    let s = format!("{r:?}");
    s.split([' ', '{', '(']).next().unwrap_or("").to_string()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    let Some(path) = args.iter().find(|a| !a.starts_with('-')) else {
        eprintln!("usage: dump [-v] TRACE");
        std::process::exit(2);
    };
    let t = match weft_trace::read_trace(std::path::Path::new(path)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    for (k, v) in &t.header.entries {
        println!("{k} = {v}");
    }
    println!("truncated = {}", t.truncated);
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (th, r) in &t.records {
        *counts.entry(kind(r)).or_default() += 1;
        if verbose {
            println!("[{th}] {r:?}");
        }
    }
    for (k, n) in counts {
        println!("{k:>12} {n}");
    }
}
