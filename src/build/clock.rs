//! The build's clocks: per-stage CPU time summed over threads, and the [`Timings`] a build
//! returns.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Wall time and summed per-stage CPU time.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    pub wall: Duration,
    /// Wall time of the directory scan (parallel, overlapping the compiles).
    pub scan: Duration,
    /// Since the build started: when the scan ended, and when the first shader was taken by a
    /// worker (`None` without shaders) — before the scan ends unless the first file found to
    /// hold a shader is the last one scanned.
    pub scan_ended: Duration,
    pub first_shader_started: Option<Duration>,
    /// CPU time, summed over threads: reading each container, decoding + lowering + HLSL,
    /// each DXC backend, SMOL-V + zstd (mostly on the packer thread, during the compiles).
    pub parse: Duration,
    pub translate: Duration,
    pub dxc_dxil: Duration,
    pub dxc_spirv: Duration,
    pub pack: Duration,
    /// Wall time of writing the output files (and of the digest check that may skip it).
    pub write: Duration,
    pub threads: usize,
}

impl Timings {
    /// DXC CPU time ÷ threads: the wall time a perfect build could not go below.
    pub fn dxc_floor(&self) -> Duration {
        (self.dxc_dxil + self.dxc_spirv) / self.threads.max(1) as u32
    }

    /// Wall time ÷ the DXC floor (1.0 is perfect).
    pub fn wall_over_floor(&self) -> f64 {
        self.wall.as_secs_f64() / self.dxc_floor().as_secs_f64().max(1e-9)
    }
}

/// Per-stage CPU time, summed over threads (nanoseconds).
#[derive(Default)]
pub(super) struct StageClock {
    pub(super) parse: AtomicU64,
    pub(super) translate: AtomicU64,
    pub(super) dxil: AtomicU64,
    pub(super) spirv: AtomicU64,
    pub(super) pack: AtomicU64,
}

pub(super) fn add(t: &AtomicU64, since: ThreadClock) {
    t.fetch_add(since.elapsed_ns(), Ordering::Relaxed);
}

/// CPU time of the calling thread: what the DXC floor is made of. (Wall time inside a compile
/// would also count the time the thread waited for a core, e.g. behind the packer.)
#[derive(Clone, Copy)]
pub(super) struct ThreadClock(Duration);

impl ThreadClock {
    fn now() -> Duration {
        #[cfg(unix)]
        {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: clock_gettime writes the timespec we pass; the clock id is a constant.
            if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
                return Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
            }
        }
        // No per-thread clock: wall time since the first call.
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        EPOCH.get_or_init(Instant::now).elapsed()
    }

    pub(super) fn start() -> Self {
        ThreadClock(Self::now())
    }

    pub(super) fn elapsed_ns(self) -> u64 {
        Self::now().saturating_sub(self.0).as_nanos() as u64
    }
}
