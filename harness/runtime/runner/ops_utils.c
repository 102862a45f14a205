/*
 * Runner ops of the tensor utilities (pulp_train_utils_fp32.h, _fp16.h). The
 * per-core bodies are forked here on the variant's team, as the API's
 * callers fork them; mm_broadcast and the layout conversions fork
 * themselves; pulp_mean_std and q_rsqrt run on one core.
 *
 * Shapes of up to 4 dims travel as params <p>0..<p>3 with a length <l>:
 *   transpose        n_dim d0..d3 a0..a3 (dims, transposed_axes)
 *   broadcast_sum    l1 p0..p3 (op_1 dims), l2 q0..q3 (op_2 dims)
 *   mm_broadcast     la A0..A3, lb B0..B3
 *   reduce_mean      len d0..d3 axis
 * Floats travel as integers: set_to_value's value = value_milli / 1000 and
 * mean_std's epsilon = eps_micro / 1000000, each a binary32 quotient
 * (rounded to fp16 for the FP16 twins).
 * In-place utilities (mm_add, the layout conversions) start from a copy of
 * their input in the output buffer. reduce_mean adds into its output, which
 * the caller zeroes first (shared/TRAINLIB_API_MORE.md): it starts as zeros,
 * so the test asks only for the mean, whatever the library adds it as.
 * Every op is compiled for both dtypes (the FP16 twins carry _fp16 names).
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#define MAX_DIMS 4

static int bad(uint32_t vi, const char *why)
{
    ptl_emit_error(vi, PTL_ERR_BAD_CASE, why);
    return PTL_ERR_BAD_CASE;
}

/* Reads `len` (1..4) and the dims <prefix>0..<prefix>len-1 (each >= 1);
 * returns the element count, or 0 when a param is out of range. */
static long read_dims(const struct ptl_case *c, uint32_t vi, const char *len_name, char prefix, int *len, int *dims)
{
    *len = ptl_param(c, len_name, vi);
    if (*len < 1 || *len > MAX_DIMS)
        return 0;
    long n = 1;
    for (int k = 0; k < *len; k++) {
        const char name[3] = {prefix, (char)('0' + k), 0};
        dims[k] = ptl_param(c, name, vi);
        if (dims[k] < 1)
            return 0;
        n *= dims[k];
    }
    return n;
}

static int run_transpose_matrix(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int N = ptl_param(c, "N", vi), M = ptl_param(c, "M", vi);
    if (N < 1 || M < 1)
        return bad(vi, "transpose_matrix needs N, M >= 1");
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_S(transp_args) args = {.in_matrix = op_frame_input(&f, "x", (uint32_t)(N * M)),
                               .out_matrix = op_frame_output(&f, "y", (uint32_t)(N * M)), .N = N, .M = M,
                               .dim = NULL, .transposed_axes = NULL, .n_dim = 2};
    return op_frame_fork(&f, v, PTL_S(transpose_matrix), &args);
}

static int run_transpose(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    int n_dim, dims[MAX_DIMS], axes[MAX_DIMS], seen = 0;
    const long n = read_dims(c, vi, "n_dim", 'd', &n_dim, dims);
    for (int k = 0; n && k < n_dim; k++) {
        const char name[3] = {'a', (char)('0' + k), 0};
        axes[k] = ptl_param(c, name, vi);
        seen |= axes[k] >= 0 && axes[k] < n_dim ? 1 << axes[k] : 1 << MAX_DIMS;
    }
    if (!n || seen != (1 << n_dim) - 1)
        return bad(vi, "transpose needs 1 <= n_dim <= 4, dims d0.. >= 1 and axes a0.. a permutation of 0..n_dim-1");
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_S(transp_args) args = {.in_matrix = op_frame_input(&f, "x", (uint32_t)n),
                               .out_matrix = op_frame_output(&f, "y", (uint32_t)n), .N = 0, .M = 0,
                               .dim = dims, .transposed_axes = axes, .n_dim = n_dim};
    return op_frame_fork(&f, v, PTL_S(transpose), &args);
}

static int run_copy(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int n = ptl_param(c, "n", vi);
    if (n < 1)
        return bad(vi, "copy needs n >= 1");
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_S(copy_args) args = {.from = op_frame_input(&f, "x", (uint32_t)n), .to = op_frame_output(&f, "y", (uint32_t)n),
                             .size = n};
    return op_frame_fork(&f, v, PTL_S(copy), &args);
}

static int run_set_to_value(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int n = ptl_param(c, "n", vi), value_milli = ptl_param(c, "value_milli", vi);
    if (n < 1)
        return bad(vi, "set_to_value needs n >= 1");
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_S(set_to_value_args) args = {.to = op_frame_output(&f, "y", (uint32_t)n),
                                     .value = PTL_FROM_F32((float)value_milli / 1000.0f), .size = n};
    return op_frame_fork(&f, v, PTL_S(set_to_value), &args);
}

static int run_vect_sum(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int n = ptl_param(c, "n", vi);
    if (n < 1)
        return bad(vi, "vect_sum needs n >= 1");
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_S(vect_sum_args) args = {.op_1 = op_frame_input(&f, "a", (uint32_t)n), .op_2 = op_frame_input(&f, "b", (uint32_t)n),
                                 .dest = op_frame_output(&f, "y", (uint32_t)n), .size = n};
    return op_frame_fork(&f, v, PTL_S(vect_sum), &args);
}

static int run_layout(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int C = ptl_param(c, "C", vi), H = ptl_param(c, "H", vi), W = ptl_param(c, "W", vi);
    const int to_hwc = ptl_param(c, "to_hwc", vi), data = ptl_param(c, "data", vi), grad = ptl_param(c, "grad", vi);
    if (C < 1 || H < 1 || W < 1 || (to_hwc | data | grad) & ~1)
        return bad(vi, "layout needs C, H, W >= 1 and to_hwc, data, grad 0 or 1");
    const uint32_t n = (uint32_t)(C * H * W);
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_S(blob) tensor = {.data = op_frame_output_from(&f, "x", "y_data", n), .diff = op_frame_output_from(&f, "g", "y_grad", n),
                          .dim = (int)n, .W = W, .H = H, .C = C};
    struct PTL_S(layout_args) args = {.tensor = &tensor, .transp_buffer = op_frame_scratch(&f, n), .transpose_data = data,
                               .transpose_grad = grad};
    if (f.status)
        return op_frame_finish(&f, 0);
    ptl_measure_begin(vi);
    if (to_hwc)
        PTL_S(CHW_to_HWC)(&args);
    else
        PTL_S(HWC_to_CHW)(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_pad(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int C = ptl_param(c, "C", vi), H = ptl_param(c, "H", vi), W = ptl_param(c, "W", vi);
    const int L = ptl_param(c, "L", vi), R = ptl_param(c, "R", vi), U = ptl_param(c, "U", vi);
    const int D = ptl_param(c, "D", vi), hwc = ptl_param(c, "HWC", vi);
    if (C < 1 || H < 1 || W < 1 || L < 0 || R < 0 || U < 0 || D < 0 || (hwc != 0 && hwc != 1))
        return bad(vi, "pad needs C, H, W >= 1, pads L, R, U, D >= 0 and HWC 0 or 1");
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_S(pad_args) args = {.source = op_frame_input(&f, "x", (uint32_t)(C * H * W)),
                            .dest = op_frame_output(&f, "y", (uint32_t)(C * (H + U + D) * (W + L + R))),
                            .C = C, .H = H, .W = W, .T_RPAD = R, .T_LPAD = L, .T_UPAD = U, .T_DPAD = D,
                            .HWC_lay = hwc};
    return op_frame_fork(&f, v, PTL_S(pad_tensor), &args);
}

/* The broadcast shape's element count, or 0 when the shapes do not broadcast. */
static long broadcast_count(const int *d1, int l1, const int *d2, int l2)
{
    const int len = l1 > l2 ? l1 : l2;
    long n = 1;
    for (int k = 0; k < len; k++) {
        const int a = k - (len - l1) >= 0 ? d1[k - (len - l1)] : 1, b = k - (len - l2) >= 0 ? d2[k - (len - l2)] : 1;
        if (a != b && a != 1 && b != 1)
            return 0;
        n *= a > b ? a : b;
    }
    return n;
}

static int run_broadcast_sum(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    int l1, l2, d1[MAX_DIMS], d2[MAX_DIMS];
    const long n1 = read_dims(c, vi, "l1", 'p', &l1, d1), n2 = read_dims(c, vi, "l2", 'q', &l2, d2);
    const long n = n1 && n2 ? broadcast_count(d1, l1, d2, l2) : 0;
    if (!n)
        return bad(vi, "broadcast_sum needs 1..4 dims each >= 1 (l1 p0.., l2 q0..) that broadcast");
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_F(array_broadcast_sum_, _args) args = {
        .op_1 = op_frame_input(&f, "a", (uint32_t)n1), .op_2 = op_frame_input(&f, "b", (uint32_t)n2),
        .dest = op_frame_output(&f, "y", (uint32_t)n), .op_1_dims = d1, .op_2_dims = d2,
        .op_1_dims_len = l1, .op_2_dims_len = l2};
    return op_frame_fork(&f, v, PTL_F(array_broadcast_sum_, ), &args);
}

static int run_mm_broadcast(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    int la, lb, da[MAX_DIMS], db[MAX_DIMS];
    const long na = read_dims(c, vi, "la", 'A', &la, da), nb = read_dims(c, vi, "lb", 'B', &lb, db);
    if (!na || !nb || la < 2 || lb < 2 || da[la - 1] != db[lb - 2])
        return bad(vi, "mm_broadcast needs 2..4 dims per operand (la A0.., lb B0..) with A's K = B's K");
    const long batch = broadcast_count(da, la - 2, db, lb - 2);
    if (!batch)
        return bad(vi, "mm_broadcast: the batch dims do not broadcast");
    const long n = batch * da[la - 2] * db[lb - 1];
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_F(broadcastMatMul_args_, ) args = {
        .A = op_frame_input(&f, "A", (uint32_t)na), .B = op_frame_input(&f, "B", (uint32_t)nb),
        .C = op_frame_output(&f, "C", (uint32_t)n), .A_dims = da, .B_dims = db, .A_dims_len = la, .B_dims_len = lb};
    if (f.status)
        return op_frame_finish(&f, 0);
    ptl_measure_begin(vi);
    PTL_F(mm_broadcast_, )(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_mm_add(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int N = ptl_param(c, "N", vi), M = ptl_param(c, "M", vi), K = ptl_param(c, "K", vi);
    const int trans_B = ptl_param(c, "trans_B", vi);
    if (N < 1 || M < 1 || K < 1 || (trans_B != 0 && trans_B != 1))
        return bad(vi, "mm_add needs N, M, K >= 1 and trans_B 0 or 1");
#if !PTL_HAS_FUNC(mm_add) /* the published library has no mm_add_fp16 */
    (void)v;
    ptl_emit_error(vi, PTL_ERR_UNSUPPORTED, "the library declares no " PTL_OP_NAME("mm_add") " function");
    return PTL_ERR_UNSUPPORTED;
#else
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_S(matMul_args) args = {.A = op_frame_input(&f, "A", (uint32_t)(N * K)),
                               .B = op_frame_input(&f, "B", (uint32_t)(K * M)),
                               .C = op_frame_output_from(&f, "C0", "C", (uint32_t)(N * M)), .N = N, .M = M, .K = K,
                               .trans_B = trans_B, .bias = NULL, .bias_dim = 0, .USE_BIASES = 0,
                               .bias_transposed = 0, .HWC = 0};
    return op_frame_fork(&f, v, PTL_S(mm_add), &args);
#endif
}

static int run_reduce_mean(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    int len, dims[MAX_DIMS];
    const long n = read_dims(c, vi, "len", 'd', &len, dims);
    const int axis = ptl_param(c, "axis", vi);
    if (!n || axis < 0 || axis >= len)
        return bad(vi, "reduce_mean needs 1..4 dims (len d0..) >= 1 and 0 <= axis < len");
    const uint32_t n_out = (uint32_t)(n / dims[axis]);
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_F(reduce_mean_args_, ) args = {.input = op_frame_input(&f, "x", (uint32_t)n),
                                         .output = op_frame_output_zeroed(&f, "y", n_out), .dims = dims,
                                         .dims_len = len, .reduce_axis = axis};
    return op_frame_fork(&f, v, PTL_F(reduce_mean_, ), &args);
}

static int run_mean_std(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int n = ptl_param(c, "n", vi), eps_micro = ptl_param(c, "eps_micro", vi);
    if (n < 1 || eps_micro < 0)
        return bad(vi, "mean_std needs n >= 1 and eps_micro >= 0");
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct PTL_S(mean_std_args) args = {.input = op_frame_input(&f, "x", (uint32_t)n),
                                 .mean = op_frame_output(&f, "mean", 1), .var = op_frame_output(&f, "var", 1),
                                 .std = op_frame_output(&f, "std", 1),
                                 .epsilon = PTL_FROM_F32((float)eps_micro / 1000000.0f), .dim = n};
    if (f.status)
        return op_frame_finish(&f, 0);
    ptl_measure_begin(vi);
    PTL_F(pulp_mean_std_, _cl)(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_q_rsqrt(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int n = ptl_param(c, "n", vi);
    if (n < 1)
        return bad(vi, "q_rsqrt needs n >= 1");
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = op_frame_input(&f, "x", (uint32_t)n), *y = op_frame_output(&f, "y", (uint32_t)n);
    if (f.status)
        return op_frame_finish(&f, 0);
    ptl_measure_begin(vi);
    for (int i = 0; i < n; i++)
        y[i] = PTL_S(q_rsqrt)(x[i]);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("transpose_matrix"), "N M", "x", "y", "none", run_transpose_matrix},
    {PTL_OP_NAME("transpose"), "n_dim d0 d1 d2 d3 a0 a1 a2 a3", "x", "y", "none", run_transpose},
    {PTL_OP_NAME("copy"), "n alone", "x", "y", "none", run_copy},
    {PTL_OP_NAME("set_to_value"), "n value_milli alone", "", "y", "none", run_set_to_value},
    {PTL_OP_NAME("vect_sum"), "n alone", "a b", "y", "none", run_vect_sum},
    {PTL_OP_NAME("pad"), "C H W L R U D HWC", "x", "y", "none", run_pad},
    {PTL_OP_NAME("layout"), "C H W to_hwc data grad", "x g", "y_data y_grad", "none", run_layout},
    {PTL_OP_NAME("broadcast_sum"), "l1 p0 p1 p2 p3 l2 q0 q1 q2 q3", "a b", "y", "none", run_broadcast_sum},
    {PTL_OP_NAME("mm_broadcast"), "la A0 A1 A2 A3 lb B0 B1 B2 B3", "A B", "C", "none", run_mm_broadcast},
    {PTL_OP_NAME("mm_add"), "N M K trans_B", "A B C0", "C", "none", run_mm_add},
    {PTL_OP_NAME("reduce_mean"), "len d0 d1 d2 d3 axis", "x", "y", "none", run_reduce_mean},
    {PTL_OP_NAME("mean_std"), "n eps_micro", "x", "mean var std", "none", run_mean_std},
    {PTL_OP_NAME("q_rsqrt"), "n", "x", "y", "none", run_q_rsqrt},
    {0},
};
