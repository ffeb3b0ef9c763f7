/* The test guest of kvm partitions: prints a line, then spins for ever, bumping the progress
   word the VMM reads at each park and resume, and keeping rdtsc samples in its RAM. Built
   with -DSPIN_CLI it first disables interrupts (as the VMM starts it anyway), the case a
   gate must stop without the guest's help. */
#include "partita_guest.h"

#define SAMPLES 4096
static uint64_t tsc[SAMPLES];

int main(void) {
#ifdef SPIN_CLI
    __asm__ volatile("cli");
    pt_puts("spin guest started (interrupts off)\n");
#else
    pt_puts("spin guest started\n");
#endif
    for (uint64_t i = 0;; i++) {
        *PT_PROGRESS = *PT_PROGRESS + 1;
        if ((i & 0xfff) == 0) tsc[(i >> 12) % SAMPLES] = pt_rdtsc();
    }
    return 0;
}
