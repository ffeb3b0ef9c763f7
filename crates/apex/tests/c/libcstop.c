/* STOP/START and SUSPEND/RESUME of processes that loop over the C library (malloc, free, printf,
 * snprintf, fprintf, fputs, fwrite) never leave a C library lock held: 10,000 rounds, each
 * stopping and restarting one worker and suspending and resuming the other at a random point of
 * its loop, and the partition keeps working. Before the safe STOP/SUSPEND of the runtime, a
 * worker stopped inside malloc or printf kept that lock and the other one (or the controller)
 * hung on it within a few thousand rounds.
 *
 * The workers print to stdout, which is /dev/null during the rounds (the original stdout is kept
 * for the report); the report is written with write(2) and the program ends with _exit, so that a
 * lock left held cannot hang the report itself. Counters show progress; no check is about time.
 * With the argument "multicore" (and PARTITA_STANDALONE_CPUS=a,b) worker 0 runs on core 1, worker
 * 1 and the controller on core 0: the requests then reach worker 0 while it runs, and the
 * controller waits for each one to take effect (not both workers on core 1: the one running
 * there keeps the other, of the same priority, from ever acting on a request). Needs real-time
 * scheduling. */
#define _GNU_SOURCE
#include "check.h"

#include <fcntl.h>
#include <unistd.h>

#define ROUNDS 10000

static atomic_long loops[2];
static atomic_int starts[2];
static atomic_int bad_text;
static PROCESS_ID_TYPE worker_id[2];
static FILE *sink;
static int report_fd = 2;
static int failures;

static void say(const char *line)
{
    ssize_t r = write(report_fd, line, strlen(line));
    (void)r;
}

static void verdict(const char *what, int ok)
{
    char line[200];
    snprintf(line, sizeof line, "%s %s\n", ok ? "PASS" : "FAIL", what);
    say(line);
    failures += !ok;
}

static void work(int me)
{
    atomic_fetch_add(&starts[me], 1);
    unsigned seed = (unsigned)me * 7919u + (unsigned)atomic_load(&starts[me]);
    for (;;) {
        size_t n = 16 + (rand_r(&seed) % 4000);
        char *p = malloc(n);
        char *q = calloc(1, 64 + n / 2);
        char text[96];
        snprintf(text, sizeof text, "worker %d loop %ld size %zu", me, atomic_load(&loops[me]), n);
        if (strncmp(text, "worker ", 7) != 0)
            atomic_fetch_add(&bad_text, 1);
        if (p != NULL) {
            memset(p, me, n);
            p = realloc(p, n * 2);
        }
        printf("%s %s\n", text, q != NULL ? "ok" : "no memory");
        fprintf(sink, "%s\n", text);
        fputs(text, stdout);
        fwrite(text, 1, strlen(text), sink);
        free(q);
        free(p);
        atomic_fetch_add_explicit(&loops[me], 1, memory_order_relaxed);
    }
}

static void worker0(void)
{
    work(0);
}

static void worker1(void)
{
    work(1);
}

/* Waits (bounded, by the number of controller sleeps: about 5 s, generous on a loaded machine)
 * until worker w makes progress. */
static int progresses(int w)
{
    RETURN_CODE_TYPE rc;
    long before = atomic_load(&loops[w]);
    for (int i = 0; i < 5000; i++) {
        TIMED_WAIT(1 * MS, &rc);
        if (atomic_load(&loops[w]) != before)
            return 1;
    }
    return 0;
}

/* Both workers make progress: each one alone while the other is suspended (the workers share a
 * priority, so under FIFO the one running would otherwise keep the CPU). */
static int each_progresses(void)
{
    RETURN_CODE_TYPE rc;
    int ok = 1;
    for (int w = 0; w < 2; w++) {
        SUSPEND(worker_id[1 - w], &rc);
        ok &= rc == NO_ERROR && progresses(w);
        RESUME(worker_id[1 - w], &rc);
        ok &= rc == NO_ERROR;
    }
    return ok;
}

static void controller(void)
{
    RETURN_CODE_TYPE rc;
    unsigned seed = 12345;
    int stops = 0, suspends = 0, bad_rc = 0, stalled = 0;
    verdict("workers run", each_progresses());
    for (int round = 0; round < ROUNDS; round++) {
        int a = round & 1, b = 1 - a;
        /* Let the workers run up to a random point of their loops, then stop one of them there. */
        TIMED_WAIT(20000 + (rand_r(&seed) % 150000), &rc);
        STOP(worker_id[a], &rc);
        bad_rc += rc != NO_ERROR;
        stops += rc == NO_ERROR;
        /* The other worker runs alone: it needs the locks the stopped one may have been holding. */
        TIMED_WAIT(20000 + (rand_r(&seed) % 100000), &rc);
        START(worker_id[a], &rc);
        bad_rc += rc != NO_ERROR;
        TIMED_WAIT(20000 + (rand_r(&seed) % 150000), &rc);
        SUSPEND(worker_id[b], &rc);
        bad_rc += rc != NO_ERROR;
        suspends += rc == NO_ERROR;
        TIMED_WAIT(20000 + (rand_r(&seed) % 100000), &rc);
        RESUME(worker_id[b], &rc);
        bad_rc += rc != NO_ERROR;
        if (round % 1000 == 999 && !each_progresses()) {
            stalled = round + 1;
            break;
        }
    }
    char line[200];
    snprintf(line, sizeof line, "rounds: %d stops, %d suspends, restarts %d+%d, loops %ld+%ld\n", stops, suspends,
             atomic_load(&starts[0]), atomic_load(&starts[1]), atomic_load(&loops[0]), atomic_load(&loops[1]));
    say(line);
    if (stalled) {
        snprintf(line, sizeof line, "FAIL the workers stopped making progress after %d rounds (a C library lock left held)\n",
                 stalled);
        say(line);
        failures++;
    }
    verdict("every STOP/START/SUSPEND/RESUME returned NO_ERROR", bad_rc == 0);
    verdict("10,000 stops and 10,000 suspends", stops == ROUNDS && suspends == ROUNDS);
    if (stalled) {
        /* No worker may be left busy at a real-time priority when the program ends. */
        STOP(worker_id[0], &rc);
        STOP(worker_id[1], &rc);
        say("SUMMARY libcstop stalled\n");
        _exit(50);
    }
    verdict("the workers still make progress", each_progresses());
    verdict("snprintf produced the expected text", atomic_load(&bad_text) == 0);
    /* The controller itself can still use the locks the workers take. */
    void *m = malloc(100);
    free(m);
    printf("controller after the rounds\n");
    fflush(stdout);
    verdict("the controller uses malloc and stdio after the rounds", 1);
    STOP(worker_id[0], &rc);
    STOP(worker_id[1], &rc);
    snprintf(line, sizeof line, "SUMMARY libcstop %d failed\n", failures);
    say(line);
    _exit(failures);
}

int main(int argc, char **argv)
{
    RETURN_CODE_TYPE rc;
    int multicore = argc > 1 && strcmp(argv[1], "multicore") == 0;
    worker_id[0] = create("WORKER0", worker0, 5, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    worker_id[1] = create("WORKER1", worker1, 5, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    PROCESS_ID_TYPE c = create("CONTROLLER", controller, 20, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    if (multicore) {
        INITIALIZE_PROCESS_CORE_AFFINITY(worker_id[0], 1, &rc);
        check_eq("worker 0 on core 1", rc, NO_ERROR);
        INITIALIZE_PROCESS_CORE_AFFINITY(worker_id[1], 0, &rc);
        check_eq("worker 1 on core 0", rc, NO_ERROR);
        INITIALIZE_PROCESS_CORE_AFFINITY(c, 0, &rc);
        check_eq("controller on core 0", rc, NO_ERROR);
    }
    /* Keep the real stdout for the report; the workers' output goes to /dev/null. */
    fflush(stdout);
    report_fd = dup(1);
    int null = open("/dev/null", O_WRONLY);
    if (report_fd < 0 || null < 0 || dup2(null, 1) < 0)
        return 90;
    sink = fopen("/dev/null", "w");
    if (sink == NULL)
        return 91;
    START(worker_id[0], &rc);
    START(worker_id[1], &rc);
    START(c, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
