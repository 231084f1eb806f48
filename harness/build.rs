//! Stages the catalogue (`scenarios/`), the target data (`targets/`) and the test fixtures
//! (`fixtures/`), without `node_modules`, into `$OUT_DIR/bundle`, which the binary embeds, so an installed
//! `streamcheck` works in any folder. `STREAMCHECK_BUNDLE_HASH` keys its unpacked copy.
//! `STREAMCHECK_GIT_REV` and `STREAMCHECK_GIT_URL` (empty when unknown) are the commit it
//! is built from and its `origin`, which `init` pins the CI workflow's install to.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest.parent().unwrap();
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("bundle");
    let _ = std::fs::remove_dir_all(&out);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    // scenarios/ is watched whole; targets/ and fixtures/ file by file, since a watched
    // folder is scanned recursively and both hold installed node_modules.
    println!(
        "cargo:rerun-if-changed={}",
        repo.join("scenarios").display()
    );
    stage(
        &repo.join("scenarios"),
        &out,
        "scenarios",
        false,
        &mut hasher,
    );
    stage(&repo.join("targets"), &out, "targets", true, &mut hasher);
    stage(&repo.join("fixtures"), &out, "fixtures", true, &mut hasher);
    println!(
        "cargo:rustc-env=STREAMCHECK_BUNDLE_HASH={:016x}",
        hasher.finish()
    );
    provenance(repo);
}

/// The commit and `origin` URL of the checkout built from; empty outside a git checkout.
fn provenance(repo: &Path) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    // A new commit changes HEAD's file (a detached HEAD) or the branch's ref (loose or packed).
    let git_dir = git(&["rev-parse", "--absolute-git-dir"]);
    if !git_dir.is_empty() {
        let common = PathBuf::from(git(&[
            "rev-parse",
            "--path-format=absolute",
            "--git-common-dir",
        ]));
        let branch = git(&["symbolic-ref", "-q", "HEAD"]);
        let watched = [
            PathBuf::from(&git_dir).join("HEAD"),
            common.join("packed-refs"),
            common.join(&branch),
        ];
        // A path that does not exist would rerun this script on every build.
        for path in watched.iter().filter(|p| p.is_file()) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    println!(
        "cargo:rustc-env=STREAMCHECK_GIT_REV={}",
        git(&["rev-parse", "HEAD"])
    );
    println!(
        "cargo:rustc-env=STREAMCHECK_GIT_URL={}",
        git(&["remote", "get-url", "origin"])
    );
}

/// Copies `from` to `out/rel`, hashing each file's relative path and content.
fn stage(from: &Path, out: &Path, rel: &str, watch_files: bool, hasher: &mut impl Hasher) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let path = entry.path();
        if name == "node_modules" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        let rel = format!("{rel}/{}", name.to_string_lossy());
        let target = out.join(&rel);
        if path.is_dir() {
            stage(&path, out, &rel, watch_files, hasher);
        } else if let Ok(bytes) = std::fs::read(&path) {
            if watch_files {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(&target, &bytes).unwrap();
            rel.hash(hasher);
            bytes.hash(hasher);
        }
    }
}
