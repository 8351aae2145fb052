//! `crush dirs`: where the configuration, the data and the cache are.

use std::io::Write;

use super::context::cache_files;
use super::{Exit, print};
use crate::error::Failure;
use crate::store::paths::{self, process_env};

/// `crush dirs`.
pub(super) fn run() -> Result<(), Exit> {
    let config = paths::config_dir(&process_env).map_err(|e| Failure::new("config folder", e))?;
    let files = cache_files()?;
    print(|out| {
        writeln!(
            out,
            "config: {}\ndata:   {}\ncache:  {}",
            config.display(),
            files.dir.display(),
            files.catalog.display()
        )
    })
}
