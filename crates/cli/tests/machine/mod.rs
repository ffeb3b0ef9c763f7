//! Shared by the tests that run modules.

/// Holds the machine for one module under test. A module's scheduler threads own the CPUs at the
/// top real-time priority, so two modules at once (tests of one binary run in parallel, other test
/// binaries or checkouts may run too) would take each other's windows; they take turns instead.
pub fn machine_lock() -> std::fs::File {
    let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open("/tmp/partita-test-module.lock").unwrap();
    f.lock().unwrap();
    f
}
