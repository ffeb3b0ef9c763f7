//! Test helper of `backend_cgroup.rs`: a process with two busy threads named `spin-a` and
//! `spin-b`, so that a test can put each thread in its own threaded core cgroup. Runs until
//! killed. A binary target (not an example) so that cargo builds it before the integration tests.
//!
//! With the arguments `exit CODE` (`backend_spawn.rs`): two threads that wait, and the main
//! thread then ends the process with `exit(CODE)` (an exit_group with three threads).

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, mode, code] = args.as_slice()
        && mode == "exit"
    {
        for name in ["wait-a", "wait-b"] {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(|| {
                    loop {
                        std::thread::park();
                    }
                })
                .expect("spawning a waiting thread");
        }
        std::process::exit(code.parse().expect("exit CODE"));
    }
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
