"""torch.backends.quantized: lucid has no quantized kernels, so no quantization engine is available ("none",
PyTorch's own value on a build without one)."""
supported_engines = ["none"]
engine = "none"
