"""The ``Summary`` protocol buffers of TensorBoard (the ``tensorboard`` package's own protos) for what
``SummaryWriter`` logs, built as PyTorch's ``torch.utils.tensorboard.summary`` builds them: scalars as
``simple_value`` (or the scalars plugin's tensor), histograms as ``HistogramProto`` with the empty buckets at both
ends trimmed, images as PNG-encoded ``Summary.Image`` (HWC, uint8: float images are scaled by 255 and clipped),
text through the text plugin, hyperparameters through the hparams plugin's three summaries."""
from __future__ import annotations

import struct
import zlib

import mlx.core as mx
import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.hparams import api_pb2, metadata as hparams_metadata, plugin_data_pb2
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._tensor import Tensor


def make_np(x) -> np.ndarray:
    """A numpy array of a tensor, an array or a Python number (a number becomes shape (1,), as in PyTorch)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        x = x.detach()
        return (x.float() if x.dtype == mx.bfloat16 else x).numpy()  # numpy has no bfloat16
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(tag: str, value, new_style: bool = False, double_precision: bool = False) -> Summary:
    value = make_np(value).squeeze()
    if value.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {value.size} and "
                             f"{value.ndim} dimensions.")
    value = float(value)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=value)])
    tensor = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
              else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=metadata)])


def histogram(tag: str, values, bins, max_bins: int | None = None) -> Summary:
    """``bins``: numpy's (a count, edges or a rule such as ``"auto"``). Buckets are merged ``max_bins`` at most;
    the runs of empty buckets at both ends are dropped, but one empty bucket is kept before the first full one."""
    values = make_np(values).astype(float).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % group)).reshape(-1, group).sum(axis=1)
        limits = np.append(limits[:-1:group], limits[-1])
    full = np.flatnonzero(counts)
    first, last = (int(full[0]), int(full[-1])) if full.size else (0, 0)
    counts = counts[first - 1:last + 1] if first > 0 else np.concatenate([[0], counts[:last + 1]])
    limits = limits[first:last + 2]
    histo = HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                           sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())
    return Summary(value=[Summary.Value(tag=tag, histo=histo)])


def _grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """NCHW images (1 or 3 channels) tiled into one CHW image, ``ncols`` across."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, axis=1)
    if images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = images[i]
    return canvas


def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """An image in ``dataformats`` (NCHW, NHWC, CHW, HWC, HW, WH...) as HWC with 3 or 4 channels."""
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {dataformats}")
    if array.ndim != len(dataformats):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {array.shape}, "
                             f"input_format: {dataformats}")
    dataformats = dataformats.upper()
    if len(dataformats) == 4:
        return _grid(array.transpose([dataformats.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(dataformats) == 3:
        hwc = array.transpose([dataformats.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, axis=2) if hwc.shape[2] == 1 else hwc
    return np.stack([array.transpose([dataformats.find(c) for c in "HW"])] * 3, axis=2)


def _png(hwc: np.ndarray) -> bytes:
    """PNG bytes of a uint8 HWC image of 1 to 4 channels (grey, grey+alpha, RGB, RGBA)."""
    height, width, channels = hwc.shape

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = np.concatenate([np.zeros((height, 1), np.uint8), hwc.reshape(height, -1)], axis=1)  # filter 0 per row
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))


def image(tag: str, img, dataformats: str = "NCHW") -> Summary:
    array = make_np(img)
    scale = 1 if array.dtype == np.uint8 else 255
    hwc = (to_hwc(array, dataformats).astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = hwc.shape
    encoded = Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=_png(hwc))
    return Summary(value=[Summary.Value(tag=tag, image=encoded)])


def text(tag: str, text_string: str) -> Summary:
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=tensor)])


def _hparams_summary(tag: str, **content) -> Summary:
    data = plugin_data_pb2.HParamsPluginData(version=hparams_metadata.PLUGIN_DATA_VERSION, **content)
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name=hparams_metadata.PLUGIN_NAME, content=data.SerializeToString()))
    return Summary(value=[Summary.Value(tag=tag, metadata=metadata)])


# the hparams plugin's type and Value field for each kind of hyperparameter (a bool is an int: PyTorch logs it as
# the number 0 or 1)
_HPARAM_KINDS = (((int, float), "DATA_TYPE_FLOAT64", "number_value"), (str, "DATA_TYPE_STRING", "string_value"))


def hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None):
    """The experiment, session-start and session-end summaries of the hparams plugin."""
    from google.protobuf import struct_pb2

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    infos, start = [], plugin_data_pb2.SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            v = float(make_np(v).reshape(-1)[0])
        for kinds, data_type, field in _HPARAM_KINDS:
            if isinstance(v, kinds):
                break
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        setattr(start.hparams[k], field, v)
        domain = None
        if k in hparam_domain_discrete:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in hparam_domain_discrete[k]])
        infos.append(api_pb2.HParamInfo(name=k, type=api_pb2.DataType.Value(data_type), domain_discrete=domain))
    experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=[
        api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict])
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))
    return (_hparams_summary(hparams_metadata.EXPERIMENT_TAG, experiment=experiment),
            _hparams_summary(hparams_metadata.SESSION_START_INFO_TAG, session_start_info=start),
            _hparams_summary(hparams_metadata.SESSION_END_INFO_TAG, session_end_info=end))


def figure_to_image(figures, close: bool = True) -> np.ndarray:
    """A matplotlib figure as a CHW uint8 RGB array (a list of figures: NCHW)."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure) -> np.ndarray:
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        if close:
            plt.close(figure)
        return np.moveaxis(rgba[:, :, :3], 2, 0)

    return np.stack([render(f) for f in figures]) if isinstance(figures, list) else render(figures)
