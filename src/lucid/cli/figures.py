"""Figures for ``lucid train`` with matplotlib (an optional extra: ``pip install 'lucid-mlx[zoo]'``), drawn
off-screen (the Agg backend) into PNG files."""
from __future__ import annotations

from pathlib import Path

import numpy as np

INSTALL_HINT = "pip install 'lucid-mlx[zoo]'  (or: pip install matplotlib)"


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def save(fig, path: Path) -> None:
    """Write ``fig`` to ``path`` through a temporary file (a stopped run never leaves half a PNG) and close it."""
    tmp = path.with_name(path.name + ".tmp")
    if fig.get_layout_engine() is None:
        fig.tight_layout()  # room for the titles (figures with a suptitle over titled panels use "constrained")
    fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    tmp.replace(path)
    fig.clear()
    import matplotlib.pyplot as plt
    plt.close(fig)


def loss_curves(plt, rows: list[dict], train_keys: list[str], eval_keys: list[str], path: Path, title: str) -> None:
    """Training losses (left) and evaluation metrics (right) against the step, from metrics.csv's rows."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    steps = [r["step"] for r in rows]
    for key in train_keys:
        values = [r.get(key) for r in rows]
        axes[0].plot(steps, values, label=key)
    losses = [r[k] for r in rows for k in train_keys if r.get(k) is not None]
    # a log axis when the loss falls by more than a factor of 3 (under that, a linear axis has more labels)
    if losses and min(losses) > 0 and max(losses) > 3 * min(losses):
        axes[0].set_yscale("log")
        # plain tick labels (10, 1, 0.1; not 1e-01) and enough labelled minor ticks that the range the curve covers
        # is read off the axis: every minor tick under a decade, the 2s and 5s up to three decades (a loss from 4.2
        # to 0.4 would otherwise show the single label 1)
        from matplotlib.ticker import FuncFormatter, NullFormatter
        plain = FuncFormatter(lambda v, _: f"{v:g}")
        axes[0].yaxis.set_major_formatter(plain)
        low, high = axes[0].get_ylim()
        if high < 10 * low:
            minor = plain
        elif high < 1000 * low:
            minor = FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else "")
        else:
            minor = NullFormatter()
        axes[0].yaxis.set_minor_formatter(minor)
    axes[0].set_xlabel("step")
    axes[0].set_title("training loss (running mean)")
    axes[0].legend()
    # metrics of another magnitude than the first (vae: ELBO ~25 nats, pixel FD ~1) go on a right-hand axis,
    # or both would look flat
    size = {k: max((abs(r[k]) for r in rows if r.get(k) is not None), default=0.0) for k in eval_keys}
    first = size[eval_keys[0]] if eval_keys else 0.0
    right = [k for k in eval_keys if first and not first / 5 <= size[k] <= first * 5]
    twin = axes[1].twinx() if right else None
    for i, key in enumerate(eval_keys):
        evaluated = [r for r in rows if r.get(key) is not None]
        (twin if key in right else axes[1]).plot([r["step"] for r in evaluated], [r[key] for r in evaluated],
                                                 marker="o", markersize=3, color=f"C{i}",
                                                 label=key + (" (right axis)" if key in right else ""))
    axes[1].set_xlabel("step")
    axes[1].set_title("test metrics (periodic evaluation)")
    handles = [h for ax in (axes[1], twin) if ax is not None for h in ax.get_legend_handles_labels()[0]]
    axes[1].legend(handles=handles)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    save(fig, path)


def image_grid(plt, images: np.ndarray, path: Path, title: str, labels: list[str] | None = None,
               colours: list[str] | None = None, cols: int = 8) -> None:
    """A grid of images (N, C, H, W) with values in [0, 1] (C = 1 grey, C = 3 RGB), optionally captioned."""
    n = len(images)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 1.3, rows * (1.45 if labels else 1.3)), squeeze=False)
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i >= n:
            continue
        img = np.clip(images[i], 0.0, 1.0)
        if img.shape[0] == 1:
            ax.imshow(img[0], cmap="gray", vmin=0.0, vmax=1.0, interpolation="nearest")
        else:
            ax.imshow(img.transpose(1, 2, 0), interpolation="nearest")
        if labels:
            ax.set_title(labels[i], fontsize=8, color=(colours[i] if colours else "black"))
    fig.suptitle(title)
    save(fig, path)


def predictions(plt, images: np.ndarray, predicted: list[int], true: list[int], class_names: list[str],
                path: Path, title: str) -> None:
    """Test images captioned ``predicted (true)``, in red where the prediction is wrong."""
    labels = [class_names[p] if p == t else f"{class_names[p]} ({class_names[t]})" for p, t in zip(predicted, true)]
    colours = ["tab:green" if p == t else "tab:red" for p, t in zip(predicted, true)]
    image_grid(plt, images, path, title, labels, colours)
