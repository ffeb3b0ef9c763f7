/* A test guest that faults once it has said so: -DFAULT_DIV divides by zero, -DFAULT_UD
   executes an invalid opcode (ud2), -DFAULT_PF writes where no page maps (beyond its RAM in
   the page tables). The start-up code's exception stubs report the fault to the VMM. */
#include "partita_guest.h"

#if defined(FAULT_STACK)
static uint64_t deeper(uint64_t n) {
    volatile uint64_t frame[64];
    frame[0] = n;
    return deeper(n + 1) + frame[0];
}
#endif

int main(void) {
    pt_puts("fault guest started\n");
#if defined(FAULT_DIV)
    volatile uint32_t zero = 0, one = 1;
    return (int)(one / zero);
#elif defined(FAULT_UD)
    __asm__ volatile("ud2");
#elif defined(FAULT_PF)
    *(volatile uint64_t *)0x40000000ull = 1; /* 1 GiB: past the page directory */
#elif defined(FAULT_STACK)
    return (int)deeper(0);
#endif
    return 0;
}
