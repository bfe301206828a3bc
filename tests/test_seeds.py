"""The seed documents' examples, run as written (000, 003: lucid's own docs; 004: PyTorch's how-to, ported by
changing the import)."""
import lucid


def test_seed_000_backward_example():
    from lucid.autograd import backward
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    backward(y)
    assert repr(x.grad) == "Tensor([2., 4., 6.])"


def test_seed_003_grad_example():
    x = lucid.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = lucid.sum(x * x)
    dx = lucid.autograd.grad(y, x)
    assert isinstance(dx, lucid.Tensor)  # gradients are Tensors (docs/architecture.md, "What users can count on")
    assert dx.tolist() == [2.0, -4.0, 6.0]
    assert repr(dx) == "Tensor([ 2., -4.,  6.])"


def test_seed_003_multiple_outputs():
    a = lucid.tensor([2.0, -1.0, 0.5], requires_grad=True)
    b = lucid.tensor([3.0, 4.0, -2.0], requires_grad=True)
    out1 = lucid.sum(a * b)
    out2 = lucid.sum(a * a)
    da, db = lucid.autograd.grad((out1, out2), (a, b))
    assert da.tolist() == [7.0, 2.0, -1.0]
    assert db.tolist() == [2.0, -1.0, 0.5]
    assert a.grad is None and b.grad is None


def test_seed_004_scalar_backward(capsys):
    torch = lucid
    x = torch.tensor(2.0, requires_grad=True)
    y = 3 * x ** 2
    y.backward()
    print(f"Gradient dy/dx at x=2: {x.grad.item()}")
    assert capsys.readouterr().out == "Gradient dy/dx at x=2: 12.0\n"


def test_seed_004_non_scalar_needs_gradient(capsys):
    torch = lucid
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    try:
        y.backward()
    except RuntimeError as e:
        print(f"Error: {e}")
    y.backward(torch.tensor([1.0, 1.0, 1.0]))
    print(f"Gradients: {x.grad}")
    assert capsys.readouterr().out == ("Error: grad can be implicitly created only for scalar outputs\n"
                                       "Gradients: Tensor([2., 2., 2.])\n")
