//! Where shrec looks for the DXC library it provisions, and what it loads from there. A planted
//! library is a shared object whose constructor runs as soon as it is loaded: these tests plant
//! one that leaves a marker file, with a forged "already verified" stamp beside it, and check
//! that no build ever loads it.

use crate::common;

use common::{repo, tmpdir};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The uid / gid of the "other local user" (nobody).
const OTHER: u32 = 65534;

/// Builds a shared object whose constructor creates `marker`, as a planted library would run
/// its own code inside shrec.
fn planted_library(dir: &Path, marker: &Path) -> PathBuf {
    assert!(common::have_tool("cc"));
    let src = dir.join("planted.c");
    let marker = marker.to_str().unwrap();
    std::fs::write(
        &src,
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void planted(void) {{\n  FILE *f = fopen(\"{marker}\", \"w\");\n  if (f) {{ fputs(\"loaded\", f); fclose(f); }}\n}}\nint DxcCreateInstance(void) {{ return 1; }}\n"
        ),
    )
    .unwrap();
    let so = dir.join("libplanted.so");
    common::run(Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&so).arg(&src));
    so
}

/// A stamp saying that `lib` (as it is now) has the provisioned library's sha256, in the format
/// shrec writes: its file name is the XXH3 of the library's real path.
fn forged_stamp(lib: &Path) -> (String, String) {
    let abs = std::fs::canonicalize(lib).unwrap();
    let m = std::fs::metadata(&abs).unwrap();
    let ns = |s: i64, n: i64| (s as u64).wrapping_mul(1_000_000_000).wrapping_add(n as u64);
    let text = format!(
        "shrec-dxc-stamp 1 {} {} {} {} {} {} {:016x} {}\n",
        m.dev(),
        m.ino(),
        m.size(),
        ns(m.mtime(), m.mtime_nsec()),
        ns(m.ctime(), m.ctime_nsec()),
        shrec::dxc::provision::LIBRARY_SHA256,
        0x1234u64,
        abs.display()
    );
    (format!("{:016x}", xxhash_rust::xxh3::xxh3_64(abs.as_os_str().as_encoded_bytes())), text)
}

fn shrec_build(out: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shrec"));
    c.arg("build").arg(repo().join("tests/corpus/agal")).arg("-o").arg(out).args(["--no-cache", "-q", "--offline"]);
    c.env_remove("SHREC_DXC");
    c
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// With HOME and XDG_CACHE_HOME unset the cache is a folder of the temp dir. Another user who
/// made every folder name shrec tries there first (`shrec-cache-<uid>`, `-1` … `-99`, and the
/// one of the build's pid), each holding a link to their library and a stamp saying it was
/// verified, gets nothing loaded: shrec makes a folder of its own. Run with two uids when this
/// test runs as root (the other user is `nobody`, by `setuid` in the child), else with the
/// folders made by this user but open to others (which is what an owner check sees).
#[test]
fn folders_and_stamps_of_another_user_are_never_used() {
    let base = tmpdir("dxc-prov-other-user");
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let marker = base.join("victim-loaded-the-planted-library");
    let theirs = base.join("attacker");
    std::fs::create_dir(&theirs).unwrap();
    let so = planted_library(&theirs, &marker);
    let two_uids = is_root();
    if two_uids {
        for p in [&theirs, &so] {
            std::os::unix::fs::chown(p, Some(OTHER), Some(OTHER)).unwrap();
        }
    }
    let (stamp_name, stamp) = forged_stamp(&so);
    std::fs::write(theirs.join("stamp"), stamp).unwrap();

    // The build waits on its standard input until the other user has made the folders,
    // including the one named after its pid (the shell's pid is the build's after `exec`).
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let out = base.join("victim-out");
    std::fs::create_dir(&out).unwrap();
    let build = shrec_build(&out.join("cache.cpp"));
    let mut victim = Command::new("sh");
    victim.arg("-c").arg("read _ && exec \"$0\" \"$@\"").arg(build.get_program()).args(build.get_args());
    victim.env_remove("HOME").env_remove("XDG_CACHE_HOME").env_remove("SHREC_DXC").env("TMPDIR", &base);
    let mut child = victim.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let names: Vec<String> = (0..100)
        .map(|k| if k == 0 { format!("shrec-cache-{uid}") } else { format!("shrec-cache-{uid}-{k}") })
        .chain([format!("shrec-cache-{uid}-{}", child.id())])
        .collect();
    let script = format!(
        "set -e\nfor d in {}; do\n  mkdir -m 755 \"$d\" \"$d/dxc\" \"$d/dxc/{dir}\" \"$d/dxc/verified\"\n  ln -s '{so}' \"$d/dxc/{dir}/{lib}\"\n  cp '{stamp}' \"$d/dxc/verified/{stamp_name}\"\ndone\n",
        names.join(" "),
        dir = shrec::dxc::provision::DIR,
        lib = shrec::dxc::provision::LIBRARY_NAME,
        so = so.display(),
        stamp = theirs.join("stamp").display(),
    );
    let mut attacker = Command::new("sh");
    attacker.arg("-c").arg(script).current_dir(&base);
    if two_uids {
        use std::os::unix::process::CommandExt;
        attacker.uid(OTHER).gid(OTHER);
    }
    let made = attacker.output().unwrap();
    assert!(made.status.success(), "the other user's setup failed: {}", String::from_utf8_lossy(&made.stderr));
    if two_uids {
        assert_eq!(std::fs::metadata(base.join(&names[0])).unwrap().uid(), OTHER);
    }
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!marker.exists(), "the other user's library was loaded (its constructor ran); stderr:\n{stderr}");
    // Nothing provisioned (offline) in a folder of its own: DXC is simply not found.
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("provisioning is disabled"), "{stderr}");
    let own: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("shrec-cache-") && !names.iter().any(|n| p.ends_with(n)))
        .collect();
    assert_eq!(own.len(), 1, "one folder of its own: {own:?}");
    let m = std::fs::symlink_metadata(&own[0]).unwrap();
    assert!(m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0, "{} mode {:o} uid {}", own[0].display(), m.mode(), m.uid());
    let _ = std::fs::remove_dir_all(&base);
}

/// A stamp in the user's own cache saying the library beside it was verified does not stand in
/// for the sha256 check: the bytes loaded are hashed, and a planted library is refused before
/// it is loaded.
#[test]
fn a_forged_verified_stamp_does_not_let_a_library_load() {
    let dir = tmpdir("dxc-prov-forged-stamp");
    let marker = dir.join("planted-library-loaded");
    let so = planted_library(&dir, &marker);
    let cache = dir.join("xdg");
    let lib_dir = cache.join("shrec/dxc").join(shrec::dxc::provision::DIR);
    std::fs::create_dir_all(&lib_dir).unwrap();
    let lib = lib_dir.join(shrec::dxc::provision::LIBRARY_NAME);
    std::fs::copy(&so, &lib).unwrap();
    let (stamp_name, stamp) = forged_stamp(&lib);
    std::fs::create_dir_all(cache.join("shrec/dxc/verified")).unwrap();
    std::fs::write(cache.join("shrec/dxc/verified").join(stamp_name), stamp).unwrap();
    let o = shrec_build(&dir.join("out/cache.cpp")).env("XDG_CACHE_HOME", &cache).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!marker.exists(), "the planted library was loaded (its constructor ran); stderr:\n{stderr}");
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is not the provisioned library's"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
