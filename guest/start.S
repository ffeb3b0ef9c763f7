/* Start-up of a kvm partition's guest image (guest/README.md). The VMM enters _start in
   64-bit mode with rsp at the top of guest RAM and rdi = the vCPU's index; RAM is zeroed, so
   .bss needs no clearing. main's return value ends the partition through the exit port. */
    .section .text.start, "ax"
    .globl _start
_start:
    andq $-16, %rsp
    xorl %ebp, %ebp
    call main
    movw $0xf4, %dx
    outl %eax, %dx
1:  cli
    hlt
    jmp 1b
