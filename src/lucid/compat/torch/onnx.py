"""torch.onnx: MLX graphs have no ONNX exporter; ``export`` raises when called."""
from lucid._unsupported import unsupported as _unsupported

export = _unsupported("torch.onnx.export", "MLX has no ONNX exporter (save the weights with torch.save and "
                      "export from PyTorch)")
dynamo_export = _unsupported("torch.onnx.dynamo_export", "MLX has no ONNX exporter")


def is_in_onnx_export() -> bool:
    return False
