//! Helpers shared by the benchmarks (`#[path = "common/mod.rs"] mod common;` in each bench).

#![allow(dead_code)]

use std::time::Duration;

/// Thread CPU time so far (DXC compiles on the calling thread).
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer to a local.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// An environment variable as a number, or `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// xorshift64: reproducible filler without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Megabytes (10^6) per second.
pub fn mbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

/// Targets a bench checks: each printed PASS / FAIL; the bench exits 1 if any failed.
pub struct Check {
    pub failed: Vec<String>,
}

impl Check {
    pub fn target(&mut self, what: &str, value: f64, ok: bool, bound: &str) {
        println!("  {} {what}: {value:.3} (target {bound})", if ok { "PASS" } else { "FAIL" });
        if !ok {
            self.failed.push(what.to_string());
        }
    }
}
