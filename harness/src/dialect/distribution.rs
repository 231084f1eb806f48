//! Where a dialect's CLI comes from: an npm package pinned in `targets/<name>/`, or a crate
//! built from crates.io. `install/resolve.rs` installs either kind. A leaf.

use std::path::{Path, PathBuf};

/// How a dialect's CLI is installed.
#[derive(Debug)]
pub enum Distribution {
    Npm(&'static NpmPin),
    Cargo(&'static CargoPin),
}

/// A CLI pinned with npm in `targets/<target>/` (package.json + package-lock.json); other
/// versions are installed from npm into the cache.
#[derive(Debug)]
pub struct NpmPin {
    /// The target's name, also the cache folder's prefix for other versions.
    pub target: &'static str,
    pub title: &'static str,
    pub dir: &'static str,
    pub package: &'static str,
    /// Its command in `node_modules/.bin`.
    pub bin: &'static str,
    /// Started as `node_modules/node/bin/node <package>/<entry>` (a pinned runtime) when set.
    pub node_entry: Option<&'static str>,
    /// Other packages installed beside it for another version (its runtime).
    pub runtime: &'static [&'static str],
}

impl NpmPin {
    /// The program to start in an install prefix, and the arguments before the CLI's own.
    pub fn launch(&self, prefix: &Path) -> (PathBuf, Vec<String>) {
        let modules = prefix.join("node_modules");
        let Some(entry) = self.node_entry else {
            return (modules.join(".bin").join(self.bin), Vec::new());
        };
        // The pinned node runs the CLI's entry script: no system node is involved.
        let entry = modules.join(self.package).join(entry);
        (
            modules.join("node/bin/node"),
            vec![entry.display().to_string()],
        )
    }
}

/// A CLI built with `cargo install` into the cache (`<crate>@<version>/bin/<bin>`).
#[derive(Debug)]
pub struct CargoPin {
    pub krate: &'static str,
    /// The version a target name without `@VERSION` means.
    pub version: &'static str,
    pub bin: &'static str,
    /// Given to `cargo install` after `--locked`.
    pub install_args: &'static [&'static str],
}
