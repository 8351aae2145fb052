//! Keeps the Crush coding assistant's provider catalog up to date.
//!
//! The modules follow the data's path: a [`source`] is read into bytes (over
//! [`http`] when it is a URL), the bytes are validated into a [`catalog`],
//! and the catalog is swapped into the [`cache`]. [`update`] runs that path
//! for `update-providers`; [`changes`] says what it changed, from a
//! [`summary`] of the previous catalog.

pub mod cache;
pub mod catalog;
pub mod changes;
pub mod cli;
pub mod commands;
pub mod crushrc;
pub mod diagnosis;
pub mod embedded;
pub mod error;
pub mod guard;
pub mod http;
pub mod paths;
pub mod refresh;
pub mod settings;
pub mod signature;
pub mod source;
pub mod startup;
pub mod state;
pub mod summary;
pub mod synthetic;
pub mod update;
pub mod validators;
