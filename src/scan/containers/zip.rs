//! zip through the `zip` crate (stored and deflate members). Directories are skipped; an
//! encrypted member or one with another method is one error.

use super::{check_members, Budget, ContainerError, Member};
use std::io::Cursor;

pub(super) fn members(b: &[u8], budget: &mut Budget, wants: &dyn Fn(&str) -> bool) -> Result<Vec<Member>, ContainerError> {
    let mut archive = ::zip::ZipArchive::new(Cursor::new(b)).map_err(|e| ContainerError::new(format!("corrupt zip: {e}")))?;
    check_members(archive.len())?;
    let mut out = Vec::new();
    for i in 0..archive.len() {
        let (name, data) = match archive.by_index(i) {
            Ok(file) => {
                let name = super::clean_name(file.name());
                if file.is_dir() || !wants(&name) {
                    continue;
                }
                let compressed = file.compressed_size();
                // The declared size is checked first; the read is capped anyway (it may lie).
                let data = budget.check_declared(file.size(), compressed).and_then(|()| budget.read(file, compressed));
                (name, data)
            }
            Err(e) => (format!("#{i}"), Err(ContainerError::new(format!("unreadable member: {e}")))),
        };
        out.push(Member { name, data });
    }
    Ok(out)
}
