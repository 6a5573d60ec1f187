//! Ground truth for the DXBC/DXIL container hash: real containers whose hash was filled on Windows by
//! fxc or by DXC + dxil.dll (see tests/fixtures/dxbc/SOURCES.md).

use std::path::{Path, PathBuf};

use shrec::pack::dxil_hash::{container_hash, fill_hash, hash_is_valid, DxilHashError};

/// How many fixture containers SOURCES.md lists. The test fails if the folder holds a different number,
/// so an empty or partly missing folder cannot pass silently.
const EXPECTED_FIXTURES: usize = 3;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dxbc")
}

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = fixture_dir();
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "dxbc"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()));
            (name, bytes)
        })
        .collect();
    out.sort();
    out
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Four-character codes of the container's parts.
fn part_tags(c: &[u8]) -> Vec<[u8; 4]> {
    let count = le_u32(c, 28) as usize;
    (0..count)
        .map(|i| {
            let off = le_u32(c, 32 + 4 * i) as usize;
            c[off..off + 4].try_into().unwrap()
        })
        .collect()
}

#[test]
fn fixtures_are_real_signed_containers() {
    let all = fixtures();
    assert_eq!(
        all.len(),
        EXPECTED_FIXTURES,
        "expected {EXPECTED_FIXTURES} *.dxbc fixtures in {}, found {:?}",
        fixture_dir().display(),
        all.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for (name, c) in &all {
        assert_eq!(&c[..4], b"DXBC", "{name}: magic");
        assert_eq!(le_u32(c, 24) as usize, c.len(), "{name}: size field");
        assert!(c[4..20].iter().any(|&b| b != 0), "{name}: stored hash is zero, not a signed container");
    }
    let with_dxil = all.iter().filter(|(_, c)| part_tags(c).contains(b"DXIL")).count();
    assert!(with_dxil >= 1, "at least one fixture must be a DXIL container");
}

#[test]
fn recomputed_hash_equals_stored_hash() {
    let all = fixtures();
    let mut checked = 0;
    for (name, c) in &all {
        let hash = container_hash(c).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(hash.as_slice(), &c[4..20], "{name}: recomputed hash differs from the stored one");
        assert!(hash_is_valid(c), "{name}: hash_is_valid");
        checked += 1;
    }
    assert_eq!(checked, EXPECTED_FIXTURES, "number of fixtures checked");
}

#[test]
fn flipping_any_hashed_byte_changes_the_hash() {
    let all = fixtures();
    assert_eq!(all.len(), EXPECTED_FIXTURES);
    for (name, c) in &all {
        let original = container_hash(c).unwrap();
        // First hashed byte, one in the middle, the last byte.
        for at in [20, 20 + (c.len() - 20) / 2, c.len() - 1] {
            let mut m = c.clone();
            m[at] ^= 0x01;
            let changed = container_hash(&m).unwrap();
            assert_ne!(changed, original, "{name}: flipping byte {at} left the hash unchanged");
            assert!(!hash_is_valid(&m), "{name}: corrupted byte {at} still validates");
        }
        // Bytes 4..20 are the hash itself and are not hashed.
        let mut m = c.clone();
        m[10] ^= 0xff;
        assert_eq!(container_hash(&m).unwrap(), original, "{name}: the hash field must not be hashed");
        assert!(!hash_is_valid(&m));
    }
}

#[test]
fn fill_hash_restores_zeroed_hash() {
    let all = fixtures();
    let mut restored = 0;
    for (name, c) in &all {
        let mut m = c.clone();
        m[4..20].fill(0);
        assert!(!hash_is_valid(&m), "{name}: zeroed hash must not validate");
        fill_hash(&mut m).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&m, c, "{name}: fill_hash did not restore the original bytes");
        restored += 1;
    }
    assert_eq!(restored, EXPECTED_FIXTURES);
}

#[test]
fn fill_hash_rejects_with_clear_errors() {
    let (_, c) = fixtures().into_iter().next().expect("a fixture");

    let mut padded = c.clone();
    padded.extend_from_slice(&[0; 4]);
    let err = fill_hash(&mut padded).unwrap_err();
    assert!(matches!(err, DxilHashError::SizeMismatch { header, buffer } if header as usize == c.len() && buffer == c.len() + 4), "{err:?}");
    assert!(err.to_string().contains("header says"), "{err}");
    assert_eq!(&padded[4..20], &c[4..20], "a rejected fill_hash must not write");

    let mut truncated = c[..c.len() - 1].to_vec();
    assert!(matches!(fill_hash(&mut truncated), Err(DxilHashError::SizeMismatch { .. })));
    assert!(!hash_is_valid(&truncated));

    let mut spirv = c.clone();
    spirv[..4].copy_from_slice(&0x0723_0203u32.to_le_bytes());
    let err = fill_hash(&mut spirv).unwrap_err();
    assert!(matches!(err, DxilHashError::BadMagic { .. }), "{err:?}");
    assert!(err.to_string().contains("not a DXBC/DXIL container"), "{err}");

    let mut short = b"DXBC\0\0\0\0".to_vec();
    assert!(matches!(fill_hash(&mut short), Err(DxilHashError::TooShort { len: 8 })));
    assert!(matches!(container_hash(&[]), Err(DxilHashError::TooShort { len: 0 })));
    assert!(!hash_is_valid(&[]));
}

#[test]
fn no_panic_on_truncated_or_damaged_fixtures() {
    for (_, c) in fixtures() {
        for n in (0..=c.len()).step_by(7).chain([c.len() - 1, c.len()]) {
            let mut prefix = c[..n].to_vec();
            let _ = container_hash(&prefix);
            let _ = hash_is_valid(&prefix);
            let _ = fill_hash(&mut prefix);
        }
        // A size field claiming far more than is there.
        let mut lying = c.clone();
        lying[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(!hash_is_valid(&lying));
        assert!(matches!(fill_hash(&mut lying), Err(DxilHashError::SizeMismatch { .. })));
    }
}
