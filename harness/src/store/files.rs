//! Writing a run folder's files atomically, so an interrupted run leaves whole files.

use std::io;
use std::path::Path;
use std::time::SystemTime;

/// Write to a temp file in the same folder, then rename over the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// `2026-11-22T00:33:42Z`, from a system time (UTC).
pub fn timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}
