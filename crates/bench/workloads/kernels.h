/* Partita bench workloads: the kernels, shared by the native and the partitioned driver (wl.c).
 * Written for this project; each kernel returns a checksum so the compiler cannot drop the work
 * and the tests can check the result at every optimization level. */
#ifndef PARTITA_WL_KERNELS_H
#define PARTITA_WL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in ns (vDSO: no system call). */
int64_t wl_now_ns(void);

/* Integer synthetic mix (Dhrystone-class): records, string copy and compare, enumerations,
 * integer arithmetic and branches. `runs` loops; returns a checksum. */
uint32_t wl_intmix(uint32_t runs);

/* Data-structure kernel (CoreMark-class): linked-list search and reversal, integer matrix
 * multiply-add, a state machine over a text, all folded into a CRC-16. `iters` loops. */
uint16_t wl_dskernel(uint32_t iters);

/* CRC-16/CCITT-FALSE of `len` bytes, continuing from `crc` (0xFFFF to start). */
uint16_t wl_crc16(const uint8_t *data, size_t len, uint16_t crc);

/* Pointer chasing over `bytes` (one pointer per 64-byte line, one random cycle); returns the
 * mean ns per dependent load over `loads` loads. */
double wl_chase(size_t bytes, uint64_t loads);

/* Copies `bytes` from one buffer to another `rounds` times (rounds 0: forever). */
void wl_memcopy(size_t bytes, uint64_t rounds);

/* Writes one byte per cache line over a `bytes` buffer, `lines` lines in all: the payload of the
 * overlap experiment (memory-bound when `bytes` is larger than the private caches). */
uint64_t wl_payload(uint8_t *buf, size_t bytes, uint64_t lines);

/* A lock in shared memory: busy (test-and-set spinning) or blocking (futex: waiters sleep). */
enum wl_lock_kind { WL_LOCK_BUSY, WL_LOCK_BLOCK };

/* Layout of the shared region of the spin-lock stress (the file the experiment creates). */
struct wl_spin_shared {
    uint32_t lock;      /* 0 free, 1 taken, 2 taken with waiters (blocking lock) */
    uint32_t pad0[15];
    uint64_t counter;   /* incremented under the lock: partitions x iterations at the end */
    uint64_t pad1[7];
    uint64_t data[512]; /* read and written under the lock */
};

/* `iters` lock / read / write / unlock iterations; returns the ns they took. */
int64_t wl_spin(struct wl_spin_shared *s, enum wl_lock_kind kind, uint32_t iters, uint32_t who);

#endif
