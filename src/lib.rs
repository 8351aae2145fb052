//! Keeps the Crush coding assistant's provider catalog up to date.
pub mod catalog;
pub mod commands;
pub mod config;
pub mod error;
pub mod fetch;
pub mod startup;
pub mod store;
pub mod trust;
pub mod update;
