/* A hostile partition for run_garbage.rs: it writes garbage, over and over, into every shared
 * mapping it can write (its control block, its port memory: found through /proc/self/maps and
 * by mapping the descriptors the APEX library received), and rings the module's doorbell.
 *
 *   garbage RUNNING SEQ REQUEST TRACE
 *
 * The arguments are byte offsets in the control block (partita_abi::ControlBlock) of
 * status.module_running and schedule.seq, which it leaves alone (so that its own runtime keeps
 * running and the garbage goes on all run long), and of the request and the trace ring, where
 * it also writes plausible-looking but wrong values. Rounds cycle through patterns: random
 * bytes, all 0xff, all 0, small numbers. Prints "garbage regions N control C" once. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ARINC653.h"

#define MAX_REGIONS 64

struct region {
    unsigned char *base;
    size_t len;
    int control;
};

static struct region regions[MAX_REGIONS];
static int nregions;
static size_t off_running, off_seq, off_request, off_trace;

static void add(void *base, size_t len, int control) {
    if (nregions < MAX_REGIONS && base != MAP_FAILED && len > 0) regions[nregions++] = (struct region){ base, len, control };
}

/* Shared writable mappings of this process (the APEX library's own views). */
static void from_maps(ino_t control_inode) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        unsigned long start, end, offset, inode;
        char perms[8], dev[16];
        if (sscanf(line, "%lx-%lx %7s %lx %15s %lu", &start, &end, perms, &offset, dev, &inode) != 6) continue;
        if (strcmp(perms, "rw-s") != 0) continue;
        add((void *)start, end - start, inode == control_inode);
    }
    fclose(f);
}

/* Every descriptor from 3 up that maps writable (the port directory and read-only channel ends
 * refuse). */
static void from_fds(ino_t control_inode) {
    for (int fd = 3; fd < 64; fd++) {
        struct stat st;
        if (fd == 4 || fstat(fd, &st) != 0 || st.st_size <= 0 || !S_ISREG(st.st_mode)) continue;
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        add(p, (size_t)st.st_size, st.st_ino == control_inode);
    }
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The request words are written by plausible() alone: a fill could post a valid request by
 * chance (SET_PARTITION_MODE IDLE: the module would stop it, as asked). */
static int request_word(const struct region *r, size_t off) {
    return r->control && off >= off_request && off < off_request + 16;
}

static int kept(const struct region *r, size_t off) {
    return r->control && (off == (off_running & ~(size_t)7) || off == (off_seq & ~(size_t)7));
}

static void fill(const struct region *r, int pattern) {
    for (size_t off = 0; off + 8 <= r->len; off += 8) {
        uint64_t v;
        switch (pattern) {
        case 0: v = next_random(); break;
        case 1: v = ~0ULL; break;
        case 2: v = 0; break;
        default: v = (off / 8) % 5 | ((off / 8 + 1) % 5) << 32; break;
        }
        volatile uint64_t *w = (volatile uint64_t *)(r->base + off);
        if (request_word(r, off)) continue;
        if (kept(r, off)) {
            /* Keep the protected u32, scribble on its neighbour. */
            volatile uint32_t *h = (volatile uint32_t *)w;
            int keep_low = (off == (off_running & ~(size_t)7) ? off_running : off_seq) % 8 == 0;
            h[keep_low ? 1 : 0] = (uint32_t)v;
            continue;
        }
        *w = v;
    }
}

/* Values that look like the protocol's but are wrong. */
static void plausible(const struct region *r, unsigned round) {
    volatile uint32_t *req = (volatile uint32_t *)(r->base + off_request);
    volatile uint64_t *ring = (volatile uint64_t *)(r->base + off_trace);
    /* Unknown kind; SET_PARTITION_MODE(NORMAL); SET_MODULE_SCHEDULE of an unknown schedule. No
     * mix of these words (the module may read them half-written) is a valid request. */
    uint32_t kinds[3][2] = { { 77, 999 }, { 1, 3 }, { 2, 999 } };
    req[1] = kinds[round % 3][0];
    req[2] = kinds[round % 3][1];
    req[0] = req[3] + 1; /* seq != done: posted */
    ring[0] = ring[1] + 5000;             /* head far beyond tail + capacity */
    ring[2] = 16045693964005768151ULL;    /* dropped */
}

int main(int argc, char **argv) {
    RETURN_CODE_TYPE rc;
    QUEUING_PORT_ID_TYPE qo, qi;
    SAMPLING_PORT_ID_TYPE so;
    if (argc < 5) {
        printf("usage: garbage RUNNING SEQ REQUEST TRACE\n");
        return 1;
    }
    off_running = strtoul(argv[1], NULL, 0);
    off_seq = strtoul(argv[2], NULL, 0);
    off_request = strtoul(argv[3], NULL, 0);
    off_trace = strtoul(argv[4], NULL, 0);
    /* The runtime maps its ports at creation. */
    CREATE_QUEUING_PORT("gq_out", 32, 4, SOURCE, FIFO, &qo, &rc);
    CREATE_QUEUING_PORT("gq_in", 32, 4, DESTINATION, FIFO, &qi, &rc);
    CREATE_SAMPLING_PORT("gs_out", 32, SOURCE, INFINITE_TIME_VALUE, &so, &rc);
    SEND_QUEUING_MESSAGE(qo, (const APEX_BYTE *)"hello", 5, 0, &rc);
    struct stat st;
    ino_t control_inode = fstat(3, &st) == 0 ? st.st_ino : 0;
    from_maps(control_inode);
    from_fds(control_inode);
    int controls = 0;
    for (int i = 0; i < nregions; i++) controls += regions[i].control;
    printf("garbage regions %d control %d\n", nregions, controls);
    fflush(stdout);
    /* The initialization process never goes NORMAL: it scribbles until it is killed. */
    for (unsigned round = 0;; round++) {
        for (int i = 0; i < nregions; i++) {
            fill(&regions[i], (int)(round % 4));
            if (regions[i].control) plausible(&regions[i], round);
        }
        uint64_t one = 1;
        if (write(4, &one, sizeof one) < 0) { /* the doorbell: the module reads the request */ }
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
}
