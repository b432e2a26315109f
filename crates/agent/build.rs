//! Compiles `java/agent/weft/*.java` with `javac --release 17` and generates
//! `probe_classes.rs`: every resulting class file, embedded with `include_bytes!`.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let src_dir = manifest.join("../../java/agent/weft");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let classes = out.join("classes");
    let _ = fs::remove_dir_all(&classes);
    fs::create_dir_all(&classes).unwrap();
    println!("cargo:rerun-if-changed={}", src_dir.display());
    let mut sources = Vec::new();
    for e in fs::read_dir(&src_dir).expect("java/agent/weft") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "java") {
            println!("cargo:rerun-if-changed={}", p.display());
            sources.push(p);
        }
    }
    sources.sort();
    let javac = env::var("JAVAC").unwrap_or_else(|_| "javac".to_string());
    let status = Command::new(&javac)
        .args(["--release", "17", "-g", "-Xlint:all", "-Werror", "-d"])
        .arg(&classes)
        .args(&sources)
        .status()
        .unwrap_or_else(|e| {
            panic!("cannot run {javac} (a JDK 17+ is needed to build weft-agent): {e}")
        });
    assert!(status.success(), "javac failed");
    let mut files: Vec<PathBuf> = fs::read_dir(classes.join("weft"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut gen = String::from("/// Class files of package `weft`, compiled by build.rs.\npub static PROBE_CLASSES: &[(&str, &[u8])] = &[\n");
    for f in files {
        let name = f.file_name().unwrap().to_str().unwrap().to_string();
        gen.push_str(&format!(
            "    ({name:?}, include_bytes!({:?})),\n",
            f.display().to_string()
        ));
    }
    gen.push_str("];\n");
    fs::write(out.join("probe_classes.rs"), gen).unwrap();
}
