"""The figures `lucid train` draws can be read: a loss plot labels the range its curve covers."""
import math

import pytest

from lucid.cli import figures

plt = figures.pyplot()
pytestmark = pytest.mark.skipif(plt is None, reason="needs matplotlib")


@pytest.mark.parametrize("high,low", [(4.2, 2.1), (4.2, 0.4), (9.0, 0.05), (50.0, 1e-4)])
def test_log_loss_axis_has_labels_over_the_curve(tmp_path, high, low):
    rows = [{"step": 10 * i, "loss": low + (high - low) * math.exp(-i / 20)} for i in range(100)]
    fig_path = tmp_path / "loss.png"
    captured = {}
    real_save = figures.save

    def keep(fig, path):
        fig.canvas.draw()
        ax = fig.axes[0]
        lo, hi = ax.get_ylim()
        captured["labels"] = [t.get_text() for t in ax.yaxis.get_majorticklabels() + ax.yaxis.get_minorticklabels()
                              if t.get_text() and lo <= t.get_position()[1] <= hi]
        real_save(fig, path)

    figures.save = keep
    try:
        figures.loss_curves(plt, rows, ["loss"], [], fig_path, "test")
    finally:
        figures.save = real_save
    assert fig_path.exists()
    assert len(set(captured["labels"])) >= 3, captured["labels"]
