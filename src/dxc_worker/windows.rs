//! The worker limits on Windows, where there is no `setrlimit`: the build (the parent) enforces
//! them from outside the worker.
//!
//! - Each worker is put in its own **Job Object** (`CreateJobObjectW` + `AssignProcessToJobObject`)
//!   with `JOB_OBJECT_LIMIT_PROCESS_MEMORY` (the worker's committed memory is capped at
//!   `--dxc-memory-limit`: an allocation past it fails inside DXC, as one past `RLIMIT_AS` does on
//!   Unix), `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` (a worker never outlives the build: dropping the
//!   job, or the build dying, ends it) and `JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION` (a crashing
//!   DXC ends its worker at once instead of waiting on a Windows Error Reporting dialog).
//! - The **CPU-time limit** per compilation is kept by the worker itself: a watchdog thread
//!   ([`CpuWatchdog`]) reads the worker's own user + kernel time (`GetProcessTimes`) and ends it
//!   with [`super::EXIT_CPU_LIMIT`] once the compilation has used more than `--dxc-time-limit`,
//!   which the build names. (A job's `PerProcessUserTimeLimit` counts user time only, over the
//!   worker's whole life, and ends it with an exit code that does not say why; reading another
//!   process's times from the build does not work under Wine, where this is tested: it reads 0.)
//! - The wall-clock backstop: the build awaits the answer with `PeekNamedPipe` (anonymous pipes
//!   have no overlapped I/O to wait on with a timeout), polling every few milliseconds.
//!
//! The worker is assigned to its job right after it starts; it does nothing before its first
//! request, which is sent only after the assignment, so no compilation runs outside the limits.

use std::io;
use std::os::windows::io::AsRawHandle;
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{CloseHandle, FILETIME, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation, SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOB_OBJECT_LIMIT_PROCESS_MEMORY,
};
use windows_sys::Win32::System::Pipes::PeekNamedPipe;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes, TerminateProcess};

use crate::limits::DxcLimits;

/// One worker's Job Object. Dropping it closes the handle, which ends the worker if it still runs
/// (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`).
pub struct Job(HANDLE);

// SAFETY: a job handle is a kernel object handle, usable from any thread; `Job` owns it alone.
unsafe impl Send for Job {}

impl Job {
    /// A job that ends its processes when closed and, with `limits`, caps each one's memory.
    pub fn new(limits: Option<DxcLimits>) -> io::Result<Job> {
        // SAFETY: no security attributes and no name (both may be null): an anonymous job.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        let job = Job(handle);
        // SAFETY: the struct is plain integers, for which all-zero bytes are valid (no limits).
        let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
        if let Some(l) = limits {
            info.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_MEMORY;
            info.ProcessMemoryLimit = usize::try_from(l.memory_mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        }
        // SAFETY: the job handle is open; `info` lives through the call and its size is passed.
        let set = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if set == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Puts the worker under the job's limits.
    pub fn assign(&self, child: &Child) -> io::Result<()> {
        // SAFETY: both handles are open (the child's as long as `child` lives).
        if unsafe { AssignProcessToJobObject(self.0, child.as_raw_handle() as HANDLE) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// CPU time (user + kernel) this process has used.
fn own_cpu_time() -> Duration {
    let zero = FILETIME { dwLowDateTime: 0, dwHighDateTime: 0 };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: the pseudo-handle of this process needs no closing; the four structs outlive the call.
    if unsafe { GetProcessTimes(GetCurrentProcess(), &mut created, &mut exited, &mut kernel, &mut user) } == 0 {
        return Duration::ZERO;
    }
    let ticks = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime); // 100 ns units
    Duration::from_nanos((ticks(kernel) + ticks(user)).saturating_mul(100))
}

/// The worker's CPU-time limit per compilation, which `RLIMIT_CPU` gives on Unix: a thread that
/// ends the worker with [`super::EXIT_CPU_LIMIT`] once the armed compilation has used more CPU
/// time than the limit. A thread of the worker itself, so a DXC spinning in one thread is still
/// stopped (it looks every [`WATCH_PERIOD`]).
pub struct CpuWatchdog {
    /// The CPU time, in nanoseconds, past which the worker ends; 0: not armed (between requests).
    deadline_ns: Arc<AtomicU64>,
    limit: Duration,
}

const WATCH_PERIOD: Duration = Duration::from_millis(25);

impl CpuWatchdog {
    pub fn start(limit: Duration) -> CpuWatchdog {
        let deadline_ns = Arc::new(AtomicU64::new(0));
        let watched = Arc::clone(&deadline_ns);
        std::thread::spawn(move || loop {
            std::thread::sleep(WATCH_PERIOD);
            let deadline = watched.load(Ordering::Relaxed);
            if deadline != 0 && own_cpu_time().as_nanos() > u128::from(deadline) {
                // SAFETY: ends this process at once with the limit's exit code (no unwinding
                // into DXC's frames on the other thread); the pseudo-handle needs no closing.
                unsafe { TerminateProcess(GetCurrentProcess(), super::EXIT_CPU_LIMIT as u32) };
            }
        });
        CpuWatchdog { deadline_ns, limit }
    }

    /// The next compilation may use `limit` more CPU time than the worker has used so far.
    pub fn arm(&self) {
        let deadline = own_cpu_time().saturating_add(self.limit).as_nanos();
        self.deadline_ns.store(u64::try_from(deadline).unwrap_or(u64::MAX).max(1), Ordering::Relaxed);
    }

    pub fn disarm(&self) {
        self.deadline_ns.store(0, Ordering::Relaxed);
    }
}

/// Waits until the worker's stdout has bytes (or is closed: the read then reports it), at most
/// `wall`; `false` when `wall` passed first.
pub fn wait_readable(stdout: &impl AsRawHandle, wall: Duration) -> bool {
    let deadline = Instant::now() + wall;
    let mut nap = Duration::from_millis(1);
    loop {
        let mut available = 0u32;
        // SAFETY: a peek of zero bytes into no buffer; only `available` is written, and it lives
        // through the call. The pipe handle is open while the worker's stdout is.
        let peeked = unsafe {
            PeekNamedPipe(stdout.as_raw_handle() as HANDLE, std::ptr::null_mut(), 0, std::ptr::null_mut(), &mut available, std::ptr::null_mut())
        };
        if peeked == 0 || available > 0 {
            return true; // an answer, or a closed pipe (the worker is gone)
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    }
}
