"""Fit y = sin(3x) with a two-layer network written with raw lucid tensors and autograd.

    python examples/quickstart.py

The weights are leaf tensors with requires_grad=True; each step computes a mean-squared loss, calls
``loss.backward()``, and updates the weights in place under ``lucid.no_grad()`` (plain gradient descent).
Runs in a few seconds on a laptop CPU and prints the loss falling.
"""
import math
import time

import lucid

lucid.manual_seed(0)

# Data: 256 points of y = sin(3x) + noise, x in [-1, 1].
n, hidden = 256, 32
x = lucid.linspace(-1, 1, n).reshape(n, 1)
y = (3 * x).sin() + 0.05 * lucid.randn(n, 1)

# Parameters: leaf tensors that require grad.
w1 = (lucid.randn(1, hidden) * 1.5).requires_grad_()
b1 = lucid.zeros(hidden, requires_grad=True)
w2 = (lucid.randn(hidden, 1) / math.sqrt(hidden)).requires_grad_()
b2 = lucid.zeros(1, requires_grad=True)
params = [w1, b1, w2, b2]


def model(x):
    return (x @ w1 + b1).tanh() @ w2 + b2


lr, steps = 0.05, 2000
start = time.perf_counter()
for step in range(steps + 1):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    with lucid.no_grad():
        for p in params:
            p -= lr * p.grad  # in place: p stays the same leaf tensor
            p.grad = None
    value = loss.item()  # looking at the value evaluates MLX's lazy graph once per step
    if step % 200 == 0:
        print(f"step {step:5d}   loss {value:.5f}")

print(f"done in {time.perf_counter() - start:.1f} s; final loss {value:.5f} (noise floor {0.05 ** 2:.5f})")
