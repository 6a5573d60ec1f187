//! The scan index (`shrec::scan::index`): a rebuild reads only the files that changed,
//! and gets the same scan as reading everything.

mod common;

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
