//! The one place where a test decides whether it can run here.
//!
//! A test that needs a capability (root, cgroups, real-time scheduling, a browser, network
//! namespaces) calls [`require`]: where the capability is there the test runs; where it is
//! missing the test says so on stderr and skips, except under CI ([`ci`]), where a missing
//! capability is a failure, so that a CI machine without it cannot pass silently. Tests that run a
//! module also hold [`machine_lock`].

use std::io::Write;

/// CI rules are in force: `CI=true` or `CI=1` (the same rule as the module's strict mode,
/// `partita_module::backend::strict`).
pub fn ci() -> bool {
    partita_module::backend::strict()
}

/// Whether the calling process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Decides whether the calling test, which needs `capability`, runs: `true` when `available`;
/// otherwise it panics under CI and else prints a SKIPPED line naming the test (to the real
/// stderr, so that it shows even when the harness captures output) and returns `false`.
pub fn require(capability: &str, available: bool) -> bool {
    if available {
        return true;
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("this test");
    assert!(!ci(), "{test}: needs {capability}, and CI rules (CI=true) make a missing capability a failure");
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: needs {capability}");
    false
}

/// [`require`] for tests that run a module: root (cgroups, namespaces, real-time priorities).
pub fn require_root() -> bool {
    require("root (cgroups, namespaces, real-time priorities)", is_root())
}

/// Holds the machine for one module under test. A module's scheduler threads own their CPUs at
/// the top real-time priority, so two modules at once (tests of one binary run in parallel, other
/// test binaries or checkouts may run too) would take each other's windows; they take turns.
pub fn machine_lock() -> std::fs::File {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/tmp/partita-test-module.lock")
        .expect("opening /tmp/partita-test-module.lock");
    f.lock().expect("locking /tmp/partita-test-module.lock");
    f
}
