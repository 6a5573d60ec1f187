//! Atomic file replacement: write to a temporary file in the destination's directory, fsync it,
//! rename it over the destination, fsync the directory.
//!
//! Guarantees, for every file written through this module:
//! - a reader never sees a partially written file under the final name: it sees either the
//!   previous complete file (or none) or the new complete file;
//! - on any error (while writing, syncing or renaming) the previous file is untouched and the
//!   temporary file is removed;
//! - temporary names are unique per process and call (`.<name>.<pid>-<nonce>.<n>.tmp`, created
//!   with `create_new`; the random nonce because pids repeat across PID namespaces sharing a
//!   folder), so concurrent writers of the same destination never share a temporary file; the
//!   last rename wins and every state in between is a complete file;
//! - a temporary file is locked (`flock`, exclusive) by its writer from its creation until it is
//!   renamed or removed, and the clean-up of temporary files left by dead writers removes only
//!   those whose lock it can take. It used to go by the pid in the name, checked in `/proc`: a
//!   live build in another PID namespace (a container sharing the folder) has a pid that does not
//!   exist here, so its temporary files were deleted under it. A lock is held by
//!   an open file, whatever namespace its process is in, and is released by the kernel when the
//!   process dies, SIGKILL included.
//!
//! Several files that belong together (a `.cpp` and its header, a `.rs` and its blobs) go through
//! [`Batch`]: every file is first written and synced under its temporary name, and only when all
//! of them succeeded are they renamed, in the order they were staged. A failure while staging
//! leaves every destination untouched; a failed rename puts back the files renamed before it
//! ([`Batch::commit`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Prefix and suffix of every temporary file this module creates (`.<name>.<pid>.<n>.tmp`),
/// so tests and cleanup tools can recognise them.
pub const TEMP_SUFFIX: &str = ".tmp";

/// `<pid>-<nonce>`: this process's part of its temporary names. The pid tells people whose file
/// it is; the nonce (random per process) keeps names unique when processes of several PID
/// namespaces, which may share a pid, write to one folder.
fn process_tag() -> &'static str {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        // RandomState's keys come from the OS's random source, fresh in every process.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        format!("{}-{:016x}", std::process::id(), h.finish())
    })
}

fn temp_path_for(dest: &Path) -> io::Result<PathBuf> {
    let name = dest.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "destination has no file name"))?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.{}{}", process_tag(), n, TEMP_SUFFIX));
    Ok(dest.with_file_name(tmp_name))
}

/// Takes `file`'s exclusive `flock`, waiting for it or not; `Ok(false)`: another open file holds
/// it (only when not waiting).
#[cfg(unix)]
fn lock(file: &File, wait: bool) -> io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    let op = if wait { libc::LOCK_EX } else { libc::LOCK_EX | libc::LOCK_NB };
    loop {
        // SAFETY: flock on a descriptor this File owns; no memory is passed.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) if !wait => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// Whether `path` still names the file open as `file` (same device and inode).
#[cfg(unix)]
fn still_named(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::symlink_metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Removes the temporary files of `dest` whose writers are gone (a build killed mid-write: its
/// temporary file stays, the destination was never touched): those whose lock can be taken. A
/// live writer holds its file's lock, so its file is left alone, whatever its name says. Files
/// of shrec versions before the lock (names `.<name>.<pid>.<n>.tmp`) hold none and are removed.
fn remove_stale_temps(dest: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let (Some(dir), Some(name)) = (dest.parent(), dest.file_name().and_then(|n| n.to_str())) else { return };
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        let prefix = format!(".{name}.");
        let Ok(entries) = fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let file_name = e.file_name();
            let Some(tmp) = file_name.to_str() else { continue };
            if tmp.strip_prefix(&prefix).and_then(|r| r.strip_suffix(TEMP_SUFFIX)).is_none() {
                continue;
            }
            let path = e.path();
            // not through a link, and a FIFO planted under such a name must not block the open
            let Ok(file) = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(&path) else { continue };
            if !file.metadata().is_ok_and(|m| m.is_file()) {
                continue;
            }
            // Holding the lock, the file is ours to remove if the name still points at it.
            if lock(&file, false).unwrap_or(false) && still_named(&path, &file) {
                let _ = fs::remove_file(&path);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = dest;
}

/// Creates `dest`'s temporary file and takes its lock. A clean-up in another process may take
/// the lock of a file created an instant before and remove it; the name is then checked once the
/// lock is held, and a new name is taken if the file was removed meanwhile.
fn create_locked_temp(dest: &Path) -> io::Result<(PathBuf, File)> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let tmp = temp_path_for(dest)?;
        let file = match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 16 => continue,
            Err(e) => return Err(e),
        };
        #[cfg(unix)]
        {
            if let Err(e) = lock(&file, true) {
                let _ = fs::remove_file(&tmp);
                return Err(e);
            }
            if !still_named(&tmp, &file) {
                if attempts < 16 {
                    continue;
                }
                return Err(io::Error::other(format!("temporary file {} was removed while it was created", tmp.display())));
            }
        }
        return Ok((tmp, file));
    }
}

/// Test hook (`tests/integration/kill_mid_write.rs`): with `SHREC_TEST_STALL_WRITE=NAME:MS`, writing a file
/// named NAME stops for MS milliseconds after its first 4 KiB reached the disk, so a test can
/// kill the build while that temporary file is half written. Only with the `test-hooks` feature
/// (the tests' build): a released shrec reads no such variable.
#[cfg(feature = "test-hooks")]
fn stall_hook(dest: &Path) -> Option<u64> {
    let v = std::env::var("SHREC_TEST_STALL_WRITE").ok()?;
    let (name, ms) = v.rsplit_once(':')?;
    (dest.file_name()? == name).then(|| ms.parse().ok())?
}

#[cfg(not(feature = "test-hooks"))]
fn stall_hook(_: &Path) -> Option<u64> {
    None
}

struct StallingWriter<'a, W: Write> {
    inner: &'a mut W,
    written: u64,
    stall_ms: Option<u64>,
}

impl<W: Write> Write for StallingWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        if self.written >= 4096 {
            if let Some(ms) = self.stall_ms.take() {
                self.inner.flush()?;
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Whether `name` looks like a temporary file of this module.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(TEMP_SUFFIX)
}

/// A file written and synced under a temporary name, not yet renamed into place. Dropping it
/// without [`Staged::commit`] removes the temporary file.
#[derive(Debug)]
pub struct Staged {
    tmp: Option<PathBuf>,
    dest: PathBuf,
    /// Whether the file was fsynced (then the directory is too, after the rename).
    durable: bool,
    /// The temporary file, open, holding its lock until it is renamed or removed (see
    /// [`remove_stale_temps`]). Closed after either. `None`: a kept previous version on an OS
    /// without the lock (see [`keep_previous`]).
    _lock: Option<File>,
}

impl Staged {
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Renames the temporary file over the destination and syncs the directory (best effort:
    /// a directory that cannot be opened or synced is not an error, the rename is done).
    pub fn commit(mut self) -> io::Result<()> {
        let tmp = self.tmp.take().expect("staged file committed twice");
        if let Err(e) = fs::rename(&tmp, &self.dest) {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        // (the lock goes with the file to its final name and is released when `self` drops)
        if self.durable {
            sync_dir(&self.dest);
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = fs::remove_file(tmp);
        }
    }
}

fn sync_dir(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Writes a temporary file next to `dest` through `fill`, flushes and fsyncs it. Nothing is
/// visible under `dest` yet. On error the temporary file is removed.
pub fn stage_with<F>(dest: &Path, fill: F) -> io::Result<Staged>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    stage_impl(dest, fill, true)
}

fn stage_impl<F>(dest: &Path, fill: F, sync: bool) -> io::Result<Staged>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    remove_stale_temps(dest);
    let (tmp, file) = create_locked_temp(dest)?;
    // From here on the guard removes the temporary file on every early return, and keeps a
    // descriptor of it open so the lock (which belongs to the open file) outlives `file`.
    let lock = match file.try_clone() {
        Ok(l) => l,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let staged = Staged { tmp: Some(tmp), dest: dest.to_path_buf(), durable: sync, _lock: Some(lock) };
    let mut w = BufWriter::with_capacity(1 << 20, file);
    match stall_hook(dest) {
        None => fill(&mut w)?,
        Some(ms) => fill(&mut StallingWriter { inner: &mut w, written: 0, stall_ms: Some(ms) })?,
    }
    let file = w.into_inner().map_err(|e| e.into_error())?;
    if sync {
        file.sync_all()?;
    }
    drop(file);
    Ok(staged)
}

/// Replaces `dest` with what `fill` writes through a temporary file and a rename, without any
/// fsync: other processes never see a partial file, but after a power loss the file may be
/// empty or garbage. Only for files that carry their own checksum and are rebuilt when it fails
/// (the incremental cache's artifacts: an fsync per shader would cost more than a rare rebuild).
pub fn write_unsynced_with<F>(dest: &Path, fill: F) -> io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    stage_impl(dest, fill, false)?.commit()
}

/// [`stage_with`] for bytes already in memory.
pub fn stage(dest: &Path, data: &[u8]) -> io::Result<Staged> {
    stage_with(dest, |w| w.write_all(data))
}

/// Atomically replaces `dest` with what `fill` writes.
pub fn write_with<F>(dest: &Path, fill: F) -> io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    stage_with(dest, fill)?.commit()
}

/// Atomically replaces `dest` with `data`.
pub fn write(dest: &Path, data: &[u8]) -> io::Result<()> {
    stage(dest, data)?.commit()
}

/// Files staged together and renamed into place in staging order once all are written.
#[derive(Debug, Default)]
pub struct Batch {
    staged: Vec<Staged>,
}

impl Batch {
    pub fn new() -> Self {
        Batch::default()
    }

    /// Stages one file; on error, returns it with the destination path. Files staged before
    /// stay staged (and are removed if the batch is dropped).
    pub fn stage_with<F>(&mut self, dest: &Path, fill: F) -> Result<(), (PathBuf, io::Error)>
    where
        F: FnOnce(&mut dyn Write) -> io::Result<()>,
    {
        let s = stage_with(dest, fill).map_err(|e| (dest.to_path_buf(), e))?;
        self.staged.push(s);
        Ok(())
    }

    /// Renames every staged file into place, in staging order, all or none: before the first
    /// rename each destination that exists is kept under a temporary name (a hard link, or a
    /// copy where links are not supported), and if a rename fails, the files renamed before it
    /// are put back (destinations that did not exist are removed), so the set on disk stays the
    /// previous one instead of a mix of two builds (a failed rename left a new
    /// `.msvc.inc` next to the old `.cpp`, a new blob next to an old `.rs`). The error says
    /// when putting back failed too. Only a crash between two renames can still leave a mix;
    /// the writers make every such mix fail to compile (see `cpp` and `rust`).
    ///
    /// A staged file whose bytes equal its destination's is dropped instead of renamed, so the
    /// destination keeps its modification time: build tools then recompile only what includes a
    /// file that really changed (a new `.cpp` with the same header must not rebuild every
    /// source including the header).
    pub fn commit(mut self) -> Result<(), (PathBuf, io::Error)> {
        self.staged.retain(|s| !s.tmp.as_deref().is_some_and(|tmp| same_bytes(tmp, &s.dest)));
        let mut previous = Vec::with_capacity(self.staged.len());
        for s in &self.staged {
            previous.push(keep_previous(&s.dest).map_err(|e| (s.dest.clone(), e))?);
        }
        let mut done: Vec<(PathBuf, Option<Staged>)> = Vec::new();
        for (s, prev) in self.staged.into_iter().zip(previous) {
            let dest = s.dest.clone();
            if let Err(e) = s.commit() {
                let mut undo_failed = Vec::new();
                for (d, p) in done.into_iter().rev() {
                    let undone = match p {
                        Some(p) => p.commit(),
                        None => fs::remove_file(&d),
                    };
                    if let Err(u) = undone {
                        undo_failed.push(format!("{}: {u}", d.display()));
                    }
                }
                let e = if undo_failed.is_empty() {
                    io::Error::new(e.kind(), format!("{e} (the other files of the set were put back as they were)"))
                } else {
                    io::Error::new(
                        e.kind(),
                        format!(
                            "{e}; putting back the files renamed before it failed too ({}): the set is a mix of two builds",
                            undo_failed.join(", ")
                        ),
                    )
                };
                return Err((dest, e));
            }
            done.push((dest, prev));
        }
        // success: the kept previous versions are dropped (their temporary names removed)
        Ok(())
    }
}

/// Whether two regular files hold the same bytes (false on any error: then the file is renamed
/// into place as usual).
fn same_bytes(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::symlink_metadata(b)) else { return false };
    if !mb.is_file() || ma.len() != mb.len() {
        return false;
    }
    let (Ok(fa), Ok(fb)) = (File::open(a), File::open(b)) else { return false };
    let (mut ra, mut rb) = (io::BufReader::with_capacity(1 << 16, fa), io::BufReader::with_capacity(1 << 16, fb));
    loop {
        let (Ok(x), Ok(y)) = (io::BufRead::fill_buf(&mut ra), io::BufRead::fill_buf(&mut rb)) else { return false };
        if x.is_empty() || y.is_empty() {
            return x.is_empty() && y.is_empty();
        }
        let n = x.len().min(y.len());
        if x[..n] != y[..n] {
            return false;
        }
        io::BufRead::consume(&mut ra, n);
        io::BufRead::consume(&mut rb, n);
    }
}

/// The current file at `dest`, kept under a temporary name of `dest` (locked like one being
/// written, so no clean-up takes it); committing the returned [`Staged`] puts it back. `None`
/// when `dest` does not exist.
fn keep_previous(dest: &Path) -> io::Result<Option<Staged>> {
    match fs::symlink_metadata(dest) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
        Ok(m) if !m.is_file() => return Ok(None),
        Ok(_) => {}
    }
    // Lock the file itself first: a hard link to it is then a temporary file no clean-up can
    // take (the lock belongs to the file, whatever its name).
    let mut old = File::open(dest)?;
    #[cfg(unix)]
    let locked = lock(&old, false)?;
    #[cfg(not(unix))]
    let locked = true;
    if locked {
        let tmp = temp_path_for(dest)?;
        if fs::hard_link(dest, &tmp).is_ok() {
            #[cfg(unix)]
            let same = still_named(&tmp, &old);
            #[cfg(not(unix))]
            let same = true;
            if same {
                // Elsewhere than Unix no handle may stay open on the file (and there is no lock
                // to hold): replacing `dest` while a handle to it is open fails ("Access denied")
                // wherever Windows' rename cannot use POSIX semantics (Wine, FAT, network drives).
                let held = if cfg!(unix) { Some(old) } else { None };
                return Ok(Some(Staged { tmp: Some(tmp), dest: dest.to_path_buf(), durable: true, _lock: held }));
            }
            // `dest` was replaced since it was opened: keep a copy of the file opened instead
            let _ = fs::remove_file(&tmp);
        }
    }
    // No hard links here (or another writer holds the file): a copy, in a locked temporary file.
    let (tmp, mut copy) = create_locked_temp(dest)?;
    let lock = match copy.try_clone() {
        Ok(l) => l,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let kept = Staged { tmp: Some(tmp), dest: dest.to_path_buf(), durable: true, _lock: Some(lock) };
    io::copy(&mut old, &mut copy)?;
    copy.sync_all()?;
    Ok(Some(kept))
}
