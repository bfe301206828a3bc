"""PyTorch's top-level functional forms of the recurrent layers (``torch.rnn_tanh``, ``rnn_relu``, ``lstm``, ``gru``
with ATen's flat weight lists, and the cells ``rnn_tanh_cell``, ``rnn_relu_cell``, ``lstm_cell``, ``gru_cell``) and
``torch.ctc_loss`` (ATen's integer ``reduction``). They run the recurrence of ``nn.RNN``/``LSTM``/``GRU``
(``nn.modules.rnn.run_layers``) and ``nn.functional.ctc_loss``, so values and gradients are the modules'.

``params`` is ATen's flat list, layer-major then direction: ``w_ih, w_hh`` (and ``b_ih, b_hh`` when ``has_biases``;
and for an LSTM with projections ``w_hr``, recognized as PyTorch does: h and c of different sizes). The packed
overload ``lstm(data, batch_sizes, hx, params, ...)`` takes a PackedSequence's data and batch sizes.
"""
from __future__ import annotations

__all__ = ["rnn_tanh", "rnn_relu", "lstm", "gru", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell",
           "ctc_loss"]

from .._creation import arange
from .._tensor import Tensor
from ..ops import loss as _loss
from ..ops.aten_forms import _reduction
from ..ops.nn_basic import linear
from .modules.rnn import _STEPS, run_layers
from .utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


def _layer_params(params, has_biases: bool, projections: bool, count: int) -> list:
    """ATen's flat list as one dict per (layer, direction)."""
    kinds = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if has_biases else []) + \
        (["weight_hr"] if projections else [])
    params = list(params)
    if len(params) != count * len(kinds):
        raise RuntimeError(f"Expected {count * len(kinds)} parameters (num_layers * num_directions * "
                           f"{len(kinds)}), got {len(params)}")
    return [dict(zip(kinds, params[k * len(kinds):(k + 1) * len(kinds)])) for k in range(count)]


def _recurrence(mode: str, input, rest: tuple, lstm: bool):
    """Both ATen overloads: (input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    and (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)."""
    packed = not isinstance(rest[2], bool)  # the packed overload has params, not has_biases, third
    if packed:
        batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = rest
        batch_first = False
    else:
        hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = rest
    states = list(hx) if lstm else [hx]
    layer_params = _layer_params(params, has_biases, lstm and states[0].shape[-1] != states[1].shape[-1],
                                 num_layers * (2 if bidirectional else 1))
    masks = None
    if packed:
        padded, lengths = pad_packed_sequence(PackedSequence(input, batch_sizes))
        x = padded
        masks = (arange(padded.shape[0]).reshape(-1, 1, 1) < lengths.reshape(1, -1, 1)).unbind(0)
    else:
        x = input.transpose(0, 1) if batch_first else input
    out, hidden = run_layers(mode, x, states, layer_params, num_layers, bidirectional, dropout, train, masks)
    if packed:
        out = pack_padded_sequence(out, lengths).data
    elif batch_first:
        out = out.transpose(0, 1)
    return (out, *hidden)


def rnn_tanh(input, *args) -> tuple:
    """ATen's Elman RNN with tanh: ``(output, h_n)`` (see the module docstring for the arguments)."""
    return _recurrence("RNN_TANH", input, args, False)


def rnn_relu(input, *args) -> tuple:
    """ATen's Elman RNN with ReLU: ``(output, h_n)``."""
    return _recurrence("RNN_RELU", input, args, False)


def lstm(input, *args) -> tuple:
    """ATen's LSTM: ``(output, h_n, c_n)``; ``hx`` is the list ``[h_0, c_0]``."""
    return _recurrence("LSTM", input, args, True)


def gru(input, *args) -> tuple:
    """ATen's GRU: ``(output, h_n)``."""
    return _recurrence("GRU", input, args, False)


def _cell(mode: str, input, hx, w_ih, w_hh, b_ih, b_hh):
    if mode == "GRU":  # b_hh sits inside r * (h W_hn + b_hn)
        return _STEPS[mode](linear(input, w_ih, b_ih), hx, w_hh.t(), b_hh)
    bias = b_ih if b_hh is None else b_hh if b_ih is None else b_ih + b_hh  # only added: one bias
    return _STEPS[mode](linear(input, w_ih, bias), hx, w_hh.t(), None)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor:
    """One step ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return _cell("RNN_TANH", input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor:
    """One step ``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return _cell("RNN_RELU", input, hx, w_ih, w_hh, b_ih, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> tuple:
    """One LSTM step: ``hx`` is ``(h, c)``; returns ``(h', c')``."""
    return _cell("LSTM", input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor:
    """One GRU step (gates r, z, n as nn.GRUCell)."""
    return _cell("GRU", input, hx, w_ih, w_hh, b_ih, b_hh)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: int = 1,
             zero_infinity: bool = False) -> Tensor:
    """ATen's ctc_loss: ``nn.functional.ctc_loss`` with ``reduction`` 0 (none), 1 (mean) or 2 (sum)."""
    return _loss.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction),
                          zero_infinity)
