/* Start-up of a kvm partition's guest image (docs/kvm.md, "The guest side"). The VMM enters _start in
   64-bit mode with rsp at the top of guest RAM and rdi = the vCPU's index; RAM is zeroed, so
   .bss needs no clearing. The CPU exceptions are reported to the VMM (traps.S, traps.c) from
   the first instruction of main on. main's return value ends the partition through the exit
   port. */
    .section .text.start, "ax"
    .globl _start
_start:
    andq $-16, %rsp
    xorl %ebp, %ebp
    pushq %rdi
    pushq %rdi
    call pt_traps_init
    popq %rdi
    popq %rdi
    call main
    movw $0xf4, %dx
    outl %eax, %dx
1:  cli
    hlt
    jmp 1b
