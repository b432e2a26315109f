//! `weft demo`: compile the bundled sample (java/sample) with javac, record it, print its report.

use std::path::Path;
use std::process::Command;

use crate::record::{find_agent, launch};
use crate::CliError;

include!(concat!(env!("OUT_DIR"), "/sample_sources.rs"));

const MAIN_CLASS: &str = "weft.sample.Sample";

pub fn run(output: &Path) -> Result<u8, CliError> {
    if SAMPLE_SOURCES.is_empty() {
        return Err(CliError::new(
            "this weft was built without the sample program",
        ));
    }
    // A fresh private directory: the sample's classes are compiled there and run,
    // so no one else may have put anything in it.
    let dir = crate::files::PrivateDir::new("weft-demo-")?;
    let src = dir.path().join("src");
    let classes = dir.path().join("classes");
    for (rel, text) in SAMPLE_SOURCES {
        let path = src.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| CliError::new(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
            .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))?;
    }
    let mut javac = Command::new("javac");
    javac.arg("--release").arg("17").arg("-d").arg(&classes);
    for (rel, _) in SAMPLE_SOURCES {
        javac.arg(src.join(rel));
    }
    eprintln!("weft: compiling the sample program with javac");
    let status = javac.status().map_err(|e| {
        CliError::new(format!(
            "cannot run javac ({e}): weft demo needs a JDK 17 or newer on the PATH"
        ))
    })?;
    if !status.success() {
        return Err(CliError::new("javac failed on the sample program"));
    }
    let output = if output.is_absolute() {
        output.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| CliError::new(format!("cannot read the current directory: {e}")))?
            .join(output)
    };
    crate::files::clear_old_trace(&output)?;
    let agent = find_agent(None)?;
    let agent_arg = format!("-agentpath:{}=out={}", agent.display(), output.display());
    eprintln!(
        "weft: recording java -cp {} {MAIN_CLASS}",
        classes.display()
    );
    let command = [
        "java".into(),
        "-cp".into(),
        classes.clone().into_os_string(),
        MAIN_CLASS.into(),
    ];
    let status = launch(&command, &agent_arg)?;
    if !status.success() {
        return Err(CliError::new(format!(
            "the sample program failed: {status}"
        )));
    }
    eprintln!("weft: trace written to {}\n", output.display());
    let text = crate::report::render(&[output.to_path_buf()], &Default::default(), false)?;
    crate::files::write_stdout(&text)?;
    Ok(0)
}
