"""The matmul kernel index tables of the trainlib API (TRAINLIB_API.md)."""

FP32_KERNELS = (
    "mm", "mm_M", "mm_u2", "mm_unroll_1x2", "mm_unroll_1x4", "mm_unroll_1x8",
    "mm_unroll_2x1", "mm_unroll_4x1", "mm_unroll_8x1", "mm_unroll_2x2", "mm_unroll_2x4",
    "mm_unroll_4x2", "mm_unroll_4x4", "mm_M_u2", "mm_M_unroll_1x2", "mm_M_unroll_1x4",
    "mm_M_unroll_1x8", "mm_M_unroll_2x1", "mm_M_unroll_4x1", "mm_M_unroll_8x1",
    "mm_M_unroll_2x2", "mm_M_unroll_2x4", "mm_M_unroll_4x2", "mm_M_unroll_4x4",
)

FP16_KERNELS = (
    "mm_fp16", "mm_M_fp16", "mm_fp16_SIMD_2x4", "mm_fp16_SIMD_4x8", "mm_M_fp16_SIMD_2x4",
    "mm_M_fp16_SIMD_4x8", "mm_fp16_unroll_2x1", "mm_fp16_unroll_4x1", "mm_fp16_unroll_8x1",
)


def kernel_table(dtype: str) -> tuple[str, ...]:
    return FP32_KERNELS if dtype == "fp32" else FP16_KERNELS

