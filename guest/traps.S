/* Exception entry of guest images: one stub per CPU exception (vectors 0-31). Each stub
   writes a record at PT_FAULT_RECORD (vector, error code, rip, cr2) and the vector to the
   fault port; the VMM reads the record and ends the partition with the fault's
   health-monitor error (docs/kvm.md, "Faults"). traps.c loads the IDT. */
#define PT_FAULT_PORT 0xf6
#define PT_FAULT_RECORD 0x5100

    .text
    .macro stub vec, has_err
    .globl pt_trap\vec
pt_trap\vec:
    .if \has_err == 0
    pushq $0
    .endif
    pushq $\vec
    jmp pt_trap_common
    .endm

    stub 0,0
    stub 1,0
    stub 2,0
    stub 3,0
    stub 4,0
    stub 5,0
    stub 6,0
    stub 7,0
    stub 8,1
    stub 9,0
    stub 10,1
    stub 11,1
    stub 12,1
    stub 13,1
    stub 14,1
    stub 15,0
    stub 16,0
    stub 17,1
    stub 18,0
    stub 19,0
    stub 20,0
    stub 21,1
    stub 22,0
    stub 23,0
    stub 24,0
    stub 25,0
    stub 26,0
    stub 27,0
    stub 28,0
    stub 29,1
    stub 30,1
    stub 31,0

/* Stack: vector, error code, then the CPU's frame (rip, cs, rflags, rsp, ss). */
pt_trap_common:
    movq (%rsp), %rax
    movq %rax, PT_FAULT_RECORD
    movq 8(%rsp), %rax
    movq %rax, PT_FAULT_RECORD + 8
    movq 16(%rsp), %rax
    movq %rax, PT_FAULT_RECORD + 16
    movq %cr2, %rax
    movq %rax, PT_FAULT_RECORD + 24
    movq (%rsp), %rax
    movw $PT_FAULT_PORT, %dx
    outl %eax, %dx
1:  cli
    hlt
    jmp 1b

    .section .rodata
    .globl pt_trap_table
    .balign 8
pt_trap_table:
    .irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    .quad pt_trap\v
    .endr
