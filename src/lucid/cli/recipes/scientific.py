"""The two recipes that live on higher-order gradients: MAML (sine regression, second-order meta-gradient) and the
PINN (Poisson's equation, the network's Laplacian in the loss)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import lucid

from .. import figures
from ...models import maml, pinn
from .base import Recipe


class MAML(Recipe):
    supports_amp = False  # its own training step (second derivatives or two optimizers): no --amp
    name = "maml"
    summary = "MAML, second-order meta-learning of sine-wave regression (1-40-40-1 MLP)"
    data = "generated sine tasks (amplitude 0.1-5, phase 0-pi, x in [-5, 5]; 10 support + 10 query points)"
    target = "test MSE after one adaptation step <= 0.5 of the unadapted MSE"
    metric = "test_mse_1step"
    higher_is_better = False
    figure = "adaptation.png"
    steps = 4000
    batch_size = 25  # tasks per meta-batch
    lr = 1e-3
    eval_every = 500
    test_tasks = 200

    def default_config(self) -> dict:
        return {"hidden": 40, "inner_steps": 1, "inner_lr": 0.01, "k_shot": 10, "k_query": 10}

    def load_data(self) -> None:
        self.test = maml.sample_tasks(self.test_tasks, self.config["k_shot"], self.config["k_query"],
                                      seed=(self.seed, 1 << 40))

    def build(self) -> dict:
        return {"model": maml.sine_mlp(self.config["hidden"])}

    def batch(self, step: int) -> tuple:
        t = maml.sample_tasks(self.batch_size, self.config["k_shot"], self.config["k_query"], seed=(self.seed, step))
        return t.x_support, t.y_support, t.x_query, t.y_query

    def train_step(self, xs, ys, xq, yq) -> dict:
        c = self.config
        self.optimizer.zero_grad()
        loss = maml.meta_loss(self.model, maml.SineTasks(xs, ys, xq, yq, None, None), c["inner_steps"], c["inner_lr"])
        loss.backward()
        self.optimizer.step()
        return {"loss": loss}

    def evaluate(self) -> dict[str, float]:
        curve = maml.evaluate(self.model, self.test, inner_steps=10, inner_lr=self.config["inner_lr"])
        return {"test_mse_0step": curve[0], "test_mse_1step": curve[1], "test_mse_10step": curve[10]}

    def draw(self, plt, out: Path) -> None:
        c = self.config
        tasks = maml.sample_tasks(3, c["k_shot"], 0, seed=(self.seed, (1 << 40) + 1))
        grid = np.linspace(-5, 5, 200)[:, None].astype(np.float32)
        x = lucid.tensor(np.broadcast_to(grid, (3, 200, 1)).copy())
        params = maml.per_task_params([p.detach().requires_grad_() for p in self.model.parameters()], 3)
        preds = {}
        for step in range(11):
            if step in (0, 1, 10):
                with lucid.no_grad():
                    preds[step] = maml.functional_forward(x, params).numpy()[..., 0]
            params = [p.detach().requires_grad_() for p in
                      maml.adapt(params, tasks.x_support, tasks.y_support, 1, c["inner_lr"], first_order=True)]
        fig, axes = plt.subplots(1, 4, figsize=(16, 4.2), layout="constrained")
        for t, ax in enumerate(axes[:3]):
            ax.plot(grid[:, 0], maml.sine(grid[:, 0], tasks.amplitude[t], tasks.phase[t]), "k", lw=2, label="task")
            for step, style in ((0, ":"), (1, "--"), (10, "-")):
                ax.plot(grid[:, 0], preds[step][t], style, label=f"after {step} step{'s' * (step != 1)}")
            ax.plot(tasks.x_support.numpy()[t, :, 0], tasks.y_support.numpy()[t, :, 0], "^", color="tab:red",
                    label=f"{c['k_shot']} support points")
            ax.set_title(f"test task {t + 1}: A={tasks.amplitude[t]:.2f}, phase={tasks.phase[t]:.2f}")
            ax.set_xlabel("x")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=9)
        curve = maml.evaluate(self.model, self.test, inner_steps=10, inner_lr=c["inner_lr"])
        axes[3].plot(range(11), curve, "o-")
        axes[3].set_xlabel("adaptation steps (SGD, lr %g)" % c["inner_lr"])
        axes[3].set_ylabel(f"query MSE (mean of {self.test_tasks} tasks)")
        axes[3].grid(alpha=0.3)
        axes[3].set_title("query error while adapting")
        fig.suptitle("lucid train maml: the meta-learned initialisation adapting to new sine tasks")
        figures.save(fig, out / self.figure)


class PINN(Recipe):
    supports_amp = False  # its own training step (second derivatives or two optimizers): no --amp
    name = "pinn"
    summary = "physics-informed network solving Poisson's equation -lap(u) = f on the unit square"
    data = "generated collocation points (512 interior + 128 boundary, fresh every step)"
    target = "relative L2 error vs the exact solution <= 0.02"
    metric = "test_rel_l2"
    higher_is_better = False
    figure = "solution.png"
    steps = 4000
    batch_size = 512  # interior collocation points per step
    lr = 1e-2
    eval_every = 500
    half_life = 800  # steps in which the learning rate halves

    def default_config(self) -> dict:
        return {"dim": 2, "width": 32, "depth": 3, "n_boundary": 128, "boundary_weight": 10.0}

    def build(self) -> dict:
        c = self.config
        return {"model": pinn.PoissonPINN(c["dim"], c["width"], c["depth"])}

    def make_schedulers(self, optimizers: dict) -> dict:
        gamma = 0.5 ** (1 / self.half_life)
        return {"scheduler": lucid.optim.lr_scheduler.ExponentialLR(optimizers["optimizer"], gamma)}

    def batch(self, step: int) -> tuple:
        return pinn.collocation_points(self.batch_size, self.config["n_boundary"], self.config["dim"],
                                       seed=(self.seed, step))

    def train_step(self, interior, boundary) -> dict:
        return self.simple_step(lambda i, b: pinn.pinn_loss(self.model, i, b, self.config["boundary_weight"]),
                                interior, boundary)

    def evaluate(self) -> dict[str, float]:
        return {"test_rel_l2": pinn.relative_l2_error(self.model)}

    def draw(self, plt, out: Path) -> None:
        dim, n = self.config["dim"], 101
        points = pinn.grid(n, dim)
        with lucid.no_grad():
            pred = self.model(lucid.tensor(points.astype(np.float32))).numpy()[:, 0]
        exact = pinn.exact_solution(points)[:, 0]
        err = pinn.relative_l2_error(self.model)
        equation = {1: r"$-u'' = \pi^2 \sin(\pi x)$ on [0, 1]",
                    2: r"$-\Delta u = 2\pi^2 \sin(\pi x) \sin(\pi y)$ on the unit square"}.get(dim, "")
        title = f"lucid train pinn: Poisson's equation {equation}, $u = 0$ on the boundary"
        if dim == 1:
            fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
            axes[0].plot(points[:, 0], exact, "k", lw=3, label=r"exact $\sin(\pi x)$")
            axes[0].plot(points[:, 0], pred, "--", color="tab:orange", label="PINN")
            axes[0].legend()
            axes[1].plot(points[:, 0], pred - exact)
            axes[1].set_title(f"PINN - exact (relative L2 error {err:.2e})")
        elif dim == 2:
            fig, axes = plt.subplots(1, 3, figsize=(14, 4.4), layout="constrained")
            panels = ((pred, "PINN u(x, y)"), (exact, r"exact $\sin(\pi x) \sin(\pi y)$"),
                      (np.abs(pred - exact), f"|PINN - exact| (relative L2 error {err:.2e})"))
            for ax, (values, name) in zip(axes, panels):
                im = ax.imshow(values.reshape(n, n), origin="lower", extent=(0, 1, 0, 1), cmap="viridis")
                ax.set_title(name)
                ax.set_xlabel("x")
                ax.set_ylabel("y")
                fig.colorbar(im, ax=ax, shrink=0.85)
        else:
            return  # no picture of a 3-D field; the metric says how well it did
        fig.suptitle(title)
        figures.save(fig, out / self.figure)


RECIPES = [MAML, PINN]
