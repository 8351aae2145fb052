//! What does not make a catalog unusable, but is worth telling: its
//! typed warnings ([`Catalog::warnings`](super::Catalog::warnings)).

use std::fmt;

use super::printable;

/// A problem that does not make a catalog unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// A provider's default model names none of its models: Crush falls
    /// back to another.
    UnknownDefaultModel {
        /// The provider, as its document names it (its index and id).
        provider: String,
        /// Which default.
        default: DefaultModel,
        /// The model id it names.
        id: String,
    },
}

/// One of a provider's two default models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultModel {
    /// `default_large_model_id`.
    Large,
    /// `default_small_model_id`.
    Small,
}

impl DefaultModel {
    /// Its field in the catalog.
    pub fn field(self) -> &'static str {
        match self {
            DefaultModel::Large => "default_large_model_id",
            DefaultModel::Small => "default_small_model_id",
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::UnknownDefaultModel {
                provider,
                default,
                id,
            } => write!(
                f,
                "{provider}: {} {} names no model of this provider",
                default.field(),
                printable(id)
            ),
        }
    }
}
