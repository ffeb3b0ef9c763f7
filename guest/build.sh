#!/usr/bin/env bash
# Builds a guest image: guest/build.sh OUT.elf SRC.c... [CFLAGS...]
# (the start-up code, the console helper and the linker script of this directory).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"; shift
exec gcc -ffreestanding -fno-pic -fno-stack-protector -mno-red-zone -mgeneral-regs-only -O2 \
  -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-z,noexecstack -T "$here/link.ld" \
  -I "$here/include" -o "$out" "$here/start.S" "$here/console.c" "$@"
