//! The job queue between the scanner and the build's workers.

use crate::report::Duplicate;
use crate::scan::{self, FoundShader};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Condvar, Mutex};

/// Shaders waiting to be built, fed by the scanner while workers drain it.
#[derive(Default)]
pub(super) struct JobQueue {
    state: Mutex<QueueState>,
    wake: Condvar,
}

#[derive(Default)]
struct QueueState {
    /// Found, not yet taken by a worker.
    waiting: BTreeMap<u64, FoundShader>,
    /// Every distinct key found so far.
    seen: BTreeSet<u64>,
    duplicates: Vec<Duplicate>,
    scan_done: bool,
}

impl JobQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Shaders in path order: the first occurrence of a key becomes its job, later ones count
    /// as duplicates.
    /// The jobs' archive members are registered with `members` before any worker can take them.
    pub(super) fn offer(&self, shaders: &[FoundShader], members: &scan::MemberReader) {
        let mut q = self.lock();
        let mut jobs = Vec::new();
        for s in shaders {
            if q.seen.insert(s.key) {
                jobs.push(s);
            } else {
                q.duplicates.push(Duplicate { shader: s.clone() });
            }
        }
        members.expect(&jobs);
        for s in jobs {
            q.waiting.insert(s.key, s.clone());
        }
        drop(q);
        self.wake.notify_all();
    }

    /// The scan is over: returns every distinct key, sorted.
    pub(super) fn finish(&self) -> Vec<u64> {
        let mut q = self.lock();
        q.scan_done = true;
        let keys = q.seen.iter().copied().collect();
        drop(q);
        self.wake.notify_all();
        keys
    }

    /// The smallest waiting key's shader; waits while the scan may still find more; `None`
    /// when everything is taken and the scan is over.
    pub(super) fn next(&self) -> Option<FoundShader> {
        let mut q = self.lock();
        loop {
            if let Some((_, s)) = q.waiting.pop_first() {
                return Some(s);
            }
            if q.scan_done {
                return None;
            }
            q = self.wake.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub(super) fn duplicates(&self) -> Vec<Duplicate> {
        let mut d = std::mem::take(&mut self.lock().duplicates);
        // Scan threads offer files in any order: list them in a stable one.
        d.sort_by(|a, b| {
            (&a.shader.path, &a.shader.member, a.shader.offset, a.shader.index).cmp(&(
                &b.shader.path,
                &b.shader.member,
                b.shader.offset,
                b.shader.index,
            ))
        });
        d
    }
}

/// Marks the scan over when dropped (idempotent with [`JobQueue::finish`]).
pub(super) struct FinishOnDrop<'a>(pub(super) &'a JobQueue);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}
