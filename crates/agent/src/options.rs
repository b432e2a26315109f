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
    /// The measured window `window=pkg.Class.method`: every call of that method
    /// (all overloads) is recorded as WindowEnter/WindowExit.
    pub window: Option<WindowMethod>,
    /// `windowcalls`: each call is its own window (header `window.calls = each`).
    pub window_each_call: bool,
    /// `lockdetail`: every `synchronized` acquisition and release of application
    /// classes is recorded (monitors.rs; docs/whatif.md §Recording: lock detail).
    pub lock_detail: bool,
}

/// The window method of `window=pkg.Class.method` (nested classes with `$`).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowMethod {
    /// Internal class name, `pkg/Class`.
    pub class: String,
    pub method: String,
}

impl WindowMethod {
    /// `pkg.Class.method`, as the header names it.
    pub fn dotted(&self) -> String {
        format!("{}.{}", self.class.replace('/', "."), self.method)
    }
}

fn parse_window(v: &str) -> Result<WindowMethod, String> {
    let bad = || {
        format!("bad window method '{v}' (expected pkg.Class.method, e.g. com.example.Main.solve)")
    };
    let (class, method) = v.rsplit_once('.').ok_or_else(bad)?;
    let ident = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    if !ident(method) || !class.split('.').all(ident) || method == "<init>" {
        return Err(bad());
    }
    Ok(WindowMethod {
        class: class.replace('.', "/"),
        method: method.to_string(),
    })
}

impl Default for Options {
    fn default() -> Self {
        Options {
            out: PathBuf::from("weft.trace"),
            interval: Duration::from_millis(100),
            lock_interval: Duration::from_secs(1),
            quiet: false,
            window: None,
            window_each_call: false,
            lock_detail: false,
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
            ("window", Some(v)) => o.window = Some(parse_window(v)?),
            ("windowcalls", None) => o.window_each_call = true,
            ("lockdetail", None) => o.lock_detail = true,
            _ => {
                return Err(format!(
                "unknown or malformed option '{item}' (options: out=PATH, interval=100ms, lockinterval=1s, window=pkg.Class.method, windowcalls, lockdetail, quiet)"
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
        let w = parse(Some("window=com.example.Main$Inner.solve,windowcalls")).unwrap();
        let wm = w.window.unwrap();
        assert_eq!(wm.class, "com/example/Main$Inner");
        assert_eq!(wm.method, "solve");
        assert_eq!(wm.dotted(), "com.example.Main$Inner.solve");
        assert!(w.window_each_call);
        assert!(!w.lock_detail);
        assert!(parse(Some("lockdetail")).unwrap().lock_detail);
        assert!(parse(Some("lockdetail=1")).is_err());
        for bad in [
            "window=solve",
            "window=a..b",
            "window=a.b c",
            "window=a.",
            "window=.m",
        ] {
            assert!(parse(Some(bad)).is_err(), "{bad}");
        }
    }
}
