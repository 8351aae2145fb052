//! HTTP validators: what a server sent with a catalog (`ETag`,
//! `Last-Modified`), stored beside the cache, and sent back to that server
//! to ask whether the catalog changed. Its own module because both the
//! cache and the HTTP client use it, and neither should know the other.

use serde::{Deserialize, Serialize};

/// A server's validators for one catalog.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validators {
    /// The `ETag` header, quotes included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The `Last-Modified` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Validators {
    /// Whether there is anything to send.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}
