/* The guest's IDT: the 32 CPU exceptions go to the stubs of traps.S, which report them to the
   VMM (a divide error ends the partition with NUMERIC_ERROR, an invalid opcode with
   ILLEGAL_REQUEST, a page or protection fault with MEMORY_VIOLATION; docs/kvm.md). */
#include "partita_guest.h"

struct idt_entry {
    uint16_t offset_low;
    uint16_t selector;
    uint8_t ist;
    uint8_t type_attr;
    uint16_t offset_mid;
    uint32_t offset_high;
    uint32_t zero;
} __attribute__((packed));

struct idt_pointer {
    uint16_t limit;
    uint64_t base;
} __attribute__((packed));

extern const uint64_t pt_trap_table[32];
static struct idt_entry idt[32] __attribute__((aligned(16)));

void pt_traps_init(void) {
    for (int v = 0; v < 32; v++) {
        uint64_t a = pt_trap_table[v];
        idt[v].offset_low = (uint16_t)a;
        idt[v].selector = 0x08;
        /* A double fault and a page fault run on the VMM's exception stack (IST1 of its TSS):
           a stack overflow into the guard page must still reach the stub. */
        idt[v].ist = (v == 8 || v == 14) ? 1 : 0;
        idt[v].type_attr = 0x8e; /* present, ring 0, 64-bit interrupt gate */
        idt[v].offset_mid = (uint16_t)(a >> 16);
        idt[v].offset_high = (uint32_t)(a >> 32);
        idt[v].zero = 0;
    }
    struct idt_pointer p = {sizeof idt - 1, (uint64_t)idt};
    __asm__ volatile("lidt %0" : : "m"(p));
}
