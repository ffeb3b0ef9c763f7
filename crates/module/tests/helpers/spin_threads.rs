//! Test helper of `backend_cgroup.rs`: a process with two busy threads named `spin-a` and
//! `spin-b`, so that a test can put each thread in its own threaded core cgroup. Runs until
//! killed. A binary target (not an example) so that cargo builds it before the integration tests.

fn main() {
    for name in ["spin-a", "spin-b"] {
        std::thread::Builder::new()
            .name(name.into())
            .spawn(|| {
                loop {
                    std::hint::spin_loop()
                }
            })
            .expect("spawning a spinning thread");
    }
    loop {
        std::thread::park();
    }
}
