/* The bench workload program: `wl KERNEL [options]`, natively or, with --apex, as an ARINC 653
 * partition (the work runs in an APEX process once the partition is NORMAL). One result per line,
 * `wl KERNEL key=value ...`, then `wl done`; the experiments parse these lines (natively from
 * stdout, in a partition from `partita run`'s `[NAME] line` output). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ARINC653.h"
#include "kernels.h"

static struct {
    const char *kernel, *shm;
    int apex;
    uint64_t n, reps, size, period_us, who;
    enum wl_lock_kind lock;
    double scale;
} opt = {.n = 100000, .reps = 5, .size = 8u << 20, .period_us = 50000, .scale = 0.005};

static void usage(void) {
    fprintf(stderr,
            "usage: wl KERNEL [--apex] [--n N] [--reps R] [--size BYTES] [--period-us P] [--shm FILE]\n"
            "          [--lock busy|block] [--who K] [--scale S]\n"
            "KERNEL: intmix dskernel chase memcopy payload spin ofp vsp\n");
    exit(2);
}

static void parse(int argc, char **argv) {
    if (argc < 2) usage();
    opt.kernel = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--apex")) { opt.apex = 1; continue; }
        if (!v) usage();
        i++;
        if (!strcmp(a, "--n")) opt.n = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--reps")) opt.reps = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--size")) opt.size = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--period-us")) opt.period_us = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--who")) opt.who = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--shm")) opt.shm = v;
        else if (!strcmp(a, "--scale")) opt.scale = atof(v);
        else if (!strcmp(a, "--lock")) opt.lock = !strcmp(v, "block") ? WL_LOCK_BLOCK : WL_LOCK_BUSY;
        else usage();
    }
}

/* ---- one-shot kernels: the same code natively and in an APEX process ---------------------- */

static void run_scores(void) {
    for (uint64_t r = 0; r < opt.reps; r++) {
        int64_t t0 = wl_now_ns();
        uint32_t check = !strcmp(opt.kernel, "intmix") ? wl_intmix((uint32_t)opt.n) : wl_dskernel((uint32_t)opt.n);
        int64_t ns = wl_now_ns() - t0;
        printf("wl %s rep=%" PRIu64 " n=%" PRIu64 " ns=%" PRId64 " check=0x%x\n", opt.kernel, r, opt.n, ns, check);
    }
}

static void run_chase(void) {
    for (uint64_t r = 0; r < opt.reps; r++)
        printf("wl chase rep=%" PRIu64 " size=%" PRIu64 " ns_per_load=%.3f\n", r, opt.size, wl_chase(opt.size, opt.n));
}

static void run_spin(void) {
    int fd = open(opt.shm, O_RDWR);
    if (fd < 0) { perror(opt.shm); exit(1); }
    struct wl_spin_shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED) { perror("mmap"); exit(1); }
    int64_t start = wl_now_ns();
    int64_t ns = wl_spin(s, opt.lock, (uint32_t)opt.n, (uint32_t)opt.who);
    printf("wl spin who=%" PRIu64 " start=%" PRId64 " end=%" PRId64 " ns=%" PRId64 "\n", opt.who, start, start + ns, ns);
}

static void run_once(void) {
    if (!strcmp(opt.kernel, "intmix") || !strcmp(opt.kernel, "dskernel")) run_scores();
    else if (!strcmp(opt.kernel, "chase")) run_chase();
    else if (!strcmp(opt.kernel, "memcopy")) wl_memcopy(opt.size, opt.n); /* --n 0: forever */
    else if (!strcmp(opt.kernel, "spin")) run_spin();
    else usage();
    printf("wl done\n");
    fflush(stdout);
}

/* ---- partition side ------------------------------------------------------------------------ */

static void check(RETURN_CODE_TYPE rc, const char *what) {
    if (rc != NO_ERROR) {
        printf("wl error %s rc=%d\n", what, (int)rc);
        exit(1);
    }
}

static PROCESS_ID_TYPE process(const char *name, SYSTEM_TIME_TYPE period, SYSTEM_TIME_TYPE capacity, PRIORITY_TYPE prio,
                               void (*entry)(void)) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    memset(&attr, 0, sizeof attr);
    strncpy(attr.NAME, name, sizeof attr.NAME - 1);
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)entry;
    attr.STACK_SIZE = 256 * 1024;
    attr.BASE_PRIORITY = prio;
    attr.PERIOD = period;
    attr.TIME_CAPACITY = capacity;
    attr.DEADLINE = SOFT;
    CREATE_PROCESS(&attr, &id, &rc);
    check(rc, "CREATE_PROCESS");
    START(id, &rc);
    check(rc, "START");
    return id;
}

static void idle_forever(void) {
    RETURN_CODE_TYPE rc;
    for (;;) TIMED_WAIT(1000000000LL, &rc);
}

static void once_process(void) {
    run_once();
    idle_forever();
}

/* The overlap payload: every period, t1, payload, t2 (seed 001 section 4.5). */
static uint8_t *payload_buf;
static void payload_process(void) {
    RETURN_CODE_TYPE rc;
    for (uint64_t r = 0; r < opt.reps; r++) {
        int64_t t1 = wl_now_ns();
        uint64_t sum = wl_payload(payload_buf, opt.size, opt.n);
        int64_t t2 = wl_now_ns();
        printf("wl payload rep=%" PRIu64 " ns=%" PRId64 " sum=%" PRIu64 "\n", r, t2 - t1, sum);
        PERIODIC_WAIT(&rc);
    }
    printf("wl done\n");
    idle_forever();
}

/* The OFP / VSP task sets of seed 002 Table III: each job records its release point r (the
 * deadline minus the time capacity), its start s and its finish f, and busies itself for the
 * table's execution time times --scale. */
struct task { const char *name; int64_t period_ms, exec_ms; PRIORITY_TYPE prio; };
static const struct task ofp_tasks[] = {
    {"GnC", 20, 2, 40}, {"NavReader", 20, 6, 39}, {"SwmReader", 80, 3, 30}, {"AdtReader", 80, 10, 29}};
static const struct task vsp_tasks[] = {{"VdoStrming", 80, 35, 40}};

static void burn(int64_t ns) {
    int64_t last = wl_now_ns(), now, done = 0;
    while (done < ns) {
        now = wl_now_ns();
        if (now - last < 20000) done += now - last; /* time preempted does not count */
        last = now;
    }
}

static void task_body(int index, const struct task *set) {
    const struct task *t = &set[index];
    RETURN_CODE_TYPE rc;
    PROCESS_ID_TYPE me;
    PROCESS_STATUS_TYPE st;
    GET_MY_ID(&me, &rc);
    for (uint64_t job = 0; job < opt.reps; job++) {
        SYSTEM_TIME_TYPE s, f;
        GET_TIME(&s, &rc);
        GET_PROCESS_STATUS(me, &st, &rc);
        burn((int64_t)((double)t->exec_ms * 1e6 * opt.scale));
        GET_TIME(&f, &rc);
        SYSTEM_TIME_TYPE r = st.DEADLINE_TIME - st.ATTRIBUTES.TIME_CAPACITY;
        printf("wl release task=%s job=%" PRIu64 " r=%" PRId64 " s=%" PRId64 " f=%" PRId64 "\n", t->name, job, (int64_t)r,
               (int64_t)s, (int64_t)f);
        PERIODIC_WAIT(&rc);
    }
    printf("wl done task=%s\n", t->name);
    idle_forever();
}

static void ofp0(void) { task_body(0, ofp_tasks); }
static void ofp1(void) { task_body(1, ofp_tasks); }
static void ofp2(void) { task_body(2, ofp_tasks); }
static void ofp3(void) { task_body(3, ofp_tasks); }
static void vsp0(void) { task_body(0, vsp_tasks); }

static void start_partition(void) {
    RETURN_CODE_TYPE rc;
    if (!strcmp(opt.kernel, "payload")) {
        payload_buf = calloc(1, opt.size);
        if (!payload_buf) exit(1);
        memset(payload_buf, 1, opt.size); /* no page faults inside the measurement */
        process("payload", (SYSTEM_TIME_TYPE)opt.period_us * 1000, (SYSTEM_TIME_TYPE)opt.period_us * 1000, 50, payload_process);
    } else if (!strcmp(opt.kernel, "ofp")) {
        void (*bodies[])(void) = {ofp0, ofp1, ofp2, ofp3};
        for (int i = 0; i < 4; i++)
            process(ofp_tasks[i].name, ofp_tasks[i].period_ms * 1000000, ofp_tasks[i].period_ms * 1000000, ofp_tasks[i].prio, bodies[i]);
    } else if (!strcmp(opt.kernel, "vsp")) {
        process(vsp_tasks[0].name, vsp_tasks[0].period_ms * 1000000, vsp_tasks[0].period_ms * 1000000, vsp_tasks[0].prio, vsp0);
    } else {
        process("work", INFINITE_TIME_VALUE, INFINITE_TIME_VALUE, 10, once_process);
    }
    SET_PARTITION_MODE(NORMAL, &rc);
    check(rc, "SET_PARTITION_MODE");
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    parse(argc, argv);
    if (opt.apex) start_partition();
    else if (!strcmp(opt.kernel, "payload")) {
        payload_buf = calloc(1, opt.size);
        if (!payload_buf) exit(1);
        memset(payload_buf, 1, opt.size);
        for (uint64_t r = 0; r < opt.reps; r++) {
            int64_t t1 = wl_now_ns();
            uint64_t sum = wl_payload(payload_buf, opt.size, opt.n);
            printf("wl payload rep=%" PRIu64 " ns=%" PRId64 " sum=%" PRIu64 "\n", r, wl_now_ns() - t1, sum);
        }
        printf("wl done\n");
    } else run_once();
    return 0;
}
