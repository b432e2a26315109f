//! The probe classes (`weft/*.class`, embedded at build time) as a jar that exists
//! only in memory, for the boot class path.
//!
//! `AddToBootstrapClassLoaderSearch` takes a path. The jar is written into an
//! anonymous memory file (`memfd_create`; where that is refused, an unnamed
//! `O_TMPFILE` in the temp directory) and passed as `/proc/self/fd/N`: no file is
//! ever created in the file system, so nothing can be left behind when the JVM dies
//! early (`-Xmx1k`, SIGKILL before VMInit), and no one can plant or swap a class
//! file in a shared directory. The JVM opens the jar at start-up and keeps its own
//! descriptor; ours is closed once every probe class is loaded.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};

/// A stored (uncompressed) zip of `entries` (name, bytes).
pub fn zip_stored(entries: &[(String, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    let u16le = |v: &mut Vec<u8>, x: u16| v.extend_from_slice(&x.to_le_bytes());
    let u32le = |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&x.to_le_bytes());
    for (name, data) in entries {
        let offset = out.len() as u32;
        let crc = crc32fast::hash(data);
        // Local file header: version 1.0, no flags, stored, 1980-01-01 00:00.
        u32le(&mut out, 0x0403_4b50);
        for x in [10, 0, 0, 0, 0x21] {
            u16le(&mut out, x);
        }
        u32le(&mut out, crc);
        u32le(&mut out, data.len() as u32);
        u32le(&mut out, data.len() as u32);
        u16le(&mut out, name.len() as u16);
        u16le(&mut out, 0);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        // Central directory entry.
        u32le(&mut central, 0x0201_4b50);
        for x in [20, 10, 0, 0, 0, 0x21] {
            u16le(&mut central, x);
        }
        u32le(&mut central, crc);
        u32le(&mut central, data.len() as u32);
        u32le(&mut central, data.len() as u32);
        u16le(&mut central, name.len() as u16);
        for x in [0, 0, 0, 0] {
            u16le(&mut central, x);
        }
        u32le(&mut central, 0);
        u32le(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    // End of central directory.
    u32le(&mut out, 0x0605_4b50);
    u16le(&mut out, 0);
    u16le(&mut out, 0);
    u16le(&mut out, entries.len() as u16);
    u16le(&mut out, entries.len() as u16);
    u32le(&mut out, central.len() as u32);
    u32le(&mut out, cd_offset);
    u16le(&mut out, 0);
    out
}

/// An anonymous file: memfd, or an unnamed file in the temp directory.
fn anonymous_file() -> std::io::Result<File> {
    // SAFETY: a NUL-terminated name; the returned descriptor is ours.
    let fd = unsafe { libc::memfd_create(c"weft-probes.jar".as_ptr(), libc::MFD_CLOEXEC) };
    if fd >= 0 {
        // SAFETY: a fresh descriptor, owned by the File from now on.
        return Ok(unsafe { File::from_raw_fd(fd) });
    }
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o600)
        .open(std::env::temp_dir())
}

/// The probe jar in an anonymous file, and the path the JVM can open it by.
pub fn create(classes: &[(&str, &[u8])]) -> std::io::Result<(File, String)> {
    let entries: Vec<(String, &[u8])> = classes
        .iter()
        .map(|(name, bytes)| (format!("weft/{name}"), *bytes))
        .collect();
    let mut file = anonymous_file()?;
    file.write_all(&zip_stored(&entries))?;
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    // The JVM opens it by path: check that this works here (/proc mounted).
    std::fs::metadata(&path)?;
    Ok((file, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The jar reads back with the JDK's own `jar` tool when one is on the PATH.
    #[test]
    fn stored_zip_lists_its_entries() {
        let dir = std::env::temp_dir().join(format!("weft-zip-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let jar = dir.join("t.jar");
        std::fs::write(
            &jar,
            zip_stored(&[
                ("weft/A.class".into(), b"abc"),
                ("weft/B.class".into(), b""),
            ]),
        )
        .unwrap();
        if let Ok(out) = std::process::Command::new("jar")
            .arg("tf")
            .arg(&jar)
            .output()
        {
            let listing = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{listing}");
            assert_eq!(
                listing.lines().collect::<Vec<_>>(),
                ["weft/A.class", "weft/B.class"]
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
