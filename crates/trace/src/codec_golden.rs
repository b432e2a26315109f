//! The encoder's bytes pinned: a corpus with every record kind, at the varint and
//! string-length boundaries, encoded by the encoder of main 0159761 (a payload
//! encoded into a scratch buffer, then copied) and kept in
//! `tests/data/encoder-golden.bin`. Any change to the encoder must produce the
//! same bytes (the reader of every released version decodes them).
//! `WEFT_WRITE_GOLDEN=1 cargo test -p weft-trace golden` rewrites the file: only
//! for a deliberate format change (FORMAT_VERSION).

use crate::codec::BlockEncoder;
use crate::record::{LossReason, ProbeKind, Record};

/// Deterministic values that cross every varint length boundary.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        // xorshift64
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn u64(&mut self) -> u64 {
        const EDGES: [u64; 12] = [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            (1 << 21) - 1,
            1 << 28,
            u32::MAX as u64,
            1 << 35,
            (1 << 63) - 1,
            u64::MAX,
        ];
        let r = self.next();
        match r % 3 {
            0 => EDGES[(r >> 8) as usize % EDGES.len()],
            // a random magnitude
            1 => self.next() >> (self.next() % 64),
            _ => self.next() % 300,
        }
    }
    fn u32(&mut self) -> u32 {
        let v = self.u64();
        if v > u32::MAX as u64 {
            (v >> 32) as u32
        } else {
            v as u32
        }
    }
    fn u8(&mut self) -> u8 {
        self.next() as u8
    }
    fn bool(&mut self) -> bool {
        self.next() & 1 == 1
    }
    fn ts(&mut self) -> u64 {
        // Mostly forward, sometimes backward (negative zigzag deltas), sometimes far.
        self.u64()
    }
    fn string(&mut self) -> String {
        const LENS: [usize; 7] = [0, 1, 5, 127, 128, 129, 300];
        let n = LENS[self.next() as usize % LENS.len()];
        let mut s: String = (0..n)
            .map(|i| (b'a' + ((i as u64 + self.0) % 26) as u8) as char)
            .collect();
        if self.bool() {
            s.push_str("é$λ");
        }
        s
    }
}

/// `n` records of every kind (the match on a sample of each makes the
/// compiler name any kind added later and not covered here).
pub(crate) fn corpus(n: usize) -> Vec<Record> {
    use Record::*;
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let mut out = Vec::new();
    for _ in 0..n {
        let mut all = vec![
            ClassDef {
                id: g.u32(),
                name: g.string(),
            },
            ProbeDef {
                id: g.u32(),
                kind: ProbeKind::from_code(g.u8() % 10),
                class: g.string().into(),
                method: g.string().into(),
                descriptor: g.string().into(),
            },
            SiteDef {
                id: g.u32(),
                frames: (0..g.next() % 4).map(|_| g.string()).collect(),
            },
            ThreadStart {
                ts: g.ts(),
                name: g.string().into(),
                java_id: g.u64(),
                os_tid: g.u32(),
                daemon: g.bool(),
                class_id: g.u32(),
                target_class_id: g.u32(),
                target_ident: g.u32(),
                ident: g.u32(),
            },
            ThreadEnd {
                ts: g.ts(),
                cpu_ns: g.u64(),
                voluntary_cs: g.u64(),
                involuntary_cs: g.u64(),
            },
            TaskBegin {
                ts: g.ts(),
                probe: g.u32(),
                class_id: g.u32(),
                ident: g.u32(),
                inner_class_id: g.u32(),
                inner_ident: g.u32(),
            },
            TaskEnd {
                ts: g.ts(),
                probe: g.u32(),
                ident: g.u32(),
            },
            Submit {
                ts: g.ts(),
                probe: g.u32(),
                executor_class_id: g.u32(),
                task_class_id: g.u32(),
                task_ident: g.u32(),
                inner_class_id: g.u32(),
                inner_ident: g.u32(),
                site: g.u32(),
            },
            Created {
                ts: g.ts(),
                class_id: g.u32(),
                ident: g.u32(),
                site: g.u32(),
            },
            Fork {
                ts: g.ts(),
                class_id: g.u32(),
                ident: g.u32(),
                site: g.u32(),
            },
            JoinBegin {
                ts: g.ts(),
                probe: g.u32(),
                target_class_id: g.u32(),
                target_ident: g.u32(),
            },
            JoinEnd {
                ts: g.ts(),
                probe: g.u32(),
            },
            FjPush {
                ts: g.ts(),
                usage: g.u64(),
                prev: g.u64(),
                class_id: g.u32(),
                external: g.bool(),
                ident: g.u32(),
                pool: g.u32(),
            },
            FjRunBegin {
                ts: g.ts(),
                usage: g.u64(),
                class_id: g.u32(),
            },
            FjRunEnd { ts: g.ts() },
            FjCancel {
                ts: g.ts(),
                usage: g.u64(),
            },
            FjReinit {
                ts: g.ts(),
                usage: g.u64(),
            },
            FjJoinBegin {
                ts: g.ts(),
                usage: g.u64(),
            },
            FjJoinEnd { ts: g.ts() },
            FjSite {
                usage: g.u64(),
                site: g.u32(),
            },
            FjWorker {
                pool: g.u32(),
                class_id: g.u32(),
                parallelism: g.u32(),
            },
            GcStart { ts: g.ts() },
            GcEnd { ts: g.ts() },
            Sample {
                ts: g.ts(),
                process_cpu_ns: g.u64(),
                voluntary_cs: g.u64(),
                involuntary_cs: g.u64(),
                live_threads: g.u32(),
                machine_idle_ns: None,
            },
            ThreadSched {
                ts: g.ts(),
                thread: g.u32(),
                on_cpu_ns: g.u64(),
                runq_ns: g.u64(),
                timeslices: g.u64(),
            },
            VtStart {
                ts: g.ts(),
                vt: g.u64(),
                carrier: g.u32(),
                class_id: g.u32(),
                ident: g.u32(),
            },
            VtEnd {
                ts: g.ts(),
                vt: g.u64(),
                carrier: g.u32(),
            },
            VtMount {
                ts: g.ts(),
                vt: g.u64(),
                carrier: g.u32(),
            },
            VtUnmount {
                ts: g.ts(),
                vt: g.u64(),
                carrier: g.u32(),
            },
            VtPinned {
                ts: g.ts(),
                site: g.u32(),
                monitor_site: 0,
            },
            Unpark {
                ts: g.ts(),
                target: g.u64(),
                ns: g.u64(),
            },
            MonitorEnter {
                ts: g.ts(),
                lock: g.u32(),
            },
            MonitorEntered { ts: g.ts() },
            MonitorExit { ts: g.ts() },
            MonitorNotify {
                ts: g.ts(),
                lock: g.u32(),
                all: g.bool(),
            },
            Calibration {
                ts: g.ts(),
                mono_ns: g.u64(),
            },
            Loss {
                thread: g.u32(),
                from_ts: g.ts(),
                to_ts: g.ts(),
                records: g.u64(),
                reason: [
                    LossReason::BufferOverflow,
                    LossReason::WriteFailed,
                    LossReason::AgentDisabled,
                    LossReason::Corrupt,
                    LossReason::Other(g.u8()),
                ][g.next() as usize % 5],
            },
            End { ts: g.ts() },
            AttachEnd {
                ts: g.ts(),
                classes: g.u32(),
                probed_during: g.u32(),
                probed_after: g.u32(),
                shape_before: g.u64(),
                shape_after: g.u64(),
            },
            LockDef {
                id: g.u32(),
                kind: g.u8(),
                class: g.string(),
                ident: g.u32(),
                fair: false,
            },
            LockBlock {
                ts: g.ts(),
                lock: g.u32(),
                flags: g.u8(),
                owner: g.u64(),
                site: g.u32(),
            },
            LockAcquired {
                ts: g.ts(),
                lock: g.u32(),
                parked: g.bool(),
            },
            LockGaveUp {
                ts: g.ts(),
                lock: g.u32(),
            },
            WaitBegin {
                ts: g.ts(),
                kind: g.u8(),
                lock: g.u32(),
            },
            WaitEnd {
                ts: g.ts(),
                timed_out: false,
            },
            WaitDetail {
                class_id: g.u32(),
                site: g.u32(),
            },
            AppStart { ts: g.ts() },
            FrameDef {
                id: g.u32(),
                kind: g.u8(),
                line: g.u32() as i32,
                class: g.string().into(),
                method: g.string().into(),
            },
            StackDef {
                id: g.u32(),
                frames: (0..g.next() % 70).map(|_| g.u32()).collect(),
            },
            StackSample {
                ts: g.ts(),
                thread: g.u32(),
                stack: g.u32(),
                mode_state: g.u8(),
            },
            ThreadSeen {
                ts: g.ts(),
                name: g.string().into(),
                java_id: g.u64(),
                os_tid: g.u32(),
                daemon: g.bool(),
            },
            WindowEnter { ts: g.ts() },
            WindowExit { ts: g.ts() },
        ];
        // Interleave kinds differently each round (the timestamp deltas depend on order).
        let k = g.next() as usize % all.len();
        all.rotate_left(k);
        out.extend(all);
    }
    for r in &out {
        // Exhaustive: a new kind must be added to the corpus above.
        match r {
            ClassDef { .. } | ProbeDef { .. } | SiteDef { .. } | ThreadStart { .. } => {}
            ThreadEnd { .. } | TaskBegin { .. } | TaskEnd { .. } | Submit { .. } => {}
            Created { .. } | Fork { .. } | JoinBegin { .. } | JoinEnd { .. } => {}
            FjPush { .. } | FjRunBegin { .. } | FjRunEnd { .. } | FjCancel { .. } => {}
            FjReinit { .. } | FjJoinBegin { .. } | FjJoinEnd { .. } | FjSite { .. } => {}
            FjWorker { .. } | GcStart { .. } | GcEnd { .. } | Sample { .. } => {}
            ThreadSched { .. } | VtStart { .. } | VtEnd { .. } | VtMount { .. } => {}
            VtUnmount { .. } | VtPinned { .. } | Unpark { .. } | MonitorEnter { .. } => {}
            MonitorEntered { .. } | MonitorExit { .. } | MonitorNotify { .. } => {}
            Calibration { .. } | Loss { .. } | End { .. } | AttachEnd { .. } => {}
            LockDef { .. } | LockBlock { .. } | LockAcquired { .. } | WaitBegin { .. } => {}
            WaitEnd { .. } | WaitDetail { .. } | AppStart { .. } | FrameDef { .. } => {}
            StackDef { .. } | StackSample { .. } | ThreadSeen { .. } => {}
            WindowEnter { .. } | WindowExit { .. } | LockGaveUp { .. } => {}
        }
    }
    out
}

/// The corpus as blocks: several threads, blocks cut every `per_block` records,
/// with fork-join event batches among them.
pub(crate) fn encode_corpus(records: &[Record], per_block: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut g = Gen(7);
    for (i, chunk) in records.chunks(per_block).enumerate() {
        let thread = [0u32, 1, 127, 128, 70_000, u32::MAX][i % 6];
        let mut enc = BlockEncoder::new(thread, 256);
        for r in chunk {
            enc.push(r);
            if g.next().is_multiple_of(16) {
                let words: Vec<u8> = (0..(g.next() % 40) * 8).map(|_| g.u8()).collect();
                enc.push_fj_events(g.u32(), &words);
            }
        }
        out.extend(enc.take_block());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/encoder-golden.bin");

    #[test]
    fn golden_encoder_bytes_are_unchanged() {
        let bytes = encode_corpus(&corpus(24), 37);
        if std::env::var_os("WEFT_WRITE_GOLDEN").is_some() {
            std::fs::write(GOLDEN, &bytes).unwrap();
        }
        let want = std::fs::read(GOLDEN).unwrap();
        assert_eq!(bytes.len(), want.len(), "encoded corpus length");
        if let Some(i) = (0..want.len()).find(|&i| bytes[i] != want[i]) {
            panic!("encoded corpus differs from the golden bytes at offset {i}");
        }
    }
}
