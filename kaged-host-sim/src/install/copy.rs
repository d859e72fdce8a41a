//! Copying a plugin directory into the store: files with their permission
//! bits, symbolic links as links, nothing outside the source followed.

use std::path::Path;

use super::error::InstallError;

/// Copy the tree at `from` to `to` (which must not exist yet).
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<(), InstallError> {
    let io = InstallError::io_at;
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let kind = entry.file_type().map_err(io(&src))?;
        if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(io(&src))?;
            std::os::unix::fs::symlink(&target, &dst).map_err(io(&dst))?;
        } else {
            std::fs::copy(&src, &dst).map_err(io(&dst))?;
        }
    }
    Ok(())
}
