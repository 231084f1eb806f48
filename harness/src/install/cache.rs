//! The release cache kept under a size cap: each installed release (`<cache>/<target>@<version>/`)
//! is stamped when a command uses it, and when the releases together pass the cap the
//! least recently used go first. A release in use right now is never evicted, by this
//! process or by another one sharing the cache (a nightly run beside `ranges --prove`).

use rustix::fs::{flock, FlockOperation};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;
use walkdir::WalkDir;

/// The file whose modification time says when a cached release was last used.
const STAMP: &str = ".streamcheck-last-used";

/// The file every process using a cached release holds a shared lock on; eviction removes
/// only a release it can lock alone.
const LOCK: &str = ".streamcheck-in-use";

/// The shared locks this process holds. A lock belongs to the process, not to a command's
/// values, so it lives until the process ends.
static HELD: Mutex<Vec<(PathBuf, File)>> = Mutex::new(Vec::new());

/// Says that the cached release in `dir` is being used now, and holds it until this process
/// ends (or its own [`keep_under`] lets it go) so that no other process evicts it meanwhile.
pub fn touch(dir: &Path) -> std::io::Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    std::fs::write(dir.join(STAMP), b"")?;
    let mut held = HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if held.iter().any(|(d, _)| d == dir) {
        return Ok(());
    }
    let lock = lock_file(dir)?;
    flock(&lock, FlockOperation::LockShared)?;
    held.push((dir.to_path_buf(), lock));
    Ok(())
}

/// Ends this process's hold on the release in `dir`, if it has one.
fn release(dir: &Path) {
    let mut held = HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    held.retain(|(d, _)| d != dir);
}

fn lock_file(dir: &Path) -> std::io::Result<File> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK))
}

/// The release's lock taken alone, or `None` while any process (this one too) holds it.
fn lock_alone(dir: &Path) -> std::io::Result<Option<File>> {
    let lock = lock_file(dir)?;
    match flock(&lock, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(lock)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(e) => Err(e.into()),
    }
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
/// never one of `in_use` nor one a process holds; returns the folders removed.
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
        // This process's own hold ends here: the caller says what it still uses (a prover
        // moves from release to release; its cap must not grow with every one it touched).
        release(&c.dir);
        // Held alone while the folder goes, so no process starts using it halfway.
        let Some(_alone) = lock_alone(&c.dir)? else {
            continue;
        };
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
        // The stamp alone: `touch` would also hold the release for this test's process.
        std::fs::write(dir.join(STAMP), b"").unwrap();
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

    #[test]
    fn a_release_another_process_uses_is_not_evicted() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path();
        let used_elsewhere = release(cache, "claude-code@1.0.1", 1000, 300);
        let unused = release(cache, "claude-code@1.0.2", 1000, 200);
        // Another process's shared lock: a second open file, as flock sees one per process.
        let elsewhere = lock_file(&used_elsewhere).unwrap();
        flock(&elsewhere, FlockOperation::LockShared).unwrap();
        let removed = keep_under(cache, 0, &[]).unwrap();
        assert_eq!(removed, vec![unused.clone()]);
        assert!(used_elsewhere.join("blob").exists() && !unused.exists());
        drop(elsewhere);
        assert_eq!(keep_under(cache, 0, &[]).unwrap(), vec![used_elsewhere]);
    }

    #[test]
    fn a_release_this_process_touched_is_held_until_its_own_eviction_lets_it_go() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = release(tmp.path(), "claude-code@1.0.1", 1000, 300);
        touch(&dir).unwrap();
        touch(&dir).unwrap();
        assert!(
            lock_alone(&dir).unwrap().is_none(),
            "held against other processes"
        );
        let in_use = std::slice::from_ref(&dir);
        assert!(keep_under(tmp.path(), 0, in_use).unwrap().is_empty());
        // Once this process no longer says it uses the release, its own hold does not keep it.
        assert_eq!(keep_under(tmp.path(), 0, &[]).unwrap(), vec![dir]);
    }
}
