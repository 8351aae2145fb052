//! `crush dirs`: where the configuration, the data and the cache are.

use std::io::Write;

use super::{Exit, print};
use crate::error::Failure;
use crate::store::cache::CacheFiles;
use crate::store::paths::{self, process_env};

/// `crush dirs`.
pub(super) fn run() -> Result<(), Exit> {
    let config = paths::config_dir(&process_env).map_err(|e| Failure::new("config folder", e))?;
    let data = paths::data_dir(&process_env).map_err(|e| Failure::new("data folder", e))?;
    let files = CacheFiles::in_dir(&data);
    print(|out| {
        writeln!(
            out,
            "config: {}\ndata:   {}\ncache:  {}",
            config.display(),
            data.display(),
            files.catalog.display()
        )
    })
}
