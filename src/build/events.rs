//! What a build tells its caller while it runs. The library prints nothing: the command line
//! draws its progress display and prints each failure as it happens from these calls, and a
//! build script may log them or ignore them ([`super::run`] ignores them).

use crate::report::Outcome;
use crate::scan::ScanProgress;

/// Calls a build makes while it runs, from its own threads (hence `Sync`). Every method has a
/// default that does nothing.
pub trait BuildEvents: Sync {
    /// Counters the scan updates as it walks and reads the input, for a progress display to
    /// poll. `None` (the default): nobody watches, the scan counts into counters of its own.
    fn scan_counters(&self) -> Option<&ScanProgress> {
        None
    }

    /// Everything before the scan is done (DXC located, the incremental cache opened): the scan
    /// and the compilations start now.
    fn scan_started(&self) {}

    /// The scan is over: `shaders` distinct shaders are to be built (some may be already).
    fn scan_finished(&self, shaders: usize) {
        let _ = shaders;
    }

    /// One shader is done — compiled, served from the incremental cache, failed or skipped —
    /// called on the worker thread that built it, as soon as it is.
    fn shader_finished(&self, outcome: &Outcome) {
        let _ = outcome;
    }

    /// The incremental cache could not store a shader's artifacts (`error` says why). Not a
    /// failure of the shader: the next build compiles it again.
    fn cache_write_failed(&self, error: &str) {
        let _ = error;
    }
}

/// A caller that listens to nothing.
pub struct NoEvents;

impl BuildEvents for NoEvents {}
