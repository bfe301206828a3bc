"""``SummaryWriter``: PyTorch's TensorBoard logger, writing event files with the ``tensorboard`` package's own
``EventFileWriter`` (the TFRecord format TensorBoard reads) and protos (``_summary.py``)."""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import _summary


class FileWriter:
    """Writes ``Event`` protocol buffers to one event file in ``log_dir`` (asynchronously: ``flush`` writes what is
    queued)."""

    def __init__(self, log_dir, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        """The folder of the event file."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None) -> None:
        """Queue an ``Event`` at ``step``, stamped ``walltime`` (default: now)."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)  # a tensor's or numpy's step as an int: protobuf takes only ints
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        """Queue a ``Summary`` as an Event."""
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        """Write the queued events to disk."""
        self.event_writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self) -> None:
        """Open the event file again after ``close``."""
        self.event_writer.reopen()


def _default_bins() -> list[float]:
    """TensorFlow's histogram buckets: +-1e-12 growing by 10% up to 1e20, and 0."""
    limits, v = [], 1e-12
    while v < 1e20:
        limits.append(v)
        v *= 1.1
    return [-x for x in reversed(limits)] + [0] + limits


class SummaryWriter:
    """Logs scalars, histograms, images, text, figures and hyperparameters to event files in ``log_dir`` for
    TensorBoard (``tensorboard --logdir runs``). ``log_dir`` defaults to ``runs/<Mon>DD_HH-MM-SS_<host><comment>``;
    ``purge_step`` hides the events at and after that step that an earlier, crashed run left in the folder."""

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = ""):
        if not log_dir:
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname()
                                   + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The writer of ``log_dir``'s own event file, made again after ``close``."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:  # TensorBoard drops the earlier events from this step on
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The folder the event files go to."""
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False) -> None:
        """One point of the curve ``tag``: ``scalar_value`` (a number or a one-element tensor) at ``global_step``.
        ``new_style`` stores it as the scalars plugin's tensor (float64 with ``double_precision``)."""
        self._get_file_writer().add_summary(
            _summary.scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision),
            global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None) -> None:
        """Several curves in one chart: each ``tag`` goes to its own run, ``<log_dir>/<main_tag>_<tag>``, under the
        tag ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if run not in self.all_writers:
                self.all_writers[run] = FileWriter(run, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers[run].add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None) -> None:
        """``bins``: ``"tensorflow"`` (TensorBoard's default buckets) or any of numpy's (``"auto"``, ``"fd"``, a
        count)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(_summary.histogram(tag, values, bins, max_bins=max_bins), global_step,
                                            walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW") -> None:
        """An image: float values in [0, 1] or uint8 in [0, 255]; ``dataformats`` such as CHW, HWC, HW."""
        self._get_file_writer().add_summary(_summary.image(tag, img_tensor, dataformats=dataformats), global_step,
                                            walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW") -> None:
        """A batch of images, tiled into one grid of 8 across."""
        self._get_file_writer().add_summary(_summary.image(tag, img_tensor, dataformats=dataformats), global_step,
                                            walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None) -> None:
        """A matplotlib figure (or a list of them, as a grid) rendered to an image; ``close`` closes it."""
        self.add_image(tag, _summary.figure_to_image(figure, close), global_step, walltime,
                       dataformats="NCHW" if isinstance(figure, list) else "CHW")

    def add_text(self, tag, text_string, global_step=None, walltime=None) -> None:
        """A text (Markdown) under ``tag``."""
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None) -> None:
        """One trial's hyperparameters and metrics for TensorBoard's HParams tab, in the run
        ``<log_dir>/<run_name>`` (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as run:
            for summary in summaries:
                run.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                run.add_scalar(k, v, global_step)

    def flush(self) -> None:
        """Write every pending event to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file (a later ``add_*`` opens a new one)."""
        if self.all_writers is None:
            return  # closed already
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
