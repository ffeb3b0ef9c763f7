/* A partition that tries to take its core with real-time priorities (tests/run_guard.rs).
 *
 * It prints "listeners N", the seccomp listener descriptors it holds (0). Then it asks for what it must not get and prints each answer as "NAME ERRNO" (0 =
 * granted): SCHED_FIFO 99 and 91 (sched_setscheduler), sched_setparam 99 while FIFO,
 * SCHED_DEADLINE (sched_setattr), FIFO 95 for another of its threads (pthread_setschedparam:
 * a thread id of its own PID namespace); then its ceiling, FIFO 90, for itself and for that
 * thread, and prints the policy and priority it has then ("now POLICY PRIO").
 *
 *   schedhog spin N    then N more threads at FIFO 90 and itself spin for ever ("spinning")
 *   schedhog bench N   then N priority changes (FIFO 40 <-> 50), each timed: "bench median
 *                      NS p99 NS max NS" (the cost of the module's scheduling broker)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

/* Descriptors of a seccomp notification listener this program holds (it must hold none: with
 * one it could answer, or let through, its own scheduling calls). */
static int listeners(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[300], target[256];
    while (d && (e = readdir(d))) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0) {
            target[len] = 0;
            n += strstr(target, "seccomp") != NULL;
        }
    }
    if (d) closedir(d);
    return n;
}

struct attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

static int fifo(pid_t tid, int prio) {
    struct sched_param p = {.sched_priority = prio};
    return sched_setscheduler(tid, SCHED_FIFO, &p) == 0 ? 0 : errno;
}

static void *idle(void *arg) {
    (void)arg;
    for (;;) pause();
    return NULL;
}

static void *spin(void *arg) {
    struct sched_param p = {.sched_priority = 90};
    int e = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
    printf("spinner %d\n", e);
    fflush(stdout);
    (void)arg;
    /* Threads of one FIFO priority on one CPU take turns only when one yields. */
    for (;;) {
        for (volatile unsigned long i = 0; i < 1000000; i++) {
        }
        sched_yield();
    }
    return NULL;
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("listeners %d\n", listeners());
    pthread_t other;
    pthread_create(&other, NULL, idle, NULL);
    printf("fifo99 %d\n", fifo(0, 99));
    printf("fifo91 %d\n", fifo(0, 91));
    struct attr dl = {.size = sizeof dl, .policy = 6 /* SCHED_DEADLINE */, .runtime = 1000000, .deadline = 10000000, .period = 10000000};
    printf("deadline %d\n", syscall(SYS_sched_setattr, 0, &dl, 0) == 0 ? 0 : errno);
    struct sched_param p95 = {.sched_priority = 95};
    printf("thread95 %d\n", pthread_setschedparam(other, SCHED_FIFO, &p95));
    printf("fifo90 %d\n", fifo(0, 90));
    struct sched_param p99 = {.sched_priority = 99};
    printf("setparam99 %d\n", sched_setparam(0, &p99) == 0 ? 0 : errno);
    struct sched_param p90 = {.sched_priority = 90};
    printf("thread90 %d\n", pthread_setschedparam(other, SCHED_FIFO, &p90));
    struct sched_param now;
    sched_getparam(0, &now);
    printf("now %d %d\n", sched_getscheduler(0), now.sched_priority);
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (argc > 1 && strcmp(argv[1], "spin") == 0) {
        for (int i = 0; i < n; i++) {
            pthread_t t;
            pthread_create(&t, NULL, spin, NULL);
        }
        printf("spinning\n");
        spin(NULL);
    }
    if (argc > 1 && strcmp(argv[1], "bench") == 0 && n > 0) {
        int64_t *d = malloc(sizeof *d * n);
        for (int i = 0; i < n; i++) {
            int64_t t0 = now_ns();
            int e = fifo(0, i % 2 ? 40 : 50);
            d[i] = now_ns() - t0;
            if (e) {
                printf("bench error %d\n", e);
                return 1;
            }
        }
        qsort(d, n, sizeof *d, cmp);
        printf("bench median %lld p99 %lld max %lld\n", (long long)d[n / 2], (long long)d[n * 99 / 100], (long long)d[n - 1]);
    }
    for (;;) pause();
}
