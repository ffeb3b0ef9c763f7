//! Test helper of `backend_cgroup.rs`: a process with two busy threads named `spin-a` and
//! `spin-b`, so that a test can put each thread in its own threaded core cgroup. Runs until
//! killed. A binary target (not an example) so that cargo builds it before the integration tests.
//!
//! With the arguments `exit CODE` (`backend_spawn.rs`): two threads that wait, and the main
//! thread then ends the process with `exit(CODE)` (an exit_group with three threads).
//!
//! With `signal sigterm` or `signal sigkill`: two waiting threads at SCHED_BATCH (a policy the
//! module's broker grants without privilege, standing in for real-time ones), then the process
//! sends itself the signal (SIGTERM blocked first). For SIGTERM it checks that every thread was
//! moved back to SCHED_OTHER before the signal was delivered (the broker's demotion), and only
//! then unblocks it (so the process dies of SIGTERM only if the demotion happened; status 1
//! otherwise).
//!
//! With `hog`: allocates and touches memory, 1 MiB at a time, for ever (`backend_spawn.rs`,
//! the memory limit guard).

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
    if let [_, mode, sig] = args.as_slice()
        && mode == "signal"
    {
        signal_self(sig);
    }
    if args.get(1).map(String::as_str) == Some("hog") {
        let mut kept: Vec<Vec<u8>> = Vec::new();
        loop {
            // Touched page by page (vec! of zeros could map untouched pages).
            let mut m = Vec::with_capacity(1 << 20);
            m.resize(1 << 20, 1u8);
            kept.push(m);
        }
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

fn signal_self(sig: &str) -> ! {
    let (tx, rx) = std::sync::mpsc::channel();
    for _ in 0..2 {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let p = libc::sched_param { sched_priority: 0 };
            // SAFETY: the calling thread (0) to SCHED_BATCH with a valid parameter.
            let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &p) };
            tx.send(r).expect("main waits");
            loop {
                std::thread::park();
            }
        });
    }
    assert!((0..2).all(|_| rx.recv() == Ok(0)), "SCHED_BATCH refused");
    // SAFETY: signal mask calls on a valid set; kill of this process with a valid signal.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if sig == "sigkill" {
            libc::kill(libc::getpid(), libc::SIGKILL);
        } else {
            libc::kill(libc::getpid(), libc::SIGTERM);
            let tasks: Vec<i32> = std::fs::read_dir("/proc/self/task")
                .expect("own tasks")
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect();
            if tasks.len() == 3 && tasks.iter().all(|&t| libc::sched_getscheduler(t) == libc::SCHED_OTHER) {
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            }
        }
    }
    std::process::exit(1)
}
