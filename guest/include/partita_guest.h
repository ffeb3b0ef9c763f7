/* The freestanding helpers of a kvm partition's guest image (deliver 2 of issue 12): a
   console, the partition's end, the TSC and the progress word. The full APEX over hypercalls
   is a later delivery. */
#ifndef PARTITA_GUEST_H
#define PARTITA_GUEST_H

#include <stdint.h>

/* I/O ports the VMM serves (crates/module/src/backend/kvm/mod.rs). */
#define PT_CONSOLE_PORT 0xe9
#define PT_EXIT_PORT 0xf4
/* A CPU exception: the vector, after a record (vector, error code, rip, cr2) at
   PT_FAULT_RECORD (traps.S). */
#define PT_FAULT_PORT 0xf6
#define PT_FAULT_RECORD 0x5100
/* A u64 the guest may bump as it makes progress; the VMM reads it for its park records. */
#define PT_PROGRESS ((volatile uint64_t *)0x5000)

static inline void pt_outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port)); }
static inline uint64_t pt_rdtsc(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

void pt_putc(char c);
void pt_puts(const char *s);
void pt_put_u64(uint64_t v);
void pt_exit(uint32_t status) __attribute__((noreturn));
void pt_traps_init(void);

#endif
