/* A hostile partition: its ATTACK process (started in NORMAL mode, so that the health monitor's
 * partition-execution tables apply) runs the attack group named by the first argument and
 * prints one line per attack, "attack NAME result=R errno=E", R being the call's return value
 * (or a count, as each attack says) and E the errno after it (0 if none). The groups:
 *   syscalls  every denied system call, signals to every pid, ptrace, then exec of a busy shell
 *   close     closes every descriptor, the runtime's included, then keeps calling the runtime
 *   hog       allocates and touches memory until the memory cgroup stops it
 *   port      stores into the read-only mapping of its destination port "state"
 *   namespaces  clone with each CLONE_NEW* flag, clone3, unshare and setns; then a thread
 *             (pthread_create: glibc falls back from clone3 to clone) and a fork that exits
 *   signals   forked children that end or stop themselves with signals (SIGKILL, SIGSTOP, a
 *             blocked SIGTERM, tgkill) or are sent one by the partition (kill, pidfd_send_signal);
 *             a caught SIGUSR1; SIGKILL and SIGTERM to its own PID 1
 *   faults    forked children that fault (SIGSEGV, SIGILL, abort): the runtime's last resort
 *   thread_fault  a thread that is not an APEX process faults (the last resort ends the program)
 *   sigflood  sends itself a caught SIGUSR1 without pause (each goes through the module's broker)
 *   writer    (a well-behaved partner of "port") writes "intact" on the source of "state"
 *             once, then spins on GET_TIME like timecheck.c ("ran START END" lines)
 * Lines that are not attacks start with "note". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ARINC653.h"

#define MS 1000000LL

static const char *group = "";

static void report(const char *name, long result, int err) {
    printf("attack %s result=%ld errno=%d\n", name, result, err);
    fflush(stdout);
}

/* A raw system call, reported under `name`. */
#define SYS(name, ...)                                     \
    do {                                                   \
        errno = 0;                                         \
        long r_ = syscall(__VA_ARGS__);                    \
        report(name, r_, r_ < 0 ? errno : 0);              \
        if (r_ >= 0 && r_ < 4096 && strstr(name, "fd")) close((int)r_); \
    } while (0)

static void idle(void) {
    RETURN_CODE_TYPE rc;
    for (;;) TIMED_WAIT(100 * MS, &rc);
}

/* Each call the module's seccomp filter denies, with arguments that would be harmless (an
 * error) even if the call were allowed. */
static void denied_calls(void) {
    char buf[16] = {0};
    struct iovec iov = {buf, sizeof buf};
    struct perf_event_attr pe;
    memset(&pe, 0, sizeof pe);
    pe.type = PERF_TYPE_SOFTWARE;
    pe.size = sizeof pe;
    pe.config = PERF_COUNT_SW_CPU_CLOCK;
    char uring[120] = {0}; /* struct io_uring_params */
    SYS("ptrace_traceme", SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0);
    SYS("ptrace_attach_init", SYS_ptrace, 16 /* PTRACE_ATTACH */, 1, 0, 0);
    SYS("process_vm_writev", SYS_process_vm_writev, 1, &iov, 1, &iov, 1, 0);
    SYS("process_madvise", SYS_process_madvise, -1, &iov, 1, 0, 0);
    SYS("pidfd_getfd", SYS_pidfd_getfd, -1, 0, 0);
    SYS("kcmp", SYS_kcmp, 1, 1, 0 /* KCMP_FILE */, 0, 0);
    SYS("mount_tmpfs", SYS_mount, "none", "/tmp", "tmpfs", 0, 0);
    SYS("umount_proc", SYS_umount2, "/proc", 2 /* MNT_DETACH */);
    SYS("unshare_mount", SYS_unshare, CLONE_NEWNS);
    SYS("unshare_user", SYS_unshare, CLONE_NEWUSER);
    SYS("setns", SYS_setns, 0, 0);
    SYS("pivot_root", SYS_pivot_root, "/tmp", "/tmp");
    SYS("chroot", SYS_chroot, "/tmp");
    SYS("fsopen_fd", SYS_fsopen, "tmpfs", 0);
    SYS("open_tree_fd", SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */);
    SYS("open_by_handle_at_fd", SYS_open_by_handle_at, AT_FDCWD, NULL, O_RDONLY);
    SYS("io_uring_setup_fd", SYS_io_uring_setup, 4, uring);
    SYS("bpf", SYS_bpf, 5 /* BPF_PROG_LOAD */, NULL, 0);
    SYS("perf_event_open_fd", SYS_perf_event_open, &pe, 0, -1, -1, 0);
    SYS("userfaultfd_fd", SYS_userfaultfd, O_CLOEXEC);
    SYS("fanotify_init_fd", SYS_fanotify_init, 0, 0);
    SYS("keyctl", SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -2 /* process keyring */, 1);
    SYS("add_key", SYS_add_key, "user", "partita-hostile", "x", 1, -2);
    SYS("kexec_load", SYS_kexec_load, 0, 0, NULL, 0xdead0000UL);
    SYS("reboot", SYS_reboot, 0, 0, 0, NULL);
    SYS("init_module", SYS_init_module, NULL, 0, "");
    SYS("finit_module", SYS_finit_module, -1, "", 0);
    SYS("delete_module", SYS_delete_module, "partita_no_such_module", O_NONBLOCK);
    SYS("clock_settime", SYS_clock_settime, -1, NULL);
    SYS("swapon", SYS_swapon, "/partita-no-such-swap", 0);
}

/* Signals: every pid, the whole process group, and its own PID 1. Each counting attack reports
 * how many signals were delivered (kill returned 0) and the last errno. */
static void signals(void) {
    errno = 0;
    long r = kill(-1, SIGKILL);
    report("kill_all", r, r < 0 ? errno : 0);
    /* Its own threads (the runtime's and the APEX processes') are pids of its namespace too:
     * a signal to one of them reaches its own process, PID 1, which ignores it. */
    long delivered = 0;
    int last = 0;
    char path[64];
    /* Pids 2..4096: each SIGKILL goes through the module's broker (tens of microseconds, see
     * docs/isolation.md, "Exits"), and a fresh namespace's pids are small. */
    for (pid_t pid = 2; pid <= 4096; pid++) {
        snprintf(path, sizeof path, "/proc/self/task/%d", (int)pid);
        if (access(path, F_OK) == 0) continue;
        if (kill(pid, SIGKILL) == 0) {
            delivered++;
            printf("note delivered to %d\n", (int)pid);
        } else
            last = errno;
    }
    report("kill_pids", delivered, last);
    /* Its process group: the module's, were the partition not in a session of its own. */
    errno = 0;
    r = kill(0, SIGKILL);
    report("kill_group", r, r < 0 ? errno : 0);
    /* Itself, the PID 1 of its namespace: ignored (no handler). */
    errno = 0;
    r = kill(1, SIGKILL);
    report("kill_init", r, r < 0 ? errno : 0);
    printf("note pid %d ppid %d\n", (int)getpid(), (int)getppid());
}

/* ptrace of a child of its own (the only other process it can name). */
static void ptrace_child(void) {
    pid_t child = fork();
    if (child == 0) {
        for (;;) pause();
    }
    errno = 0;
    long r = syscall(SYS_ptrace, 0x4206 /* PTRACE_SEIZE */, child, 0, 0);
    report("ptrace_seize_child", r, r < 0 ? errno : 0);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

static void attack_syscalls(void) {
    denied_calls();
    signals();
    ptrace_child();
    printf("note exec\n");
    fflush(stdout);
    /* The shell inherits the partition's real-time policy, cgroup, namespaces and filter: it
     * spins for ever, and is stopped at every window end like the program it replaced. */
    execl("/bin/sh", "sh", "-c", "echo attack exec result=$$ errno=0; while :; do :; done", (char *)NULL);
    report("exec", -1, errno);
}

/* Closes every descriptor (the runtime's control block, doorbell and directory included) and
 * keeps calling the runtime. It may fault, stall or go on: the others must not notice. */
static void attack_close(void) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE t;
    report("close_all", 0, 0);
    long r = syscall(SYS_close_range, 0, ~0U, 0);
    (void)r;
    for (;;) {
        GET_TIME(&t, &rc);
        TIMED_WAIT(1 * MS, &rc);
        PERIODIC_WAIT(&rc);
    }
}

/* Moves every thread of this program to SCHED_OTHER (through the module's broker). */
static void demote_all(void) {
    struct sched_param p = {0};
    char path[64];
    for (pid_t tid = 1; tid < 64; tid++) {
        snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
        if (access(path, F_OK) == 0) sched_setscheduler(tid, SCHED_OTHER, &p);
    }
}

/* Allocates and touches memory until its memory limit stops it: on a v1 limit the module's
 * guard demotes, then kills it (backend/process/oom_guard.rs). The program still demotes its own
 * threads first: were the guard broken (or on a pure cgroup v2 machine, where the kernel's OOM
 * killer remains), a thread killed while busy at a real-time priority could spin for ever in
 * the kernel's exit path (docs/isolation.md, "Exits"). */
static void attack_hog(void) {
    demote_all();
    report("hog_start", sched_getscheduler(0), 0);
    long mib = 0;
    for (;;) {
        char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            report("hog", mib, errno);
            idle();
        }
        for (long i = 0; i < (1 << 20); i += 4096) m[i] = 1;
        mib++;
        if (mib % 16 == 0) printf("note hog %ld MiB\n", mib);
    }
}

/* The read-only shared mapping (perms "r--s") of the port, from /proc/self/maps. */
static char *port_mapping(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    char *found = NULL;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && strcmp(perms, "r--s") == 0) {
            printf("note mapping %s", line);
            if (!found) found = (char *)lo;
        }
    }
    if (f) fclose(f);
    return found;
}

static volatile int stored;

/* Reads "state" once the ATTACK process has tried its store (the fault made ATTACK dormant; the
 * HM table's IGNORE lets the partition go on): the writer wrote once, so the message must still
 * be its "intact". */
static void check_port(void) {
    RETURN_CODE_TYPE rc;
    SAMPLING_PORT_ID_TYPE id;
    char msg[64] = {0};
    MESSAGE_SIZE_TYPE len = 0;
    VALIDITY_TYPE valid;
    while (!stored) TIMED_WAIT(5 * MS, &rc);
    TIMED_WAIT(50 * MS, &rc);
    GET_SAMPLING_PORT_ID("state", &id, &rc);
    READ_SAMPLING_MESSAGE(id, msg, &len, &valid, &rc);
    printf("note after read rc=%d len=%d content=%.*s\n", (int)rc, (int)len, (int)len, msg);
    report("port_after_fault", rc == NO_ERROR && len == 6 && memcmp(msg, "intact", 6) == 0, 0);
    idle();
}

static void attack_port(void) {
    RETURN_CODE_TYPE rc;
    SAMPLING_PORT_ID_TYPE id;
    char msg[64];
    MESSAGE_SIZE_TYPE len = 0;
    VALIDITY_TYPE valid;
    GET_SAMPLING_PORT_ID("state", &id, &rc);
    /* Wait (a bounded number of periods) for the writer's message. */
    for (int i = 0; i < 200; i++) {
        memset(msg, 0, sizeof msg);
        READ_SAMPLING_MESSAGE(id, msg, &len, &valid, &rc);
        if (rc == NO_ERROR) break;
        TIMED_WAIT(10 * MS, &rc);
    }
    printf("note read rc=%d len=%d content=%.*s\n", (int)rc, (int)len, (int)len, msg);
    char *map = port_mapping();
    errno = 0;
    long r = map ? mprotect(map, 4096, PROT_READ | PROT_WRITE) : -2;
    report("port_mprotect", r, r < 0 ? errno : 0);
    if (map) {
        report("port_store", 0, 0);
        stored = 1;
        /* Garbage over the whole first page: header and message. */
        for (int i = 0; i < 4096; i++) ((volatile char *)map)[i] = (char)0xA5;
    }
    report("port_store_done", 0, 0);
    idle();
}

/* clone with `flags` (a fork otherwise): a child that got through exits at once. Reports 1 for a
 * child created. */
static void try_clone(const char *name, unsigned long flags) {
    errno = 0;
    long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
    if (r == 0) syscall(SYS_exit, 0);
    int e = r < 0 ? errno : 0;
    if (r > 0) waitpid((pid_t)r, NULL, 0);
    report(name, r > 0 ? 1 : r, e);
}

/* struct clone_args (its 88-byte version). */
struct clone_args88 {
    unsigned long long flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
        set_tid_size, cgroup;
};

static void try_clone3(const char *name, unsigned long long flags) {
    struct clone_args88 ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = flags;
    ca.exit_signal = SIGCHLD;
    errno = 0;
    long r = syscall(SYS_clone3, &ca, sizeof ca);
    if (r == 0) syscall(SYS_exit, 0);
    int e = r < 0 ? errno : 0;
    if (r > 0) waitpid((pid_t)r, NULL, 0);
    report(name, r > 0 ? 1 : r, e);
}

static void *thread_main(void *arg) { return arg; }

static void attack_namespaces(void) {
    try_clone("clone_newuser", CLONE_NEWUSER);
    try_clone("clone_newns", CLONE_NEWNS);
    try_clone("clone_newpid", CLONE_NEWPID);
    try_clone("clone_newnet", CLONE_NEWNET);
    try_clone("clone_newipc", CLONE_NEWIPC);
    try_clone("clone_newuts", CLONE_NEWUTS);
    try_clone("clone_newcgroup", CLONE_NEWCGROUP);
    try_clone("clone_newuser_newns_newpid", CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID);
    try_clone3("clone3_newuser", CLONE_NEWUSER);
    try_clone3("clone3_newtime", 0x80 /* CLONE_NEWTIME */);
    try_clone3("clone3_plain", 0);
    SYS("unshare_user_mount", SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS);
    SYS("unshare_time", SYS_unshare, 0x80 /* CLONE_NEWTIME */);
    int ns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    SYS("setns_user", SYS_setns, ns, CLONE_NEWUSER);
    close(ns);
    /* What must still work: threads and processes. */
    pthread_t t;
    void *ret = NULL;
    int rc = pthread_create(&t, NULL, thread_main, (void *)7);
    if (rc == 0) pthread_join(t, &ret);
    report("pthread_create", rc == 0 ? (long)ret : -1, rc);
    pid_t child = fork();
    if (child == 0) _exit(7); /* an exit_group, through the module's broker */
    int status = 0, e = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) e = errno;
    report("fork_exit", WIFEXITED(status) ? WEXITSTATUS(status) : -1, e);
    idle();
}

/* Policy of the calling thread (0 SCHED_OTHER, 1 SCHED_FIFO, ...). */
static long policy(void) { return sched_getscheduler(0); }

/* Waits for child `c` and returns how it ended: the signal that killed it (as -SIG), its exit
 * status, or 1000 + the signal that stopped it (with WUNTRACED). */
static long ended(pid_t c, int options) {
    int st = 0;
    if (waitpid(c, &st, options) != c) return -10000 - errno;
    if (WIFSIGNALED(st)) return -WTERMSIG(st);
    if (WIFSTOPPED(st)) return 1000 + WSTOPSIG(st);
    return WEXITSTATUS(st);
}

static void on_usr1(int sig) { (void)sig; }

/* Each child runs at the real-time priority of the process that forks it (one thread: one
 * priority, so not exposed to the kernel's exit hazard even if nothing demoted it). The lines
 * "attack NAME result=R errno=0": R is the child's policy where it reports one (0 once the
 * module's broker demoted it), or how it ended (see ended()). */
static void attack_signals(void) {
    int fds[2];
    report("policy_before", policy(), 0);
    /* A blocked SIGTERM to itself: the broker demotes before the signal is even delivered. */
    pid_t c = fork();
    if (c == 0) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigprocmask(SIG_BLOCK, &set, NULL);
        long before = policy();
        kill(getpid(), SIGTERM);
        report("sigterm_blocked_before", before, 0);
        report("sigterm_blocked_after", policy(), 0);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        _exit(99);
    }
    report("sigterm_blocked_end", ended(c, 0), 0);
    /* A caught signal: not demoted. */
    c = fork();
    if (c == 0) {
        signal(SIGUSR1, on_usr1);
        kill(getpid(), SIGUSR1);
        report("sigusr1_caught", policy(), 0);
        _exit(0);
    }
    report("sigusr1_caught_end", ended(c, 0), 0);
    /* SIGKILL to itself, by kill and by tgkill. */
    c = fork();
    if (c == 0) {
        kill(getpid(), SIGKILL);
        _exit(98);
    }
    report("sigkill_self", ended(c, 0), 0);
    c = fork();
    if (c == 0) {
        syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGKILL);
        _exit(98);
    }
    report("tgkill_self", ended(c, 0), 0);
    /* SIGSTOP to itself: stopped, demoted; then SIGKILL from the partition. */
    c = fork();
    if (c == 0) {
        raise(SIGSTOP);
        _exit(97);
    }
    report("sigstop_self", ended(c, WUNTRACED), 0);
    report("sigstop_self_policy", sched_getscheduler(c), 0);
    kill(c, SIGKILL);
    report("sigstop_self_end", ended(c, 0), 0);
    /* The partition signals a child (SIGTERM blocked there) by pid, by pidfd, then its whole
     * process group (itself included: the kernel drops it for PID 1): the child reports its
     * policy once told the signal was sent. */
    static const char *const how[3][3] = {
        {"kill_sigterm_sent", "kill_sigterm_child", "kill_sigterm_end"},
        {"pidfd_sigterm_sent", "pidfd_sigterm_child", "pidfd_sigterm_end"},
        {"group_sigterm_sent", "group_sigterm_child", "group_sigterm_end"},
    };
    for (int mode = 0; mode < 3; mode++) {
        sigset_t set;
        if (pipe(fds) != 0) break;
        /* Blocked before the fork: the child has it blocked from its first instruction. */
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigprocmask(SIG_BLOCK, &set, NULL);
        c = fork();
        if (c != 0) sigprocmask(SIG_UNBLOCK, &set, NULL);
        if (c == 0) {
            char b;
            close(fds[1]);
            if (read(fds[0], &b, 1) != 1) _exit(96);
            report(how[mode][1], policy(), 0);
            sigprocmask(SIG_UNBLOCK, &set, NULL);
            _exit(95);
        }
        close(fds[0]);
        long r;
        if (mode == 1) {
            int pfd = (int)syscall(SYS_pidfd_open, c, 0);
            r = syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0);
            close(pfd);
        } else {
            r = kill(mode == 2 ? 0 : c, SIGTERM);
        }
        if (write(fds[1], "x", 1) != 1) r = -2;
        close(fds[1]);
        report(how[mode][0], r, r < 0 ? errno : 0);
        report(how[mode][2], ended(c, 0), 0);
    }
    /* Its own PID 1: the kernel drops SIGKILL and an uncaught SIGTERM from inside the
     * namespace, and the broker leaves its priorities alone. */
    long r = kill(1, SIGTERM);
    report("init_sigterm", r, r < 0 ? errno : 0);
    r = kill(1, SIGKILL);
    report("init_sigkill", r, r < 0 ? errno : 0);
    report("policy_after", policy(), 0);
    idle();
}

/* Forked children that fault: the runtime's handlers are inherited, and a process that is not the
 * partition's ends with exit_group(128 + signal) (its last resort), not by the signal. */
static void attack_faults(void) {
    pid_t c = fork();
    if (c == 0) {
        *(volatile int *)8 = 1;
        _exit(94);
    }
    report("child_segv", ended(c, 0), 0);
    c = fork();
    if (c == 0) {
        __builtin_trap();
    }
    report("child_sigill", ended(c, 0), 0);
    c = fork();
    if (c == 0) {
        abort();
    }
    report("child_abort", ended(c, 0), 0);
    idle();
}

static void *faulting_thread(void *arg) {
    (void)arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    report("thread_fault", 0, 0);
    *(volatile int *)8 = 1;
    return NULL;
}

/* A thread the program created (not an APEX process, not the initialization process) faults:
 * the runtime cannot make it an error of a process, so the whole program ends (exit_group 139)
 * and the module reports the MEMORY_VIOLATION. The program demotes its own threads first, as
 * the hog does: were the last resort broken, the default action would kill it at several
 * real-time priorities (the exit hazard); the exit_group's own demotion is tested elsewhere. */
static void attack_thread_fault(void) {
    pthread_t t;
    pthread_create(&t, NULL, faulting_thread, NULL);
    demote_all();
    idle();
}

/* Keeps the module's broker busy: a caught SIGUSR1 to itself, for ever (each call goes to the
 * broker, which finds it caught). Reports how many calls it made every 1000. */
static void attack_sigflood(void) {
    signal(SIGUSR1, on_usr1);
    for (long n = 1;; n++) {
        if (kill(getpid(), SIGUSR1) != 0) report("sigflood_failed", n, errno);
        if (n == 1000) report("sigflood", n, 0);
    }
}

static void attack(void) {
    if (!strcmp(group, "syscalls")) attack_syscalls();
    else if (!strcmp(group, "namespaces")) attack_namespaces();
    else if (!strcmp(group, "close")) attack_close();
    else if (!strcmp(group, "hog")) attack_hog();
    else if (!strcmp(group, "port")) attack_port();
    else if (!strcmp(group, "signals")) attack_signals();
    else if (!strcmp(group, "faults")) attack_faults();
    else if (!strcmp(group, "thread_fault")) attack_thread_fault();
    else if (!strcmp(group, "sigflood")) attack_sigflood();
    printf("note unknown group %s\n", group);
    idle();
}

static void spin(void) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE start, last, now;
    GET_TIME(&start, &rc);
    last = start;
    for (;;) {
        GET_TIME(&now, &rc);
        if (now - last > 50000) {
            printf("ran %lld %lld\n", (long long)start, (long long)last);
            start = now;
        }
        last = now;
    }
}

int main(int argc, char **argv) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE pid;
    RETURN_CODE_TYPE rc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    group = argc > 1 ? argv[1] : "";
    int writer = !strcmp(group, "writer");
    if (writer) {
        SAMPLING_PORT_ID_TYPE id;
        CREATE_SAMPLING_PORT("state", 64, SOURCE, 100 * MS, &id, &rc);
        WRITE_SAMPLING_MESSAGE(id, "intact", 6, &rc);
        printf("note writer rc=%d\n", (int)rc);
    } else if (!strcmp(group, "port")) {
        SAMPLING_PORT_ID_TYPE id;
        CREATE_SAMPLING_PORT("state", 64, DESTINATION, 100 * MS, &id, &rc);
        printf("note create rc=%d\n", (int)rc);
    }
    memset(&attr, 0, sizeof attr);
    strcpy(attr.NAME, writer ? "spinner" : "ATTACK");
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)(writer ? spin : attack);
    attr.STACK_SIZE = 256 * 1024;
    attr.BASE_PRIORITY = 5;
    attr.PERIOD = INFINITE_TIME_VALUE;
    attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
    CREATE_PROCESS(&attr, &pid, &rc);
    if (rc != NO_ERROR) { printf("note CREATE_PROCESS %d\n", (int)rc); return 1; }
    START(pid, &rc);
    if (!strcmp(group, "port")) {
        strcpy(attr.NAME, "CHECK");
        attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)check_port;
        CREATE_PROCESS(&attr, &pid, &rc);
        START(pid, &rc);
    }
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
