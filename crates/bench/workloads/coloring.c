/* The cache-coloring experiment's programs (seed 003 section 3.3), native and pinned by the caller:
 *   coloring test --kind instr|data --period-us P --n SAMPLES [--internal] [--colored]
 *     Test: a 512-byte routine (straight-line code, or 512 B of data read and written) run every
 *     P us; prints `wl test ns=...` per run. --internal adds the Internal interference on the same
 *     core (32 KiB touched every 500 us, a lower-priority thread).
 *   coloring external [--colored]
 *     External interference: copies 2 MiB to another 2 MiB, endlessly.
 * --colored takes every page from the page-color half of this role (Test and Internal: the lower
 * half, External: the upper half), picked by physical frame number from /proc/self/pagemap
 * (root only; in a VM the frames are guest-physical). The colors are those of the last-level
 * cache: its size / (ways x page size). Prints `wl coloring colors=... effective=0|1` first. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static long read_long(const char *path) {
    FILE *f = fopen(path, "r");
    long v = 0;
    char unit = 0;
    if (!f) return 0;
    if (fscanf(f, "%ld%c", &v, &unit) < 1) v = 0;
    fclose(f);
    return unit == 'K' ? v * 1024 : unit == 'M' ? v * 1024 * 1024 : v;
}

/* Page colors of the last-level cache (index with the highest level that reports a size). */
static long llc_colors(void) {
    long colors = 0;
    for (int i = 0; i < 8; i++) {
        char p[128];
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        long size = read_long(p);
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/ways_of_associativity", i);
        long ways = read_long(p);
        if (size > 0 && ways > 0) colors = size / ways / PAGE;
    }
    return colors > 0 ? colors : 1;
}

static int pagemap_fd = -1;
static long ncolors;

/* The physical frame number of a resident page (0 when pagemap does not tell: not root). */
static uint64_t pfn(void *page) {
    uint64_t e = 0;
    if (pagemap_fd < 0) return 0;
    if (pread(pagemap_fd, &e, 8, (off_t)((uintptr_t)page / PAGE) * 8) != 8) return 0;
    return (e >> 63) & 1 ? e & ((1ull << 55) - 1) : 0;
}

/* `n` pages whose colors lie in [lo, hi) (any page when not colored), from a large pool. */
static char **pages(size_t n, int colored, long lo, long hi) {
    char **out = calloc(n, sizeof *out);
    /* Frames often come in long runs of consecutive numbers, that is of consecutive colors: the
     * pool spans two full color cycles beyond what an even spread would need. */
    size_t got = 0, pool_pages = colored ? n * (size_t)(ncolors / (hi - lo) + 1) * 2 + (size_t)ncolors * 2 : n;
    char *pool = mmap(NULL, pool_pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (!out || pool == MAP_FAILED) { perror("pages"); exit(1); }
    for (size_t i = 0; i < pool_pages && got < n; i++) {
        char *p = pool + i * PAGE;
        p[0] = 1;
        long c = (long)(pfn(p) % (uint64_t)ncolors);
        if (!colored || (c >= lo && c < hi)) out[got++] = p;
    }
    if (got < n) { fprintf(stderr, "coloring: only %zu of %zu pages of the colors\n", got, n); exit(1); }
    return out;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void realtime(int prio) {
    struct sched_param sp = {.sched_priority = prio};
    sched_setscheduler(0, SCHED_FIFO, &sp); /* best effort: not root, stays SCHED_OTHER */
}

/* ---- Test ------------------------------------------------------------------------------- */

static volatile uint8_t *test_data;

#define OP(i) x = x * 2654435761u + (i); x ^= x >> 13;
#define OP8(i) OP(i) OP(i + 1) OP(i + 2) OP(i + 3) OP(i + 4) OP(i + 5) OP(i + 6) OP(i + 7)
/* About 512 B of straight-line code at -O2 (32 multiply-add-xor-shift steps). */
__attribute__((noinline, aligned(64))) static uint32_t test_instr(uint32_t x) {
    OP8(1) OP8(9) OP8(17) OP8(25)
    return x;
}

/* 512 B of data: 8 cache lines read and written. */
__attribute__((noinline)) static uint32_t test_data_bound(void) {
    uint32_t s = 0;
    for (int i = 0; i < 512; i += 8) { s += test_data[i]; test_data[i] = (uint8_t)(s + i); }
    return s;
}

static char **internal_pages;
static void *internal(void *arg) {
    (void)arg;
    realtime(70);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        for (int p = 0; p < 8; p++)
            for (int i = 0; i < PAGE; i += 64) internal_pages[p][i]++;
        next.tv_nsec += 500000;
        if (next.tv_nsec >= 1000000000) { next.tv_nsec -= 1000000000; next.tv_sec++; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    return NULL;
}

static void run_test(int instr, long period_us, long n, int with_internal, int colored) {
    long half = ncolors / 2 > 0 ? ncolors / 2 : 1;
    test_data = (volatile uint8_t *)pages(1, colored, 0, half)[0];
    if (with_internal) {
        pthread_t t;
        internal_pages = pages(8, colored, 0, half);
        pthread_create(&t, NULL, internal, NULL);
    }
    realtime(80);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    volatile uint32_t sink = 0;
    for (long k = -10; k < n; k++) { /* 10 warm-up runs */
        next.tv_nsec += period_us * 1000;
        while (next.tv_nsec >= 1000000000) { next.tv_nsec -= 1000000000; next.tv_sec++; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        int64_t t0 = now_ns();
        sink += instr ? test_instr((uint32_t)k) : test_data_bound();
        int64_t t1 = now_ns();
        if (k >= 0) printf("wl test ns=%lld\n", (long long)(t1 - t0));
    }
    printf("wl done\n");
}

/* ---- External --------------------------------------------------------------------------- */

static void run_external(int colored) {
    long half = ncolors / 2 > 0 ? ncolors / 2 : 1;
    size_t n = (2u << 20) / PAGE;
    char **a = pages(n, colored, half, ncolors > 1 ? ncolors : 1), **b = pages(n, colored, half, ncolors > 1 ? ncolors : 1);
    for (;;)
        for (size_t i = 0; i < n; i++) memcpy(b[i], a[i], PAGE);
}

int main(int argc, char **argv) {
    int instr = 0, with_internal = 0, colored = 0;
    long period_us = 1000, n = 1000;
    setvbuf(stdout, NULL, _IOFBF, 1 << 20);
    if (argc < 2) { fprintf(stderr, "usage: coloring test|external [options]\n"); return 2; }
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--internal")) with_internal = 1;
        else if (!strcmp(argv[i], "--colored")) colored = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--kind")) instr = !strcmp(argv[++i], "instr");
        else if (i + 1 < argc && !strcmp(argv[i], "--period-us")) period_us = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--n")) n = atol(argv[++i]);
        else { fprintf(stderr, "coloring: unknown option %s\n", argv[i]); return 2; }
    }
    ncolors = llc_colors();
    pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
    char probe[PAGE] __attribute__((aligned(PAGE)));
    probe[0] = 1;
    int effective = pfn(probe) != 0;
    printf("wl coloring colors=%ld effective=%d\n", ncolors, effective);
    if (colored && !effective) colored = 0; /* no frame numbers: the pages stay as they come */
    if (!strcmp(argv[1], "test")) run_test(instr, period_us, n, with_internal, colored);
    else if (!strcmp(argv[1], "external")) run_external(colored);
    else return 2;
    return 0;
}
