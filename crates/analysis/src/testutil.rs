//! Synthetic traces for unit tests (times are ns already).

use weft_trace::{Clock, Header, ProbeKind, Record, Trace, GLOBAL_THREAD};

pub const P_WORK_RUN: u32 = 1;
pub const P_FUTURETASK_RUN: u32 = 2;
pub const P_SUBMIT_RUNNABLE: u32 = 3;
pub const P_THREAD_RUN: u32 = 4;
pub const P_WORKER_RUN: u32 = 5;
pub const P_CALL: u32 = 6;
pub const P_SUBMIT_CALLABLE: u32 = 7;
pub const P_EXEC: u32 = 8;
pub const P_RUN: u32 = 9;
pub const P_ADAPTER_CALL: u32 = 10;
pub const P_EXECUTE: u32 = 11;

pub const C_WORK: u32 = 10;
pub const C_FUTURETASK: u32 = 11;
pub const C_LAMBDA: u32 = 12;
pub const C_THREAD: u32 = 13;
pub const C_WORKER: u32 = 14;
pub const C_OUTER: u32 = 15;
pub const C_INNER: u32 = 16;
pub const C_MYTHREAD: u32 = 17;
pub const C_REC: u32 = 18;
pub const C_POOL: u32 = 19;
pub const C_FJWT: u32 = 20;
pub const C_ADAPTER: u32 = 21;

pub const MAIN: u32 = 0;

pub struct TB {
    pub recs: Vec<(u32, Record)>,
    pub header: Header,
    pub truncated: bool,
}

impl TB {
    pub fn new() -> TB {
        let mut tb = TB {
            recs: Vec::new(),
            header: Header::default(),
            truncated: false,
        };
        for (id, name) in [
            (C_WORK, "demo.Work"),
            (C_FUTURETASK, "java.util.concurrent.FutureTask"),
            (C_LAMBDA, "demo.Main$$Lambda[main:10]"),
            (C_THREAD, "java.lang.Thread"),
            (C_WORKER, "java.util.concurrent.ThreadPoolExecutor$Worker"),
            (C_OUTER, "demo.Outer"),
            (C_INNER, "demo.Inner"),
            (C_MYTHREAD, "demo.MyThread"),
            (C_REC, "demo.Rec"),
            (C_POOL, "java.util.concurrent.ThreadPoolExecutor"),
            (C_FJWT, "java.util.concurrent.ForkJoinWorkerThread"),
            (C_ADAPTER, "java.util.concurrent.Executors$RunnableAdapter"),
        ] {
            tb.recs.push((
                GLOBAL_THREAD,
                Record::ClassDef {
                    id,
                    name: name.into(),
                },
            ));
        }
        let r = "()V";
        for (id, kind, class, method, desc) in [
            (P_WORK_RUN, ProbeKind::Execution, "demo.Work", "run", r),
            (
                P_FUTURETASK_RUN,
                ProbeKind::PlumbingExecution,
                "java.util.concurrent.FutureTask",
                "run",
                r,
            ),
            (
                P_SUBMIT_RUNNABLE,
                ProbeKind::Submission,
                "java.util.concurrent.AbstractExecutorService",
                "submit",
                "(Ljava/lang/Runnable;)Ljava/util/concurrent/Future;",
            ),
            (
                P_THREAD_RUN,
                ProbeKind::Execution,
                "java.lang.Thread",
                "run",
                r,
            ),
            (
                P_WORKER_RUN,
                ProbeKind::PlumbingExecution,
                "java.util.concurrent.ThreadPoolExecutor$Worker",
                "run",
                r,
            ),
            (
                P_CALL,
                ProbeKind::Execution,
                "demo.Task",
                "call",
                "()Ljava/lang/Object;",
            ),
            (
                P_SUBMIT_CALLABLE,
                ProbeKind::Submission,
                "java.util.concurrent.AbstractExecutorService",
                "submit",
                "(Ljava/util/concurrent/Callable;)Ljava/util/concurrent/Future;",
            ),
            (P_EXEC, ProbeKind::Execution, "demo.Rec", "exec", "()Z"),
            (P_RUN, ProbeKind::Execution, "demo.Any", "run", r),
            (
                P_ADAPTER_CALL,
                ProbeKind::PlumbingExecution,
                "java.util.concurrent.Executors$RunnableAdapter",
                "call",
                "()Ljava/lang/Object;",
            ),
            (
                P_EXECUTE,
                ProbeKind::Submission,
                "java.util.concurrent.ThreadPoolExecutor",
                "execute",
                "(Ljava/lang/Runnable;)V",
            ),
        ] {
            tb.recs.push((
                GLOBAL_THREAD,
                Record::ProbeDef {
                    id,
                    kind,
                    class: class.into(),
                    method: method.into(),
                    descriptor: desc.into(),
                },
            ));
        }
        tb
    }

    /// A site with exactly these frames, innermost first.
    pub fn site_frames(&mut self, id: u32, frames: &[&str]) -> &mut Self {
        self.recs.push((
            GLOBAL_THREAD,
            Record::SiteDef {
                id,
                frames: frames.iter().map(|f| f.to_string()).collect(),
            },
        ));
        self
    }

    pub fn site(&mut self, id: u32, frame: &str) -> &mut Self {
        self.recs.push((
            GLOBAL_THREAD,
            Record::SiteDef {
                id,
                frames: vec![frame.into(), "demo.Main.main:1".into()],
            },
        ));
        self
    }

    /// Start of a thread (Thread object ident = 1000 + t).
    pub fn start(&mut self, t: u32, ts: u64, class_id: u32, target: (u32, u32)) -> &mut Self {
        self.recs.push((
            t,
            Record::ThreadStart {
                ts,
                name: format!("worker-{t}").into(),
                java_id: t as u64 + 10,
                os_tid: 100 + t,
                daemon: false,
                class_id,
                target_class_id: target.0,
                target_ident: target.1,
                ident: 1000 + t,
            },
        ));
        self
    }

    /// A wait of thread `t` from `begin` to `end`, of `kind` (weft_trace::wait_kind), on
    /// an object of class `class_id` at site `site` (0: not sampled): its `WaitDetail`,
    /// `WaitBegin` and `WaitEnd`, as the agent writes them.
    pub fn wait(
        &mut self,
        t: u32,
        kind: u8,
        class_id: u32,
        site: u32,
        begin: u64,
        end: u64,
    ) -> &mut Self {
        self.recs.push((t, Record::WaitDetail { class_id, site }));
        self.recs.push((
            t,
            Record::WaitBegin {
                ts: begin,
                kind,
                lock: 0,
            },
        ));
        self.recs.push((
            t,
            Record::WaitEnd {
                ts: end,
                timed_out: false,
            },
        ));
        self
    }

    /// Thread `t` blocked on lock `lock` (a LockDef id) at `site` from `from`, and
    /// acquired it (parked) at `to`.
    pub fn blocked(&mut self, t: u32, lock: u32, site: u32, from: u64, to: u64) -> &mut Self {
        self.recs.push((
            t,
            Record::LockBlock {
                ts: from,
                lock,
                flags: 0,
                owner: 0,
                site,
            },
        ));
        self.recs.push((
            t,
            Record::LockAcquired {
                ts: to,
                lock,
                parked: true,
            },
        ));
        self
    }

    pub fn thread_end(&mut self, t: u32, ts: u64) -> &mut Self {
        self.recs.push((
            t,
            Record::ThreadEnd {
                ts,
                cpu_ns: ts / 2,
                voluntary_cs: 3,
                involuntary_cs: 1,
            },
        ));
        self
    }

    pub fn begin(&mut self, t: u32, ts: u64, probe: u32, class_id: u32, ident: u32) -> &mut Self {
        self.begin_p(t, ts, probe, class_id, ident, (0, 0))
    }

    pub fn begin_p(
        &mut self,
        t: u32,
        ts: u64,
        probe: u32,
        class_id: u32,
        ident: u32,
        inner: (u32, u32),
    ) -> &mut Self {
        self.recs.push((
            t,
            Record::TaskBegin {
                ts,
                probe,
                class_id,
                ident,
                inner_class_id: inner.0,
                inner_ident: inner.1,
            },
        ));
        self
    }

    pub fn end(&mut self, t: u32, ts: u64, probe: u32, ident: u32) -> &mut Self {
        self.recs.push((t, Record::TaskEnd { ts, probe, ident }));
        self
    }

    /// begin + end of a plain execution.
    pub fn run(
        &mut self,
        t: u32,
        from: u64,
        to: u64,
        probe: u32,
        class_id: u32,
        ident: u32,
    ) -> &mut Self {
        self.begin(t, from, probe, class_id, ident)
            .end(t, to, probe, ident)
    }

    pub fn submit(&mut self, t: u32, ts: u64, task: (u32, u32), site: u32) -> &mut Self {
        self.submit_p(t, ts, P_SUBMIT_RUNNABLE, task, (0, 0), site)
    }

    pub fn submit_p(
        &mut self,
        t: u32,
        ts: u64,
        probe: u32,
        task: (u32, u32),
        inner: (u32, u32),
        site: u32,
    ) -> &mut Self {
        self.recs.push((
            t,
            Record::Submit {
                ts,
                probe,
                executor_class_id: C_POOL,
                task_class_id: task.0,
                task_ident: task.1,
                inner_class_id: inner.0,
                inner_ident: inner.1,
                site,
            },
        ));
        self
    }

    pub fn created(&mut self, t: u32, ts: u64, task: (u32, u32), site: u32) -> &mut Self {
        self.recs.push((
            t,
            Record::Created {
                ts,
                class_id: task.0,
                ident: task.1,
                site,
            },
        ));
        self
    }

    pub fn fork(&mut self, t: u32, ts: u64, task: (u32, u32)) -> &mut Self {
        self.recs.push((
            t,
            Record::Fork {
                ts,
                class_id: task.0,
                ident: task.1,
                site: 0,
            },
        ));
        self
    }

    /// A fork-join push of `usage` (class [`C_WORK`]) into `pool` (0: none said).
    pub fn fj_push(usage: u64, ts: u64, external: bool, pool: u32) -> Record {
        Record::FjPush {
            ts,
            usage,
            prev: 0,
            class_id: C_WORK,
            external,
            ident: 0,
            pool,
        }
    }

    /// The start of `usage`'s run (class [`C_WORK`]).
    pub fn fj_begin(usage: u64, ts: u64) -> Record {
        Record::FjRunBegin {
            ts,
            usage,
            class_id: C_WORK,
        }
    }

    pub fn global(&mut self, r: Record) -> &mut Self {
        self.recs.push((GLOBAL_THREAD, r));
        self
    }

    pub fn trace(&self) -> Trace {
        let mut recs = self.recs.clone();
        let truncated =
            self.truncated || !recs.iter().any(|(_, r)| matches!(r, Record::End { .. }));
        // Like a file: each thread's records stay in order.
        recs.sort_by_key(|(t, _)| *t);
        Trace {
            header: self.header.clone(),
            records: recs,
            truncated,
            unknown_records: 0,
            clock: Clock::new(0, 1.0),
        }
    }
}
