//! Agent options: `-agentpath:libweft_agent.so=out=PATH,interval=100ms,lockinterval=1s,quiet`.

use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub out: PathBuf,
    pub interval: Duration,
    /// Interval of the lock analysis (CSP per interval), written into the trace
    /// header as `locks.interval_ns` (docs/locks.md).
    pub lock_interval: Duration,
    pub quiet: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            out: PathBuf::from("weft.trace"),
            interval: Duration::from_millis(100),
            lock_interval: Duration::from_secs(1),
            quiet: false,
        }
    }
}

fn parse_duration(v: &str) -> Result<Duration, String> {
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => v.split_at(i),
        None => (v, "ms"),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("bad interval '{v}' (expected e.g. 100ms, 1s, 500us)"))?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "us" => Duration::from_micros(n),
        _ => return Err(format!("bad interval unit in '{v}' (use ms, s or us)")),
    };
    if d < Duration::from_millis(1) || d > Duration::from_secs(3600) {
        return Err(format!("interval '{v}' out of range (1ms..1h)"));
    }
    Ok(d)
}

/// Parses the option string; an error message names the offending option.
pub fn parse(s: Option<&str>) -> Result<Options, String> {
    let mut o = Options::default();
    let Some(s) = s else { return Ok(o) };
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (k, v) = match item.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (item, None),
        };
        match (k, v) {
            ("out", Some(v)) if !v.is_empty() => o.out = PathBuf::from(v),
            ("interval", Some(v)) => o.interval = parse_duration(v)?,
            ("lockinterval", Some(v)) => o.lock_interval = parse_duration(v)?,
            ("quiet", None) => o.quiet = true,
            (k, _) if crate::sampling::is_option(k) => {}
            _ => {
                return Err(format!(
                "unknown or malformed option '{item}' (options: out=PATH, interval=100ms, lockinterval=1s, quiet)"
            ))
            }
        }
    }
    crate::sampling::parse_options(Some(s))?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_options() {
        let o = parse(Some("out=/tmp/x.weft,interval=5s,quiet")).unwrap();
        assert_eq!(o.out, PathBuf::from("/tmp/x.weft"));
        assert_eq!(o.interval, Duration::from_secs(5));
        assert!(o.quiet);
        assert_eq!(parse(None).unwrap(), Options::default());
        assert_eq!(
            parse(Some("interval=2500us")).unwrap().interval,
            Duration::from_micros(2500)
        );
        assert_eq!(
            parse(Some("interval=20")).unwrap().interval,
            Duration::from_millis(20)
        );
        assert_eq!(o.lock_interval, Duration::from_secs(1));
        assert_eq!(
            parse(Some("lockinterval=250ms")).unwrap().lock_interval,
            Duration::from_millis(250)
        );
        assert!(parse(Some("lockinterval=0ms")).is_err());
        assert!(parse(Some("bogus=1")).is_err());
        assert!(parse(Some("interval=5h")).is_err());
        assert!(parse(Some("out=")).is_err());
    }
}
