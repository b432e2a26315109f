//! Reading a trace file back: header, blocks, records, and the conversion of
//! clock ticks to nanoseconds since the start of recording.
//!
//! A file cut short (SIGKILL, crash, full disk) is read up to its last whole
//! block and flagged `truncated`. A damaged block elsewhere (bad checksum, or
//! records that do not decode) is skipped and stands in the trace as a `Loss`
//! record (crates/trace/src/damage.rs); the reader finds the next whole block and
//! reads on. Values the analyses size allocations by (the clock rate, timestamps)
//! are checked: a clock rate that is not credible is replaced by the calibration
//! records' or is an error, and timestamps past the recording's credible end are
//! clamped to it.

use std::fmt;
use std::path::Path;

use crate::codec::{checksum, tag, unzigzag, FORMAT_VERSION, HAS_TS, MAGIC};
use crate::damage::{Blocks, DamageTracker, Next};
use crate::fjevents::FjEventDecoder;
use crate::record::{LossReason, ProbeKind, Record, ThreadIndex};
use crate::{header_keys, Header};

#[derive(Debug)]
pub enum TraceError {
    Io(String, std::io::Error),
    NotATrace,
    /// A zero-length file: the JVM exited before the agent wrote the header.
    Empty,
    UnsupportedVersion(u16),
    Corrupt {
        offset: usize,
        what: String,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io(path, e) => write!(f, "cannot read trace {path}: {e}"),
            TraceError::NotATrace => write!(f, "not a weft trace (bad magic bytes)"),
            TraceError::Empty => write!(
                f,
                "the trace is empty: the JVM exited before the agent started recording"
            ),
            TraceError::UnsupportedVersion(v) => write!(
                f,
                "trace format version {v} is not supported (this weft reads version {FORMAT_VERSION})"
            ),
            TraceError::Corrupt { offset, what } => {
                write!(f, "corrupt trace at byte {offset}: {what}")
            }
        }
    }
}

impl std::error::Error for TraceError {}

/// Converts clock ticks to ns since the start of recording, by a linear fit of
/// the calibration points (start, periodic `Calibration` records, end).
#[derive(Debug, Clone)]
pub struct Clock {
    start_ticks: u64,
    ns_per_tick: f64,
}

impl Clock {
    pub fn new(start_ticks: u64, ns_per_tick: f64) -> Clock {
        Clock {
            start_ticks,
            ns_per_tick,
        }
    }

    /// Time since the start of recording, ns (0 for ticks before it).
    pub fn to_ns(&self, ticks: u64) -> u64 {
        let d = ticks.saturating_sub(self.start_ticks) as f64;
        (d * self.ns_per_tick).round() as u64
    }

    pub fn ns_per_tick(&self) -> f64 {
        self.ns_per_tick
    }
}

/// A whole trace, read into memory.
#[derive(Debug, Clone)]
pub struct Trace {
    pub header: Header,
    /// Every record with the thread whose block held it, in file order per
    /// thread; times already converted to ns since the start of recording.
    pub records: Vec<(ThreadIndex, Record)>,
    /// The file ended inside a block or without an `End` record.
    pub truncated: bool,
    /// Records of kinds this reader does not know (written by a newer agent).
    pub unknown_records: u64,
    pub clock: Clock,
}

/// Reads a trace file (see [`read_trace_with_warnings`]; the warnings are dropped:
/// skipped blocks are still in the trace as `Loss` records).
pub fn read_trace(path: &Path) -> Result<Trace, TraceError> {
    read_trace_with_warnings(path).map(|(t, _)| t)
}

/// Longest header a reader accepts (the agent writes ~1 KB).
const MAX_HEADER: usize = 1 << 20;

/// Reads a trace file, and one line per damage it skipped or value it corrected
/// (a corrupt block, a clock rate that is not credible, timestamps past the end of
/// the recording). The magic bytes and the header are checked before the rest is
/// read: a file that is not a trace (or `/dev/zero`) fails at once.
pub fn read_trace_with_warnings(path: &Path) -> Result<(Trace, Vec<String>), TraceError> {
    use std::io::Read;
    let (mut file, size, mut bytes) = open_and_read_header(path)?;
    // The size of a regular file bounds the buffer; a pipe or device is read as it comes.
    if let Some(rest) = size.checked_sub(bytes.len() as u64) {
        bytes.reserve(usize::try_from(rest).unwrap_or(0));
    }
    file.read_to_end(&mut bytes)
        .map_err(|e| TraceError::Io(path.display().to_string(), e))?;
    read_trace_bytes_with_warnings(&bytes)
}

/// The header of a trace file, reading nothing after it.
pub fn read_header(path: &Path) -> Result<Header, TraceError> {
    let (_, _, bytes) = open_and_read_header(path)?;
    parse_header(&bytes).map(|(h, _)| h)
}

/// Opens a trace and reads its preamble and header (checked); returns the file
/// (positioned after the header), its size, and the bytes read.
pub(crate) fn open_and_read_header(
    path: &Path,
) -> Result<(std::fs::File, u64, Vec<u8>), TraceError> {
    use std::io::Read;
    let io = |e: std::io::Error| TraceError::Io(path.display().to_string(), e);
    let mut file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut bytes = Vec::new();
    (&mut file).take(18).read_to_end(&mut bytes).map_err(io)?;
    check_preamble(&bytes)?;
    let hlen = header_len(&bytes);
    if hlen > MAX_HEADER {
        return Err(TraceError::Corrupt {
            offset: 18,
            what: format!("header length {hlen} is not credible"),
        });
    }
    (&mut file)
        .take(hlen as u64)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    parse_header(&bytes)?;
    Ok((file, size, bytes))
}

pub(crate) struct Cursor<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) pos: usize,
    /// Offset of `bytes` in the file, for error messages.
    pub(crate) base: usize,
}

impl<'a> Cursor<'a> {
    fn corrupt(&self, what: &str) -> TraceError {
        TraceError::Corrupt {
            offset: self.base + self.pos,
            what: what.to_string(),
        }
    }

    pub(crate) fn u8(&mut self) -> Result<u8, TraceError> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| self.corrupt("unexpected end of record"))?;
        self.pos += 1;
        Ok(b)
    }

    pub(crate) fn varint(&mut self) -> Result<u64, TraceError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.corrupt("varint too long"))
    }

    pub(crate) fn u32v(&mut self) -> Result<u32, TraceError> {
        let v = self.varint()?;
        u32::try_from(v).map_err(|_| self.corrupt("value out of range"))
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], TraceError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| self.corrupt("length past end of block"))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn string(&mut self) -> Result<String, TraceError> {
        let n = self.varint()? as usize;
        let s = self.take(n)?;
        String::from_utf8(s.to_vec()).map_err(|_| self.corrupt("string is not UTF-8"))
    }

    pub(crate) fn done(&self) -> bool {
        self.pos >= self.bytes.len()
    }
}

/// The magic bytes and version (the first 18 bytes of a trace).
fn check_preamble(bytes: &[u8]) -> Result<(), TraceError> {
    if bytes.is_empty() {
        return Err(TraceError::Empty);
    }
    if bytes.len() < 8 || &bytes[0..8] != MAGIC {
        return Err(TraceError::NotATrace);
    }
    if bytes.len() < 18 {
        return Err(TraceError::Corrupt {
            offset: bytes.len(),
            what: "file ends inside the header".into(),
        });
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    if version != FORMAT_VERSION {
        return Err(TraceError::UnsupportedVersion(version));
    }
    Ok(())
}

/// The header of a trace file from its first bytes: (header, offset of the first
/// block). `bytes` must hold at least the whole header.
pub(crate) fn parse_header(bytes: &[u8]) -> Result<(Header, usize), TraceError> {
    check_preamble(bytes)?;
    let hend = 18usize
        .checked_add(header_len(bytes))
        .filter(|&e| e <= bytes.len());
    let Some(hend) = hend else {
        return Err(TraceError::Corrupt {
            offset: 18,
            what: "file ends inside the header".into(),
        });
    };
    let hsum = u32::from_le_bytes([bytes[14], bytes[15], bytes[16], bytes[17]]);
    let hpayload = &bytes[18..hend];
    if checksum(hpayload) != hsum {
        return Err(TraceError::Corrupt {
            offset: 18,
            what: "header checksum mismatch".into(),
        });
    }
    let mut c = Cursor {
        bytes: hpayload,
        pos: 0,
        base: 18,
    };
    let mut header = Header::default();
    let n = c.varint()?;
    for _ in 0..n {
        let k = c.string()?;
        let v = c.string()?;
        header.entries.push((k, v));
    }
    Ok((header, hend))
}

/// Length of the header payload, from the first 18 bytes of a file.
pub(crate) fn header_len(bytes: &[u8]) -> usize {
    u32::from_le_bytes([bytes[10], bytes[11], bytes[12], bytes[13]]) as usize
}

pub fn read_trace_bytes(bytes: &[u8]) -> Result<Trace, TraceError> {
    read_trace_bytes_with_warnings(bytes).map(|(t, _)| t)
}

/// Reads a trace from memory; also returns one line per damage skipped or value
/// corrected (crates/trace/src/damage.rs).
pub fn read_trace_bytes_with_warnings(bytes: &[u8]) -> Result<(Trace, Vec<String>), TraceError> {
    let (header, hend) = parse_header(bytes)?;
    let mut records = Vec::new();
    let mut truncated = false;
    let mut unknown = 0u64;
    let mut fj = FjEventDecoder::default();
    let mut damage = DamageTracker::default();
    let mut blocks = Blocks::new(bytes, hend as u64, bytes.len() as u64);
    loop {
        match blocks.next()? {
            Next::End => break,
            Next::Truncated => {
                truncated = true;
                break;
            }
            Next::Damaged {
                offset,
                bytes,
                thread,
                what,
            } => damage.damaged(offset, bytes, thread, what),
            Next::Block { offset } => {
                let before = records.len();
                let start = offset + 8;
                let decoded = decode_block(
                    &blocks.buf,
                    start as usize,
                    &mut records,
                    &mut unknown,
                    &mut fj,
                );
                for (thread, r) in &records[before..] {
                    damage.saw(*thread, r.ts());
                }
                damage.decoded(decoded, offset, &blocks.buf);
            }
        }
    }
    fj.resolve(&mut records);
    crate::vthreads::demux(&mut records);

    if !records.iter().any(|(_, r)| matches!(r, Record::End { .. })) {
        truncated = true;
    }
    let mut warnings = Vec::new();
    let calibrations = calibration_points(&records);
    let clock = fit_clock_points(&header, &calibrations, &mut warnings)?;
    let start_ticks = header.get_u64(header_keys::START_TICKS).unwrap_or(0);
    let (losses, damage_warnings) = damage.finish(start_ticks, |t| secs(clock.to_ns(t)));
    warnings.extend(damage_warnings);
    records.extend(losses);
    let times = TimeConverter::new(&header, clock.clone(), &calibrations);
    for (_, r) in records.iter_mut() {
        times.convert(r);
    }
    warnings.extend(times.clamped_warning());
    Ok((
        Trace {
            header,
            records,
            truncated,
            unknown_records: unknown,
            clock,
        },
        warnings,
    ))
}

pub(crate) fn secs(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

/// The (ticks, mono ns) of the `Calibration` records, in file order.
fn calibration_points(records: &[(ThreadIndex, Record)]) -> Vec<(u64, u64)> {
    records
        .iter()
        .filter_map(|(_, r)| match r {
            Record::Calibration { ts, mono_ns } => Some((*ts, *mono_ns)),
            _ => None,
        })
        .collect()
}

/// Converts a record's times, as written, to ns since the start of recording, and
/// clamps the ones past the recording's credible end (counted).
pub(crate) struct TimeConverter {
    clock: Clock,
    start_mono: u64,
    fj_in_ticks: bool,
    limit: u64,
    clamped: std::cell::Cell<u64>,
}

impl TimeConverter {
    pub(crate) fn new(header: &Header, clock: Clock, calibrations: &[(u64, u64)]) -> TimeConverter {
        let limit = credible_end_ns(header, calibrations, &clock);
        TimeConverter {
            clock,
            start_mono: header.get_u64(header_keys::START_MONO_NS).unwrap_or(0),
            fj_in_ticks: header.get(header_keys::FORKJOIN_CLOCK) == Some("ticks"),
            limit,
            clamped: std::cell::Cell::new(0),
        }
    }

    fn clamp(&self, ns: u64) -> u64 {
        if ns > self.limit {
            self.clamped.set(self.clamped.get() + 1);
            self.limit
        } else {
            ns
        }
    }

    pub(crate) fn convert(&self, r: &mut Record) {
        let mono = !self.fj_in_ticks && r.mono_timed();
        if let Some(ts) = r.ts_mut() {
            *ts = self.clamp(if mono {
                ts.saturating_sub(self.start_mono)
            } else {
                self.clock.to_ns(*ts)
            });
        }
        if let Record::Loss { to_ts, .. } = r {
            *to_ts = self.clamp(self.clock.to_ns(*to_ts));
        }
    }

    /// The warning about clamped timestamps, if any was.
    pub(crate) fn clamped_warning(&self) -> Option<String> {
        let n = self.clamped.get();
        (n > 0).then(|| {
            format!(
                "{n} timestamps later than the recording's credible end ({}) were clamped to it",
                secs(self.limit)
            )
        })
    }
}

/// A trace file read while the agent writes it (`weft record --live`): each
/// [`poll`](TraceTail::poll) reads only the bytes appended since the last one and
/// decodes the whole blocks among them, so its cost does not grow with the run.
/// Times use the header's start-up clock estimate (the whole-file reader refines it
/// with every `Calibration`).
pub struct TraceTail {
    file: std::fs::File,
    /// Bytes read but not decoded yet (a block still being written).
    pending: Vec<u8>,
    /// Offset in the file of `pending[0]`.
    offset: usize,
    header: Option<Header>,
    clock: Clock,
    fj: FjEventDecoder,
    /// Records of kinds this reader does not know.
    pub skipped: u64,
    /// Bytes read so far.
    pub bytes_read: u64,
}

impl TraceTail {
    pub fn open(path: &Path) -> Result<TraceTail, TraceError> {
        let file =
            std::fs::File::open(path).map_err(|e| TraceError::Io(path.display().to_string(), e))?;
        Ok(TraceTail {
            file,
            pending: Vec::new(),
            offset: 0,
            header: None,
            clock: Clock::new(0, 1.0),
            fj: FjEventDecoder::default(),
            skipped: 0,
            bytes_read: 0,
        })
    }

    /// The header, once it has been written.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The records of the blocks completed since the last poll (times in ns since
    /// the start of recording), in file order.
    pub fn poll(&mut self) -> Result<Vec<(ThreadIndex, Record)>, TraceError> {
        use std::io::Read;
        let before = self.pending.len();
        (&self.file)
            .read_to_end(&mut self.pending)
            .map_err(|e| TraceError::Io("trace".into(), e))?;
        self.bytes_read += (self.pending.len() - before) as u64;
        let mut pos = 0;
        if self.header.is_none() {
            let p = &self.pending;
            let whole = p.len() >= 18 && p.len() >= 18 + header_len(p);
            if !whole {
                let n = p.len().min(8);
                if p[..n] != MAGIC[..n] {
                    return Err(TraceError::NotATrace);
                }
                return Ok(Vec::new());
            }
            let (header, hend) = parse_header(p)?;
            let start_ticks = header.get_u64(header_keys::START_TICKS).unwrap_or(0);
            let ns_per_tick = header
                .get_f64(header_keys::TICKS_PER_SEC)
                .filter(|t| *t > 0.0)
                .map_or(1.0, |t| 1e9 / t);
            self.clock = Clock::new(start_ticks, ns_per_tick);
            self.header = Some(header);
            pos = hend;
        }
        let mut out = Vec::new();
        while let Some((start, end)) = next_block(&self.pending, pos)? {
            decode_block(
                &self.pending[start..end],
                self.offset + start,
                &mut out,
                &mut self.skipped,
                &mut self.fj,
            )?;
            pos = end;
        }
        self.pending.drain(..pos);
        self.offset += pos;
        for (_, r) in out.iter_mut() {
            if let Some(ts) = r.ts_mut() {
                *ts = self.clock.to_ns(*ts);
            }
            if let Record::Loss { to_ts, .. } = r {
                *to_ts = self.clock.to_ns(*to_ts);
            }
        }
        Ok(out)
    }
}

/// The length field of the block at `pos` (whole: [`next_block`] read it).
fn block_len_at(bytes: &[u8], pos: usize) -> usize {
    u32::from_le_bytes([bytes[pos], bytes[pos + 1], bytes[pos + 2], bytes[pos + 3]]) as usize
}

/// The next whole block at `pos`: `(payload start, end)`, `None` while the bytes
/// end before it does; a checksum mismatch is an error.
fn next_block(bytes: &[u8], pos: usize) -> Result<Option<(usize, usize)>, TraceError> {
    if bytes.len() - pos < 8 {
        return Ok(None);
    }
    let len = block_len_at(bytes, pos);
    let sum = u32::from_le_bytes([
        bytes[pos + 4],
        bytes[pos + 5],
        bytes[pos + 6],
        bytes[pos + 7],
    ]);
    let start = pos + 8;
    let Some(end) = start.checked_add(len).filter(|&e| e <= bytes.len()) else {
        return Ok(None);
    };
    if checksum(&bytes[start..end]) != sum {
        return Err(TraceError::Corrupt {
            offset: pos,
            what: "block checksum mismatch".into(),
        });
    }
    Ok(Some((start, end)))
}

/// Slack after the last credible calibration point: records of a killed process may
/// come a little after it (the agent writes one a second), a stalled writer later.
const END_SLACK_NS: u64 = 60_000_000_000;

/// The latest time (ns since the start) a record of this trace can credibly have:
/// twice the span of the calibration points that agree with the clock (the
/// agent writes one a second, and one at the end), plus [`END_SLACK_NS`].
/// Timestamps past it are damage; clamping them bounds every allocation an
/// analysis sizes by the trace's duration.
fn credible_end_ns(header: &Header, calibrations: &[(u64, u64)], clock: &Clock) -> u64 {
    let start_mono = header.get_u64(header_keys::START_MONO_NS);
    let mut end = 0u64;
    for &(ts, mono_ns) in calibrations {
        let by_ticks = clock.to_ns(ts);
        let agrees = match start_mono {
            Some(m) => {
                let by_mono = mono_ns.saturating_sub(m);
                by_ticks.abs_diff(by_mono) <= 1_000_000_000 + by_mono / 20
            }
            None => true,
        };
        if agrees {
            end = end.max(by_ticks);
        }
    }
    end.saturating_mul(2).saturating_add(END_SLACK_NS)
}

/// Clock rates a reader believes (ticks per second): CLOCK_MONOTONIC is 1e9, a TSC
/// a few 1e9.
const TICKS_PER_SEC_RANGE: std::ops::RangeInclusive<f64> = 1e6..=1e11;

/// The clock from the header and the (ticks, mono ns) of the `Calibration` records,
/// in file order: a least-squares fit of mono ns against ticks, or the header's
/// start-up estimate. A rate outside [`TICKS_PER_SEC_RANGE`] in the header is
/// replaced by the fit (and said so in `warnings`), or is an error when there is no
/// fit to replace it with.
pub(crate) fn fit_clock_points(
    header: &Header,
    calibrations: &[(u64, u64)],
    warnings: &mut Vec<String>,
) -> Result<Clock, TraceError> {
    let start_ticks = header.get_u64(header_keys::START_TICKS).unwrap_or(0);
    let stated_text = header.get(header_keys::TICKS_PER_SEC);
    let credible = |tps: f64| TICKS_PER_SEC_RANGE.contains(&tps);
    let estimate = header
        .get_f64(header_keys::TICKS_PER_SEC)
        .filter(|t| credible(*t))
        .map(|t| 1e9 / t);
    let mut pts: Vec<(f64, f64)> = Vec::new();
    if let Some(m) = header.get_u64(header_keys::START_MONO_NS) {
        pts.push((start_ticks as f64, m as f64));
    }
    for (ts, mono_ns) in calibrations {
        pts.push((*ts as f64, *mono_ns as f64));
    }
    let mut fit = None;
    if pts.len() >= 2 {
        let n = pts.len() as f64;
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        // Only trust the fit when the points span a real interval.
        if sxx > 0.0 {
            let slope = sxy / sxx;
            if slope.is_finite() && slope > 0.0 && credible(1e9 / slope) {
                fit = Some(slope);
            }
        }
    }
    let ns_per_tick = match (estimate, fit) {
        (Some(e), Some(f)) if (f / e - 1.0).abs() < 0.2 => f,
        (Some(e), _) => e,
        // Traces without a rate (hand-made ones in tests) count in ns.
        (None, None) if stated_text.is_none() => 1.0,
        (None, Some(f)) => {
            if let Some(t) = stated_text {
                warnings.push(format!(
                    "clock.ticks_per_sec = {t} is not a credible clock rate; used {:.0} from the calibration records",
                    1e9 / f
                ));
            }
            f
        }
        (None, None) => {
            return Err(TraceError::Corrupt {
                offset: 18,
                what: format!(
                    "clock.ticks_per_sec = {} is not a credible clock rate ({:e} to {:e}), and no calibration records can replace it",
                    stated_text.unwrap_or(""),
                    TICKS_PER_SEC_RANGE.start(),
                    TICKS_PER_SEC_RANGE.end()
                ),
            })
        }
    };
    Ok(Clock::new(start_ticks, ns_per_tick))
}

/// Walks the records of one block's payload: calls `each(thread, tag, ts, body)`
/// for every record, `tag` without its timestamp bit, `ts` the absolute tick
/// (0 when the record carries none), `body` a cursor over the record's bytes.
/// The one place that knows a block's layout (thread, then tag/ts/len/body).
pub(crate) fn walk_block(
    payload: &[u8],
    base: usize,
    mut each: impl FnMut(ThreadIndex, u8, u64, Cursor<'_>) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    let mut c = Cursor {
        bytes: payload,
        pos: 0,
        base,
    };
    let thread = c.u32v()?;
    let mut last_ts: u64 = 0;
    while !c.done() {
        let t = c.u8()?;
        let ts = if t & HAS_TS != 0 {
            let d = unzigzag(c.varint()?);
            last_ts = last_ts.wrapping_add(d as u64);
            last_ts
        } else {
            0
        };
        let len = c.varint()? as usize;
        let body = c.take(len)?;
        let b = Cursor {
            bytes: body,
            pos: 0,
            base: base + c.pos - len,
        };
        each(thread, t & !HAS_TS, ts, b)?;
    }
    Ok(())
}

pub(crate) fn decode_block(
    payload: &[u8],
    base: usize,
    out: &mut Vec<(ThreadIndex, Record)>,
    unknown: &mut u64,
    fj: &mut FjEventDecoder,
) -> Result<(), TraceError> {
    walk_block(payload, base, |thread, tag, ts, mut b| {
        if tag == tag::FJ_EVENTS {
            let index = b.u32v()?;
            let at = b.base + b.pos;
            return fj
                .decode(thread, index, &b.bytes[b.pos..], out)
                .map_err(|what| TraceError::Corrupt { offset: at, what });
        }
        match decode_record(tag, ts, &mut b)? {
            Some(r) => out.push((thread, r)),
            None => *unknown += 1,
        }
        Ok(())
    })
}

pub(crate) fn decode_record(
    tag: u8,
    ts: u64,
    c: &mut Cursor<'_>,
) -> Result<Option<Record>, TraceError> {
    use Record::*;
    let r = match tag {
        tag::CLASS_DEF => ClassDef {
            id: c.u32v()?,
            name: c.string()?,
        },
        tag::PROBE_DEF => ProbeDef {
            id: c.u32v()?,
            kind: ProbeKind::from_code(c.u8()?),
            class: c.string()?.into(),
            method: c.string()?.into(),
            descriptor: c.string()?.into(),
        },
        tag::SITE_DEF => {
            let id = c.u32v()?;
            let n = c.varint()?;
            let mut frames = Vec::new();
            for _ in 0..n {
                frames.push(c.string()?);
            }
            SiteDef { id, frames }
        }
        tag::THREAD_START => ThreadStart {
            ts,
            name: c.string()?.into(),
            java_id: c.varint()?,
            os_tid: c.u32v()?,
            daemon: c.u8()? != 0,
            class_id: c.u32v()?,
            target_class_id: c.u32v()?,
            target_ident: c.u32v()?,
            ident: c.u32v()?,
        },
        tag::THREAD_END => ThreadEnd {
            ts,
            cpu_ns: c.varint()?,
            voluntary_cs: c.varint()?,
            involuntary_cs: c.varint()?,
        },
        tag::TASK_BEGIN => TaskBegin {
            ts,
            probe: c.u32v()?,
            class_id: c.u32v()?,
            ident: c.u32v()?,
            inner_class_id: c.u32v()?,
            inner_ident: c.u32v()?,
        },
        tag::TASK_END => TaskEnd {
            ts,
            probe: c.u32v()?,
            ident: c.u32v()?,
        },
        tag::SUBMIT => Submit {
            ts,
            probe: c.u32v()?,
            executor_class_id: c.u32v()?,
            task_class_id: c.u32v()?,
            task_ident: c.u32v()?,
            inner_class_id: c.u32v()?,
            inner_ident: c.u32v()?,
            site: c.u32v()?,
        },
        tag::CREATED => Created {
            ts,
            class_id: c.u32v()?,
            ident: c.u32v()?,
            site: c.u32v()?,
        },
        tag::FORK => Fork {
            ts,
            class_id: c.u32v()?,
            ident: c.u32v()?,
            site: c.u32v()?,
        },
        tag::JOIN_BEGIN => JoinBegin {
            ts,
            probe: c.u32v()?,
            target_class_id: c.u32v()?,
            target_ident: c.u32v()?,
        },
        tag::JOIN_END => JoinEnd {
            ts,
            probe: c.u32v()?,
        },
        tag::FJ_PUSH => FjPush {
            ts,
            usage: c.varint()?,
            prev: c.varint()?,
            class_id: c.u32v()?,
            external: c.u8()? != 0,
            ident: c.u32v()?,
            pool: c.u32v()?,
        },
        tag::FJ_RUN_BEGIN => FjRunBegin {
            ts,
            usage: c.varint()?,
            class_id: c.u32v()?,
        },
        tag::FJ_RUN_END => FjRunEnd { ts },
        tag::FJ_CANCEL => FjCancel {
            ts,
            usage: c.varint()?,
        },
        tag::FJ_REINIT => FjReinit {
            ts,
            usage: c.varint()?,
        },
        tag::FJ_JOIN_BEGIN => FjJoinBegin {
            ts,
            usage: c.varint()?,
        },
        tag::FJ_JOIN_END => FjJoinEnd { ts },
        tag::FJ_SITE => FjSite {
            usage: c.varint()?,
            site: c.u32v()?,
        },
        tag::FJ_WORKER => FjWorker {
            pool: c.u32v()?,
            class_id: c.u32v()?,
            parallelism: c.u32v()?,
        },
        tag::GC_START => GcStart { ts },
        tag::GC_END => GcEnd { ts },
        tag::SAMPLE => Sample {
            ts,
            process_cpu_ns: c.varint()?,
            voluntary_cs: c.varint()?,
            involuntary_cs: c.varint()?,
            live_threads: c.u32v()?,
            machine_idle_ns: if c.done() { None } else { Some(c.varint()?) },
        },
        tag::THREAD_SCHED => ThreadSched {
            ts,
            thread: c.u32v()?,
            on_cpu_ns: c.varint()?,
            runq_ns: c.varint()?,
            timeslices: c.varint()?,
        },
        tag::VT_START => VtStart {
            ts,
            vt: c.varint()?,
            carrier: c.u32v()?,
            class_id: c.u32v()?,
            ident: c.u32v()?,
        },
        tag::VT_END => VtEnd {
            ts,
            vt: c.varint()?,
            carrier: c.u32v()?,
        },
        tag::VT_MOUNT => VtMount {
            ts,
            vt: c.varint()?,
            carrier: c.u32v()?,
        },
        tag::VT_UNMOUNT => VtUnmount {
            ts,
            vt: c.varint()?,
            carrier: c.u32v()?,
        },
        tag::VT_PINNED => VtPinned {
            ts,
            site: c.u32v()?,
            // Absent in traces of agents before session 17.
            monitor_site: if c.done() { 0 } else { c.u32v()? },
        },
        tag::UNPARK => Unpark {
            ts,
            target: c.varint()?,
            // Absent in traces of earlier agents.
            ns: if c.done() { 0 } else { c.varint()? },
        },
        tag::MONITOR_ENTER => MonitorEnter {
            ts,
            lock: c.u32v()?,
        },
        tag::MONITOR_ENTERED => MonitorEntered { ts },
        tag::MONITOR_EXIT => MonitorExit { ts },
        tag::MONITOR_NOTIFY => MonitorNotify {
            ts,
            lock: c.u32v()?,
            all: c.varint()? != 0,
        },
        tag::CALIBRATION => Calibration {
            ts,
            mono_ns: c.varint()?,
        },
        tag::LOSS => {
            let thread = c.u32v()?;
            let span = c.varint()?;
            Loss {
                thread,
                from_ts: ts,
                to_ts: ts.saturating_add(span),
                records: c.varint()?,
                reason: LossReason::from_code(c.u8()?),
            }
        }
        tag::END => End { ts },
        tag::ATTACH_END => AttachEnd {
            ts,
            classes: c.u32v()?,
            probed_during: c.u32v()?,
            probed_after: c.u32v()?,
            shape_before: c.varint()?,
            shape_after: c.varint()?,
        },
        tag::LOCK_DEF => LockDef {
            id: c.u32v()?,
            kind: c.u8()?,
            class: c.string()?,
            ident: c.u32v()?,
            fair: !c.done() && c.u8()? != 0,
        },
        tag::LOCK_BLOCK => LockBlock {
            ts,
            lock: c.u32v()?,
            flags: c.u8()?,
            owner: c.varint()?,
            site: c.u32v()?,
        },
        tag::LOCK_ACQUIRED => LockAcquired {
            ts,
            lock: c.u32v()?,
            parked: c.u8()? != 0,
        },
        tag::LOCK_GAVE_UP => LockGaveUp {
            ts,
            lock: c.u32v()?,
        },
        tag::WAIT_BEGIN => WaitBegin {
            ts,
            kind: c.u8()?,
            lock: c.u32v()?,
        },
        tag::WAIT_END => WaitEnd {
            ts,
            // Absent when not timed out, and in traces of earlier agents.
            timed_out: !c.done() && c.u8()? != 0,
        },
        tag::WAIT_DETAIL => WaitDetail {
            class_id: c.u32v()?,
            site: c.u32v()?,
        },
        tag::APP_START => AppStart { ts },
        tag::FRAME_DEF => FrameDef {
            id: c.u32v()?,
            kind: c.u8()?,
            line: unzigzag(c.varint()?) as i32,
            class: c.string()?.into(),
            method: c.string()?.into(),
        },
        tag::STACK_DEF => {
            let id = c.u32v()?;
            let n = c.varint()?;
            let mut frames = Vec::new();
            for _ in 0..n {
                frames.push(c.u32v()?);
            }
            StackDef { id, frames }
        }
        tag::STACK_SAMPLE => StackSample {
            ts,
            thread: c.u32v()?,
            stack: c.u32v()?,
            mode_state: c.u8()?,
        },
        tag::THREAD_SEEN => ThreadSeen {
            ts,
            name: c.string()?.into(),
            java_id: c.varint()?,
            os_tid: c.u32v()?,
            daemon: c.u8()? != 0,
        },
        tag::WINDOW_ENTER => WindowEnter { ts },
        tag::WINDOW_EXIT => WindowExit { ts },
        _ => return Ok(None),
    };
    Ok(Some(r))
}
