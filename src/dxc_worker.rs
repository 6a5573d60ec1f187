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
//! Protocol (little-endian), one request and one response at a time:
//! - request: `SHRQ`, stage id u8 (0 vertex, 1 pixel, 2 geometry), target u8 (0 DXIL,
//!   1 SPIR-V), spec-constants mask u32, HLSL length u32, HLSL bytes, extra DXC argument
//!   count u32, then per argument its length u32 and UTF-8 bytes (`--dxc-arg`);
//! - response: status u8 (0 compiled, 1 DXC's error), length u32, code or UTF-8 diagnostics.

use std::cell::RefCell;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::dxc::{self, DxcLib, Target};
use crate::formats::Stage;

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

/// The worker's main loop (`shrec dxc-worker`): compiles requests from stdin until it closes.
/// Returns the process exit code.
pub fn serve(lib_path: &Path) -> i32 {
    let lib = DxcLib { path: lib_path.to_path_buf(), identity: 0 };
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    // Test hook (tests/dxc_isolation.rs): abort, as a crashing DXC would, on the N-th request.
    let abort_at: Option<u64> = std::env::var("SHREC_TEST_DXC_ABORT_AT").ok().and_then(|v| v.parse().ok());
    let mut served = 0u64;
    loop {
        let mut magic = [0u8; 4];
        match input.read_exact(&mut magic) {
            Ok(()) if &magic == MAGIC => {}
            Ok(()) => return 3,
            Err(_) => return 0, // the build closed the pipe: done
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
        let Ok((stage, target, mask, hlsl, extra)) = request else { return 3 };
        served += 1;
        if abort_at == Some(served) {
            std::process::abort();
        }
        let (status, body) = match dxc::compile_with_args(&lib, &hlsl, stage, target, mask, &extra) {
            Ok(code) => (0u8, code),
            Err(diag) => (1u8, diag.into_bytes()),
        };
        let sent = output
            .write_all(&[status])
            .and_then(|_| output.write_all(&(body.len() as u32).to_le_bytes()))
            .and_then(|_| output.write_all(&body))
            .and_then(|_| output.flush());
        if sent.is_err() {
            return 0;
        }
    }
}

struct Worker {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

thread_local! {
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

/// Compiles in this thread's worker process (started on first use, restarted after a crash).
/// `exe` is the shrec executable that serves `dxc-worker`. The inner result is DXC's (code or
/// diagnostics); the outer error says the worker could not be started or died.
pub fn compile(
    exe: &Path,
    lib: &DxcLib,
    hlsl: &str,
    stage: Stage,
    target: Target,
    mask: u32,
    extra: &[String],
) -> Result<Result<Vec<u8>, String>, String> {
    WORKER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(spawn(exe, &lib.path).map_err(|e| format!("cannot start a DXC worker process ({}): {e}", exe.display()))?);
        }
        let w = slot.as_mut().expect("worker just started");
        match round_trip(w, hlsl, stage, target, mask, extra) {
            Ok(result) => Ok(result),
            Err(_) => {
                // The worker died (or its pipe broke) during this compilation.
                let mut dead = slot.take().expect("worker present");
                drop(dead.stdin);
                let status = dead.child.wait().map(|s| s.to_string()).unwrap_or_else(|e| format!("status unknown: {e}"));
                Err(format!("crashed while compiling this shader (worker process {status}); the build goes on with a new worker"))
            }
        }
    })
}

fn spawn(exe: &Path, lib: &Path) -> io::Result<Worker> {
    let mut child =
        Command::new(exe).arg("dxc-worker").arg("--dxc").arg(lib).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()?;
    let stdin = BufWriter::new(child.stdin.take().expect("piped"));
    let stdout = BufReader::new(child.stdout.take().expect("piped"));
    Ok(Worker { child, stdin, stdout })
}

/// Outer error: the worker is gone. Inner error: DXC's diagnostics.
fn round_trip(w: &mut Worker, hlsl: &str, stage: Stage, target: Target, mask: u32, extra: &[String]) -> io::Result<Result<Vec<u8>, String>> {
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
    let mut status = [0u8; 1];
    w.stdout.read_exact(&mut status)?;
    let len = read_u32(&mut w.stdout)? as usize;
    let mut body = vec![0; len];
    w.stdout.read_exact(&mut body)?;
    Ok(match status[0] {
        0 => Ok(body),
        _ => Err(String::from_utf8_lossy(&body).into_owned()),
    })
}

fn read_string(r: &mut impl Read) -> io::Result<String> {
    let len = read_u32(r)? as usize;
    let mut bytes = vec![0; len];
    r.read_exact(&mut bytes)?;
    String::from_utf8(bytes).map_err(io::Error::other)
}
