"""``lucid.utils.tensorboard.SummaryWriter`` (``torch.utils.tensorboard``): the event files are read back with
TensorBoard's own reader, and - where PyTorch is installed - hold what PyTorch's writer writes for the same calls."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.plugins.hparams import plugin_data_pb2  # noqa: E402

import lucid  # noqa: E402
from lucid.utils.tensorboard import SummaryWriter  # noqa: E402

RNG = np.random.default_rng(0)
VALUES = RNG.standard_normal(200).astype(np.float32)
IMAGE = RNG.random((3, 6, 5)).astype(np.float32)
BATCH = RNG.random((10, 1, 4, 3)).astype(np.float32)


def _read(logdir) -> EventAccumulator:
    acc = EventAccumulator(str(logdir), size_guidance={"tensors": 0, "scalars": 0, "images": 0, "histograms": 0})
    acc.Reload()
    return acc


def _log(writer_class, tensor, logdir):
    """The same calls through either library's SummaryWriter."""
    with writer_class(str(logdir)) as w:
        for step in range(3):
            w.add_scalar("train/loss", tensor(1.0 / (step + 1)), step)
        w.add_scalar("lr", 0.5, 7)
        w.add_scalars("curves", {"a": 1.0, "b": 2.5}, 1)
        w.add_histogram("weights", tensor(VALUES), 2)
        w.add_histogram("auto", VALUES, 2, bins="auto")
        w.add_histogram("few", tensor(VALUES), 2, bins=50, max_bins=7)
        w.add_image("image", tensor(IMAGE), 3)
        w.add_image("hwc", (IMAGE.transpose(1, 2, 0) * 255).astype(np.uint8), 3, dataformats="HWC")
        w.add_image("gray", tensor(IMAGE[0]), 3, dataformats="HW")
        w.add_images("batch", tensor(BATCH), 4)
        w.add_text("notes", "hello **tensorboard**", 5)
        w.add_hparams({"lr": 0.1, "opt": "adam", "bn": True, "layers": 3}, {"hparam/accuracy": 0.75},
                      run_name="trial")


def _decode(png: bytes) -> np.ndarray:
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)))


def test_events_read_back_with_tensorboards_reader(tmp_path):
    _log(SummaryWriter, lucid.tensor, tmp_path)
    acc = _read(tmp_path)
    assert sorted(acc.Tags()["scalars"]) == ["lr", "train/loss"]
    assert [(e.step, e.value) for e in acc.Scalars("train/loss")] == [(0, 1.0), (1, 0.5),
                                                                      (2, pytest.approx(1 / 3))]
    assert [(e.step, e.value) for e in acc.Scalars("lr")] == [(7, 0.5)]
    for tag, value in (("a", 1.0), ("b", 2.5)):  # add_scalars: one run per curve, under the main tag
        run = _read(tmp_path / f"curves_{tag}")
        assert [(e.step, e.value) for e in run.Scalars("curves")] == [(1, value)]
    histo = acc.Histograms("weights")[0]
    assert histo.step == 2 and histo.histogram_value.num == 200
    assert sum(histo.histogram_value.bucket) == 200
    assert histo.histogram_value.min == pytest.approx(VALUES.min()) and histo.histogram_value.max == \
        pytest.approx(VALUES.max())
    assert histo.histogram_value.sum == pytest.approx(VALUES.sum(), rel=1e-5)
    assert len(acc.Histograms("few")[0].histogram_value.bucket) == 9  # 50 bins in 8 groups of 7, one empty before
    image = acc.Images("image")[0]
    assert (image.step, image.height, image.width) == (3, 6, 5)
    assert [(i.height, i.width) for i in acc.Images("batch")] == [(8, 24)]  # 10 images, 8 across: 2 rows x 8
    text = acc.Tensors("notes/text_summary")[0]
    assert text.step == 5 and text.tensor_proto.string_val == [b"hello **tensorboard**"]


def test_images_are_the_pixels_given(tmp_path):
    pytest.importorskip("PIL")
    _log(SummaryWriter, lucid.tensor, tmp_path)
    acc = _read(tmp_path)
    want = (IMAGE.transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8)
    np.testing.assert_array_equal(_decode(acc.Images("image")[0].encoded_image_string), want)
    np.testing.assert_array_equal(_decode(acc.Images("hwc")[0].encoded_image_string),
                                  (IMAGE.transpose(1, 2, 0) * 255).astype(np.uint8))
    gray = _decode(acc.Images("gray")[0].encoded_image_string)
    assert gray.shape == (6, 5, 3) and (gray[..., 0] == gray[..., 2]).all()


def test_hparams_are_the_plugins_three_summaries(tmp_path):
    _log(SummaryWriter, lucid.tensor, tmp_path)
    trial = _read(tmp_path / "trial")
    content = trial.SummaryMetadata("_hparams_/session_start_info").plugin_data.content
    start = plugin_data_pb2.HParamsPluginData.FromString(content).session_start_info
    assert start.hparams["lr"].number_value == 0.1 and start.hparams["opt"].string_value == "adam"
    assert start.hparams["bn"].number_value == 1 and start.hparams["layers"].number_value == 3  # (PyTorch's)
    experiment = plugin_data_pb2.HParamsPluginData.FromString(
        trial.SummaryMetadata("_hparams_/experiment").plugin_data.content).experiment
    assert [m.name.tag for m in experiment.metric_infos] == ["hparam/accuracy"]
    assert [(e.value) for e in trial.Scalars("hparam/accuracy")] == [0.75]


def test_same_events_as_pytorchs_writer(tmp_path):
    real = pytest.importorskip("torch")
    pytest.importorskip("PIL")
    from torch.utils.tensorboard import SummaryWriter as RealWriter
    _log(SummaryWriter, lucid.tensor, tmp_path / "lucid")
    _log(RealWriter, real.tensor, tmp_path / "torch")
    ours, theirs = _read(tmp_path / "lucid"), _read(tmp_path / "torch")
    assert ours.Tags() == theirs.Tags()
    for tag in theirs.Tags()["scalars"]:
        assert [(e.step, e.value) for e in ours.Scalars(tag)] == [(e.step, e.value) for e in theirs.Scalars(tag)]
    for tag in theirs.Tags()["histograms"]:
        a, b = ours.Histograms(tag)[0].histogram_value, theirs.Histograms(tag)[0].histogram_value
        assert list(a.bucket) == list(b.bucket) and a.num == b.num, tag
        np.testing.assert_allclose(a.bucket_limit, b.bucket_limit, rtol=1e-6)
        np.testing.assert_allclose([a.min, a.max, a.sum, a.sum_squares], [b.min, b.max, b.sum, b.sum_squares],
                                   rtol=1e-5)
    for tag in theirs.Tags()["images"]:
        a, b = ours.Images(tag)[0], theirs.Images(tag)[0]
        assert (a.step, a.height, a.width) == (b.step, b.height, b.width), tag
        np.testing.assert_array_equal(_decode(a.encoded_image_string), _decode(b.encoded_image_string))
    for tag in theirs.Tags()["tensors"]:
        assert ours.Tensors(tag)[0].tensor_proto == theirs.Tensors(tag)[0].tensor_proto
    for name in ("_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"):
        a = plugin_data_pb2.HParamsPluginData.FromString(
            _read(tmp_path / "lucid" / "trial").SummaryMetadata(name).plugin_data.content)
        b = plugin_data_pb2.HParamsPluginData.FromString(
            _read(tmp_path / "torch" / "trial").SummaryMetadata(name).plugin_data.content)
        assert a == b, name


def test_figure_is_logged_as_an_image(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    figure = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    with SummaryWriter(tmp_path) as w:
        w.add_figure("plot", figure, 1)
        w.add_figure("plots", [plt.figure(figsize=(2, 1), dpi=50) for _ in range(2)], 1)
    assert not plt.fignum_exists(figure.number)  # closed
    acc = _read(tmp_path)
    assert [(i.height, i.width) for i in acc.Images("plot")] == [(50, 100)]
    assert [(i.height, i.width) for i in acc.Images("plots")] == [(50, 200)]


def test_default_log_dir_comment_suffix_purge_step_and_reopen(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1", filename_suffix=".v2")
    w.add_scalar("x", 1.0, 0)
    w.close()
    w.close()  # twice is fine
    (run,) = os.listdir(tmp_path / "runs")
    assert run.endswith("_lr0.1") and w.get_logdir() == os.path.join("runs", run)
    (events,) = os.listdir(tmp_path / "runs" / run)
    assert events.startswith("events.out.tfevents.") and events.endswith(".v2")
    w.add_scalar("x", 2.0, 1)  # after close: a new event file
    w.flush()
    w.close()
    assert len(os.listdir(tmp_path / "runs" / run)) == 2
    with SummaryWriter(tmp_path / "crashed") as w:
        for step in range(10):
            w.add_scalar("loss", float(step), step)
    with SummaryWriter(tmp_path / "crashed", purge_step=5) as w:
        w.add_scalar("loss", 50.0, 5)
    assert [(e.step, e.value) for e in _read(tmp_path / "crashed").Scalars("loss")] == \
        [(0, 0.0), (1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 50.0)]


def test_bad_input_raises_as_pytorch(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="one element"):
            w.add_scalar("x", lucid.ones(2), 0)
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("h", lucid.ones(0), 0)
        with pytest.raises(AssertionError, match="size of input tensor and input format are different"):
            w.add_image("i", lucid.ones(2, 3), 0)
        with pytest.raises(TypeError, match="should be dictionary"):
            w.add_hparams([("lr", 1)], {})
        with pytest.raises(ValueError, match="value should be one of"):
            w.add_hparams({"lr": [1]}, {})


def test_without_tensorboard_the_import_says_to_install_it():
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "try:\n    import lucid.utils.tensorboard\nexcept ModuleNotFoundError as e:\n    print(e.name, '|', e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert out.startswith("tensorboard |") and "pip install tensorboard" in out
