//! Instrument every class under a directory tree (all constructors plus the task entry points) and
//! write the changed classes to an output tree. Used to stress the rewriter on a whole java.base:
//!
//! `cargo run --release -p weft-classfile --example patch_all -- IN_DIR OUT_DIR`
use std::path::{Path, PathBuf};
use std::time::Instant;
use weft_classfile::{instrument, summarize, Instrumentation, WrapRequest};

fn walk(d: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(d).expect("read dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "class") && !p.ends_with("module-info.class") {
            out.push(p);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (src, dst) = (Path::new(&args[1]), Path::new(&args[2]));
    let mut files = Vec::new();
    walk(src, &mut files);
    let (mut changed, mut errors, mut total) = (0, 0, std::time::Duration::ZERO);
    for f in &files {
        let bytes = std::fs::read(f).expect("read");
        let Ok(s) = summarize(&bytes) else { continue };
        let wraps = s
            .methods
            .iter()
            .filter(|m| {
                matches!(
                    m.name.as_str(),
                    "run"
                        | "call"
                        | "exec"
                        | "execute"
                        | "submit"
                        | "invoke"
                        | "fork"
                        | "join"
                        | "doExec"
                )
            })
            .map(|m| WrapRequest {
                name: m.name.clone(),
                descriptor: m.descriptor.clone(),
                probe_id: 3,
                pass_arg0: true,
                hooks: None,
            })
            .collect();
        let t0 = Instant::now();
        let r = instrument(
            &bytes,
            &Instrumentation {
                wraps,
                constructor_probe: Some(2),
            },
        );
        total += t0.elapsed();
        match r {
            Ok(r) if r.changed() => {
                let out = dst.join(f.strip_prefix(src).expect("prefix"));
                std::fs::create_dir_all(out.parent().expect("parent")).expect("mkdir");
                std::fs::write(out, r.bytes).expect("write");
                changed += 1;
            }
            Ok(_) => {}
            Err(e) => {
                errors += 1;
                eprintln!("{}: {e}", s.name);
            }
        }
    }
    println!(
        "{} classes, {changed} changed, {errors} errors, {:.1} µs per class",
        files.len(),
        total.as_secs_f64() * 1e6 / files.len() as f64
    );
}
