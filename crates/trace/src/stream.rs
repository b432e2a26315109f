//! Reading a trace file as a stream: each record is handed to a [`RecordSink`] as
//! its block is decoded, with its times already converted, and none is kept. Memory
//! is then one block and whatever the sink keeps, not every record of the file
//! (a `Record` is 64 bytes, ~20 per fork-join task).
//!
//! Times are converted with the clock fitted over the `Calibration` records, which
//! the agent writes throughout the run, so a first pass reads the blocks for them
//! only (skipping every other record by its length); the second pass decodes. The
//! records and the outcome (truncation, unknown records) are those of
//! [`crate::read_trace`] on the same file, in the same order.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::codec::{checksum, tag, unzigzag, HAS_TS};
use crate::fjevents::FjEventDecoder;
use crate::reader::{
    decode_block, decode_record, fit_clock_points, header_len, parse_header, Clock, Cursor,
    TimeConverter,
};
use crate::record::{Record, ThreadIndex};
use crate::{Header, TraceError};

/// What receives the records of a streamed trace.
pub trait RecordSink {
    /// One record of `thread` (a block's thread index, or `GLOBAL_THREAD`), in
    /// file order, times in ns since the start of recording.
    fn record(&mut self, thread: ThreadIndex, record: &Record);
}

/// What the stream says once every record was handed on.
pub struct StreamEnd {
    pub header: Header,
    /// The file ended inside a block or without an `End` record.
    pub truncated: bool,
    /// Records of kinds this reader does not know.
    pub unknown_records: u64,
    pub clock: Clock,
    fj: FjEventDecoder,
}

impl StreamEnd {
    /// The class of a fork-join usage's push. A run (`FjRunBegin`) is handed on
    /// with class 0 when its push was in a block not decoded yet (a steal): its
    /// class is this.
    pub fn fj_usage_class(&self, usage: u64) -> Option<u32> {
        self.fj.class_of_usage(usage)
    }
}

/// The blocks of a file, in order: (file offset of the block, payload).
struct Blocks<R: Read> {
    r: R,
    /// File offset of the next block.
    pos: u64,
    len: u64,
    buf: Vec<u8>,
}

enum Next {
    Block {
        offset: u64,
    },
    /// The file ends inside a block, or its last block is torn.
    Truncated,
    End,
}

impl<R: Read> Blocks<R> {
    fn next(&mut self) -> Result<Next, TraceError> {
        if self.pos >= self.len {
            return Ok(Next::End);
        }
        if self.len - self.pos < 8 {
            return Ok(Next::Truncated);
        }
        let mut head = [0u8; 8];
        self.read_exact(&mut head)?;
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as u64;
        let sum = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        let offset = self.pos;
        let start = offset + 8;
        if start + len > self.len {
            return Ok(Next::Truncated);
        }
        self.buf.resize(len as usize, 0);
        let mut buf = std::mem::take(&mut self.buf);
        let read = self.read_exact(&mut buf);
        self.buf = buf;
        read?;
        self.pos = start + len;
        if checksum(&self.buf) != sum {
            // A torn final block (the process died mid-write) is truncation;
            // a bad block with data after it is corruption.
            if self.pos == self.len {
                return Ok(Next::Truncated);
            }
            return Err(TraceError::Corrupt {
                offset: offset as usize,
                what: "block checksum mismatch".into(),
            });
        }
        Ok(Next::Block { offset })
    }

    fn read_exact(&mut self, out: &mut [u8]) -> Result<(), TraceError> {
        self.r
            .read_exact(out)
            .map_err(|e| TraceError::Io("trace".into(), e))
    }
}

fn open_blocks(path: &Path) -> Result<(Header, Blocks<BufReader<File>>), TraceError> {
    let io = |e| TraceError::Io(path.display().to_string(), e);
    let f = File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    let mut r = BufReader::with_capacity(1 << 20, f);
    let mut first = vec![0u8; len.min(18) as usize];
    r.read_exact(&mut first).map_err(io)?;
    if first.len() == 18 {
        let more = header_len(&first);
        let have = (len as usize).saturating_sub(18).min(more);
        first.resize(18 + have, 0);
        r.read_exact(&mut first[18..]).map_err(io)?;
    }
    let (header, hend) = parse_header(&first)?;
    Ok((
        header,
        Blocks {
            r,
            pos: hend as u64,
            len,
            buf: Vec::new(),
        },
    ))
}

/// The (ticks, mono ns) of every `Calibration` record in the blocks read up to the
/// first torn or bad one.
fn calibrations(path: &Path) -> Result<Vec<(u64, u64)>, TraceError> {
    let (_, mut blocks) = open_blocks(path)?;
    let mut out = Vec::new();
    while let Ok(Next::Block { offset }) = blocks.next() {
        let mut c = Cursor {
            bytes: &blocks.buf,
            pos: 0,
            base: offset as usize + 8,
        };
        // A malformed block is reported by the decoding pass.
        let _ = scan_calibrations(&mut c, &mut out);
    }
    Ok(out)
}

fn scan_calibrations(c: &mut Cursor<'_>, out: &mut Vec<(u64, u64)>) -> Result<(), TraceError> {
    let _thread = c.u32v()?;
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
        if t & !HAS_TS == tag::CALIBRATION {
            let mut b = Cursor {
                bytes: body,
                pos: 0,
                base: 0,
            };
            if let Some(Record::Calibration { ts, mono_ns }) =
                decode_record(tag::CALIBRATION, ts, &mut b)?
            {
                out.push((ts, mono_ns));
            }
        }
    }
    Ok(())
}

/// Streams the records of a trace file into the sink `make(header)` returns.
pub fn stream_trace<S: RecordSink>(
    path: &Path,
    make: impl FnOnce(&Header) -> S,
) -> Result<(S, StreamEnd), TraceError> {
    let calibrations = calibrations(path)?;
    let (header, mut blocks) = open_blocks(path)?;
    let clock = fit_clock_points(&header, &calibrations);
    let times = TimeConverter::new(&header, clock.clone());
    let mut sink = make(&header);
    let mut fj = FjEventDecoder::default();
    let mut unknown = 0u64;
    let mut truncated = false;
    let mut saw_end = false;
    let mut records: Vec<(ThreadIndex, Record)> = Vec::new();
    loop {
        match blocks.next()? {
            Next::End => break,
            Next::Truncated => {
                truncated = true;
                break;
            }
            Next::Block { offset } => {
                records.clear();
                decode_block(
                    &blocks.buf,
                    offset as usize + 8,
                    &mut records,
                    &mut unknown,
                    &mut fj,
                )?;
                fj.forget_unresolved();
                for (thread, r) in records.iter_mut() {
                    times.convert(r);
                    saw_end |= matches!(r, Record::End { .. });
                    sink.record(*thread, r);
                }
            }
        }
    }
    Ok((
        sink,
        StreamEnd {
            header,
            truncated: truncated || !saw_end,
            unknown_records: unknown,
            clock,
            fj,
        },
    ))
}
