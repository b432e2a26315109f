//! ns per record of the block encoder, for the records of an executor task
//! (TaskBegin, TaskEnd, Submit, Created, JoinBegin, JoinEnd) with realistic
//! values: `cargo run --release -p weft-trace --example encode_speed [hot] [ROUNDS]`.
//! BENCHMARKS.md, "Session 13".

use std::hint::black_box;
use std::time::Instant;

use weft_trace::{BlockEncoder, Record};

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let hot = std::env::args().any(|a| a == "hot");
    let mut spare: Option<Vec<u8>> = None;
    let mut enc = BlockEncoder::new(5, 36 * 1024);
    let mut best = f64::MAX;
    for _ in 0..7 {
        let mut ts = 1_000_000_000_000u64;
        let mut records = 0u64;
        let t0 = Instant::now();
        for i in 0..rounds as u32 {
            let ident = 0x2a3b_4c5d ^ i.wrapping_mul(0x9E37_79B9) >> 1;
            let batch = [
                Record::Created {
                    ts,
                    class_id: 412,
                    ident,
                    site: 0,
                },
                Record::Submit {
                    ts: ts + 180,
                    probe: 0x0300_0012,
                    executor_class_id: 77,
                    task_class_id: 412,
                    task_ident: ident,
                    inner_class_id: 0,
                    inner_ident: 0,
                    site: 3,
                },
                Record::TaskBegin {
                    ts: ts + 5_000,
                    probe: 0x0100_0040,
                    class_id: 412,
                    ident,
                    inner_class_id: 0,
                    inner_ident: 0,
                },
                Record::TaskEnd {
                    ts: ts + 65_000,
                    probe: 0x0100_0040,
                    ident,
                },
                Record::JoinBegin {
                    ts: ts + 65_500,
                    probe: 0x0600_0003,
                    target_class_id: 90,
                    target_ident: ident,
                },
                Record::JoinEnd {
                    ts: ts + 66_000,
                    probe: 0x0600_0003,
                },
            ];
            for r in &batch {
                enc.push(black_box(r));
            }
            records += batch.len() as u64;
            if enc.len() >= 32 * 1024 {
                // Reusing the written block keeps the memory in cache (`hot`); a new
                // block each time is what a thread's block is in the agent (cold).
                let block = enc.take_block_reusing(spare.take());
                if hot {
                    spare = Some(black_box(block));
                } else {
                    drop(black_box(block));
                }
            }
            ts += 70_000;
        }
        let ns = t0.elapsed().as_nanos() as f64 / records as f64;
        best = best.min(ns);
    }
    println!(
        "encode ns/record (best of 7, {} blocks): {best:.2}",
        if hot { "reused" } else { "new" }
    );
}
