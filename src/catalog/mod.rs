//! The Catwalk v2 catalog, read the way Crush reads it.
//!
//! Crush decodes its cache with Go's `encoding/json` into the catwalk
//! structs, then expands `api_key`, `api_endpoint` and every header value
//! with its shell resolver (`expand`). Whatever decides about a catalog
//! here (validation, the guard, the change report) reads it through this
//! one reader, with Go's rules:
//!
//! - an object key names the field it matches **case-insensitively**
//!   (`"API_ENDPOINT"` fills `api_endpoint`; Go also folds `K` (Kelvin) to
//!   `k` and `ſ` to `s`), and an object in which two keys name the same
//!   field is refused: Go would silently take the last, which no reader
//!   should have to guess at;
//! - every field Crush decodes has the type Crush decodes it to (a wrong one
//!   makes Crush's whole decode fail), `null` being Go's zero value;
//! - values whose destination Crush's resolver could make anything else
//!   than the text says (a default word, a command, a variable in an
//!   endpoint's host) are refused (`expand::Refused`).
//!
//! - nesting deeper than Go's decoder reads ([`GO_MAX_DEPTH`]) is refused
//!   wherever it is, inside fields nobody reads too: Go would refuse the
//!   whole cache.
//!
//! It is stricter than Go in a few places Go would accept (invalid UTF-8
//! anywhere, `null` for an id or inside a list, nesting deeper than 128 in
//! `provider_options`), never looser. The raw
//! bytes themselves are what gets cached and printed, so fields this module
//! does not know are never lost: they are only skipped here, never
//! re-serialised.

pub(crate) mod changes;
pub mod embedded;
pub(crate) mod escape;
pub(crate) mod expand;
mod go_json;
pub(crate) mod go_url;
mod model;
mod parse_error;
pub(crate) mod target;
mod validate;

pub(crate) use escape::{printable, quoted};
#[doc(hidden)]
pub use go_json::GO_MAX_DEPTH;
pub(crate) use go_json::go_key_matches;
pub use model::{Catalog, Model, ModelOptions, Provider};
pub(crate) use parse_error::{BYTE_ORDER_MARK, json_problem};
pub use target::Target;
pub(crate) use validate::Diff;
#[doc(hidden)]
pub use validate::MAX_ID_BYTES;
pub use validate::{ValidationError, Warning, validate};
