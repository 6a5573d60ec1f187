//! A SPIR-V module read as words and instructions, without parsing it into a module: for the
//! passes that edit DXC's SPIR-V in place (`dxc::dref`, `dxc::xfb`: each must keep every word it
//! does not change as DXC wrote it) and for the cache's entry flags (`cache::entry_flags`).

/// The module's little-endian words; `None` unless it holds the 5-word header and whole words.
pub(crate) fn words(bytes: &[u8]) -> Option<Vec<u32>> {
    (bytes.len() >= 20 && bytes.len().is_multiple_of(4))
        .then(|| bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// The module's instructions after the header: (index of the first word, the words). `Err`
/// holds the index of an instruction whose length is 0 or runs past the end.
pub(crate) fn instructions(words: &[u32]) -> Result<Vec<(usize, &[u32])>, usize> {
    let mut out = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let len = (words[at] >> 16) as usize;
        if len == 0 || at + len > words.len() {
            return Err(at);
        }
        out.push((at, &words[at..at + len]));
        at += len;
    }
    Ok(out)
}
