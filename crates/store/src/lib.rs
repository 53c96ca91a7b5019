//! fslab's results store: every study, cell, step and run in one SQLite database.
//!
//! The lab records into it as it goes ([`Store::create_study`], [`Store::add_cell`],
//! [`Store::record_step`], [`Store::record_run`]: each run in one transaction the moment it
//! ends); `fslab study resume` asks it what is done ([`Store::runs_done`]); reports read from it
//! ([`Store::runs`], [`Store::steps`], [`Store::result`], [`Store::series`]). It knows nothing of
//! how results are produced or drawn. The tables are documented in this crate's README.md for
//! users who query the database with sqlite3.

mod columns;
mod error;
mod model;
mod query;
pub mod schema;
mod store;
mod write;

pub use error::{Result, StoreError};
pub use model::*;
pub use schema::SCHEMA_VERSION;
pub use store::Store;
