//! `shrec build --isolate-dxc`: DXC in worker processes, so that a DXC crash (an abort, a
//! segfault, an assertion in a debug build) fails one shader instead of the whole batch.
//!
//! Without it DXC runs in-process (faster: no pipe round trips), and a crash inside DXC ends
//! shrec: no output file is written (outputs are only ever renamed into place complete), and
//! everything compiled before the crash is already in the incremental cache, so the next run
//! resumes where it stopped.
//!
//! With it, every build thread owns one worker process (`shrec dxc-worker --dxc LIB`, the same
//! executable) and sends it one compilation at a time over a pipe. When the worker dies, the
//! shader it was compiling fails with a reason naming the exit status, and the thread starts a
//! new worker for its next shader.
//!
//! Limits: a worker runs under [`DxcLimits`]. On Unix its address space is capped
//! (`RLIMIT_AS`, set at start), and before each compilation its CPU-time soft limit is set to the
//! time it has used plus the per-compilation limit (`RLIMIT_CPU`: the kernel sends SIGXCPU,
//! whose default action ends the process). On Windows the build enforces the same limits from
//! outside: a Job Object per worker caps its memory and the build watches its CPU time (see
//! `windows.rs` beside this file). CPU time, not wall time, so a busy machine does not
//! fail shaders; a wall-clock backstop in the build ([`WALL_FACTOR`] times the CPU limit, plus
//! [`WALL_SLACK_SECS`]) ends a worker that stops without using CPU. A shader that passes a limit
//! fails with a reason naming it (`--dxc-time-limit`, `--dxc-memory-limit`), and the next one
//! gets a new worker. The build sends every shader whose HLSL is larger than
//! [`crate::limits::DXC_ISOLATE_HLSL_BYTES`] to a worker even without `--isolate-dxc`.
//!
//! Protocol (little-endian), one request and one response at a time:
//! - request: `SHRQ`, stage id u8 (0 vertex, 1 pixel, 2 geometry), target u8 (0 DXIL,
//!   1 SPIR-V), spec-constants mask u32, HLSL length u32, HLSL bytes, extra DXC argument
//!   count u32, then per argument its length u32 and UTF-8 bytes (`--dxc-arg`);
//! - response: status u8 (0 compiled; DXC's error: 1 rejected, 2 library, 3 output, as
//!   [`dxc::CompileError`]), length u32, code or the error's UTF-8 text.

// Worker processes need Unix (setrlimit, poll, signals) or Windows (Job Objects): elsewhere
// `serve` and `compile` say so and the build compiles every shader in-process (see
// `build::shader`).
#![cfg_attr(not(any(unix, windows)), allow(dead_code, unused_imports))]

#[cfg(windows)]
mod windows;

use std::cell::RefCell;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::dxc::{self, CompileError, DxcLib, Target};
use crate::formats::Stage;
use crate::limits::DxcLimits;

/// The worker's exit code when DXC returned no result at all (see [`serve`]).
pub const EXIT_NO_RESULT: i32 = 5;

/// The worker's exit code when its CPU-time watchdog ended it (Windows; on Unix SIGXCPU does).
pub const EXIT_CPU_LIMIT: i32 = 6;

/// Why a worker stopped other than by its build closing the pipe. The `shrec dxc-worker`
/// command prints the reasons that [`ServeError::is_explained`] and exits with
/// [`ServeError::exit_code`]; the build names the exit status in the shader's failure.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A request that is not this protocol (exit code 3).
    #[error("a request that is not shrec's worker protocol")]
    Protocol,
    /// DXC returned no result at all, most likely out of memory under the limit
    /// ([`EXIT_NO_RESULT`]).
    #[error("DXC returned no result")]
    NoResult,
    /// The limit could not be set (exit code 4).
    #[error("cannot limit its memory: {0}")]
    MemoryLimit(io::Error),
    #[error("cannot limit its CPU time: {0}")]
    CpuLimit(io::Error),
    /// No worker processes on this OS (exit code 4).
    #[error("{}", UNSUPPORTED)]
    Unsupported,
}

impl ServeError {
    /// The worker's exit status, which the build reads.
    pub fn exit_code(&self) -> i32 {
        match self {
            ServeError::Protocol => 3,
            ServeError::NoResult => EXIT_NO_RESULT,
            ServeError::MemoryLimit(_) | ServeError::CpuLimit(_) | ServeError::Unsupported => 4,
        }
    }

    /// Whether the worker says why on stderr. A broken request and DXC's missing result end it
    /// silently: the build names them from the exit status (and a panic's backtrace would only
    /// clutter the build's stderr).
    pub fn is_explained(&self) -> bool {
        !matches!(self, ServeError::Protocol | ServeError::NoResult)
    }
}

/// Whether this OS has DXC worker processes (and so `--isolate-dxc` and the limits).
pub const SUPPORTED: bool = cfg!(any(unix, windows));

/// Why a compilation in a worker process gave no result from DXC: the worker could not be
/// started, or it died (passed a limit, crashed). The build goes on with a new worker.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot start a DXC worker process ({exe}): {reason}")]
    Start { exe: String, reason: String },
    /// The wall-clock backstop ([`WALL_FACTOR`] × the CPU limit + [`WALL_SLACK_SECS`]) ended it.
    #[error(
        "took longer than {wall_seconds} s (wall clock; the CPU-time limit is {cpu_seconds} s, --dxc-time-limit) on this shader: its worker process was killed; the build goes on with a new worker"
    )]
    WallClock { wall_seconds: u64, cpu_seconds: u64 },
    /// It passed its CPU-time limit (the kernel's SIGXCPU on Unix; on Windows the worker's
    /// watchdog, exit code [`EXIT_CPU_LIMIT`]).
    #[error("used more than its time limit of {cpu_seconds} s of CPU time on this shader (--dxc-time-limit; worker process {status}); the build goes on with a new worker")]
    CpuTime { cpu_seconds: u64, status: String },
    /// DXC returned no result, which under a memory limit means it ran out of memory.
    #[error(
        "failed inside without a result on this shader, most likely out of its {memory_mib} MiB of address space (--dxc-memory-limit); the build goes on with a new worker"
    )]
    MemoryLimit { memory_mib: u64 },
    /// It died otherwise (a signal, an abort); `memory_mib` is its memory limit, if any.
    #[error(
        "crashed while compiling this shader (worker process {status}{}); the build goes on with a new worker",
        memory_mib.map(|m| format!("; it may have run out of its {m} MiB of address space, --dxc-memory-limit")).unwrap_or_default()
    )]
    Crashed { status: String, memory_mib: Option<u64> },
    /// No worker processes on this OS.
    #[error("{}", UNSUPPORTED)]
    Unsupported,
}

/// What `serve` and `compile` say where there are no worker processes.
pub const UNSUPPORTED: &str =
    "DXC worker processes (--isolate-dxc, the time and memory limits) need Unix (setrlimit, poll) or Windows (Job Objects); on this OS DXC runs in-process";

/// The wall-clock backstop is this many times the CPU limit, plus [`WALL_SLACK_SECS`].
pub const WALL_FACTOR: u64 = 4;
pub const WALL_SLACK_SECS: u64 = 30;

const MAGIC: &[u8; 4] = b"SHRQ";

fn stage_id(s: Stage) -> u8 {
    match s {
        Stage::Vertex => 0,
        Stage::Pixel => 1,
        Stage::Geometry => 2,
    }
}

fn stage_of(id: u8) -> Option<Stage> {
    Some(match id {
        0 => Stage::Vertex,
        1 => Stage::Pixel,
        2 => Stage::Geometry,
        _ => return None,
    })
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

#[cfg(all(unix, target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(all(unix, not(all(target_os = "linux", target_env = "gnu"))))]
type Resource = libc::c_int;

#[cfg(unix)]
/// Sets a resource limit of this process (soft and hard).
fn set_limit(resource: Resource, soft: libc::rlim_t, hard: libc::rlim_t) -> io::Result<()> {
    let l = libc::rlimit { rlim_cur: soft, rlim_max: hard };
    // SAFETY: setrlimit reads the struct we pass; no other memory is involved.
    if unsafe { libc::setrlimit(resource, &l) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(unix)]
/// CPU seconds this process has used (user + system), rounded up.
fn cpu_seconds_used() -> u64 {
    // SAFETY: rusage is plain integers, for which all-zero bytes are a valid value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the struct we pass, which lives through the call.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0;
    }
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(u.ru_utime) + us(u.ru_stime)).div_ceil(1_000_000)
}

#[cfg(any(unix, windows))]
/// The worker's main loop (`shrec dxc-worker`): compiles requests from stdin until it closes,
/// under `limits` when given (see the module docs; on Windows the build that started the worker
/// enforces them, so the worker itself only serves). `Ok` when the build closed the pipe.
pub fn serve(lib_path: &Path, limits: Option<DxcLimits>) -> Result<(), ServeError> {
    let lib = DxcLib { path: lib_path.to_path_buf(), identity: 0 };
    #[cfg(windows)]
    let watchdog = limits.map(|l| windows::CpuWatchdog::start(std::time::Duration::from_secs(l.cpu_seconds)));
    #[cfg(unix)]
    if let Some(l) = limits {
        set_limit(libc::RLIMIT_AS, (l.memory_mib << 20) as libc::rlim_t, (l.memory_mib << 20) as libc::rlim_t).map_err(ServeError::MemoryLimit)?;
    }
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    // Test hook (tests/integration/dxc_isolation.rs): abort, as a crashing DXC would, on the N-th
    // request. Only with the `test-hooks` feature (the tests' build), never in a released shrec.
    #[cfg(feature = "test-hooks")]
    let abort_at: Option<u64> = std::env::var("SHREC_TEST_DXC_ABORT_AT").ok().and_then(|v| v.parse().ok());
    #[cfg(not(feature = "test-hooks"))]
    let abort_at: Option<u64> = None;
    let mut served = 0u64;
    loop {
        let mut magic = [0u8; 4];
        match input.read_exact(&mut magic) {
            Ok(()) if &magic == MAGIC => {}
            Ok(()) => return Err(ServeError::Protocol),
            Err(_) => return Ok(()), // the build closed the pipe: done
        }
        let request = (|| -> io::Result<(Stage, Target, u32, String, Vec<String>)> {
            let mut head = [0u8; 2];
            input.read_exact(&mut head)?;
            let mask = read_u32(&mut input)?;
            let hlsl = read_string(&mut input)?;
            let stage = stage_of(head[0]).ok_or_else(|| io::Error::other("bad stage"))?;
            let target = if head[1] == 0 { Target::Dxil } else { Target::Spirv };
            let count = read_u32(&mut input)?;
            let extra = (0..count).map(|_| read_string(&mut input)).collect::<io::Result<Vec<String>>>()?;
            Ok((stage, target, mask, hlsl, extra))
        })();
        let Ok((stage, target, mask, hlsl, extra)) = request else { return Err(ServeError::Protocol) };
        served += 1;
        if abort_at == Some(served) {
            std::process::abort();
        }
        #[cfg(unix)]
        if let Some(l) = limits {
            // the soft limit only: an unprivileged process cannot raise its hard limit again
            let soft = (cpu_seconds_used() + l.cpu_seconds) as libc::rlim_t;
            set_limit(libc::RLIMIT_CPU, soft, libc::RLIM_INFINITY).map_err(ServeError::CpuLimit)?;
        }
        #[cfg(windows)]
        if let Some(w) = &watchdog {
            w.arm();
        }
        // Test hook: spin on the CPU (as DXC stuck in an optimization loop would) on the N-th
        // request (after the limit is set), so that the CPU-time limit ends the worker. `test-hooks` feature only.
        #[cfg(feature = "test-hooks")]
        if std::env::var("SHREC_TEST_DXC_SPIN_AT").ok().and_then(|v| v.parse().ok()) == Some(served) {
            let mut x = 0u64;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        // hassle-rs unwraps DXC's result, which is missing when DXC fails inside (it ran out
        // of memory under the limit): that panic ends this worker with its own exit code, so
        // the build can name the likely cause, and without a backtrace on the build's stderr.
        std::panic::set_hook(Box::new(|_| {}));
        let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dxc::compile_with_args(&lib, &hlsl, stage, target, mask, &extra)));
        #[cfg(windows)]
        if let Some(w) = &watchdog {
            w.disarm();
        }
        let (status, body) = match compiled {
            Ok(Ok(code)) => (0u8, code),
            Ok(Err(e)) => {
                let status = match e {
                    CompileError::Rejected(_) => 1u8,
                    CompileError::Library(_) => 2,
                    CompileError::Output(_) => 3,
                };
                (status, e.to_string().into_bytes())
            }
            Err(_) => return Err(ServeError::NoResult),
        };
        let sent = output
            .write_all(&[status])
            .and_then(|_| output.write_all(&(body.len() as u32).to_le_bytes()))
            .and_then(|_| output.write_all(&body))
            .and_then(|_| output.flush());
        if sent.is_err() {
            return Ok(());
        }
    }
}

#[cfg(any(unix, windows))]
struct Worker {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// What it was started with: a request for another library or other limits starts another.
    exe: std::path::PathBuf,
    lib: std::path::PathBuf,
    limits: Option<DxcLimits>,
    /// The worker's Job Object (memory limit; ends the worker when dropped). Last, so that the
    /// worker sees its stdin close first.
    #[cfg(windows)]
    _job: windows::Job,
}

#[cfg(any(unix, windows))]
thread_local! {
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

#[cfg(any(unix, windows))]
/// Compiles in this thread's worker process (started on first use, restarted after a crash),
/// under `limits` when given. `exe` is the shrec executable that serves `dxc-worker`. The inner
/// result is DXC's (code or diagnostics); the outer error says the worker could not be started,
/// died, or passed a limit.
#[allow(clippy::too_many_arguments)]
pub fn compile(
    exe: &Path,
    lib: &DxcLib,
    hlsl: &str,
    stage: Stage,
    target: Target,
    mask: u32,
    extra: &[String],
    limits: Option<DxcLimits>,
) -> Result<Result<Vec<u8>, CompileError>, WorkerError> {
    WORKER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_some_and(|w| w.exe != exe || w.lib != lib.path || w.limits != limits) {
            slot.take(); // its stdin closes: it exits
        }
        if slot.is_none() {
            *slot = Some(spawn(exe, &lib.path, limits).map_err(|e| WorkerError::Start { exe: exe.display().to_string(), reason: e.to_string() })?);
        }
        let w = slot.as_mut().expect("worker just started");
        let wall = limits.map(|l| std::time::Duration::from_secs(l.cpu_seconds.saturating_mul(WALL_FACTOR).saturating_add(WALL_SLACK_SECS)));
        match round_trip(w, hlsl, stage, target, mask, extra, wall) {
            Ok(result) => Ok(result),
            Err(e) => {
                // The worker died, passed a limit, or its pipe broke during this compilation.
                let mut dead = slot.take().expect("worker present");
                let timed_out = e.kind() == io::ErrorKind::TimedOut;
                if timed_out {
                    let _ = dead.child.kill();
                }
                drop(dead.stdin);
                let status = dead.child.wait();
                Err(death_reason(status, timed_out, limits))
            }
        }
    })
}

#[cfg(any(unix, windows))]
/// Why a worker is gone, naming the limit it passed when that is what ended it (`timed_out`: the
/// wall-clock backstop; the CPU-time limit: SIGXCPU on Unix, [`EXIT_CPU_LIMIT`] on Windows).
fn death_reason(status: io::Result<std::process::ExitStatus>, timed_out: bool, limits: Option<DxcLimits>) -> WorkerError {
    let cpu_passed = status.as_ref().is_ok_and(|s| {
        #[cfg(unix)]
        let signalled = {
            use std::os::unix::process::ExitStatusExt;
            s.signal() == Some(libc::SIGXCPU)
        };
        #[cfg(not(unix))]
        let signalled = false;
        signalled || s.code() == Some(EXIT_CPU_LIMIT)
    });
    let status_text = status.as_ref().map(|s| s.to_string()).unwrap_or_else(|e| format!("status unknown: {e}"));
    match limits {
        Some(l) if timed_out => WorkerError::WallClock {
            wall_seconds: l.cpu_seconds.saturating_mul(WALL_FACTOR).saturating_add(WALL_SLACK_SECS),
            cpu_seconds: l.cpu_seconds,
        },
        Some(l) if cpu_passed => WorkerError::CpuTime { cpu_seconds: l.cpu_seconds, status: status_text },
        Some(l) if status.as_ref().is_ok_and(|s| s.code() == Some(EXIT_NO_RESULT)) => WorkerError::MemoryLimit { memory_mib: l.memory_mib },
        Some(l) => WorkerError::Crashed { status: status_text, memory_mib: Some(l.memory_mib) },
        None => WorkerError::Crashed { status: status_text, memory_mib: None },
    }
}

#[cfg(any(unix, windows))]
fn spawn(exe: &Path, lib: &Path, limits: Option<DxcLimits>) -> io::Result<Worker> {
    let mut cmd = Command::new(exe);
    cmd.arg("dxc-worker").arg("--dxc").arg(lib);
    if let Some(l) = limits {
        cmd.arg("--cpu-limit").arg(l.cpu_seconds.to_string()).arg("--memory-limit").arg(l.memory_mib.to_string());
    }
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()?;
    #[cfg(windows)]
    let job = {
        // The worker waits for its first request, sent only after this: nothing runs unlimited.
        let job = windows::Job::new(limits).and_then(|job| job.assign(&child).map(|()| job));
        match job {
            Ok(job) => job,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(io::Error::new(e.kind(), format!("cannot put it under a Job Object: {e}")));
            }
        }
    };
    let stdin = BufWriter::new(child.stdin.take().expect("piped"));
    let stdout = BufReader::new(child.stdout.take().expect("piped"));
    Ok(Worker {
        child,
        stdin,
        stdout,
        exe: exe.to_path_buf(),
        lib: lib.to_path_buf(),
        limits,
        #[cfg(windows)]
        _job: job,
    })
}

#[cfg(unix)]
/// Waits until the worker's output is readable, at most `wall`; `TimedOut` past it.
fn wait_readable(w: &Worker, wall: Option<std::time::Duration>) -> io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let Some(wall) = wall else { return Ok(()) };
    if !w.stdout.buffer().is_empty() {
        return Ok(());
    }
    let deadline = std::time::Instant::now() + wall;
    let mut fds = libc::pollfd { fd: w.stdout.get_ref().as_raw_fd(), events: libc::POLLIN, revents: 0 };
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "DXC worker wall-clock limit"));
        }
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: poll on one pollfd we own, for at most `ms` milliseconds.
        match unsafe { libc::poll(&mut fds, 1, ms) } {
            n if n > 0 => return Ok(()), // data, or the pipe closed (the read then reports it)
            0 => continue,
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

#[cfg(windows)]
/// Waits until the worker's output is readable, at most `wall`; `TimedOut` past it.
fn wait_readable(w: &Worker, wall: Option<std::time::Duration>) -> io::Result<()> {
    let Some(wall) = wall else { return Ok(()) };
    if w.stdout.buffer().is_empty() && !windows::wait_readable(w.stdout.get_ref(), wall) {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "DXC worker wall-clock limit"));
    }
    Ok(())
}

#[cfg(any(unix, windows))]
/// Outer error: the worker is gone (`TimedOut`: it passed `wall`). Inner error: DXC's.
fn round_trip(
    w: &mut Worker,
    hlsl: &str,
    stage: Stage,
    target: Target,
    mask: u32,
    extra: &[String],
    wall: Option<std::time::Duration>,
) -> io::Result<Result<Vec<u8>, CompileError>> {
    w.stdin.write_all(MAGIC)?;
    w.stdin.write_all(&[stage_id(stage), (target == Target::Spirv) as u8])?;
    w.stdin.write_all(&mask.to_le_bytes())?;
    w.stdin.write_all(&(hlsl.len() as u32).to_le_bytes())?;
    w.stdin.write_all(hlsl.as_bytes())?;
    w.stdin.write_all(&(extra.len() as u32).to_le_bytes())?;
    for a in extra {
        w.stdin.write_all(&(a.len() as u32).to_le_bytes())?;
        w.stdin.write_all(a.as_bytes())?;
    }
    w.stdin.flush()?;
    wait_readable(w, wall)?;
    let mut status = [0u8; 1];
    w.stdout.read_exact(&mut status)?;
    let len = read_u32(&mut w.stdout)? as usize;
    let mut body = vec![0; len];
    w.stdout.read_exact(&mut body)?;
    if status[0] == 0 {
        return Ok(Ok(body));
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    Ok(Err(match status[0] {
        2 => CompileError::Library(text),
        3 => CompileError::Output(text),
        _ => CompileError::Rejected(text),
    }))
}

fn read_string(r: &mut impl Read) -> io::Result<String> {
    let len = read_u32(r)? as usize;
    let mut bytes = vec![0; len];
    r.read_exact(&mut bytes)?;
    String::from_utf8(bytes).map_err(io::Error::other)
}

#[cfg(not(any(unix, windows)))]
pub fn serve(_lib_path: &Path, _limits: Option<DxcLimits>) -> Result<(), ServeError> {
    Err(ServeError::Unsupported)
}

#[cfg(not(any(unix, windows)))]
#[allow(clippy::too_many_arguments)]
pub fn compile(
    _exe: &Path,
    _lib: &DxcLib,
    _hlsl: &str,
    _stage: Stage,
    _target: Target,
    _mask: u32,
    _extra: &[String],
    _limits: Option<DxcLimits>,
) -> Result<Result<Vec<u8>, CompileError>, WorkerError> {
    Err(WorkerError::Unsupported)
}
