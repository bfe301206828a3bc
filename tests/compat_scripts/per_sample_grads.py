"""PyTorch's per-sample-gradients tutorial (torch.func): a small CNN's gradient for every sample of a batch at once
with vmap(grad(loss)) over functional_call, checked against a loop of single-sample gradients; and model
ensembling with stack_module_state and vmap of functional_call."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap

from _common import options, report, start_from


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 2, padding=1)
        self.fc1 = nn.Linear(8 * 3 * 3, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.conv2(x))
        return F.log_softmax(self.fc1(torch.flatten(x, 1)), dim=1)


def main():
    args = options(steps=1)
    torch.manual_seed(0)
    model = SimpleCNN()
    start_from(args, model)
    rng = np.random.default_rng(0)
    data = torch.from_numpy(rng.normal(size=(6, 1, 12, 12)).astype(np.float32))
    targets = torch.from_numpy(rng.integers(0, 10, size=6))

    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        predictions = functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return F.nll_loss(predictions, target.unsqueeze(0))

    per_sample = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
    worst = 0.0
    for i in range(len(data)):  # the loop the tutorial replaces
        model.zero_grad()
        F.nll_loss(model(data[i:i + 1]), targets[i:i + 1]).backward()
        for name, p in model.named_parameters():
            worst = max(worst, (p.grad - per_sample[name][i]).abs().max().item())
    print(f"largest difference from the loop: {worst:.2e}")
    assert worst < 1e-5, worst

    models = [SimpleCNN() for _ in range(3)]  # ensembling: every model's predictions in one call
    stacked, stacked_buffers = stack_module_state(models)

    def fmodel(params, buffers, x):
        return functional_call(models[0], (params, buffers), (x,))

    ensemble = vmap(fmodel, in_dims=(0, 0, None))(stacked, stacked_buffers, data)
    for i, m in enumerate(models):
        assert torch.allclose(ensemble[i], m(data), atol=1e-5)
    norms = [per_sample[name].flatten(1).norm(dim=1).tolist() for name in sorted(per_sample)]
    report(args, losses=[v for row in norms for v in row], ensemble_shape=list(ensemble.shape))


if __name__ == "__main__":
    main()
