"""torch.nn.utils.rnn details against PyTorch: every dtype kept by padding and packing, PackedSequence's
conversions, unpad_sequence, the enforce_sorted check; and the RNN errors on empty sequences and on cells whose
input and hidden batch sizes differ."""
import re

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.nn.utils import rnn as R

torch = pytest.importorskip("torch")
TR = torch.nn.utils.rnn


def _np(t):
    return np.array(t.tolist())


def _pair(values, dtype):
    return [torch.tensor(v, dtype=getattr(torch, dtype)) for v in values], [
        lucid.tensor(v, dtype=getattr(lucid, dtype)) for v in values]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float64", "float32"])
def test_pad_and_pack_keep_the_dtype(dtype):
    values = [[1, 0, 3], [4, 5], [1]]
    ts, ls = _pair(values, dtype)
    for kwargs in ({}, dict(batch_first=True, padding_value=1), dict(padding_side="left")):
        t, lt = TR.pad_sequence(ts, **kwargs), R.pad_sequence(ls, **kwargs)
        assert str(lt.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(_np(lt), t.numpy())
    tp, lp = TR.pack_sequence(ts), R.pack_sequence(ls)
    assert str(lp.data.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(_np(lp.data), tp.data.numpy())
    padded, lengths = R.pad_packed_sequence(lp, padding_value=7)
    np.testing.assert_array_equal(_np(padded), TR.pad_packed_sequence(tp, padding_value=7)[0].numpy())


def test_float64_padding_value_is_not_rounded_to_float32():
    out = R.pad_sequence([lucid.zeros(2, dtype=lucid.float64), lucid.zeros(1, dtype=lucid.float64)],
                         padding_value=0.1)
    assert _np(out)[1, 1] == 0.1


def test_packed_sequence_conversions_change_data_only():
    values = [[1.5, 2.5], [3.5, 4.5, 5.5]]
    ts, ls = _pair(values, "float32")
    tp, lp = TR.pack_sequence(ts, enforce_sorted=False), R.pack_sequence(ls, enforce_sorted=False)
    for name in ["double", "float", "half", "long", "int", "short", "char", "byte", "cpu"]:
        tc, lc = getattr(tp, name)(), getattr(lp, name)()
        assert type(lc) is R.PackedSequence
        assert str(lc.data.dtype).split(".")[-1] == str(tc.data.dtype).split(".")[-1], name
        np.testing.assert_array_equal(_np(lc.data), tc.data.numpy())
        np.testing.assert_array_equal(_np(lc.batch_sizes), tc.batch_sizes.numpy())
        np.testing.assert_array_equal(_np(lc.sorted_indices), tc.sorted_indices.numpy())
        np.testing.assert_array_equal(_np(lc.unsorted_indices), tc.unsorted_indices.numpy())
    assert lp.cpu() is lp and lp.float() is lp and lp.to(lucid.float32) is lp  # nothing to convert: the same object
    assert lp.is_cuda is tp.is_cuda is False
    assert lp.is_pinned() is tp.is_pinned() is False
    assert str(lp.to(dtype=lucid.float64).data.dtype).endswith("float64")


def test_packed_sequence_derives_unsorted_indices_like_pytorch():
    tp = TR.PackedSequence(torch.tensor([1.0, 2, 3]), torch.tensor([2, 1]), torch.tensor([1, 0]))
    lp = R.PackedSequence(lucid.tensor([1.0, 2, 3]), lucid.tensor([2, 1]), lucid.tensor([1, 0]))
    np.testing.assert_array_equal(_np(lp.unsorted_indices), tp.unsorted_indices.numpy())
    assert R.PackedSequence(lucid.tensor([1.0]), lucid.tensor([1])).unsorted_indices is None


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence_inverts_pad_sequence(batch_first):
    values = [[[1, 2]], [[3, 4], [5, 6], [7, 8]], [[9, 0], [1, 1]]]
    ts, ls = _pair(values, "int64")
    t = TR.unpad_sequence(TR.pad_sequence(ts, batch_first), torch.tensor([1, 3, 2]), batch_first)
    lu = R.unpad_sequence(R.pad_sequence(ls, batch_first), lucid.tensor([1, 3, 2]), batch_first)
    assert len(lu) == len(t)
    for a, b in zip(lu, t):
        assert str(a.dtype).endswith("int64")
        np.testing.assert_array_equal(_np(a), b.numpy())
    for a, b in zip(R.unpack_sequence(R.pack_sequence(ls, enforce_sorted=False)), ls):
        np.testing.assert_array_equal(_np(a), _np(b))


def test_enforce_sorted_rejects_unsorted_lengths_with_pytorchs_message():
    with pytest.raises(RuntimeError) as expected:
        TR.pack_padded_sequence(torch.zeros(3, 2), [1, 3])
    with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
        R.pack_padded_sequence(lucid.zeros(3, 2), [1, 3])
    with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
        R.pack_sequence([lucid.zeros(1), lucid.zeros(3)])


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("shape,batch_first", [((0, 2, 3), False), ((2, 0, 3), True), ((0, 3), False)])
def test_empty_sequence_is_pytorchs_error(name, shape, batch_first):
    with pytest.raises(RuntimeError) as expected:
        getattr(torch.nn, name)(3, 4, batch_first=batch_first)(torch.zeros(shape))
    with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
        getattr(nn, name)(3, 4, batch_first=batch_first)(lucid.zeros(shape))


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("x,h,c", [((3, 3), (2, 4), (2, 4)), ((2, 3), (2, 4), (3, 4)), ((2, 5), (2, 4), (2, 4)),
                                   ((2, 3), (2, 5), (2, 4)), ((3,), (5,), (4,))])
def test_cells_check_input_and_hidden_sizes_like_pytorch(name, x, h, c):
    def call(m, mod):
        hx = (m.zeros(h), m.zeros(c)) if name == "LSTMCell" else m.zeros(h)
        return getattr(mod, name)(3, 4)(m.zeros(x), hx)

    try:
        call(torch, torch.nn)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=re.escape(str(e))):
            call(lucid, nn)
    else:
        call(lucid, nn)  # sizes PyTorch accepts (the hidden size of c only matters to LSTMCell)
