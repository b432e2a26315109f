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
use std::path::Path;

use crate::codec::tag;
use crate::damage::{Blocks, DamageTracker, Next};
use crate::fjevents::FjEventDecoder;
use crate::reader::{
    decode_block, decode_record, fit_clock_points, open_and_read_header, parse_header, secs,
    walk_block, Clock, TimeConverter,
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
    /// One line per damage skipped or value corrected (see [`crate::read_trace_with_warnings`]).
    pub warnings: Vec<String>,
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

/// The header and the blocks of a file (read around damage: crate::damage).
fn open_blocks(path: &Path) -> Result<(Header, File, u64, u64), TraceError> {
    let (file, size, bytes) = open_and_read_header(path)?;
    let (header, hend) = parse_header(&bytes)?;
    Ok((header, file, hend as u64, size))
}

/// The (ticks, mono ns) of every `Calibration` record in the blocks read up to the
/// first torn or bad one.
fn calibrations(path: &Path) -> Result<Vec<(u64, u64)>, TraceError> {
    let (_, file, first, len) = open_blocks(path)?;
    let mut blocks = Blocks::new(&file, first, len);
    let mut out = Vec::new();
    loop {
        let offset = match blocks.next()? {
            Next::Block { offset } => offset,
            Next::Damaged { .. } => continue,
            Next::Truncated | Next::End => break,
        };
        // A malformed block is reported by the decoding pass.
        let _ = walk_block(&blocks.buf, offset as usize + 8, |_, tag, ts, mut body| {
            if tag == tag::CALIBRATION {
                if let Some(Record::Calibration { ts, mono_ns }) =
                    decode_record(tag::CALIBRATION, ts, &mut body)?
                {
                    out.push((ts, mono_ns));
                }
            }
            Ok(())
        });
    }
    Ok(out)
}

/// Streams the records of a trace file into the sink `make(header)` returns.
/// Damage is read around as by [`crate::read_trace`]: each skipped stretch is
/// handed on as a `Loss` record at the end, and said in [`StreamEnd::warnings`].
pub fn stream_trace<S: RecordSink>(
    path: &Path,
    make: impl FnOnce(&Header) -> S,
) -> Result<(S, StreamEnd), TraceError> {
    let calibrations = calibrations(path)?;
    let (header, file, first, len) = open_blocks(path)?;
    let mut warnings = Vec::new();
    let clock = fit_clock_points(&header, &calibrations, &mut warnings)?;
    let times = TimeConverter::new(&header, clock.clone(), &calibrations);
    let mut sink = make(&header);
    // Two threads: this one hands the records to the sink while the other reads
    // and decodes the next blocks (the report's wall time; a batch per block, a
    // few batches ahead at most, so memory stays a few blocks).
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Vec<(ThreadIndex, Record)>>(4);
    let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<(ThreadIndex, Record)>>();
    let decoded = std::thread::scope(|s| {
        let reader = s.spawn(|| read_blocks(&file, first, len, times, full_tx, empty_rx));
        for mut batch in full_rx {
            for (thread, r) in &batch {
                sink.record(*thread, r);
            }
            batch.clear();
            // The reader may be done: then the batch is dropped.
            let _ = empty_tx.send(batch);
        }
        reader
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    let d = decoded?;
    let (times, damage) = (d.times, d.damage);
    if !damage.is_empty() {
        let start_ticks = header.get_u64(crate::header_keys::START_TICKS).unwrap_or(0);
        let (losses, w) = damage.finish(start_ticks, |t| secs(clock.to_ns(t)));
        warnings.extend(w);
        for (thread, mut r) in losses {
            times.convert(&mut r);
            sink.record(thread, &r);
        }
    }
    warnings.extend(times.clamped_warning());
    Ok((
        sink,
        StreamEnd {
            header,
            truncated: d.truncated || !d.saw_end,
            unknown_records: d.unknown,
            clock,
            fj: d.fj,
            warnings,
        },
    ))
}

/// What the reading thread of [`stream_trace`] hands back.
struct Decoded {
    times: TimeConverter,
    fj: FjEventDecoder,
    unknown: u64,
    truncated: bool,
    saw_end: bool,
    damage: DamageTracker,
}

/// Reads and decodes the blocks from `first` on, sending each block's records
/// (times converted, virtual threads' records on their own streams) to `out`;
/// batches come back through `empty` to be filled again.
fn read_blocks(
    file: &File,
    first: u64,
    len: u64,
    times: TimeConverter,
    out: std::sync::mpsc::SyncSender<Vec<(ThreadIndex, Record)>>,
    empty: std::sync::mpsc::Receiver<Vec<(ThreadIndex, Record)>>,
) -> Result<Decoded, TraceError> {
    let mut fj = FjEventDecoder::default();
    let mut unknown = 0u64;
    let mut truncated = false;
    let mut saw_end = false;
    let mut damage = DamageTracker::default();
    let mut blocks = Blocks::new(file, first, len);
    // Virtual threads' records move to streams of their own (crate::vthreads);
    // the sink puts those streams in time order.
    let mut vthreads = crate::vthreads::VirtualThreadDemux::default();
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
                let mut records = empty.try_recv().unwrap_or_default();
                let start = offset + 8;
                let decoded = decode_block(
                    &blocks.buf,
                    start as usize,
                    &mut records,
                    &mut unknown,
                    &mut fj,
                );
                fj.forget_unresolved();
                for (thread, r) in records.iter_mut() {
                    damage.saw(*thread, r.ts());
                    times.convert(r);
                    saw_end |= matches!(r, Record::End { .. });
                    *thread = vthreads.thread_of(*thread, r);
                }
                damage.decoded(decoded, offset, &blocks.buf);
                if out.send(records).is_err() {
                    break; // the sink's side is gone (it panicked)
                }
            }
        }
    }
    Ok(Decoded {
        times,
        fj,
        unknown,
        truncated,
        saw_end,
        damage,
    })
}
