"""pytorch/examples' regression: fit a degree-4 polynomial with one Linear layer on features x, x^2, ..., x^4,
smooth_l1_loss, and a hand-written SGD step on the parameters under no_grad."""
import numpy as np
import torch
import torch.nn.functional as F

from _common import options, report, start_from

POLY_DEGREE = 4
rng = np.random.default_rng(0)  # (the example draws with torch.randn: numpy here, so both libraries see the same)
W_target = torch.from_numpy(rng.normal(size=(POLY_DEGREE, 1)).astype(np.float32)) * 5
b_target = torch.from_numpy(rng.normal(size=1).astype(np.float32)) * 5


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = "y = "
    for i, w in enumerate(W):
        result += "{:+.2f} x^{} ".format(w, i + 1)
    result += "{:+.2f}".format(b[0])
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = torch.from_numpy(rng.normal(size=batch_size).astype(np.float32))
    x = make_features(random)
    y = f(x)
    return x, y


def main():
    args = options(steps=40)
    torch.manual_seed(0)
    fc = torch.nn.Linear(W_target.size(0), 1)
    start_from(args, fc)
    losses = []
    for batch_idx in range(1, args.steps + 1):
        batch_x, batch_y = get_batch()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        with torch.no_grad():
            for param in fc.parameters():
                param -= 0.1 * param.grad
        losses.append(loss)
    print("Loss: {:.6f} after {} batches".format(loss, batch_idx))
    print("==> Learned function:\t" + poly_desc(fc.weight.view(-1), fc.bias))
    print("==> Actual function:\t" + poly_desc(W_target.view(-1), b_target))
    report(args, losses=losses, weight=fc.weight.view(-1).tolist(), bias=fc.bias.item())


if __name__ == "__main__":
    main()
