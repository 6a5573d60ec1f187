//! DXC: finding or provisioning `libdxcompiler.so` (`dxcompiler.dll` on Windows,
//! `libdxcompiler.dylib` on macOS; see [`provision`]), one compiler per worker thread, and the
//! arguments for each target.
//!
//! Discovery order: `--dxc PATH`, then `$SHREC_DXC`, then (Windows) a DXC the developer has
//! installed ([`installed`]: the Vulkan SDK's, the Windows SDK's), then a copy provisioned
//! earlier in the user cache dir, then (unless offline) provisioning: `pip download` of a PyPI
//! wheel that carries DXC (see [`provision`] and README, "DXC"). Both the wheel and the library
//! are sha256-checked. Whatever is found must be at least DXC [`version::MINIMUM`].

use crate::ir::Stage;
use hassle_rs::{Dxc, DxcCompiler, DxcIncludeHandler, DxcLibrary};
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

pub mod dref;
pub mod installed;
pub mod version;
pub mod xfb;

/// The wheel shrec provisions DXC from on this OS, and the checksums it must match. Each is a
/// PyPI wheel pinned by version, platform tag and sha256, its libraries pinned by sha256 too
/// (see docs/README.md "DXC" for what was checked on each platform):
/// - Linux x86-64: `compushady-lrtu==0.18.0` (manylinux_2_28), `libdxcompiler_x86_64.so`;
/// - Windows x86-64: `slangpy==0.43.1` (win_amd64), `dxcompiler.dll` and `dxil.dll` (both
///   DXC 1.9.2602), the validator that signs DXIL. shrec loads `dxil.dll` from the library's
///   folder before the library (`preload_validator`), since DXC asks for it by name only.
///   `compushady==0.17.5`'s DXC 1.6.2112 is older than [`version::MINIMUM`] (its SPIR-V back
///   end lacks HLSL 2021's `select`) and is refused;
/// - macOS: nothing. The only registry copy found, `compushady==0.17.5`
///   (macosx_10_12_universal2, `libdxcompiler.3.7.dylib`, sha256
///   `2857a32b6056c10d9b021b8b3df5904fd401db973ed0d60d01e73c6337fe28c6`), predates DXC PR #3793
///   (Oct 2022), which removed the virtual destructor DXC's own non-Windows `IUnknown` had: the
///   Linux build of the same release lands every hassle-rs call on the wrong vtable slot and
///   segfaults, so provisioning it would trade a clear error for a crash;
/// - elsewhere (macOS included) nothing is provisioned: [`provision::AVAILABLE`] is false and the error says where
///   to get DXC.
pub mod provision {
    /// One file taken from the wheel: its member name, the name it gets, its sha256.
    pub type Extra = (&'static str, &'static str, &'static str);

    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    mod this_os {
        pub const AVAILABLE: bool = true;
        pub const PACKAGE: &str = "compushady-lrtu==0.18.0";
        pub const PLATFORM: &str = "manylinux_2_28_x86_64";
        pub const WHEEL: &str = "compushady_lrtu-0.18.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl";
        pub const WHEEL_SHA256: &str = "b76371972f2543a1e83034a86c83cfad678dabf66be0b50b7d78edbcb1c98243";
        pub const MEMBER: &str = "compushady/backends/libdxcompiler_x86_64.so";
        pub const LIBRARY_SHA256: &str = "ade5a6edc143bee6a6c1e83adbcfb6e1eb9c48c50ef2eead9e763e5bcb689fac";
        pub const EXTRA: &[super::Extra] = &[];
        pub const DIR: &str = "compushady-lrtu-0.18.0";
        pub const VERSION: &str = "DXC 1.8 from compushady-lrtu 0.18.0";
    }

    #[cfg(all(windows, target_arch = "x86_64"))]
    mod this_os {
        pub const AVAILABLE: bool = true;
        pub const PACKAGE: &str = "slangpy==0.43.1";
        pub const PLATFORM: &str = "win_amd64";
        pub const WHEEL: &str = "slangpy-0.43.1-cp311-cp311-win_amd64.whl";
        pub const WHEEL_SHA256: &str = "3da28207fa1f173c81b22efc1cd02e4804066b975a18749b1a7b09c0708018d6";
        pub const MEMBER: &str = "slangpy/dxcompiler.dll";
        pub const LIBRARY_SHA256: &str = "b86a738ece4c05dbe2d9bbb29668a2ccb28a0740773c9b027cdc61e8d07b4d75";
        pub const EXTRA: &[super::Extra] = &[("slangpy/dxil.dll", "dxil.dll", "058f2f52a680c38b223a5615b7df969def21f77e577562e5099d971dede992de")];
        pub const DIR: &str = "slangpy-0.43.1";
        pub const VERSION: &str = "DXC 1.9.2602 from slangpy 0.43.1";
    }

    #[cfg(not(any(all(target_os = "linux", target_arch = "x86_64"), all(windows, target_arch = "x86_64"))))]
    mod this_os {
        pub const AVAILABLE: bool = false;
        pub const PACKAGE: &str = "";
        pub const PLATFORM: &str = "";
        pub const WHEEL: &str = "";
        pub const WHEEL_SHA256: &str = "";
        pub const MEMBER: &str = "";
        pub const LIBRARY_SHA256: &str = "";
        pub const EXTRA: &[super::Extra] = &[];
        pub const DIR: &str = "none";
        pub const VERSION: &str = "none on this OS";
    }

    pub use this_os::*;

    /// The DXC library's file name on this OS (what `--dxc` points at).
    pub const LIBRARY_NAME: &str = if cfg!(windows) {
        "dxcompiler.dll"
    } else if cfg!(target_os = "macos") {
        "libdxcompiler.dylib"
    } else {
        "libdxcompiler.so"
    };

    /// Where to get DXC by hand, for the errors of an OS shrec cannot provision it on.
    pub const WHERE_TO_GET: &str =
        "get DXC from the DirectXShaderCompiler releases (github.com/microsoft/DirectXShaderCompiler/releases: dxcompiler.dll, \
         libdxcompiler.so) or the Vulkan SDK (vulkan.lunarg.com: its lib/ or Bin/ folder), then pass --dxc PATH or set SHREC_DXC";
}

#[derive(Debug, thiserror::Error)]
pub enum DxcError {
    #[error("DXC library {path}: {reason}")]
    Library { path: PathBuf, reason: String },
    #[error("DXC not found and provisioning is disabled (--offline): pass --dxc PATH/TO/{} or set SHREC_DXC", provision::LIBRARY_NAME)]
    Offline,
    #[error("provisioning DXC failed: {0}")]
    Provision(String),
    #[error("DXC library {path} {reason}")]
    TooOld { path: PathBuf, reason: String },
}

/// Why DXC gave no code for a shader.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// DXC rejected the HLSL: its diagnostics (or, when it printed none, the HRESULT).
    #[error("{0}")]
    Rejected(String),
    /// The library could not be loaded into this thread, or DXC's compiler, library or source
    /// blob objects could not be made.
    #[error("{0}")]
    Library(String),
    /// DXC returned code that is not what was asked for (not a SPIR-V module, a DXIL container
    /// whose hash cannot be filled).
    #[error("{0}")]
    Output(String),
}

/// How to locate DXC.
#[derive(Clone, Debug, Default)]
pub struct LocateOptions {
    /// Explicit library path (`--dxc`).
    pub explicit: Option<PathBuf>,
    /// Forbid provisioning.
    pub offline: bool,
    /// Where the search and provisioning say what they do (an installed DXC passed over, a
    /// download, pip's output), for a person to read: each text ends with a line break. The
    /// command line prints them on stderr; `None`: the library says nothing.
    pub notes: Option<fn(&str)>,
}

impl LocateOptions {
    fn note(&self, text: &str) {
        if let Some(say) = self.notes {
            say(text);
        }
    }
}

/// A usable DXC library.
#[derive(Clone, Debug)]
pub struct DxcLib {
    pub path: PathBuf,
    /// XXH3-64 of the library file: part of the incremental-cache key, so that changing DXC
    /// rebuilds everything.
    pub identity: u64,
}

/// User cache dir for shrec (`$XDG_CACHE_HOME/shrec` or `~/.cache/shrec`). With neither
/// variable set, a private folder under the temp dir (`private_temp_dir`): never a shared one,
/// where anyone could plant a library for shrec to load.
pub fn user_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("shrec");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h).join(".cache").join("shrec");
    }
    // Windows: the per-user local application data folder
    #[cfg(windows)]
    if let Some(d) = std::env::var_os("LOCALAPPDATA").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("shrec");
    }
    private_temp_dir()
}

/// `<temp>/shrec-cache-<uid>` (see [`private_dir_in`]).
#[cfg(unix)]
fn private_temp_dir() -> PathBuf {
    private_dir_in(&std::env::temp_dir())
}

/// A folder of this user's own under the shared folder `base`: `shrec-cache-<uid>`, or
/// `shrec-cache-<uid>-1` … `-99`, whichever is first a real directory (not a link) owned by this
/// user with no access for others, so that the same cache serves every run. When another user
/// holds all those names, a new folder with an unpredictable name, which this process must
/// create itself (mode 0700): a folder that already exists is never taken, whoever made it.
/// (A name made of the pid alone was taken as it was when it existed already: another user who
/// made the folders of the coming pids, each with a library and a stamp in it, had that library
/// loaded.)
#[cfg(unix)]
fn private_dir_in(base: &Path) -> PathBuf {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    let trusted = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0);
    for k in 0..100u32 {
        let p = base.join(if k == 0 { format!("shrec-cache-{uid}") } else { format!("shrec-cache-{uid}-{k}") });
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&p);
        if trusted(&p) {
            return p;
        }
    }
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mut last = base.join(format!("shrec-cache-{uid}-{}", std::process::id()));
    for attempt in 0..1000u64 {
        let nonce = xxhash_rust::xxh3::xxh3_64_with_seed(&[seed.to_le_bytes(), attempt.to_le_bytes()].concat(), std::process::id() as u64);
        last = base.join(format!("shrec-cache-{uid}-{}-{nonce:016x}", std::process::id()));
        // `create` fails on an existing name: success means this process made it, mode 0700
        if std::fs::DirBuilder::new().mode(0o700).create(&last).is_ok() && trusted(&last) {
            return last;
        }
    }
    // The temp dir takes no folder at all (read-only, full): nothing was created, and using
    // the cache there fails naming this path.
    last
}

/// Elsewhere (Windows): the temp dir is the user's own (`%TEMP%` under the profile).
#[cfg(not(unix))]
fn private_temp_dir() -> PathBuf {
    let p = std::env::temp_dir().join("shrec-cache");
    let _ = std::fs::create_dir_all(&p);
    p
}

/// Where a provisioned library lives.
pub fn provisioned_path() -> PathBuf {
    user_cache_dir().join("dxc").join(provision::DIR).join(provision::LIBRARY_NAME)
}

fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What identifies one version of a file without reading it: device, inode, size, and the
/// modification and status-change times in nanoseconds. Rewriting the file changes mtime and
/// ctime, replacing it (rename) changes the inode, and ctime cannot be set back by anyone.
#[cfg(unix)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileKey([u64; 5]);

#[cfg(unix)]
impl FileKey {
    fn of(path: &Path) -> std::io::Result<FileKey> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)?;
        let ns = |s: i64, n: i64| (s as u64).wrapping_mul(1_000_000_000).wrapping_add(n as u64);
        Ok(FileKey([m.dev(), m.ino(), m.size(), ns(m.mtime(), m.mtime_nsec()), ns(m.ctime(), m.ctime_nsec())]))
    }
}

/// The library's sha256 (hex) and XXH3-64 identity, both from one read of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Hashes {
    sha256: String,
    identity: u64,
}

fn hash_file(path: &Path) -> std::io::Result<Hashes> {
    hash_reader(&mut std::fs::File::open(path)?)
}

/// [`Hashes`] of everything `file` reads.
fn hash_reader(file: &mut std::fs::File) -> std::io::Result<Hashes> {
    // Read, not memory-mapped: a mapped file truncated meanwhile faults (SIGBUS) when touched;
    // read(2) only returns fewer bytes. Same values as sha256 / xxh3_64 of the
    // whole file.
    let (mut sha, mut xxh) = (Sha256::new(), xxhash_rust::xxh3::Xxh3::new());
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        xxh.update(&buf[..n]);
    }
    Ok(Hashes { sha256: hex(&sha.finalize()), identity: xxh.digest() })
}

/// The hashes of a library the user chose (`--dxc`, `SHREC_DXC`), from the stamp file in
/// `stamps` (the private user cache) when it records this very version of the file (same
/// [`FileKey`]), else by reading the file, and the stamp is then (re)written. Hashing a 35 MB
/// library was about a tenth of a small build's CPU time (docs/xenosrecomp-oracle.md §5); a
/// changed or replaced file has another key and is hashed again. Such a library is not pinned:
/// its XXH3 only keys the incremental cache. The provisioned library, whose sha256 is pinned,
/// never goes through a stamp (see `open_pinned_library`). Returns whether the stamp was used.
#[cfg(unix)]
fn hashes_with_stamp(path: &Path, stamps: &Path) -> std::io::Result<(Hashes, bool)> {
    let abs = std::fs::canonicalize(path)?;
    let stamp = stamps.join(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(abs.as_os_str().as_encoded_bytes())));
    let key = FileKey::of(&abs)?;
    let line = |k: &FileKey, h: &Hashes| {
        format!("shrec-dxc-stamp 1 {} {} {} {} {} {} {:016x} {}\n", k.0[0], k.0[1], k.0[2], k.0[3], k.0[4], h.sha256, h.identity, abs.display())
    };
    if let Ok(text) = std::fs::read_to_string(&stamp) {
        let f: Vec<&str> = text.trim_end().splitn(10, ' ').collect();
        if f.len() == 10 && f[..2] == ["shrec-dxc-stamp", "1"] && f[9] == abs.to_string_lossy() {
            let k: Vec<u64> = f[2..7].iter().filter_map(|v| v.parse().ok()).collect();
            if k.len() == 5 && k[..] == key.0[..] && f[7].len() == 64 {
                if let Ok(identity) = u64::from_str_radix(f[8], 16) {
                    return Ok((Hashes { sha256: f[7].to_string(), identity }, true));
                }
            }
        }
    }
    let h = hash_file(&abs)?;
    // a stamp only for a file that did not change while it was read
    if FileKey::of(&abs)? == key {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(stamps);
        let tmp = stamps.join(format!(".{:016x}.{}", xxhash_rust::xxh3::xxh3_64(abs.as_os_str().as_encoded_bytes()), std::process::id()));
        if std::fs::write(&tmp, line(&key, &h)).is_ok() {
            let _ = std::fs::rename(&tmp, &stamp);
        }
        let _ = std::fs::remove_file(&tmp);
    }
    Ok((h, false))
}

/// Off Unix there is no inode / ctime to key a stamp on: the library is hashed on every run.
#[cfg(not(unix))]
fn hashes_with_stamp(path: &Path, _stamps: &Path) -> std::io::Result<(Hashes, bool)> {
    Ok((hash_file(path)?, false))
}

/// Where [`hashes_with_stamp`] keeps its stamps: the private user cache.
fn stamp_dir() -> PathBuf {
    user_cache_dir().join("dxc").join("verified")
}

/// Finds DXC (see the module docs for the order), provisioning it when allowed.
pub fn locate(opts: &LocateOptions) -> Result<DxcLib, DxcError> {
    let chosen = opts.explicit.clone().or_else(|| std::env::var_os("SHREC_DXC").filter(|v| !v.is_empty()).map(PathBuf::from));
    // a DXC the developer installed is the user's own, like --dxc: not pinned by sha256
    let chosen = chosen.or_else(|| installed::find(opts));
    let own = chosen.is_some();
    let path = match chosen {
        Some(p) => {
            if !p.is_file() {
                return Err(DxcError::Library { path: p, reason: "no such file".into() });
            }
            p
        }
        None => {
            let p = provisioned_path();
            if !p.is_file() {
                if opts.offline {
                    return Err(DxcError::Offline);
                }
                provision_into(&p, opts)?;
            }
            p
        }
    };
    let lib_err = |reason: String| DxcError::Library { path: path.clone(), reason };
    let (file, hashes) = if own {
        // The user's own choice (--dxc, SHREC_DXC, or an installed SDK's): not pinned, so its hashes may come from the stamp (they only
        // key the incremental cache).
        let (hashes, _) = hashes_with_stamp(&path, &stamp_dir()).map_err(|e| lib_err(e.to_string()))?;
        (std::fs::File::open(&path).map_err(|e| lib_err(e.to_string()))?, hashes)
    } else {
        // Checked at every load, not only when it was provisioned: the file may have been
        // replaced since (a planted library's constructors would run inside shrec). The bytes
        // are hashed through the descriptor that is then loaded, never taken from a stamp: a
        // stamp saying "verified" proves nothing about the file beside it.
        let (file, hashes) = open_pinned_library(&path).map_err(lib_err)?;
        let got = &hashes.sha256;
        if got != provision::LIBRARY_SHA256 {
            return Err(lib_err(format!(
                "sha256 {got} is not the provisioned library's {}; delete the file to provision it again",
                provision::LIBRARY_SHA256
            )));
        }
        (file, hashes)
    };
    let identity = hashes.identity;
    // Load it now, so that a file that is not DXC is one fatal error before any work
    // (every shader used to fail one by one, exit 2, and the cache was replaced by an empty
    // one). A truncated library is refused before dlopen, which would fault (SIGBUS) on it.
    check_elf_complete(&file).map_err(lib_err)?;
    let lib = load_library_file(&path, &file).map_err(lib_err)?;
    lib.create_compiler().map_err(|e| lib_err(format!("cannot create a DXC compiler: {e}")))?;
    check_version(&path)?;
    Ok(DxcLib { path, identity })
}

/// Refuses a library older than [`version::MINIMUM`] (see [`version`]), naming the version
/// found and where to get a newer one. Only a library the user chose can be too old: installed
/// ones are passed over when they are ([`installed::find`]), provisioned ones are pinned.
fn check_version(path: &Path) -> Result<(), DxcError> {
    let found = version::query(path).map_err(|reason| DxcError::Library { path: path.to_path_buf(), reason })?;
    if found.is_supported() {
        Ok(())
    } else {
        Err(DxcError::TooOld { path: path.to_path_buf(), reason: version::too_old_reason(&found) })
    }
}

/// Opens the provisioned library and hashes it through that descriptor. On Unix the file must
/// be a regular file owned by this user (or root) that nobody else may write: the descriptor is
/// then what [`load_library_file`] loads, and no one but its owner can change the bytes between
/// the hash and the load.
fn open_pinned_library(path: &Path) -> Result<(std::fs::File, Hashes), String> {
    let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        if meta.uid() != uid && meta.uid() != 0 {
            return Err(format!("owned by uid {}, not by this user ({uid}): refusing to load it", meta.uid()));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(format!("writable by other users (mode {:o}): refusing to load it", meta.mode() & 0o7777));
        }
    }
    let hashes = hash_reader(&mut file).map_err(|e| e.to_string())?;
    Ok((file, hashes))
}

/// Loads the library `file` is open on and registers it under `path` (what compilations name).
/// On Linux the descriptor itself is loaded (`/proc/self/fd/N`): the file checked is the file
/// mapped, even if `path` is renamed over meanwhile.
fn load_library_file(path: &Path, file: &std::fs::File) -> Result<Arc<Dxc>, String> {
    #[cfg(target_os = "linux")]
    let from = {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
    };
    #[cfg(not(target_os = "linux"))]
    let from = {
        let _ = file;
        path.to_path_buf()
    };
    shared_library_from(path, &from)
}

/// Checks that `path` is a complete 64-bit little-endian ELF file: every segment and the
/// section table lie inside the file. dlopen maps segments past a truncated file's end and the
/// process dies of SIGBUS when it touches them; this turns that into an error.
#[cfg(not(any(windows, target_os = "macos")))]
fn check_elf_complete(file: &std::fs::File) -> Result<(), String> {
    use std::os::unix::fs::FileExt;
    // Only the headers are read (the file size comes from its metadata), not the whole 35 MB.
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    let mut head = [0u8; 64];
    let n = file.read_at(&mut head, 0).map_err(|e| e.to_string())?;
    let head = &head[..n];
    let u16_in = |b: &[u8], o: usize| b.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u64);
    let u64_in = |b: &[u8], o: usize| b.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    if head.get(..6) != Some(&[0x7F, b'E', b'L', b'F', 2, 1][..]) {
        return Err("not a 64-bit little-endian ELF shared library".into());
    }
    let bad = || "the ELF headers point past the end of the file (truncated?)".to_string();
    let (phoff, phentsize, phnum) = (u64_in(head, 0x20).ok_or_else(bad)?, u16_in(head, 0x36).ok_or_else(bad)?, u16_in(head, 0x38).ok_or_else(bad)?);
    let (shoff, shentsize, shnum) = (u64_in(head, 0x28).ok_or_else(bad)?, u16_in(head, 0x3A).ok_or_else(bad)?, u16_in(head, 0x3C).ok_or_else(bad)?);
    if shoff.checked_add(shentsize * shnum).is_none_or(|end| end > size) {
        return Err(bad());
    }
    let table_len = phentsize * phnum;
    if phoff.checked_add(table_len).is_none_or(|end| end > size) {
        return Err(bad());
    }
    let mut table = vec![0u8; table_len as usize];
    file.read_exact_at(&mut table, phoff).map_err(|_| bad())?;
    for i in 0..phnum {
        let at = (i * phentsize) as usize;
        let (offset, filesz) = (u64_in(&table, at + 8).ok_or_else(bad)?, u64_in(&table, at + 0x20).ok_or_else(bad)?);
        if offset.checked_add(filesz).is_none_or(|end| end > size) {
            return Err(bad());
        }
    }
    Ok(())
}

/// Windows and macOS load PE and Mach-O files, not ELF: only the magic number is checked there
/// (a library the loader cannot map is then its load error, not a fault; neither is tested).
#[cfg(any(windows, target_os = "macos"))]
fn check_elf_complete(mut file: &std::fs::File) -> Result<(), String> {
    use std::io::{Seek, SeekFrom};
    let mut head = [0u8; 4];
    file.seek(SeekFrom::Start(0)).and_then(|_| file.read_exact(&mut head)).map_err(|e| e.to_string())?;
    let pe = head[..2] == *b"MZ";
    // Mach-O 64-bit (either byte order) or a universal ("fat") binary
    let macho = [[0xCF, 0xFA, 0xED, 0xFE], [0xFE, 0xED, 0xFA, 0xCF], [0xCA, 0xFE, 0xBA, 0xBE]].contains(&head);
    if (cfg!(windows) && pe) || (cfg!(target_os = "macos") && macho) {
        Ok(())
    } else {
        Err(format!("not a {} shared library", if cfg!(windows) { "PE (DLL)" } else { "Mach-O" }))
    }
}

/// Downloads the wheel with pip, checks it, extracts the library (and on Windows `dxil.dll`),
/// checks them, and moves them into place atomically, the library last. On an OS without a
/// wheel (see [`provision`]) an error says where to get DXC.
fn provision_into(dest: &Path, opts: &LocateOptions) -> Result<(), DxcError> {
    let err = |m: String| DxcError::Provision(m);
    if !provision::AVAILABLE {
        return Err(err(format!(
            "no PyPI package shrec knows ships DXC for this OS ({} {}); {}",
            std::env::consts::OS,
            std::env::consts::ARCH,
            provision::WHERE_TO_GET
        )));
    }
    let dir = dest.parent().expect("provisioned path has a parent");
    std::fs::create_dir_all(dir).map_err(|e| err(format!("creating {}: {e}", dir.display())))?;
    let work = tempdir_in(dir).map_err(|e| err(format!("creating a temporary folder in {}: {e}", dir.display())))?;
    let _cleanup = RemoveOnDrop(work.clone());
    opts.note(&format!(
        "shrec: DXC not found; provisioning it once from PyPI ({}) into {} (use --dxc or SHREC_DXC to use your own, --offline to forbid this)\n",
        provision::PACKAGE,
        dir.display()
    ));
    let out = run_pip_download(&work)?;
    opts.note(&String::from_utf8_lossy(&out.stdout));
    if !out.status.success() {
        return Err(err(format!(
            "`pip download {}` failed (or {}):\n{}",
            provision::PACKAGE,
            provision::WHERE_TO_GET,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let wheel = work.join(provision::WHEEL);
    let got = sha256_file(&wheel).map_err(|e| err(format!("reading {}: {e}", wheel.display())))?;
    if got != provision::WHEEL_SHA256 {
        return Err(err(format!("{} has sha256 {got}, expected {}", wheel.display(), provision::WHEEL_SHA256)));
    }
    let file = std::fs::File::open(&wheel).map_err(|e| err(e.to_string()))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| err(format!("{}: {e}", wheel.display())))?;
    let mut extract = |member: &str, name: &str, sha256: &str| -> Result<PathBuf, DxcError> {
        let mut entry = zip.by_name(member).map_err(|e| err(format!("{member} in {}: {e}", wheel.display())))?;
        let tmp = work.join(name);
        let mut out_file = std::fs::File::create(&tmp).map_err(|e| err(e.to_string()))?;
        std::io::copy(&mut entry, &mut out_file).map_err(|e| err(format!("extracting {member}: {e}")))?;
        out_file.sync_all().map_err(|e| err(e.to_string()))?;
        drop(out_file);
        let got = sha256_file(&tmp).map_err(|e| err(e.to_string()))?;
        if got != sha256 {
            return Err(err(format!("extracted {name} has sha256 {got}, expected {sha256}")));
        }
        Ok(tmp)
    };
    let tmp_lib = extract(provision::MEMBER, provision::LIBRARY_NAME, provision::LIBRARY_SHA256)?;
    for &(member, name, sha256) in provision::EXTRA {
        let tmp = extract(member, name, sha256)?;
        let to = dir.join(name);
        std::fs::rename(&tmp, &to).map_err(|e| err(format!("moving {name} to {}: {e}", to.display())))?;
    }
    std::fs::rename(&tmp_lib, dest).map_err(|e| err(format!("moving the library to {}: {e}", dest.display())))?;
    opts.note(&format!("shrec: DXC ready at {}\n", dest.display()));
    Ok(())
}

/// The Python interpreters provisioning tries, in order: `$SHREC_PYTHON` alone when set, else
/// `python3`, then (Windows, where python.org's installer puts only the launcher on PATH)
/// `py -3`, then `python`.
fn python_commands() -> Vec<(String, Vec<&'static str>)> {
    if let Ok(p) = std::env::var("SHREC_PYTHON") {
        return vec![(p, vec![])];
    }
    let mut c = vec![("python3".to_string(), vec![])];
    if cfg!(windows) {
        c.push(("py".into(), vec!["-3"]));
    }
    c.push(("python".into(), vec![]));
    c
}

/// `pip download` of the pinned wheel into `work`, with the first interpreter of
/// [`python_commands`] that exists; an error lists those tried when none does.
fn run_pip_download(work: &Path) -> Result<std::process::Output, DxcError> {
    let mut tried = Vec::new();
    for (python, pre) in python_commands() {
        let run = std::process::Command::new(&python)
            .args(&pre)
            .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--platform", provision::PLATFORM])
            .args(["--python-version", "3.11", "--disable-pip-version-check", "-d"])
            .arg(work)
            .arg(provision::PACKAGE)
            .output();
        let shown = std::iter::once(python.as_str()).chain(pre.iter().copied()).collect::<Vec<_>>().join(" ");
        match run {
            Ok(out) => return Ok(out),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => tried.push(format!("`{shown}`")),
            Err(e) => return Err(DxcError::Provision(format!("running `{shown} -m pip`: {e}"))),
        }
    }
    Err(DxcError::Provision(format!(
        "no Python found to run pip with (tried {}; install Python 3 with pip, or set SHREC_PYTHON to one); or {}",
        tried.join(", "),
        provision::WHERE_TO_GET
    )))
}

fn tempdir_in(dir: &Path) -> std::io::Result<PathBuf> {
    for i in 0..1000u32 {
        let p = dir.join(format!(".provision-{}-{i}", std::process::id()));
        match std::fs::create_dir(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free temporary folder name"))
}

struct RemoveOnDrop(PathBuf);
impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Output of DXC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Dxil,
    Spirv,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Dxil => "dxil",
            Target::Spirv => "spirv",
        }
    }
}

/// Shader model of every target profile but those of shaders that declare a later one
/// ([`target_profile_for_model`]).
pub const SHADER_MODEL: &str = "6_0";

/// Target profile, e.g. `ps_6_0`.
pub fn profile(stage: Stage) -> String {
    format!("{}_{SHADER_MODEL}", stage.profile_prefix())
}

/// DXIL library profile of a shader that calls the external `g_SpecConstants()` (XenosRecomp:
/// `-T lib_6_3` when compiling DXIL with a non-zero specialization-constant mask; the runtime
/// links it into a vs_6_0 / ps_6_0 shader).
pub const SPEC_CONSTANTS_LIBRARY_PROFILE: &str = "lib_6_3";

/// Target profile of one compilation for a text that needs shader model `model`
/// ([`crate::hlsl::declared_shader_model`]): as [`target_profile`] at 6.0; a higher model
/// raises the stage profile (`ps_6_8`) and the library profile (`lib_6_8`) to it.
pub fn target_profile_for_model(stage: Stage, target: Target, spec_constants_mask: u32, model: crate::ir::ShaderModel) -> String {
    let base = target_profile(stage, target, spec_constants_mask);
    if model == crate::ir::ShaderModel::Sm6_0 {
        return base;
    }
    match base.rsplit_once('_').and_then(|(head, _)| head.rsplit_once('_')) {
        Some((prefix, _)) => format!("{prefix}_{}", model.suffix()),
        None => base,
    }
}

/// Target profile of one compilation: `profile(stage)`, except DXIL with a non-zero
/// specialization-constant mask, which is [`SPEC_CONSTANTS_LIBRARY_PROFILE`]. SPIR-V reads
/// specialization constants natively and always uses the stage profile.
pub fn target_profile(stage: Stage, target: Target, spec_constants_mask: u32) -> String {
    if target == Target::Dxil && spec_constants_mask != 0 {
        SPEC_CONSTANTS_LIBRARY_PROFILE.to_string()
    } else {
        profile(stage)
    }
}

/// DXC arguments besides `-T` and `-E` (XenosRecomp's set, §7 of docs/isa/xenos.md):
/// SPIR-V vertex and geometry shaders get `-fvk-invert-y` (all families use D3D's +y-up clip space).
/// DXIL also gets `-Gis` (IEEE strictness: no fast-math flags), the DXIL counterpart of the
/// `precise` registers the HLSL writer declares, which DXC's DXIL back end does not honour on
/// static globals (DXC's SPIR-V back end does, and rejects `-Gis`).
pub fn args(stage: Stage, target: Target) -> Vec<&'static str> {
    let mut a = vec!["-HV", "2021", "-all-resources-bound"];
    match target {
        Target::Spirv => {
            a.extend(["-spirv", "-fvk-use-dx-layout"]);
            if matches!(stage, Stage::Vertex | Stage::Geometry) {
                a.push("-fvk-invert-y");
            }
        }
        Target::Dxil => a.extend(["-Wno-ignored-attributes", "-Qstrip_reflect", "-Gis"]),
    }
    a.push("-Qstrip_debug");
    a
}

/// The file name DXC gives the HLSL in its diagnostics (`shader.hlsl:12:5: error: …`); the build
/// replaces it with the name `--hlsl-dir` writes the same text under ([`hlsl_file_name`]).
pub const SOURCE_NAME: &str = "shader.hlsl";

/// Name of a shader's HLSL in `--hlsl-dir` and in DXC's messages: `<KEY>.<family>.<stage>.hlsl`.
pub fn hlsl_file_name(key: u64, family: crate::ir::Family, stage: Stage) -> String {
    format!("{key:016X}.{family}.{}.hlsl", stage.name_in(family))
}

/// Arguments of `dxc` for one file, as the build passes them (profile, entry point, the rest):
/// what `--hlsl-dir`'s `dxc.sh` runs. Xenos shaders with specialization constants compile to
/// DXIL as a library ([`SPEC_CONSTANTS_LIBRARY_PROFILE`]).
pub fn command_line_args(stage: Stage, target: Target, spec_constants_mask: u32) -> Vec<String> {
    let mut a = vec!["-T".to_string(), target_profile(stage, target, spec_constants_mask), "-E".into(), "main".into()];
    a.extend(args(stage, target).into_iter().map(String::from));
    a
}

/// The entry point an argument list names with `-E NAME` (the build passes `-E shaderMain` for
/// `--abi xenosrecomp-metal`), else `main`, and the other arguments. DXC's compiler interface
/// takes the entry point as a parameter of its own, which a later `-E` does not override.
fn split_entry_point(extra: &[String]) -> (&str, Vec<String>) {
    let mut entry = "main";
    let mut rest = Vec::with_capacity(extra.len());
    let mut i = 0;
    while i < extra.len() {
        if extra[i] == "-E" && i + 1 < extra.len() {
            entry = &extra[i + 1];
            i += 2;
        } else {
            rest.push(extra[i].clone());
            i += 1;
        }
    }
    (entry, rest)
}

/// Resolves `#include "shader_common.h"` to the prelude built into shrec.
struct PreludeIncludes;

impl DxcIncludeHandler for PreludeIncludes {
    fn load_source(&mut self, filename: String) -> Option<String> {
        let name = filename.trim_start_matches("./").trim_start_matches(".\\");
        (name == crate::hlsl::PRELUDE_NAME).then(|| crate::hlsl::PRELUDE.to_string())
    }
}

/// One loaded library per path, shared by all threads (the library handle is thread-safe; the
/// compiler objects are not and live per thread).
fn shared_library(path: &Path) -> Result<Arc<Dxc>, String> {
    shared_library_from(path, path)
}

/// [`shared_library`] of `path`, loaded (the first time) from `from`: the same file, open as a
/// descriptor (see [`load_library_file`]).
fn shared_library_from(path: &Path, from: &Path) -> Result<Arc<Dxc>, String> {
    static LIBS: OnceLock<Mutex<HashMap<PathBuf, Arc<Dxc>>>> = OnceLock::new();
    let mut libs = LIBS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(d) = libs.get(path) {
        return Ok(d.clone());
    }
    preload_validator(path)?;
    let dxc = Arc::new(Dxc::new(Some(from.to_path_buf())).map_err(|e| format!("loading {}: {e}", path.display()))?);
    libs.insert(path.to_path_buf(), dxc.clone());
    Ok(dxc)
}

/// Windows: DXC loads its validator with `LoadLibrary("dxil.dll")` while it is being loaded,
/// and that search covers the program's folder, the system folders and PATH, not the folder of
/// `dxcompiler.dll`. A `dxil.dll` beside the library is therefore loaded first, by its full
/// path: Windows hands a module already loaded under that name to the later by-name load, so
/// DXC validates and signs its DXIL. The provisioned one must have its pinned sha256, as the
/// library does. It stays loaded for the life of the process.
#[cfg(windows)]
pub(crate) fn preload_validator(library: &Path) -> Result<(), String> {
    let validator = library.with_file_name("dxil.dll");
    if !validator.is_file() {
        return Ok(());
    }
    if library == provisioned_path() {
        for &(_, name, sha256) in provision::EXTRA.iter().filter(|e| e.1 == "dxil.dll") {
            let got = sha256_file(&validator).map_err(|e| format!("{}: {e}", validator.display()))?;
            if got != sha256 {
                return Err(format!(
                    "{} has sha256 {got}, not the provisioned {name}'s {sha256}; delete the folder to provision DXC again",
                    validator.display()
                ));
            }
        }
    }
    // SAFETY: loading runs dxil.dll's initialisers: it is the validator shipped beside the DXC
    // library the user chose or shrec provisioned (and checked above).
    let module = unsafe { libloading::Library::new(&validator) }.map_err(|e| format!("loading {}: {e}", validator.display()))?;
    std::mem::forget(module);
    Ok(())
}

/// Elsewhere DXC finds its validator (`libdxil.so`) by itself, if there is one.
#[cfg(not(windows))]
pub(crate) fn preload_validator(_library: &Path) -> Result<(), String> {
    Ok(())
}

struct ThreadCompiler {
    // Field order matters: the COM objects are released before the library handle.
    compiler: DxcCompiler,
    library: DxcLibrary,
    _dxc: Arc<Dxc>,
}

thread_local! {
    static COMPILERS: RefCell<HashMap<PathBuf, ThreadCompiler>> = RefCell::new(HashMap::new());
}

/// Drops the calling thread's compiler objects (the next compilation on this thread creates new
/// ones). A build calls it on each worker thread when its work is done, so that no COM object
/// is released by a thread-local destructor while the process is exiting (see `build::run`).
pub fn release_thread_compilers() {
    // `try_with`: a thread already tearing down its thread-locals has nothing left to release.
    let _ = COMPILERS.try_with(|cell| cell.borrow_mut().clear());
}

/// DXC's diagnostics as text for logs: its error blob ends in a NUL byte (C string), which made
/// `grep` treat CI logs and JSON reports as binary; NULs go, surrounding white space too.
fn diagnostics_text(raw: &str) -> String {
    raw.replace('\0', "").trim().to_string()
}

/// Test hook (`scripts/windows-wine-check.sh`): with `SHREC_TEST_KEEP_ZERO_DXIL_HASH=1` shrec
/// leaves a zero DXIL hash as DXC returned it, so that a cache whose every hash is non-zero
/// proves that DXC's validator signed every container (shrec's own hash would be the same
/// bytes, if `dxil_hash` is right).
/// Only with the `test-hooks` feature, like the other `SHREC_TEST_*` hooks: a release binary
/// always fills a zero hash.
fn keep_zero_dxil_hash() -> bool {
    #[cfg(feature = "test-hooks")]
    {
        static KEEP: OnceLock<bool> = OnceLock::new();
        *KEEP.get_or_init(|| std::env::var_os("SHREC_TEST_KEEP_ZERO_DXIL_HASH").is_some_and(|v| v == "1"))
    }
    #[cfg(not(feature = "test-hooks"))]
    false
}

/// Compiles HLSL with the calling thread's compiler instance. DXIL output gets its container
/// hash filled when DXC left it zero (no validator beside it). Errors carry DXC's diagnostics.
pub fn compile(lib: &DxcLib, hlsl: &str, stage: Stage, target: Target) -> Result<Vec<u8>, CompileError> {
    compile_with_spec_constants(lib, hlsl, stage, target, 0)
}

/// As [`compile`], for a shader whose translation reads the specialization constants of
/// `spec_constants_mask` (its profile is [`target_profile`]).
pub fn compile_with_spec_constants(
    lib: &DxcLib,
    hlsl: &str,
    stage: Stage,
    target: Target,
    spec_constants_mask: u32,
) -> Result<Vec<u8>, CompileError> {
    compile_with_args(lib, hlsl, stage, target, spec_constants_mask, &[])
}

/// As [`compile_with_spec_constants`], with arguments a project adds after shrec's own
/// (`shrec build --dxc-arg`).
pub fn compile_with_args(
    lib: &DxcLib,
    hlsl: &str,
    stage: Stage,
    target: Target,
    spec_constants_mask: u32,
    extra: &[String],
) -> Result<Vec<u8>, CompileError> {
    // a text that needs a later shader model says so (`// shrec: shader-model = 6_8`)
    let model = crate::hlsl::declared_shader_model(hlsl).map_err(|e| CompileError::Rejected(format!("{SOURCE_NAME}: {e}")))?;
    let target_profile = target_profile_for_model(stage, target, spec_constants_mask, model);
    let (entry_point, extra) = split_entry_point(extra);
    COMPILERS.with(|cell| {
        let mut map = cell.borrow_mut();
        if !map.contains_key(&lib.path) {
            let dxc = shared_library(&lib.path).map_err(CompileError::Library)?;
            let compiler = dxc.create_compiler().map_err(|e| CompileError::Library(format!("creating a DXC compiler: {e}")))?;
            let library = dxc.create_library().map_err(|e| CompileError::Library(format!("creating a DXC library: {e}")))?;
            map.insert(lib.path.clone(), ThreadCompiler { compiler, library, _dxc: dxc });
        }
        let tc = &map[&lib.path];
        let blob = tc.library.create_blob_with_encoding_from_str(hlsl).map_err(|e| CompileError::Library(format!("DXC blob: {e}")))?;
        let mut includes = PreludeIncludes;
        let mut args = args(stage, target);
        // DXC's SPIR-V validator refuses the depth-compare placeholders (a non-semantic
        // instruction's result in arithmetic); `dref::rewrite` below replaces them, and the
        // tests validate what it gives with spirv-val
        let placeholders = target == Target::Spirv && hlsl.contains(dref::PLACEHOLDER_SET);
        if placeholders {
            args.push("-Vd");
        }
        args.extend(extra.iter().map(String::as_str));
        let result = tc.compiler.compile(&blob, SOURCE_NAME, entry_point, &target_profile, &args, Some(&mut includes), &[]);
        match result {
            Ok(r) => {
                let out = r.get_result().map_err(|e| CompileError::Output(format!("DXC result: {e}")))?;
                let mut bytes: Vec<u8> = out.to_vec();
                if target == Target::Dxil {
                    // A validator beside DXC (dxil.dll, libdxil.so) signs the container; without
                    // one the hash is zero and shrec fills it. A hash the validator wrote is kept
                    // as it is, so the cache holds exactly what Microsoft's validator signed (and
                    // the Windows CI step can check `dxil_hash` against it).
                    use crate::pack::dxil_hash::{HASHED_FROM, HASH_OFFSET};
                    let unsigned = bytes.get(HASH_OFFSET..HASHED_FROM).is_none_or(|h| h.iter().all(|&b| b == 0));
                    if unsigned && !keep_zero_dxil_hash() {
                        crate::pack::dxil_hash::fill_hash(&mut bytes).map_err(|e| CompileError::Output(format!("DXIL container from DXC: {e}")))?;
                    }
                } else if !bytes.len().is_multiple_of(4) || bytes.get(..4) != Some(&[0x03, 0x02, 0x23, 0x07]) {
                    return Err(CompileError::Output(format!("DXC returned {} bytes that are not a SPIR-V module", bytes.len())));
                } else {
                    if placeholders {
                        bytes = dref::rewrite(&bytes).map_err(|e| CompileError::Output(e.to_string()))?;
                    }
                    // stream-out outputs: the decorations DXC cannot write (`xfb`)
                    let decls = crate::hlsl::declared_xfb(hlsl).map_err(|e| CompileError::Rejected(format!("{SOURCE_NAME}: {e}")))?;
                    bytes = xfb::decorate(&bytes, &decls).map_err(|e| CompileError::Output(e.to_string()))?;
                }
                Ok(bytes)
            }
            Err((r, hr)) => {
                let text = r.get_error_buffer().ok().and_then(|b| tc.library.get_blob_as_string(&b.into()).ok()).unwrap_or_default();
                let text = diagnostics_text(&text);
                Err(CompileError::Rejected(if text.is_empty() { format!("DXC failed (HRESULT {hr:?}) without diagnostics") } else { text }))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    /// Issue 23 S2: a provisioned library that is not the checked one is refused before it is
    /// loaded (a planted library's constructor would otherwise run), and with HOME and
    /// XDG_CACHE_HOME unset the cache is a private folder, not a shared one.
    #[test]
    fn planted_library_is_refused_and_fallback_is_private() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("shrec-s2-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let lib = dir.join("shrec").join("dxc").join(super::provision::DIR).join(super::provision::LIBRARY_NAME);
        std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
        std::fs::write(&lib, b"\x7fELF planted").unwrap();
        // the only test in this crate that touches these variables
        std::env::set_var("XDG_CACHE_HOME", &dir);
        let r = super::locate(&super::LocateOptions { offline: true, ..Default::default() });
        // a second run (its hashes now stamped) is refused as well, and so is a replacement
        let again = super::locate(&super::LocateOptions { offline: true, ..Default::default() });
        std::fs::write(lib.with_extension("new"), b"\x7fELF planted again").unwrap();
        std::fs::rename(lib.with_extension("new"), &lib).unwrap();
        let replaced = super::locate(&super::LocateOptions { offline: true, ..Default::default() });
        let saved_home = std::env::var_os("HOME");
        std::env::remove_var("XDG_CACHE_HOME");
        std::env::remove_var("HOME");
        let fallback = super::user_cache_dir();
        if let Some(h) = saved_home {
            std::env::set_var("HOME", h);
        }
        let _ = std::fs::remove_dir_all(&dir);
        let e = r.expect_err("a planted library must not be accepted").to_string();
        assert!(e.contains("sha256"), "{e}");
        assert_eq!(again.expect_err("nor on the second run").to_string(), e);
        let e2 = replaced.expect_err("nor a replaced one").to_string();
        assert!(e2.contains("sha256") && e2 != e, "hashed again: {e2}");
        let m = std::fs::symlink_metadata(&fallback).unwrap();
        assert!(m.is_dir() && m.mode() & 0o077 == 0, "{} mode {:o}", fallback.display(), m.mode());
        // SAFETY: geteuid has no preconditions.
        assert_eq!(m.uid(), unsafe { libc::geteuid() });
    }

    /// This OS's provisioning pins are whole: sha256 values of 64 hex digits, the wheel of the
    /// pinned package for the pinned platform, the library under the name `--dxc` documents.
    #[test]
    fn provisioning_pins_are_whole() {
        use super::provision as p;
        let hex64 = |h: &str| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        if p::AVAILABLE {
            assert!(hex64(p::WHEEL_SHA256) && hex64(p::LIBRARY_SHA256));
            assert!(p::EXTRA.iter().all(|e| hex64(e.2) && e.0.ends_with(e.1)));
            let (name, version) = p::PACKAGE.split_once("==").unwrap();
            assert!(p::WHEEL.starts_with(&format!("{}-{version}-", name.replace('-', "_"))), "{}", p::WHEEL);
            assert!(p::WHEEL.contains(p::PLATFORM) && p::WHEEL.ends_with(".whl"), "{}", p::WHEEL);
        }
        assert!(super::provisioned_path().ends_with(p::LIBRARY_NAME));
        assert!(super::DxcError::Offline.to_string().contains(p::LIBRARY_NAME));
    }

    /// Issue 24: the library's hashes are kept in a stamp (device, inode, size, mtime, ctime,
    /// sha256, XXH3) so a second run does not read 35 MB again; a rewritten or replaced file has
    /// another key and is hashed again, and a stamp of another version is never taken for it.
    #[test]
    fn verified_identity_is_cached_until_the_library_changes() {
        let dir = std::env::temp_dir().join(format!("shrec-stamp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (lib, stamps) = (dir.join("libdxcompiler.so"), dir.join("stamps"));
        std::fs::write(&lib, b"first version of the library").unwrap();
        let want = super::hash_file(&lib).unwrap();
        assert_eq!(want.identity, xxhash_rust::xxh3::xxh3_64(b"first version of the library"));
        let (h, cached) = super::hashes_with_stamp(&lib, &stamps).unwrap();
        assert_eq!((h.clone(), cached), (want.clone(), false), "first run hashes");
        let (h, cached) = super::hashes_with_stamp(&lib, &stamps).unwrap();
        assert_eq!((h, cached), (want.clone(), true), "second run uses the stamp");
        // a stamp that lies about the hashes of this very version is believed (it is as private
        // as the library): proves the second run did not read the file
        let stamp = std::fs::read_dir(&stamps).unwrap().next().unwrap().unwrap().path();
        let forged = std::fs::read_to_string(&stamp).unwrap().replace(&want.sha256, &"0".repeat(64));
        std::fs::write(&stamp, forged).unwrap();
        assert_eq!(super::hashes_with_stamp(&lib, &stamps).unwrap().0.sha256, "0".repeat(64));
        // rewritten in place, same size: new mtime / ctime, hashed again
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&lib, b"other version of the library").unwrap();
        let (h, cached) = super::hashes_with_stamp(&lib, &stamps).unwrap();
        assert!(!cached);
        assert_eq!(h, super::hash_file(&lib).unwrap());
        assert_ne!(h.sha256, want.sha256);
        // replaced by another file (rename: new inode), even with the first content: hashed again
        let other = dir.join("planted");
        std::fs::write(&other, b"first version of the library").unwrap();
        std::fs::rename(&other, &lib).unwrap();
        let (h, cached) = super::hashes_with_stamp(&lib, &stamps).unwrap();
        assert_eq!((h, cached), (want, false));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn diagnostics_lose_their_nul_bytes() {
        assert_eq!(super::diagnostics_text("shader.hlsl:3:1: error: x\n\0"), "shader.hlsl:3:1: error: x");
        assert!(!super::diagnostics_text("a\0b\0").contains('\0'));
    }
}
