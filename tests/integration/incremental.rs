//! The incremental artifact store: round trips, every kind of damaged entry as a miss with its
//! reason, concurrent writers, and failed writes that leave nothing behind.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shrec::cache::incremental::{ArtifactKey, Artifacts, Lookup, MissReason, Store, FORMAT_VERSION, HEADER_LEN, MAGIC};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shrec-inc-{}-{}", name, std::process::id()));
    let _ = fs::remove_dir_all(&d);
    d
}

fn key(i: u64) -> ArtifactKey {
    ArtifactKey::derive(&[b"shader", &i.to_le_bytes(), b"shrec 0.1.0", b"dxc 1.8", b"-T ps_6_0"])
}

fn artifacts(i: u64) -> Artifacts {
    let bytes = |n: u64, salt: u8| (0..n).map(|j| (j as u8).wrapping_mul(31).wrapping_add(salt)).collect::<Vec<u8>>();
    Artifacts {
        dxil: (!i.is_multiple_of(3)).then(|| bytes(100 + i * 7, i as u8)),
        spirv: (i % 4 != 1).then(|| bytes(4 * (20 + i), 3 + i as u8)),
        meta: (0..(i % 5) as u32).map(|w| w * 0x01010101 + i as u32).collect(),
        spec_constants_mask: (i % 7) as u32,
        hlsl_len: 1000 + i as u32,
    }
}

/// Every file under `dir` (recursively), relative names.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in walk(dir) {
        out.push(e.strip_prefix(dir).unwrap().display().to_string());
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else {
            v.push(p);
        }
    }
    v
}

#[test]
fn put_get_round_trip() {
    let dir = tmpdir("roundtrip");
    let store = Store::open(&dir).unwrap();
    assert_eq!(store.get(&key(1)), None);
    for i in 0..12 {
        store.put(&key(i), &artifacts(i)).unwrap();
    }
    for i in 0..12 {
        assert_eq!(store.get(&key(i)), Some(artifacts(i)), "artifact {i}");
    }
    // Present-but-empty backends stay distinct from absent ones.
    let empty = Artifacts { dxil: Some(Vec::new()), spirv: None, ..Default::default() };
    store.put(&key(100), &empty).unwrap();
    assert_eq!(store.get(&key(100)), Some(empty));

    // Layout: dir/ab/ab....bin, 32 hex digits.
    let hex = key(3).to_hex();
    assert_eq!(store.path_of(&key(3)), dir.join(&hex[..2]).join(format!("{hex}.bin")));
    assert!(store.path_of(&key(3)).is_file());
    let stats = store.stats();
    assert_eq!((stats.hits, stats.misses, stats.problems, stats.writes), (13, 1, 0, 13));
    assert!(store.take_problems().is_empty());

    // Reopening sees the same entries.
    drop(store);
    let store = Store::open(&dir).unwrap();
    assert_eq!(store.get(&key(7)), Some(artifacts(7)));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn derive_separates_parts() {
    assert_ne!(ArtifactKey::derive(&[b"ab", b"c"]), ArtifactKey::derive(&[b"a", b"bc"]));
    assert_ne!(key(1), key(2));
    assert_eq!(key(1), key(1));
    assert_eq!(key(1).to_hex(), format!("{:032x}", key(1).0));
}

/// Puts artifact 5, damages its file with `damage`, and returns what lookup says.
fn damaged(name: &str, damage: impl FnOnce(&Path)) -> (MissReason, Store, PathBuf) {
    let dir = tmpdir(name);
    let store = Store::open(&dir).unwrap();
    store.put(&key(5), &artifacts(5)).unwrap();
    let path = store.path_of(&key(5));
    damage(&path);
    match store.lookup(&key(5)) {
        Lookup::Miss(reason) => (reason, store, dir),
        Lookup::Hit(_) => panic!("{name}: damaged entry was used"),
    }
}

fn edit(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = fs::read(path).unwrap();
    f(&mut b);
    fs::write(path, b).unwrap();
}

#[test]
fn corrupt_byte_is_a_miss_with_reason_then_rebuilt() {
    let (reason, store, dir) = damaged("corrupt", |p| edit(p, |b| b[HEADER_LEN + 40] ^= 0x10));
    assert_eq!(reason, MissReason::ChecksumMismatch);
    // get() records the problem for the build to print.
    assert_eq!(store.get(&key(5)), None);
    let problems = store.take_problems();
    assert_eq!(problems.len(), 1);
    let msg = problems[0].to_string();
    assert_eq!(msg, format!("cache entry {} corrupt (checksum mismatch), rebuilding", store.path_of(&key(5)).display()));
    assert!(store.take_problems().is_empty());
    assert_eq!(store.stats().problems, 2);
    // The next put replaces the damaged entry.
    store.put(&key(5), &artifacts(5)).unwrap();
    assert_eq!(store.get(&key(5)), Some(artifacts(5)));
    // Damage in the header's checksum field is caught too.
    edit(&store.path_of(&key(5)), |b| b[30] ^= 1);
    assert_eq!(store.lookup(&key(5)), Lookup::Miss(MissReason::ChecksumMismatch));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn truncated_entry_is_a_miss() {
    let mut full = 0;
    let (reason, _s, dir) = damaged("truncated", |p| {
        edit(p, |b| {
            full = b.len();
            b.truncate(b.len() - 9)
        })
    });
    assert_eq!(reason, MissReason::Truncated { expected: full as u64, actual: full as u64 - 9 });
    assert!(reason.to_string().starts_with("corrupt (truncated"));
    fs::remove_dir_all(&dir).unwrap();

    for n in [0, 5, HEADER_LEN - 1, HEADER_LEN] {
        let (reason, _s, dir) = damaged("truncated-short", |p| edit(p, |b| b.truncate(n)));
        assert!(matches!(reason, MissReason::Truncated { actual, .. } if actual == n as u64), "{n}: {reason:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    let (reason, _s, dir) = damaged("trailing", |p| edit(p, |b| b.push(0)));
    assert!(matches!(reason, MissReason::TrailingBytes { .. }), "{reason:?}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn wrong_version_and_foreign_files_are_misses() {
    let (reason, _s, dir) = damaged("version", |p| edit(p, |b| b[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes())));
    assert_eq!(reason, MissReason::WrongVersion { found: FORMAT_VERSION + 1 });
    fs::remove_dir_all(&dir).unwrap();

    let (reason, _s, dir) = damaged("magic", |p| fs::write(p, b"#!/bin/sh\necho not an artifact file\n").unwrap());
    assert_eq!(reason, MissReason::BadMagic);
    fs::remove_dir_all(&dir).unwrap();

    // A valid file copied under another key's name is not used for that key.
    let dir = tmpdir("wrong-key");
    let store = Store::open(&dir).unwrap();
    store.put(&key(1), &artifacts(1)).unwrap();
    let other = store.path_of(&key(2));
    fs::create_dir_all(other.parent().unwrap()).unwrap();
    fs::copy(store.path_of(&key(1)), &other).unwrap();
    assert!(matches!(store.lookup(&key(2)), Lookup::Miss(MissReason::Malformed(_))));
    assert_eq!(&fs::read(&other).unwrap()[..8], &MAGIC);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unreadable_entry_is_a_miss() {
    // A directory where the file should be: reading fails (even as root).
    let (reason, store, dir) = damaged("unreadable", |p| {
        fs::remove_file(p).unwrap();
        fs::create_dir(p).unwrap();
    });
    assert!(matches!(reason, MissReason::Unreadable(_)), "{reason:?}");
    assert_eq!(store.get(&key(5)), None);
    assert!(store.take_problems()[0].to_string().contains("unreadable"));
    // And put cannot replace a directory: an error naming the path, no panic.
    let err = store.put(&key(5), &artifacts(5)).unwrap_err();
    assert!(err.to_string().contains(&store.path_of(&key(5)).display().to_string()), "{err}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn concurrent_puts_from_eight_threads() {
    let dir = tmpdir("concurrent");
    let store = Arc::new(Store::open(&dir).unwrap());
    // Keys 0..40 are written by every thread (same content), keys 1000+ by one thread each.
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let store = &store;
            s.spawn(move || {
                for round in 0..3 {
                    for i in 0..40 {
                        store.put(&key(i), &artifacts(i)).unwrap();
                    }
                    for i in 0..20 {
                        let k = 1000 + t * 100 + i;
                        store.put(&key(k), &artifacts(k + round)).unwrap();
                    }
                }
            });
        }
        // A reader racing the writers sees complete entries or nothing, never damage.
        let store = &store;
        s.spawn(move || {
            for _ in 0..20 {
                for i in 0..40 {
                    match store.lookup(&key(i)) {
                        Lookup::Hit(a) => assert_eq!(a, artifacts(i)),
                        Lookup::Miss(r) => assert_eq!(r, MissReason::Absent),
                    }
                }
            }
        });
    });
    for i in 0..40 {
        assert_eq!(store.get(&key(i)), Some(artifacts(i)));
    }
    for t in 0..8u64 {
        for i in 0..20 {
            let k = 1000 + t * 100 + i;
            assert_eq!(store.get(&key(k)), Some(artifacts(k + 2)));
        }
    }
    assert!(store.take_problems().is_empty());
    assert_eq!(store.stats().writes, 8 * 3 * 60);
    // No temporary file survives.
    let names = files(&dir);
    assert!(names.iter().all(|n| n == "CACHEDIR.TAG" || n.ends_with(".bin") && !n.contains("/.")), "{names:?}");
    assert_eq!(names.len(), 1 + 40 + 160);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failed_write_leaves_no_partial_file() {
    let dir = tmpdir("killed");
    let store = Store::open(&dir).unwrap();

    // A new key: the write dies halfway, nothing appears under the final name.
    store.inject_write_failure(Some(40));
    let err = store.put(&key(1), &artifacts(1)).unwrap_err();
    assert!(err.to_string().contains(&store.path_of(&key(1)).display().to_string()), "{err}");
    assert!(!store.path_of(&key(1)).exists());
    assert_eq!(store.lookup(&key(1)), Lookup::Miss(MissReason::Absent));

    // An existing key: the previous complete entry survives a failed overwrite.
    store.inject_write_failure(None);
    store.put(&key(2), &artifacts(2)).unwrap();
    store.inject_write_failure(Some(HEADER_LEN as u64 + 3));
    assert!(store.put(&key(2), &artifacts(9)).is_err());
    assert_eq!(store.get(&key(2)), Some(artifacts(2)));

    // A write that fails after writing everything but before the rename is also invisible.
    let full_len = fs::metadata(store.path_of(&key(2))).unwrap().len();
    store.inject_write_failure(Some(full_len - 1));
    assert!(store.put(&key(3), &artifacts(2)).is_err());
    assert!(!store.path_of(&key(3)).exists());

    let names = files(&dir);
    let mut expected = vec!["CACHEDIR.TAG".to_string(), format!("{}/{}.bin", &key(2).to_hex()[..2], key(2).to_hex())];
    expected.sort();
    assert_eq!(names, expected, "temporary files left behind");
    assert!(store.take_problems().is_empty());
    fs::remove_dir_all(&dir).unwrap();
}

/// Issue 23 B12: an entry replaced by a FIFO (reading it used to block forever) or by a link to
/// /dev/zero (read until memory ran out) is a damaged entry: a miss, recorded, then rewritten.
#[test]
fn special_files_planted_as_entries_are_misses_not_hangs() {
    let dir = tmpdir("incremental-special");
    let store = Store::open(&dir).unwrap();
    for i in 0..2u64 {
        store.put(&key(i), &artifacts(i)).unwrap();
    }
    let fifo = store.path_of(&key(0));
    std::fs::remove_file(&fifo).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
    let zero = store.path_of(&key(1));
    std::fs::remove_file(&zero).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    for i in [0u64, 1] {
        if i == 0 && !made {
            continue;
        }
        assert!(store.get(&key(i)).is_none(), "entry {i}");
        store.put(&key(i), &artifacts(i)).unwrap();
        assert_eq!(store.get(&key(i)), Some(artifacts(i)), "entry {i} rewritten as a regular file");
    }
    assert!(store.take_problems().iter().all(|p| p.to_string().contains("not a regular file")));
    std::fs::remove_dir_all(&dir).unwrap();
}
