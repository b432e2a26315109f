//! Helpers shared by the integration tests: javac/java invocation, scratch directories.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use weft_classfile::{instrument, Instrumentation, Instrumented, WrapRequest};

/// JAVA_HOME derived from `readlink -f $(which javac)`.
pub fn java_home() -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", "readlink -f \"$(command -v javac)\""])
        .output()
        .expect("run sh");
    let javac = String::from_utf8(out.stdout).expect("utf8 path");
    let javac = PathBuf::from(javac.trim());
    assert!(
        javac.is_file(),
        "javac not found on PATH (it is required by these tests)"
    );
    javac
        .parent()
        .and_then(Path::parent)
        .expect("javac is in JAVA_HOME/bin")
        .to_path_buf()
}

pub fn tool(name: &str) -> PathBuf {
    java_home().join("bin").join(name)
}

/// A fresh, empty scratch directory under cargo's per-target tmp dir.
pub fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

pub fn java_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java")
}

/// Compile `sources` (relative to tests/java) into `out`.
pub fn javac(out: &Path, sources: &[&str], extra: &[&str]) {
    let mut cmd = Command::new(tool("javac"));
    cmd.arg("-nowarn")
        .arg("-d")
        .arg(out)
        .arg("-cp")
        .arg(out)
        .args(extra);
    for s in sources {
        cmd.arg(java_src().join(s));
    }
    let o = cmd.output().expect("run javac");
    assert!(
        o.status.success(),
        "javac failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Run `java` with the given arguments; returns (success, stdout, stderr).
pub fn java(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(tool("java"))
        .args(args)
        .output()
        .expect("run java");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

pub fn req(name: &str, descriptor: &str, probe_id: i32, pass_arg0: bool) -> WrapRequest {
    WrapRequest {
        name: name.into(),
        descriptor: descriptor.into(),
        probe_id,
        pass_arg0,
        pass_result: false,
        hooks: None,
    }
}

/// Transform a class file on disk in place.
pub fn transform(path: &Path, what: &Instrumentation) -> Instrumented {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let r = instrument(&bytes, what).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::fs::write(path, &r.bytes).expect("write class");
    r
}
