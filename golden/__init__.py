"""PyTorch reference models for the training primitives, and the tensor bundle format."""
from golden.bundle import Reference, ReferenceBundle
from golden.formats import BF16, FP16, FP32, NumberFormat, format_named

__all__ = ["Reference", "ReferenceBundle", "NumberFormat", "FP32", "FP16", "BF16", "format_named"]
