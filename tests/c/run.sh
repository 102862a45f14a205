#!/bin/sh
# tests/c/run.sh: builds lib_c against the host cluster shim and runs
# test_kernels in every configuration the library must pass, then checks that
# every source compiles for the RV32 targets.
#   sh tests/c/run.sh             every configuration (about 5 minutes on 2 cores)
#   sh tests/c/run.sh bf16 cross_gcc  the configurations named (CONFIGS below)
#   QUICK=1 sh tests/c/run.sh     quick sweeps only
# Exit status is non-zero if any build or test fails, or a name is unknown.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/lib_c_tests}
mkdir -p "$OUT"
# The sources under test (fp16 helpers, matmul, managers, linear); set
# LIB_SRCS to test a different list.
S="$ROOT/lib_c/sources"
SRCS=${LIB_SRCS:-"$S/pulp_mm_tiles_fp32.c $S/pulp_matmul_fp32.c $S/pulp_matmul_M_fp32.c
  $S/pulp_mm_manager_fp32.c $S/pulp_mm_tiles_fp16.c $S/pulp_matmul_fp16.c
  $S/pulp_mm_manager_fp16.c $S/pulp_linear_fp32.c $S/pulp_linear_fp16.c"}
SHIM="$ROOT/harness/targets/host/runtime/team_pthreads.c"
INC="-I $ROOT/harness/runtime/include -I $ROOT/lib_c/include"
CFLAGS="-O2 -g -Wall -Wextra -std=gnu99 -pthread -DNUM_CORES=ptl_num_cores"
QUICKARG=""
[ "${QUICK:-0}" = 1 ] && QUICKARG=--quick
status=0

build() { # name extra-flags...
    name=$1; shift
    # shellcheck disable=SC2086
    if ! gcc $CFLAGS "$@" $INC -o "$OUT/$name" "$ROOT/tests/c/test_kernels.c" $SRCS "$SHIM" -lm; then
        echo "BUILD FAILED: $name"; status=1; return 1
    fi
}
run() { # name [env assignments] args...
    name=$1; shift
    echo "=== $name $*"
    start=$(date +%s)
    if ! env "$@"; then echo "TEST FAILED: $name"; status=1; fi
    echo "=== $name took $(( $(date +%s) - start )) s"
}

# One configuration each; tests/test_c_kernels.py runs them as tests of
# their own, so that a failure names its configuration.
CONFIGS="bf16 ieee noopt san_ieee san_bf16 cross_gcc cross_clang"

# bf16 also runs the sequenced team orders (harness/targets/host/runtime/
# team_pthreads.c): the cores run one at a time between barriers, so a
# missing barrier fails on every run.
config_bf16() {
    build test_BF16 -DOPTIMIZE -DPTL_FP16_BF16 || return
    run test_BF16 "$OUT/test_BF16" $QUICKARG
    for order in forward reverse rotate; do
        run "test_order_$order" PTL_TEAM_ORDER=$order "$OUT/test_BF16" --quick
    done
}
config_ieee() {
    build test_IEEE -DOPTIMIZE -DPTL_FP16_IEEE && run test_IEEE "$OUT/test_IEEE" $QUICKARG
}
config_noopt() {
    build test_noopt -DPTL_FP16_BF16 && run test_noopt "$OUT/test_noopt" --quick
}
# ASan and UBSan at -O1 -g1 (later flags win), as the host target builds them
# (harness/targets/host): with -O2 -g, GCC 12 spends about 2 minutes on
# pulp_mm_tiles_fp32.c.
SAN="-O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=all"
config_san_ieee() {
    # shellcheck disable=SC2086
    build test_san_IEEE -DOPTIMIZE -DPTL_FP16_IEEE $SAN &&
        run test_san_IEEE ASAN_OPTIONS=detect_leaks=1 "$OUT/test_san_IEEE" $QUICKARG
}
config_san_bf16() {
    # shellcheck disable=SC2086
    build test_san_BF16 -DOPTIMIZE -DPTL_FP16_BF16 $SAN &&
        run test_san_BF16 ASAN_OPTIONS=detect_leaks=1 "$OUT/test_san_BF16" $QUICKARG
}

# Cross compilation (compile only). The bare-metal gcc needs a libc for
# <stdint.h>/<string.h>/<math.h>: picolibc's specs when present.
RV_LIBC=""
[ -f /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs ] && RV_LIBC="--specs=picolibc.specs"
RV_SYSINC=""
[ -d /usr/lib/picolibc/riscv64-unknown-elf/include ] && RV_SYSINC="-isystem /usr/lib/picolibc/riscv64-unknown-elf/include"
cross() { # label compiler flags...
    label=$1; shift
    if ! command -v "$1" >/dev/null 2>&1; then echo "SKIPPED ($1 not installed): $label"; return; fi
    ok=1
    for f in $SRCS; do
        # shellcheck disable=SC2086
        if ! "$@" -Werror -Wall -Wextra -DNUM_CORES=ptl_num_cores -DOPTIMIZE $INC -c -o "$OUT/cross.o" "$f"; then
            echo "CROSS FAILED: $label: $f"; ok=0; status=1
        fi
    done
    [ $ok = 1 ] && echo "ok: $label"
}
# One configuration per compiler, so that one of them missing skips only its own.
config_cross_gcc() {
    echo "=== cross compilation: riscv64-unknown-elf-gcc"
    for fmt in BF16 IEEE; do
        cross "riscv64-unknown-elf-gcc rv32imafc $fmt" riscv64-unknown-elf-gcc $RV_LIBC -march=rv32imafc -mabi=ilp32f -O2 -DPTL_FP16_$fmt
    done
}
config_cross_clang() {
    echo "=== cross compilation: clang"
    for fmt in BF16 IEEE; do
        cross "clang rv32imafc_zfh $fmt" clang --target=riscv32-unknown-elf -march=rv32imafc_zfh -mabi=ilp32f $RV_SYSINC -O2 -DPTL_FP16_$fmt
    done
}

[ $# = 0 ] && set -- $CONFIGS
for config in "$@"; do
    case " $CONFIGS " in
        *" $config "*) "config_$config" ;;
        *) echo "unknown configuration: $config (one of: $CONFIGS)"; status=1 ;;
    esac
done

[ $status = 0 ] && echo "ALL PASSED" || echo "SOME FAILED"
exit $status
