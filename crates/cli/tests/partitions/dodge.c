/* A partition that tries to dodge the module's stop at its window end (tests/run_hostile.rs,
 * forked_children_that_leave_the_group_or_send_sigcont_still_stop_at_the_window_end).
 *
 * The main process forks CHILDREN children. Every process tries to leave the partition's
 * process group and session ("attack setsid|setpgid result=R errno=E", one line per process;
 * the seccomp filter refuses both with EPERM), takes its own SCHED_FIFO priority (10, 30, 50,
 * 70 and 89 for the main process: several priorities on the one CPU) and then, for ever,
 * spins on GET_TIME for about 300 us, sends SIGCONT to every other process of the partition
 * (so that a process stopped at the window end would be continued by one not yet stopped),
 * and sleeps 100 us (so that the lower priorities get the CPU too). Each process prints the
 * intervals during which it ran like timecheck.c: "ran START END" (ns since the module
 * epoch; consecutive GET_TIME samples less than 50 us apart).
 *
 * The child at priority 10 also runs a thread at priority 88 that spins for 2 ms at a time
 * (100 us naps): a SIGSTOP sent to its process wakes the main thread, which that spinner keeps
 * off the CPU, so only a SIGSTOP to the spinning thread itself stops it. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "ARINC653.h"

#define CHILDREN 4

/* Pids of every process of the partition (index 0: the main one), shared after fork. */
static volatile pid_t *pids;

static void report(const char *name, long result, int err) {
    printf("attack %s result=%ld errno=%d\n", name, result, err);
    fflush(stdout);
}

/* Spins in bursts of `burst_ns`, printing "ran" intervals, with 100 us naps between. */
static void spin(SYSTEM_TIME_TYPE burst_ns, int index) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE start, last, now, burst;
    GET_TIME(&start, &rc);
    last = start;
    for (;;) {
        burst = last;
        do {
            GET_TIME(&now, &rc);
            if (now - last > 50000) {
                printf("ran %lld %lld\n", (long long)start, (long long)last);
                fflush(stdout);
                start = now;
            }
            last = now;
        } while (now - burst < burst_ns);
        for (int i = 0; index >= 0 && i <= CHILDREN; i++) {
            if (i != index && pids[i] > 0) kill(pids[i], SIGCONT);
        }
        /* Longer than 50 us: the next sample starts a new interval. */
        struct timespec nap = {0, 100000};
        nanosleep(&nap, NULL);
    }
}

static void *spinner(void *arg) {
    (void)arg;
    struct sched_param p = {.sched_priority = 88};
    int e = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
    printf("note spinner thread at priority 88%s\n", e ? " refused" : "");
    fflush(stdout);
    spin(2000000, -1);
    return NULL;
}

static void dodge(int index, int prio) {
    long r;
    errno = 0;
    r = setsid();
    report("setsid", r, r < 0 ? errno : 0);
    errno = 0;
    r = setpgid(0, 0);
    report("setpgid", r, r < 0 ? errno : 0);
    struct sched_param p = {.sched_priority = prio};
    if (sched_setscheduler(0, SCHED_FIFO, &p) != 0) printf("note priority %d refused errno=%d\n", prio, errno);
    printf("note process %d at priority %d\n", index, prio);
    fflush(stdout);
    if (index == 1) {
        pthread_t t;
        if (pthread_create(&t, NULL, spinner, NULL) != 0) printf("note pthread_create failed\n");
    }
    spin(300000, index);
}

int main(void) {
    static const int prio[CHILDREN + 1] = {89, 10, 30, 50, 70};
    pids = mmap(NULL, sizeof(pid_t) * (CHILDREN + 1), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (pids == MAP_FAILED) {
        printf("note mmap errno=%d\n", errno);
        return 1;
    }
    pids[0] = getpid();
    for (int i = 1; i <= CHILDREN; i++) {
        pid_t child = fork();
        if (child == 0) dodge(i, prio[i]);
        if (child < 0) printf("note fork errno=%d\n", errno);
        pids[i] = child;
    }
    dodge(0, prio[0]);
    return 0;
}
