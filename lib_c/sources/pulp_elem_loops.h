/*
 * pulp_elem_loops.h (internal): element loops that stay loops.
 *
 * GCC 12 and clang 14 turn a loop of element stores into a call of memset or
 * memcpy, and Debian's picolibc is built for size: those are byte loops, 4 to
 * 6 instructions a byte (lib_c/README.md, "No memset for a small struct"),
 * about 16 to 24 an FP32 element where the loop takes 4 or 5. A volatile
 * store must be made as written, so these loops keep their element moves.
 * For short moves inside a layer (a row of weights, a band of a gradient);
 * the public copy and zero functions have their own loops.
 */
#ifndef PULP_ELEM_LOOPS_H
#define PULP_ELEM_LOOPS_H

/* DST[0..N) = VALUE */
#define PTL_FILL_ELEMS(DST, N, VALUE)                                                                  \
    do {                                                                                               \
        volatile __typeof__(*(DST)) *const d_ = (DST);                                                 \
        const int n_ = (N);                                                                            \
        for (int i_ = 0; i_ < n_; i_++)                                                                \
            d_[i_] = (VALUE);                                                                          \
    } while (0)

/* DST[0..N) = SRC[0..N); the two do not overlap */
#define PTL_COPY_ELEMS(DST, SRC, N)                                                                    \
    do {                                                                                               \
        volatile __typeof__(*(DST)) *const d_ = (DST);                                                 \
        const __typeof__(*(DST)) *const s_ = (SRC);                                                    \
        const int n_ = (N);                                                                            \
        for (int i_ = 0; i_ < n_; i_++)                                                                \
            d_[i_] = s_[i_];                                                                           \
    } while (0)

#endif /* PULP_ELEM_LOOPS_H */
