/* The services that need no other party make no system call: a process puts its own thread
 * under a seccomp filter that allows only write, exit, exit_group and rt_sigreturn (any other
 * system call raises SIGSYS, whose handler reports the call's number and ends the program),
 * calls them many times, then writes "ok" and ends its thread. A helper process ends the
 * program once the flag is set. (Seccomp *strict* mode cannot be used: it also disables the
 * TSC, so the vDSO clock faults.) */
#define _GNU_SOURCE
#include "check.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int done;
static int control; /* argument "control": also call TIMED_WAIT, which must be caught */
static PROCESS_ID_TYPE probe_id, helper_id;
static volatile long long sink;

static void on_sigsys(int sig, siginfo_t *info, void *ctx)
{
    (void)sig;
    (void)ctx;
    char msg[] = "FAIL system call nnn made under seccomp\n";
    int nr = info->si_syscall;
    msg[17] = (char)('0' + nr / 100 % 10);
    msg[18] = (char)('0' + nr / 10 % 10);
    msg[19] = (char)('0' + nr % 10);
    write(1, msg, sizeof msg - 1);
    syscall(SYS_exit_group, 3);
}

static int enter_seccomp(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = sizeof filter / sizeof filter[0], .filter = filter };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static void probe(void)
{
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE t;
    PROCESS_ID_TYPE id;
    PROCESS_STATUS_TYPE st;
    PARTITION_STATUS_TYPE ps;
    PROCESSOR_CORE_ID_TYPE core;
    SCHEDULE_STATUS_TYPE ss;
    SCHEDULE_ID_TYPE sid;
    PROCESS_INDEX_TYPE index;
    int bad = 0;

    if (enter_seccomp() != 0) {
        printf("FAIL prctl(PR_SET_SECCOMP) refused\n");
        fflush(stdout);
        exit(2);
    }
    for (int i = 0; i < 10000; i++) {
        GET_TIME(&t, &rc);
        bad |= rc != NO_ERROR;
        GET_MY_ID(&id, &rc);
        bad |= rc != NO_ERROR || id != probe_id;
        GET_MY_INDEX(&index, &rc);
        bad |= rc != NO_ERROR;
        GET_PROCESS_STATUS(id, &st, &rc);
        bad |= rc != NO_ERROR || st.PROCESS_STATE != RUNNING;
        GET_PROCESS_STATUS(helper_id, &st, &rc);
        bad |= rc != NO_ERROR;
        GET_PROCESS_STATUS(999, &st, &rc);
        bad |= rc != INVALID_PARAM;
        GET_PROCESS_ID("HELPER", &id, &rc);
        bad |= rc != NO_ERROR || id != helper_id;
        GET_PROCESS_ID("UNKNOWN", &id, &rc);
        bad |= rc != INVALID_CONFIG;
        GET_PARTITION_STATUS(&ps, &rc);
        bad |= rc != NO_ERROR || ps.OPERATING_MODE != NORMAL;
        GET_MY_PROCESSOR_CORE_ID(&core, &rc);
        bad |= rc != NO_ERROR;
        GET_MODULE_SCHEDULE_STATUS(&ss, &rc);
        bad |= rc != NO_ERROR;
        GET_MODULE_SCHEDULE_ID("standalone", &sid, &rc);
        bad |= rc != NO_ERROR;
        GET_MODULE_SCHEDULE_ID("other", &sid, &rc);
        bad |= rc != INVALID_CONFIG;
        sink += t + core;
    }
    if (control)
        TIMED_WAIT(1 * MS, &rc); /* a futex wait: SIGSYS */
    static const char ok[] = "ok: 13 services x 10000 calls without a system call\n";
    static const char ko[] = "FAIL wrong results under seccomp\n";
    if (bad)
        write(1, ko, sizeof ko - 1);
    else
        write(1, ok, sizeof ok - 1);
    atomic_store(&done, 1);
    syscall(SYS_exit, 0); /* ends this thread only */
}

static void helper(void)
{
    RETURN_CODE_TYPE rc;
    while (!atomic_load(&done))
        TIMED_WAIT(2 * MS, &rc);
    exit(0);
}

int main(int argc, char **argv)
{
    RETURN_CODE_TYPE rc;
    control = argc > 1 && strcmp(argv[1], "control") == 0;
    probe_id = create("PROBE", probe, 20, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    helper_id = create("HELPER", helper, 10, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    START(probe_id, &rc);
    START(helper_id, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
