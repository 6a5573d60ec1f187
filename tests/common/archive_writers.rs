//! Archive writers shared by tests/integration/containers.rs and benches/archives.rs (included by
//! `#[path]`: a bench cannot import a test): SARC by hand, zip and zlib through the crates, and the
//! SWF tag stream by hand. They are the test side, independent of shrec's readers.

use std::io::Write;

/// SARC name hash (multiplier 0x65), as Nintendo's tools write it.
pub fn sarc_hash(name: &str) -> u32 {
    name.bytes().fold(0u32, |h, c| h.wrapping_mul(0x65).wrapping_add(c as i8 as u32))
}

/// A big-endian SARC with named members (nodes sorted by hash, data 0x100-aligned like
/// Nintendo's tools do for GPU data).
pub fn sarc(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut m: Vec<(u32, &str, &[u8])> = members.iter().map(|(n, d)| (sarc_hash(n), *n, *d)).collect();
    m.sort_by_key(|x| x.0);
    let mut names = Vec::new();
    let mut name_offsets = Vec::new();
    for (_, n, _) in &m {
        name_offsets.push(names.len() / 4);
        names.extend_from_slice(n.as_bytes());
        names.push(0);
        while names.len() % 4 != 0 {
            names.push(0);
        }
    }
    let mut data = Vec::new();
    let mut ranges = Vec::new();
    for (_, _, d) in &m {
        while data.len() % 0x100 != 0 {
            data.push(0);
        }
        ranges.push((data.len(), data.len() + d.len()));
        data.extend_from_slice(d);
    }
    let head_len = 0x14 + 0x0C + 16 * m.len() + 8 + names.len();
    let data_offset = head_len.div_ceil(0x100) * 0x100;
    let mut out = Vec::new();
    out.extend_from_slice(b"SARC");
    out.extend_from_slice(&0x14u16.to_be_bytes());
    out.extend_from_slice(&[0xFE, 0xFF]);
    out.extend_from_slice(&((data_offset + data.len()) as u32).to_be_bytes());
    out.extend_from_slice(&(data_offset as u32).to_be_bytes());
    out.extend_from_slice(&0x0100u16.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(b"SFAT");
    out.extend_from_slice(&0x0Cu16.to_be_bytes());
    out.extend_from_slice(&(m.len() as u16).to_be_bytes());
    out.extend_from_slice(&0x65u32.to_be_bytes());
    for (i, (hash, _, _)) in m.iter().enumerate() {
        out.extend_from_slice(&hash.to_be_bytes());
        out.extend_from_slice(&(0x0100_0000u32 | name_offsets[i] as u32).to_be_bytes());
        out.extend_from_slice(&(ranges[i].0 as u32).to_be_bytes());
        out.extend_from_slice(&(ranges[i].1 as u32).to_be_bytes());
    }
    out.extend_from_slice(b"SFNT");
    out.extend_from_slice(&8u16.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&names);
    out.resize(data_offset, 0);
    out.extend_from_slice(&data);
    out
}

/// A zip with `members` stored by `method` (the `zip` crate's writer).
pub fn zip(members: &[(&str, &[u8])], method: zip::CompressionMethod) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data) in members {
        w.start_file(*name, zip::write::SimpleFileOptions::default().compression_method(method)).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The body of an SWF (after its 8-byte header) holding `blobs` as DefineBinaryData tags (code
/// 87, long form) with ids 1, 2, ... (SWF File Format Specification v19; see
/// src/scan/containers/swf.rs).
pub fn swf_body(blobs: &[&[u8]]) -> Vec<u8> {
    let mut body = vec![0x00]; // RECT with 0-bit fields: one byte
    body.extend_from_slice(&(24u16 << 8).to_le_bytes()); // 24 fps (8.8 fixed point)
    body.extend_from_slice(&1u16.to_le_bytes()); // one frame
    for (i, b) in blobs.iter().enumerate() {
        body.extend_from_slice(&(87u16 << 6 | 0x3F).to_le_bytes());
        body.extend_from_slice(&(6 + b.len() as u32).to_le_bytes());
        body.extend_from_slice(&(i as u16 + 1).to_le_bytes());
        body.extend_from_slice(&[0; 4]);
        body.extend_from_slice(b);
    }
    body.extend_from_slice(&[0x40, 0x00]); // ShowFrame
    body.extend_from_slice(&[0, 0]); // End
    body
}

/// A `CWS` SWF: `CWS`, version, u32 LE uncompressed length (header included), zlib body.
pub fn swf_cws(body: &[u8]) -> Vec<u8> {
    let mut out = b"CWS".to_vec();
    out.push(10);
    out.extend_from_slice(&(8 + body.len() as u32).to_le_bytes());
    let mut z = flate2::write::ZlibEncoder::new(out, flate2::Compression::default());
    z.write_all(body).unwrap();
    z.finish().unwrap()
}
