"""A Python int operand of an integer tensor is cast into the tensor's dtype, wrapping around as PyTorch does
(``uint8 & -16`` is ``& 240``; ``int8 + 200`` is ``+ -56``): MLX refuses the conversion, lucid wraps and retries."""
import operator

import pytest

import lucid

torch = pytest.importorskip("torch")

OPS = {"and": operator.and_, "or": operator.or_, "xor": operator.xor, "add": operator.add, "sub": operator.sub,
       "mul": operator.mul, "eq": operator.eq, "lt": operator.lt, "floordiv": operator.floordiv,
       "mod": operator.mod, "rsub": lambda a, b: b - a, "iand": operator.iand, "ior": operator.ior,
       "ixor": operator.ixor, "iadd": operator.iadd}
CASES = [("uint8", [44, 200], 300), ("uint8", [44, 200], -16), ("int8", [44, -100], 200), ("int16", [7, -9], 70000)]


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype,values,scalar", CASES)
def test_out_of_range_int_scalars_wrap_as_in_pytorch(name, dtype, values, scalar):
    f = OPS[name]
    want = f(torch.tensor(values, dtype=getattr(torch, dtype)), scalar)
    x = lucid.tensor(values, dtype=getattr(lucid, dtype))
    got = f(x, scalar)
    assert got.tolist() == want.tolist()
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if name.startswith("i"):  # in place: the same tensor, written
        assert got is x


def test_other_conversion_errors_are_unchanged():
    with pytest.raises(Exception):
        lucid.tensor([1, 2]) + lucid.tensor([1, 2, 3])  # a shape error is not an overflow
