//! The container hash of DXBC / DXIL containers.
//!
//! A DXIL container is a DXBC-style container:
//!
//! | offset | size | field                                   |
//! |--------|------|-----------------------------------------|
//! | 0      | 4    | magic `DXBC`                            |
//! | 4      | 16   | hash (this module computes it)          |
//! | 20     | 2+2  | version major, minor                    |
//! | 24     | 4    | total size in bytes (LE u32)            |
//! | 28     | 4    | part count (LE u32)                     |
//! | 32     | 4*n  | part offsets                            |
//!
//! On Windows, `dxil.dll` (the validator) signs DXIL output by filling the hash; on Linux there is no
//! `libdxil.so`, DXC leaves the hash zero and D3D12 rejects the shader. fxc-produced DXBC carries the
//! same checksum, so both formats are handled here.
//!
//! The checksum is MD5's compression function applied to the bytes `[20, len)` with a non-standard
//! final padding (as in DXC's `ComputeHashRetail`, and re-implemented by DXVK, vkd3d, RenderDoc, …):
//!
//! * Let `n` be the number of hashed bytes, `bits = (n * 8) as u32` and `magic = (bits >> 2) | 1`.
//! * All complete 64-byte blocks are compressed as in plain MD5.
//! * With `r = n % 64` bytes left over:
//!   * if `r >= 56`: the block `rest ‖ 0x80 ‖ 0…` is compressed, then one more block
//!     `bits(LE u32) ‖ 56 zero bytes ‖ magic(LE u32)`;
//!   * otherwise a single block `bits(LE u32) ‖ rest ‖ 0x80 ‖ 0… ‖ magic(LE u32)`.
//! * The 16-byte result is the MD5 state words A, B, C, D, each little-endian (the ordinary MD5 digest
//!   byte order).
//!
//! Everything here works on untrusted input and never panics.

use thiserror::Error;

/// Offset of the 16-byte hash inside the container.
pub const HASH_OFFSET: usize = 4;
/// Offset of the first hashed byte (the version field, right after the hash).
pub const HASHED_FROM: usize = 20;
/// Size of the fixed container header (magic, hash, version, total size, part count).
pub const HEADER_LEN: usize = 32;
/// The container magic.
pub const MAGIC: [u8; 4] = *b"DXBC";

const SIZE_FIELD: usize = 24;

/// Why a buffer cannot be hashed as a DXBC/DXIL container.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DxilHashError {
    /// Shorter than the fixed 32-byte container header.
    #[error("too short for a DXBC/DXIL container: {len} bytes, the header alone is {HEADER_LEN}")]
    TooShort { len: usize },
    /// The first four bytes are not `DXBC`.
    #[error("not a DXBC/DXIL container: magic is {found:02x?}, expected \"DXBC\"")]
    BadMagic { found: [u8; 4] },
    /// The size field in the header disagrees with the buffer length.
    #[error("size mismatch: header says {header} bytes, buffer is {buffer} bytes")]
    SizeMismatch { header: u32, buffer: usize },
    /// Larger than a container's 32-bit size field can describe.
    #[error("buffer of {len} bytes is larger than a DXBC/DXIL container can be (4 GiB)")]
    TooLarge { len: usize },
}

/// The 16-byte hash of a DXBC/DXIL container, computed over bytes [20, len).
///
/// Checks the length (at least the 32-byte header, at most `u32::MAX`) and the `DXBC` magic, but not
/// the size field, so the hash of any container-shaped buffer can be inspected; [`fill_hash`] also
/// checks the size field.
pub fn container_hash(container: &[u8]) -> Result<[u8; 16], DxilHashError> {
    check_shape(container)?;
    Ok(checksum(container.get(HASHED_FROM..).unwrap_or(&[])))
}

/// Compute and write the hash into bytes 4..20. Checks the `DXBC` magic and that the size field equals
/// the buffer length.
pub fn fill_hash(container: &mut [u8]) -> Result<(), DxilHashError> {
    check_shape(container)?;
    let header = read_u32(container, SIZE_FIELD).unwrap_or(0);
    if usize::try_from(header).ok() != Some(container.len()) {
        return Err(DxilHashError::SizeMismatch { header, buffer: container.len() });
    }
    let hash = container_hash(container)?;
    if let Some(slot) = container.get_mut(HASH_OFFSET..HASHED_FROM) {
        slot.copy_from_slice(&hash);
    }
    Ok(())
}

/// True when bytes 4..20 equal the recomputed hash.
///
/// False for anything [`container_hash`] rejects, and for a container whose size field disagrees with
/// the buffer length (such a buffer is truncated or padded, and D3D12 would refuse it too).
pub fn hash_is_valid(container: &[u8]) -> bool {
    let size_ok = read_u32(container, SIZE_FIELD).and_then(|s| usize::try_from(s).ok()).is_some_and(|s| s == container.len());
    if !size_ok {
        return false;
    }
    match (container_hash(container), container.get(HASH_OFFSET..HASHED_FROM)) {
        (Ok(hash), Some(stored)) => stored == hash,
        _ => false,
    }
}

fn check_shape(container: &[u8]) -> Result<(), DxilHashError> {
    let len = container.len();
    if len < HEADER_LEN {
        return Err(DxilHashError::TooShort { len });
    }
    if u32::try_from(len).is_err() {
        return Err(DxilHashError::TooLarge { len });
    }
    let mut found = [0u8; 4];
    found.copy_from_slice(container.get(..4).unwrap_or(&[0; 4]));
    if found != MAGIC {
        return Err(DxilHashError::BadMagic { found });
    }
    Ok(())
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The DXBC checksum of `data` (the container bytes from offset 20 on).
fn checksum(data: &[u8]) -> [u8; 16] {
    // The reference implementations use 32-bit arithmetic here; containers are < 4 GiB anyway.
    let bits = (data.len() as u32).wrapping_mul(8);
    let magic = (bits >> 2) | 1;

    let mut state = Md5State::new();
    let mut blocks = data.chunks_exact(64);
    for block in &mut blocks {
        state.compress(block);
    }
    let rest = blocks.remainder();

    let mut last = [0u8; 64];
    if rest.len() >= 56 {
        last[..rest.len()].copy_from_slice(rest);
        last[rest.len()] = 0x80;
        state.compress(&last);
        last = [0u8; 64];
        last[..4].copy_from_slice(&bits.to_le_bytes());
    } else {
        last[..4].copy_from_slice(&bits.to_le_bytes());
        last[4..4 + rest.len()].copy_from_slice(rest);
        last[4 + rest.len()] = 0x80;
    }
    last[60..].copy_from_slice(&magic.to_le_bytes());
    state.compress(&last);
    state.digest()
}

/// MD5's chaining state and compression function (RFC 1321), without MD5's own padding.
struct Md5State([u32; 4]);

/// Per-round left-rotation amounts.
const S: [u32; 64] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, //
    5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, //
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, //
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
];

/// `floor(abs(sin(i + 1)) * 2^32)`.
const K: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
    0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
    0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

impl Md5State {
    fn new() -> Self {
        Md5State([0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476])
    }

    /// Compress one block. Callers always pass exactly 64 bytes; a shorter slice is zero-extended
    /// rather than panicking.
    fn compress(&mut self, block: &[u8]) {
        let mut m = [0u32; 16];
        for (word, bytes) in m.iter_mut().zip(block.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        let [mut a, mut b, mut c, mut d] = self.0;
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(K[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        for (s, v) in self.0.iter_mut().zip([a, b, c, d]) {
            *s = s.wrapping_add(v);
        }
    }

    fn digest(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        for (dst, word) in out.chunks_exact_mut(4).zip(self.0) {
            dst.copy_from_slice(&word.to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Plain RFC 1321 MD5 on top of the same compression function, to check the transform against
    /// the published test vectors.
    fn plain_md5(data: &[u8]) -> [u8; 16] {
        let mut msg = data.to_vec();
        msg.push(0x80);
        while msg.len() % 64 != 56 {
            msg.push(0);
        }
        msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_le_bytes());
        let mut st = Md5State::new();
        for block in msg.chunks_exact(64) {
            st.compress(block);
        }
        st.digest()
    }

    /// The DXBC padding written out as one flat message, independent of `checksum`'s block handling.
    fn checksum_by_message(data: &[u8]) -> [u8; 16] {
        let bits = (data.len() as u32).wrapping_mul(8);
        let magic = (bits >> 2) | 1;
        let full = data.len() - data.len() % 64;
        let rest = &data[full..];
        let mut msg = data[..full].to_vec();
        if rest.len() >= 56 {
            msg.extend_from_slice(rest);
            msg.push(0x80);
            msg.resize(full + 64, 0);
            msg.extend_from_slice(&bits.to_le_bytes());
            msg.resize(full + 124, 0);
        } else {
            msg.extend_from_slice(&bits.to_le_bytes());
            msg.extend_from_slice(rest);
            msg.push(0x80);
            msg.resize(full + 60, 0);
        }
        msg.extend_from_slice(&magic.to_le_bytes());
        assert_eq!(msg.len() % 64, 0);
        let mut st = Md5State::new();
        for block in msg.chunks_exact(64) {
            st.compress(block);
        }
        st.digest()
    }

    #[test]
    fn md5_transform_matches_rfc1321_vectors() {
        let vectors: [(&[u8], &str); 5] = [
            (b"", "d41d8cd98f00b204e9800998ecf8427e"),
            (b"a", "0cc175b9c0f1b6a831c399e269772661"),
            (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            (b"12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"),
        ];
        for (input, want) in vectors {
            assert_eq!(hex(&plain_md5(input)), want, "md5({:?})", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn tail_layout_matches_flat_message_for_every_remainder() {
        let data: Vec<u8> = (0..300u32).map(|i| (i.wrapping_mul(131) ^ (i >> 3)) as u8).collect();
        for n in 0..data.len() {
            assert_eq!(checksum(&data[..n]), checksum_by_message(&data[..n]), "n = {n}");
        }
    }

    fn synthetic_container(payload_len: usize) -> Vec<u8> {
        let len = HEADER_LEN + 4 + payload_len;
        let mut c = vec![0u8; len];
        c[..4].copy_from_slice(b"DXBC");
        c[20..22].copy_from_slice(&1u16.to_le_bytes());
        c[24..28].copy_from_slice(&(len as u32).to_le_bytes());
        c[28..32].copy_from_slice(&1u32.to_le_bytes());
        c[32..36].copy_from_slice(&36u32.to_le_bytes());
        for (i, b) in c[36..].iter_mut().enumerate() {
            *b = i as u8;
        }
        c
    }

    #[test]
    fn fill_then_validate_roundtrip() {
        for payload in [0, 1, 23, 24, 27, 28, 100, 1000] {
            let mut c = synthetic_container(payload);
            assert!(!hash_is_valid(&c));
            fill_hash(&mut c).unwrap();
            assert!(hash_is_valid(&c));
            assert_eq!(&c[4..20], &container_hash(&c).unwrap());
            // The hash field itself is not hashed: filling again is a no-op.
            let before = c.clone();
            fill_hash(&mut c).unwrap();
            assert_eq!(c, before);
            let last = c.len() - 1;
            c[last] ^= 1;
            assert!(!hash_is_valid(&c));
        }
    }

    #[test]
    fn rejects_non_containers_with_reasons() {
        assert_eq!(container_hash(&[]), Err(DxilHashError::TooShort { len: 0 }));
        assert_eq!(container_hash(b"DXBC"), Err(DxilHashError::TooShort { len: 4 }));

        let mut c = synthetic_container(8);
        c[..4].copy_from_slice(b"DXIL");
        assert_eq!(container_hash(&c), Err(DxilHashError::BadMagic { found: *b"DXIL" }));
        assert!(fill_hash(&mut c).is_err());
        assert!(!hash_is_valid(&c));

        let mut c = synthetic_container(8);
        c.push(0);
        let err = fill_hash(&mut c).unwrap_err();
        assert_eq!(err, DxilHashError::SizeMismatch { header: 44, buffer: 45 });
        assert_eq!(err.to_string(), "size mismatch: header says 44 bytes, buffer is 45 bytes");
        assert!(c[4..20].iter().all(|&b| b == 0), "a failed fill_hash must not write");
        assert!(!hash_is_valid(&c));
    }

    #[test]
    fn never_panics_on_arbitrary_prefixes() {
        let mut c = synthetic_container(200);
        fill_hash(&mut c).unwrap();
        for n in 0..=c.len() {
            let mut prefix = c[..n].to_vec();
            let _ = container_hash(&prefix);
            let _ = hash_is_valid(&prefix);
            let _ = fill_hash(&mut prefix);
        }
        let mut junk: Vec<u8> = (0..97u8).collect();
        let _ = fill_hash(&mut junk);
        assert!(!hash_is_valid(&junk));
    }
}
