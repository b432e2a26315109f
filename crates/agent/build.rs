//! Compiles `java/agent/weft/*.java` with `javac --release 17` and generates
//! `probe_classes.rs`: every resulting class file, embedded with `include_bytes!`.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    compile_walk_guard();
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
        // Fork-join stand-ins (java/agent/weft/FjStub*.java): references to them are
        // renamed to the JDK classes they stand for; they are not embedded.
        if name.starts_with("FjStub") {
            continue;
        }
        let bytes = fs::read(&f).unwrap();
        let renamed = rename_stubs(&bytes);
        if renamed != bytes {
            fs::write(&f, &renamed).unwrap();
        }
        gen.push_str(&format!(
            "    ({name:?}, include_bytes!({:?})),\n",
            f.display().to_string()
        ));
    }
    gen.push_str("];\n");
    fs::write(out.join("probe_classes.rs"), gen).unwrap();
}

/// Replaces the constant-pool Utf8 entries naming the fork-join stand-in classes
/// with the JDK classes (the entry is `01 len:u2 bytes`; nothing in a class file
/// refers to constant-pool byte offsets, so the length may change).
fn rename_stubs(bytes: &[u8]) -> Vec<u8> {
    const MAP: &[(&str, &str)] = &[
        ("weft/FjStubTask", "java/util/concurrent/ForkJoinTask"),
        (
            "weft/FjStubWorker",
            "java/util/concurrent/ForkJoinWorkerThread",
        ),
        (
            "Lweft/FjStubDontInline;",
            "Ljdk/internal/vm/annotation/DontInline;",
        ),
        ("Lweft/FjStubHidden;", "Ljdk/internal/vm/annotation/Hidden;"),
    ];
    let mut out = bytes.to_vec();
    for (from, to) in MAP {
        let mut pat = vec![1u8];
        pat.extend_from_slice(&(from.len() as u16).to_be_bytes());
        pat.extend_from_slice(from.as_bytes());
        let mut rep = vec![1u8];
        rep.extend_from_slice(&(to.len() as u16).to_be_bytes());
        rep.extend_from_slice(to.as_bytes());
        if let Some(i) = out.windows(pat.len()).position(|w| w == pat.as_slice()) {
            out.splice(i..i + pat.len(), rep);
        }
    }
    out
}

/// Compiles `src/walk_guard.c` (sigsetjmp around the sampler's stack walk) into a
/// static library with the system C compiler (`$CC`, else `cc`).
fn compile_walk_guard() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let src = manifest.join("src/walk_guard.c");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let obj = out.join("walk_guard.o");
    println!("cargo:rerun-if-changed={}", src.display());
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let ok = Command::new(&cc)
        .args(["-c", "-fPIC", "-O2", "-Wall", "-o"])
        .arg(&obj)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| {
            panic!("cannot run the C compiler {cc} (needed for walk_guard.c): {e}")
        });
    assert!(ok.success(), "compiling walk_guard.c failed");
    let lib = out.join("libweft_walk_guard.a");
    let _ = fs::remove_file(&lib);
    let ok = Command::new("ar")
        .arg("crs")
        .arg(&lib)
        .arg(&obj)
        .status()
        .unwrap_or_else(|e| panic!("cannot run ar: {e}"));
    assert!(ok.success(), "ar failed");
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=weft_walk_guard");
}
