//! [`FileError`]: a file that could not be read, written or parsed, named before its
//! cause (`path: cause`). Each seam's error wraps it rather than repeating the pair.

use std::path::{Path, PathBuf};

/// `path: source`.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", .path.display())]
pub struct FileError<E: std::error::Error + 'static> {
    pub path: PathBuf,
    #[source]
    pub source: E,
}

impl<E: std::error::Error + 'static> FileError<E> {
    pub fn new(path: impl Into<PathBuf>, source: E) -> Self {
        FileError {
            path: path.into(),
            source,
        }
    }

    /// For `map_err`: the error of `path`.
    pub fn at(path: &Path) -> impl FnOnce(E) -> Self + '_ {
        move |source| FileError::new(path, source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_file_then_the_cause() {
        let e = FileError::new("a/b.yaml", std::io::Error::other("gone"));
        assert_eq!(e.to_string(), "a/b.yaml: gone");
        assert_eq!(std::error::Error::source(&e).unwrap().to_string(), "gone");
    }
}
