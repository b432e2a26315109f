//! Time `summarize` + `instrument` per class, as the agent would call them in ClassFileLoadHook.
//!
//! `cargo run --release -p weft-classfile --example bench -- JAVA_BASE_DIR`
//! (JAVA_BASE_DIR: `jimage extract --dir D --include regex:/java.base/.* $JAVA_HOME/lib/modules`, then D/java.base)
use std::path::Path;
use std::time::Instant;
use weft_classfile::{instrument, summarize, Instrumentation, WrapRequest};

fn main() {
    let dir = std::env::args().nth(1).expect("usage: bench JAVA_BASE_DIR");
    for (class, methods) in [
        (
            "java/util/concurrent/ForkJoinTask",
            &[
                "fork",
                "join",
                "doExec",
                "invoke",
                "tryUnfork",
                "cancel",
                "reinitialize",
            ][..],
        ),
        (
            "java/util/concurrent/FutureTask",
            &["run", "get", "cancel"][..],
        ),
        (
            "java/util/concurrent/ThreadPoolExecutor",
            &["execute", "runWorker"][..],
        ),
        ("java/lang/Thread", &["run", "start", "join"][..]),
        ("java/lang/String", &[][..]),
    ] {
        let bytes =
            std::fs::read(Path::new(&dir).join(format!("{class}.class"))).expect("read class");
        let n = 2000;
        let t0 = Instant::now();
        let mut wrapped = 0;
        let mut ctors = 0;
        for _ in 0..n {
            let s = summarize(&bytes).expect("summarize");
            let wraps = s
                .methods
                .iter()
                .filter(|m| methods.contains(&m.name.as_str()))
                .map(|m| WrapRequest {
                    name: m.name.clone(),
                    descriptor: m.descriptor.clone(),
                    probe_id: 1000,
                    pass_arg0: false,
                    hooks: None,
                })
                .collect();
            let r = instrument(
                &bytes,
                &Instrumentation {
                    wraps,
                    constructor_probe: Some(1001),
                },
            )
            .expect("instrument");
            wrapped = r.wrapped.len();
            ctors = r.constructors;
        }
        let us = t0.elapsed().as_secs_f64() * 1e6 / n as f64;
        let t1 = Instant::now();
        for _ in 0..n {
            std::hint::black_box(summarize(std::hint::black_box(&bytes)).expect("summarize"));
        }
        let su = t1.elapsed().as_secs_f64() * 1e6 / n as f64;
        println!(
            "{class}: {} bytes, {wrapped} methods wrapped, {ctors} constructors: {us:.1} µs \
             (summarize alone {su:.1} µs, instrument {:.1} µs)",
            bytes.len(),
            us - su
        );
    }
}
