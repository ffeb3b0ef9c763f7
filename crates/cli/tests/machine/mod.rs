//! Shared by the tests that run modules.

/// Holds the machine for one module under test ([`partita_testkit::machine_lock`]).
pub fn machine_lock() -> std::fs::File {
    partita_testkit::machine_lock()
}
