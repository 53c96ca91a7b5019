//! The store's integration tests, one binary: studies, cells, steps and runs written through the
//! store's API around real engine results, and read back, by the store and with plain SQL.

mod common;
mod open;
mod readme;
mod round_trip;
