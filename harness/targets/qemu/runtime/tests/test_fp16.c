/*
 * IEEE binary16 arithmetic on real Zfh instructions (clang build): each core
 * of a 4-core fork computes a half-precision dot product. Exits 0 only if
 * every result matches the value worked out by hand.
 */
#include <stdio.h>

#include "pmsis.h"
#include "ptl_platform.h"

#if !defined(__riscv_zfh)
#error "build with clang -march=rv32imafc_zfh"
#endif

#define N 64

static _Float16 a[N], b[N];
static _Float16 result[4];

__attribute__((noinline)) static _Float16 dot(const _Float16 *x, const _Float16 *y, int n)
{
    _Float16 acc = 0;
    for (int i = 0; i < n; i++)
        acc = x[i] * y[i] + acc; /* fmadd.h with -ffp-contract=on */
    return acc;
}

static void body(void *arg)
{
    (void)arg;
    int id = pi_core_id();
    result[id] = dot(a, b, N) + (_Float16)id;
}

int main(void)
{
    ptl_platform_init(0, NULL);
    for (int i = 0; i < N; i++) {
        a[i] = (_Float16)0.5f;
        b[i] = (_Float16)(float)(i % 4); /* 0,1,2,3 repeating: sum 6 per 4 -> 96 * 0.5 */
    }
    pi_cl_team_fork(4, body, NULL);
    int ok = 1;
    for (int c = 0; c < 4; c++) {
        float got = (float)result[c], want = 48.0f + (float)c;
        printf("core %d: %d/100\n", c, (int)(got * 100));
        ok &= got == want;
    }
    return ok ? 0 : 1;
}
