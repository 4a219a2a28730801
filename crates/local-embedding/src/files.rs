//! Reading the model's files with typed errors.

use std::path::Path;

use crate::error::{Error, Result};

/// The whole file at `path`; a missing file is [`Error::MissingFile`].
pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            Error::MissingFile {
                path: path.to_owned(),
            }
        } else {
            Error::Io {
                path: path.to_owned(),
                source,
            }
        }
    })
}
