//! The scan index (`shrec::scan::index`): a rebuild reads only the files that changed,
//! and gets the same scan as reading everything.

use crate::common;

use common::{copy_tree, repo, tmpdir};
use shrec::scan::{scan_dir, scan_dir_incremental};
use std::fs;

#[test]
fn unchanged_files_are_not_read_again_and_changes_are_seen() {
    let dir = tmpdir("scan-index");
    let game = dir.join("game");
    copy_tree(&repo().join("tests/corpus"), &game);
    let index = dir.join("cache/scan/index.json");
    let full = scan_dir(&game);
    assert!(full.shaders.len() > 100);

    // First scan: everything read; the index makes the second one read nothing, same result.
    let (first, read) = scan_dir_incremental(&game, &index);
    assert_eq!(first, full);
    assert_eq!(read, full.files);
    let (second, read) = scan_dir_incremental(&game, &index);
    assert_eq!(second, full);
    assert_eq!(read, 0, "unchanged files were read again");

    // A file whose content changes is read again: append an AGAL program to a text file.
    let agal = full.shaders.iter().find(|s| s.family == shrec::Family::Agal).unwrap();
    let program = fs::read(&agal.path).unwrap()[agal.offset as usize..(agal.offset + agal.length) as usize].to_vec();
    let readme = game.join("agal/SOURCES.md");
    let mut text = fs::read(&readme).unwrap();
    text.extend_from_slice(&program);
    fs::write(&readme, &text).unwrap();
    let (third, read) = scan_dir_incremental(&game, &index);
    assert_eq!(read, 1);
    assert_eq!(third, scan_dir(&game));
    assert_eq!(third.shaders.len(), full.shaders.len() + 1);
    assert!(third.shaders.iter().any(|s| s.path == readme && s.key == agal.key));

    // Same size, same content length, different bytes: still seen (change time and mtime move).
    let victim = &full.shaders[0].path;
    let mut bytes = fs::read(victim).unwrap();
    bytes[0] ^= 0xFF;
    fs::write(victim, &bytes).unwrap();
    let (fourth, read) = scan_dir_incremental(&game, &index);
    assert_eq!(read, 1);
    assert_eq!(fourth, scan_dir(&game));

    // A deleted file disappears; a damaged or foreign index means a full scan, not a wrong one.
    fs::remove_file(&readme).unwrap();
    let (fifth, _) = scan_dir_incremental(&game, &index);
    assert_eq!(fifth, scan_dir(&game));
    for junk in [&b"{\"format\":\"shrec-scan-index-1\",\"shrec\":"[..], b"\0\0\0", b"{}"] {
        fs::write(&index, junk).unwrap();
        let (r, read) = scan_dir_incremental(&game, &index);
        assert_eq!(r, fifth);
        assert_eq!(read, fifth.files);
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// Issue 22 item 7: the counters the progress bar reads. The walk finds every file and its size
/// before the scan reads any; the bytes read grow to exactly that total, piece by piece (a file
/// larger than one piece, its shader at the end, is still found); a file the index lets the scan
/// skip counts at once.
#[test]
fn scan_progress_counts_every_byte_of_the_walk() {
    use shrec::scan::{scan_dir_observed, ScanProgress};
    use std::sync::atomic::Ordering::Relaxed;
    let dir = tmpdir("scan-progress");
    let game = dir.join("game");
    copy_tree(&repo().join("tests/corpus/xenos"), &game);
    let psu = walkdir::WalkDir::new(&game).into_iter().map(|e| e.unwrap().into_path()).find(|p| p.extension().is_some_and(|e| e == "psu")).unwrap();
    let mut big = vec![0u8; 9 << 20];
    big.extend(fs::read(&psu).unwrap());
    fs::write(game.join("big.bin"), &big).unwrap();
    let total: u64 =
        walkdir::WalkDir::new(&game).into_iter().map(|e| e.unwrap()).filter(|e| e.file_type().is_file()).map(|e| e.metadata().unwrap().len()).sum();

    let plain = scan_dir(&game);
    let progress = ScanProgress::default();
    let (observed, _) = scan_dir_observed(&game, None, &|_| {}, &progress);
    assert_eq!(observed, plain);
    assert!(observed.shaders.iter().any(|s| s.path.ends_with("big.bin") && s.offset == 9 << 20), "the shader after the first piece");
    assert!(progress.walk_done.load(Relaxed));
    assert_eq!(progress.files_found.load(Relaxed), plain.files);
    assert_eq!(progress.files_scanned.load(Relaxed), plain.files);
    assert_eq!(progress.bytes_found.load(Relaxed), total);
    assert_eq!(progress.bytes_scanned.load(Relaxed), total);

    let index = dir.join("index.json");
    scan_dir_incremental(&game, &index);
    let again = ScanProgress::default();
    let (_, read) = scan_dir_observed(&game, Some(&index), &|_| {}, &again);
    assert_eq!(read, 0);
    assert_eq!(again.bytes_scanned.load(Relaxed), total, "files the index skips count as done");
    fs::remove_dir_all(&dir).unwrap();
}
