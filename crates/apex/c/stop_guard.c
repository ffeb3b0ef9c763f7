/* Safe STOP/SUSPEND: the decision of the stop signal handler, and the way back to it.
 *
 * STOP and SUSPEND of another process interrupt the target thread with a signal. Acting at once
 * (jumping back to the top of the thread, or parking it) is wrong when the thread is inside the C
 * library: malloc, stdio and friends hold a lock there, and the next process that takes it would
 * wait for ever. So the handler (signals.rs) first asks partita_stop_defer_at(): when the
 * interrupted instruction is inside the C runtime's code (libc, the dynamic loader, libpthread,
 * libgcc_s, libstdc++: address ranges computed once at start-up with dl_iterate_phdr), the request
 * is only marked pending on the thread, and control comes back to the runtime
 *   - when the C library call returns into the program, for the common lock-taking entry points,
 *     which the runtime wraps (stop_wrap_*.c: malloc family, printf family, stdio): the wrapper
 *     checks the pending mark after the real call and acts there (partita_stop_point);
 *   - otherwise through a one-shot per-thread timer that re-sends the signal (RESEND_NS later, then
 *     again while the thread stays inside the C library).
 * A thread blocked in one of the runtime's own waits (which also run inside libc's syscall()) is
 * not inside a C library call: the runtime says so (sys::futex_wait) and the handler acts at once. */
#define _GNU_SOURCE
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* Every function of the guard and of the wrappers lives in this section: an instruction there is
 * treated like one inside the C library (the wrappers run between the C library's own frames,
 * e.g. malloc called by vfprintf with the stream locked). */
#define GUARD_CODE __attribute__((section("partita_libc_guard"), noinline))
extern const char __start_partita_libc_guard[], __stop_partita_libc_guard[];

/* Re-send period of the fallback timer: 2 ms. (With 0.2 ms the cross-core variant of
 * tests/c/libcstop.c used to stall in most runs: a handler that found no request pending, inside
 * the C library, went on to act on one recorded a moment later, there. The handler now decides by
 * the interrupted instruction alone; with 0.2 ms, 6 of 6 cross-core runs then passed.) */
#define RESEND_NS 200000L
#define MAX_RANGES 32

struct range {
    uintptr_t lo, hi;
};

static struct range ranges[MAX_RANGES];
static int nranges;

/* Set by the handler when it defers; read by the wrappers after every wrapped call. */
__thread volatile sig_atomic_t partita_stop_pending;
/* The kernel timer of this thread (+1; 0: none). */
static __thread int resend_timer;

extern void partita_stop_act(void);

static const char *const runtime_objects[] = {"libc.so", "ld-linux", "ld64.so", "libpthread", "libdl.so",
                                              "librt.so", "libgcc_s", "libstdc++"};

static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *name = info->dlpi_name;
    if (name == NULL || name[0] == 0)
        return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    int wanted = 0;
    for (size_t i = 0; i < sizeof runtime_objects / sizeof runtime_objects[0]; i++)
        wanted |= strncmp(base, runtime_objects[i], strlen(runtime_objects[i])) == 0;
    if (!wanted)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && nranges < MAX_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
            ranges[nranges].lo = lo;
            ranges[nranges].hi = lo + ph->p_memsz;
            nranges++;
        }
    }
    return 0;
}

/* Records the code ranges of the C runtime (once, at runtime start, before process threads). */
void partita_stop_guard_init(void)
{
    nranges = 0;
    dl_iterate_phdr(add_object, NULL);
}

/* The number of code ranges recorded (for the runtime's self-check). */
int partita_stop_guard_ranges(void)
{
    return nranges;
}

GUARD_CODE int partita_stop_in_c_runtime(uintptr_t pc)
{
    if (pc >= (uintptr_t)__start_partita_libc_guard && pc < (uintptr_t)__stop_partita_libc_guard)
        return 1;
    for (int i = 0; i < nranges; i++)
        if (pc >= ranges[i].lo && pc < ranges[i].hi)
            return 1;
    return 0;
}

GUARD_CODE static uintptr_t interrupted_pc(void *ucontext)
{
    ucontext_t *uc = ucontext;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

/* Creates the calling process thread's re-send timer (at thread start). */
void partita_stop_guard_thread(int signo)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = signo;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    int id = -1;
    if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &id) == 0)
        resend_timer = id + 1;
}

/* Called by the stop signal handler outside the runtime's critical sections: 1 if the thread is
 * inside the C runtime, where the handler must not act; then, if a request is pending
 * (`requested`), it is marked pending and the re-send timer armed. 0 if the handler may act now.
 * The handler decides by the interrupted instruction alone, never by whether a request is pending
 * at the time it looks: a request recorded after that look (its signal held back while the handler
 * runs) would otherwise be carried out inside the C library. */
GUARD_CODE int partita_stop_defer_at(void *ucontext, int requested)
{
    if (!partita_stop_in_c_runtime(interrupted_pc(ucontext))) {
        partita_stop_pending = 0;
        return 0;
    }
    if (!requested)
        return 1;
    partita_stop_pending = 1;
    if (resend_timer) {
        struct itimerspec its;
        memset(&its, 0, sizeof its);
        its.it_value.tv_nsec = RESEND_NS;
        syscall(SYS_timer_settime, resend_timer - 1, 0, &its, NULL);
    }
    return 1;
}

/* Called by a wrapper after the real call, when a request is pending: acts unless the wrapper
 * returns into the C runtime itself (a call the C library makes internally, maybe holding a lock:
 * the outer call, or the timer, acts later). */
GUARD_CODE void partita_stop_point(void *return_address)
{
    if (partita_stop_in_c_runtime((uintptr_t)return_address))
        return;
    partita_stop_pending = 0;
    partita_stop_act();
}
