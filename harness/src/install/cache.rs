//! The release cache kept under a size cap: each installed release (`<cache>/<target>@<version>/`)
//! is stamped when a command uses it, and when the releases together pass the cap the
//! least recently used go first. A release in use right now is never evicted.

use std::path::{Path, PathBuf};
use std::time::SystemTime;
use walkdir::WalkDir;

/// The file whose modification time says when a cached release was last used.
const STAMP: &str = ".streamcheck-last-used";

/// Says that the cached release in `dir` is being used now.
pub fn touch(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        std::fs::write(dir.join(STAMP), b"")?;
    }
    Ok(())
}

/// One cached release: its folder, its size on disk and when it was last used.
#[derive(Debug, Clone)]
pub struct Cached {
    pub dir: PathBuf,
    pub bytes: u64,
    pub used: SystemTime,
}

/// The installed releases in `cache` (folders named `<target>@<version>`).
pub fn releases(cache: &Path) -> Vec<Cached> {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().contains('@'))
        })
        .map(|dir| {
            let bytes = size(&dir);
            let stamp = dir.join(STAMP);
            let used = (std::fs::metadata(&stamp).or_else(|_| std::fs::metadata(&dir)))
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            Cached { dir, bytes, used }
        })
        .collect()
}

fn size(dir: &Path) -> u64 {
    WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// Removes the least recently used releases of `cache` until the rest fit in `cap` bytes,
/// never one of `in_use`; returns the folders removed.
pub fn keep_under(cache: &Path, cap: u64, in_use: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut all = releases(cache);
    all.sort_by_key(|c| c.used);
    let mut total: u64 = all.iter().map(|c| c.bytes).sum();
    let mut removed = Vec::new();
    for c in all {
        if total <= cap {
            break;
        }
        if in_use.contains(&c.dir) {
            continue;
        }
        std::fs::remove_dir_all(&c.dir)?;
        total -= c.bytes;
        removed.push(c.dir);
    }
    Ok(removed)
}

/// The bytes the cached releases take together.
pub fn used_bytes(cache: &Path) -> u64 {
    releases(cache).iter().map(|c| c.bytes).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn release(cache: &Path, name: &str, bytes: usize, used_secs_ago: u64) -> PathBuf {
        let dir = cache.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("blob"), vec![0u8; bytes]).unwrap();
        touch(&dir).unwrap();
        let when = SystemTime::now() - Duration::from_secs(used_secs_ago);
        let f = std::fs::File::options()
            .write(true)
            .open(dir.join(STAMP))
            .unwrap();
        f.set_modified(when).unwrap();
        dir
    }

    #[test]
    fn the_least_recently_used_release_goes_first_and_one_in_use_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path();
        let oldest = release(cache, "claude-code@1.0.1", 1000, 300);
        let in_use = release(cache, "claude-code@1.0.2", 1000, 200);
        let newer = release(cache, "claude-code@1.0.3", 1000, 100);
        let newest = release(cache, "claude-code@1.0.4", 1000, 0);
        std::fs::create_dir_all(cache.join("not-a-release")).unwrap();
        let removed = keep_under(cache, 2100, std::slice::from_ref(&in_use)).unwrap();
        assert_eq!(removed, vec![oldest.clone(), newer.clone()]);
        assert!(!oldest.exists() && !newer.exists());
        assert!(in_use.exists() && newest.exists());
        assert!(cache.join("not-a-release").exists());
        assert!(used_bytes(cache) <= 2100);
        assert!(
            keep_under(cache, 2100, &[]).unwrap().is_empty(),
            "already under the cap"
        );
    }
}
