"""Recurrent layers: RNN, LSTM, GRU and their single-step cells, with PyTorch's parameters (names, shapes, order),
gate order (LSTM: i, f, g, o; GRU: r, z, n), initialisation U(-1/sqrt(hidden), 1/sqrt(hidden)) and shapes, so a
PyTorch state_dict loads and gives the same outputs.

A layer runs each (layer, direction) as one matrix product for the input projections of all time steps, then a
Python loop over the steps in which only the hidden-state product is left: ``addmm(x_t W_ih^T + b, h, W_hh^T)``.
Everything is a lucid op, so gradients of every order come from the ops. A PackedSequence input runs on its padded
batch with each sequence masked past its length.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ..._creation import arange, empty, zeros
from ..._tensor import Tensor
from ...ops._core import expect_tensor
from ...ops.elementwise import relu, sigmoid, tanh, where
from ...ops.linalg import addmm, mm
from ...ops.nn_basic import dropout, linear
from ...ops.shape import cat, stack
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ---------------------------------------------------------------------------------------------------- one time step
# ``xw`` is the input projection ``x W_ih^T + b_ih`` of one step (N, gates * H); ``w_hh_t`` is W_hh^T. The layers
# fold b_hh into ``xw`` where it is only added (RNN, LSTM) and pass ``b_hh=None``; GRU needs it inside r * (...).
def _hidden_product(xw: Tensor, h: Tensor, w_hh_t: Tensor, b_hh) -> Tensor:
    return addmm(xw if b_hh is None else xw + b_hh, h, w_hh_t)


def _tanh_step(xw, h, w_hh_t, b_hh, w_hr_t=None):
    return tanh(_hidden_product(xw, h, w_hh_t, b_hh))


def _relu_step(xw, h, w_hh_t, b_hh, w_hr_t=None):
    return relu(_hidden_product(xw, h, w_hh_t, b_hh))


def _lstm_step(xw, state, w_hh_t, b_hh, w_hr_t=None):
    """c' = sigmoid(f) c + sigmoid(i) tanh(g), h' = sigmoid(o) tanh(c') (then h' W_hr^T with a projection)."""
    h, c = state
    i, f, g, o = _hidden_product(xw, h, w_hh_t, b_hh).chunk(4, 1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    return (h if w_hr_t is None else mm(h, w_hr_t)), c


def _gru_step(xw, h, w_hh_t, b_hh, w_hr_t=None):
    """r, z = sigmoid(x W_i + b_i + h W_h + b_h); n = tanh(x W_in + b_in + r (h W_hn + b_hn)); h' = (1 - z) n + z h."""
    gh = mm(h, w_hh_t) if b_hh is None else addmm(b_hh, h, w_hh_t)
    x_r, x_z, x_n = xw.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = sigmoid(x_r + h_r)
    z = sigmoid(x_z + h_z)
    n = tanh(x_n + r * h_n)
    return n + z * (h - n)


_STEPS = {"RNN_TANH": _tanh_step, "RNN_RELU": _relu_step, "LSTM": _lstm_step, "GRU": _gru_step}


def _output(state):
    """The hidden state h of a step's state (LSTM's is (h, c))."""
    return state[0] if isinstance(state, tuple) else state


def _check_dropout(dropout_p) -> None:
    if not isinstance(dropout_p, numbers.Number) or isinstance(dropout_p, bool) or not 0 <= dropout_p <= 1:
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                         "being zeroed")


def _check_sizes(input_size, hidden_size) -> None:
    for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(value, int):
            raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
        if value <= 0:
            raise ValueError(f"{name} must be greater than zero")


# ---------------------------------------------------------------------------------------------------- the recurrence
def run_direction(mode: str, x: Tensor, state, params: dict, reverse: bool, masks=None):
    """Run one direction of one layer over time-major ``x`` (L, N, in): (outputs (L, N, H_out), final state).
    ``params``: weight_ih, weight_hh, and optionally bias_ih, bias_hh, weight_hr. ``masks`` (packed input): per
    step, (N, 1) True for the sequences that have that step; the others keep their state and output zeros, so each
    final state is the one at the sequence's own end."""
    b_ih, b_hh = params.get("bias_ih"), params.get("bias_hh")
    if b_hh is not None and mode != "GRU":  # only added: fold it into the input projection
        b_ih, b_hh = b_ih + b_hh, None
    steps = linear(x, params["weight_ih"], b_ih).unbind(0)
    w_hh_t = params["weight_hh"].t()
    w_hr_t = params["weight_hr"].t() if params.get("weight_hr") is not None else None
    step = _STEPS[mode]
    outputs = []
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    for t in order:
        new = step(steps[t], state, w_hh_t, b_hh, w_hr_t)
        if masks is None:
            state = new
            outputs.append(_output(state))
            continue
        m = masks[t]
        state = tuple(where(m, a, b) for a, b in zip(new, state)) if isinstance(new, tuple) else where(m, new, state)
        outputs.append(where(m, _output(new), 0.0))
    if reverse:
        outputs.reverse()
    return stack(outputs, 0), state


def run_layers(mode: str, x: Tensor, states: list, params: list, num_layers: int, bidirectional: bool,
               dropout_p: float, training: bool, masks=None):
    """The stacked (bidirectional) recurrence over time-major ``x``: (output, final states as a tuple of
    (layers * directions, N, H) tensors). ``states``: the initial (h,) or (h, c), each (layers * directions, N, H);
    ``params``: one dict per (layer, direction), layer-major (see ``run_direction``)."""
    per_direction = [s.unbind(0) for s in states]  # one list per state kind, indexed by layer * D + direction
    num_directions = 2 if bidirectional else 1
    finals = []
    for layer in range(num_layers):
        outputs = []
        for direction in range(num_directions):
            k = layer * num_directions + direction
            state = tuple(s[k] for s in per_direction) if mode == "LSTM" else per_direction[0][k]
            out, state = run_direction(mode, x, state, params[k], reverse=direction == 1, masks=masks)
            outputs.append(out)
            finals.append(state if isinstance(state, tuple) else (state,))
        x = outputs[0] if num_directions == 1 else cat(outputs, -1)
        if dropout_p > 0 and training and layer < num_layers - 1:
            x = dropout(x, dropout_p, True)
    return x, tuple(stack([f[i] for f in finals], 0) for i in range(len(finals[0])))


# ---------------------------------------------------------------------------------------------------- layers
_PROJ_ONLY_LSTM = "proj_size argument is only supported for LSTM, not RNN or GRU"


def _only_lstm_projects(cls: str, kwargs: dict) -> None:
    """RNN and GRU refuse ``proj_size`` (any value) with PyTorch's ValueError; other unknown keywords as Python."""
    if "proj_size" in kwargs:
        raise ValueError(_PROJ_ONLY_LSTM)
    if kwargs:
        raise TypeError(f"{cls}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrence shared by RNN, LSTM and GRU (``mode`` is "RNN_TANH",
    "RNN_RELU", "LSTM" or "GRU"). Parameters per layer k and direction (suffix "" or "_reverse"):
    ``weight_ih_l{k}`` (gates*H, input), ``weight_hh_l{k}`` (gates*H, H_out), ``bias_ih_l{k}``, ``bias_hh_l{k}``
    (gates*H), and with ``proj_size`` (LSTM) ``weight_hr_l{k}`` (proj_size, H).

    :param mode: 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU'.
    :param input_size: H_in, the features of each input step.
    :param hidden_size: H, the features of the hidden state.
    :param num_layers: stacked recurrent layers.
    :param bias: learn ``bias_ih`` and ``bias_hh``.
    :param batch_first: inputs and outputs are (N, L, H) instead of (L, N, H) (not the hidden states).
    :param dropout: dropout on the outputs of each layer but the last, in training.
    :param bidirectional: a second recurrence runs backwards (D = 2; outputs concatenated).
    :param proj_size: with > 0 (LSTM), project each h_t to this size by ``weight_hr_l{k}``.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__()
        _check_dropout(dropout)
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=3)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        _check_sizes(input_size, hidden_size)
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size > 0 and mode != "LSTM":
            raise ValueError(_PROJ_ONLY_LSTM)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                shapes = {"weight_ih": (gate_size, layer_input_size), "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(shape, dtype=dtype, device=device)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """Nothing to do (PyTorch packs the weights for cuDNN here); kept so that ported code runs."""

    @property
    def _flat_weights(self) -> list:
        """The weights in PyTorch's flat order, as they are now (a weight that ``weight_norm`` or a parametrization
        computes is its current tensor, not a Parameter; None where a name is unset)."""
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters per (layer, direction), in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ------------------------------------------------------------------------------------------------ checks
    def _check_input(self, input: Tensor) -> None:
        w = getattr(self, self._flat_weights_names[0])
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                             f"input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")

    def _expected_hidden_size(self, batch: int, cell: bool = False) -> tuple:
        size = self.proj_size if self.proj_size > 0 and not cell else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    @staticmethod
    def _check_hidden_size(hx: Tensor, expected: tuple, msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    # ------------------------------------------------------------------------------------------------ forward
    def _prepare(self, input: Tensor, hx, name: str):
        """(time-major 3-D input, initial states as a list of tensors (h, or h and c), whether batched)."""
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D tensor instead")
        batched = input.ndim == 3
        states = [] if hx is None else list(hx) if self.mode == "LSTM" else [hx]
        ndim = 3 if batched else 2
        if any(st.ndim != ndim for st in states):
            kind = f"{'batched 3-D' if batched else 'unbatched 2-D'} input"
            if self.mode == "LSTM":
                raise RuntimeError(f"For {kind}, hx and cx should also be {ndim}-D but got "
                                   f"({states[0].ndim}-D, {states[1].ndim}-D) tensors")
            raise RuntimeError(f"For {kind}, hx should also be {ndim}-D but got {states[0].ndim}-D tensor")
        if not batched:
            input = input.unsqueeze(1)
            states = [s.unsqueeze(1) for s in states]
        elif self.batch_first:
            input = input.transpose(0, 1)
        self._check_input(input)
        batch = input.shape[1]
        if not states:
            states = [zeros(self._expected_hidden_size(batch), dtype=input.dtype)]
            if self.mode == "LSTM":
                states.append(zeros(self._expected_hidden_size(batch, cell=True), dtype=input.dtype))
        if self.mode == "LSTM":
            self._check_hidden_size(states[0], self._expected_hidden_size(batch), "Expected hidden[0] size {}, got {}")
            self._check_hidden_size(states[1], self._expected_hidden_size(batch, cell=True),
                                    "Expected hidden[1] size {}, got {}")
        else:
            self._check_hidden_size(states[0], self._expected_hidden_size(batch))
        return input, states, batched

    def _params(self, k: int) -> dict:
        """The parameters of (layer, direction) number k by kind: weight_ih, weight_hh, bias_ih, ..."""
        names = self._all_weights[k]
        return dict(zip((n.rsplit("_l", 1)[0] for n in names), (getattr(self, n) for n in names)))

    def _run(self, input, hx, name: str):
        if isinstance(input, PackedSequence):  # run on the padded batch, masking each sequence past its length
            padded, lengths = pad_packed_sequence(input)
            steps = arange(padded.shape[0]).reshape(-1, 1, 1)
            masks = (steps < lengths.reshape(1, -1, 1)).unbind(0)
            batch_first, self.batch_first = self.batch_first, False
            try:
                out, hidden = self._run_padded(padded, hx, name, masks)
            finally:
                self.batch_first = batch_first
            packed = pack_padded_sequence(out, lengths, enforce_sorted=False)
            return input._replace(data=packed.data), hidden
        expect_tensor(name.lower(), "input", 1, input)
        return self._run_padded(input, hx, name, None)

    def _run_padded(self, input: Tensor, hx, name: str, masks):
        x, states, batched = self._prepare(input, hx, name)
        if x.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        x, hidden = run_layers(self.mode, x, states, [self._params(k) for k in range(len(self._all_weights))],
                               self.num_layers, self.bidirectional, self.dropout, self.training, masks)
        if not batched:
            x = x.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden)
        elif self.batch_first:
            x = x.transpose(0, 1)
        return x, hidden


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (``nonlinearity="relu"`` for ReLU).

    Input (L, N, H_in), (N, L, H_in) with ``batch_first``, or unbatched (L, H_in); ``hx`` (num_layers * D, N, H)
    (zeros when omitted). Returns ``(output, h_n)``: output (L, N, D * H) holds the last layer's h_t.

    :param input_size: H_in, the features of each input step.
    :param hidden_size: H, the features of the hidden state.
    :param num_layers: stacked recurrent layers.
    :param nonlinearity: 'tanh' or 'relu'.
    :param bias: learn ``bias_ih`` and ``bias_hh``.
    :param batch_first: inputs and outputs are (N, L, H) instead of (L, N, H) (not the hidden states).
    :param dropout: dropout on the outputs of each layer but the last, in training.
    :param bidirectional: a second recurrence runs backwards (D = 2; outputs concatenated).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None, **kwargs):
        _only_lstm_projects("RNN", kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, (h_n,) = self._run(input, hx, "RNN")
        return output, h_n


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o (in that order in the weights); with ``proj_size > 0`` h is
    projected by ``weight_hr_l{k}`` to size proj_size.

    ``hx`` is the pair (h_0, c_0) of shapes (num_layers * D, N, H_out) and (num_layers * D, N, H). Returns
    ``(output, (h_n, c_n))``.

    :param input_size: H_in, the features of each input step.
    :param hidden_size: H, the features of the hidden state.
    :param num_layers: stacked recurrent layers.
    :param bias: learn ``bias_ih`` and ``bias_hh``.
    :param batch_first: inputs and outputs are (N, L, H) instead of (L, N, H) (not the hidden states).
    :param dropout: dropout on the outputs of each layer but the last, in training.
    :param bidirectional: a second recurrence runs backwards (D = 2; outputs concatenated).
    :param proj_size: with > 0 (LSTM), project each h_t to this size by ``weight_hr_l{k}``.

    >>> import lucid
    >>> out, (h, c) = lucid.nn.LSTM(4, 8, batch_first=True)(lucid.zeros(2, 5, 4))
    >>> out.shape, h.shape
    (lucid.Size([2, 5, 8]), lucid.Size([1, 2, 8]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None):
        output, (h_n, c_n) = self._run(input, hx, "LSTM")
        return output, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit, gates r, z, n in that order, with PyTorch's
    ``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))`` and ``h' = (1 - z) * n + z * h``. Shapes as RNN's.

    :param input_size: H_in, the features of each input step.
    :param hidden_size: H, the features of the hidden state.
    :param num_layers: stacked recurrent layers.
    :param bias: learn ``bias_ih`` and ``bias_hh``.
    :param batch_first: inputs and outputs are (N, L, H) instead of (L, N, H) (not the hidden states).
    :param dropout: dropout on the outputs of each layer but the last, in training.
    :param bidirectional: a second recurrence runs backwards (D = 2; outputs concatenated).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None, **kwargs):
        _only_lstm_projects("GRU", kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, (h_n,) = self._run(input, hx, "GRU")
        return output, h_n


# ---------------------------------------------------------------------------------------------------- cells
class RNNCellBase(Module):
    """One step of a recurrence: ``weight_ih`` (chunks*H, input), ``weight_hh`` (chunks*H, H), ``bias_ih`` and
    ``bias_hh`` (chunks*H, or None without bias).

    :param input_size: H_in, the features of each input step.
    :param hidden_size: H, the features of the hidden state.
    :param bias: learn ``bias_ih`` and ``bias_hh``.
    :param num_chunks: gates per step (1 for RNN, 4 for LSTM, 3 for GRU).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(empty((num_chunks * hidden_size,), dtype=dtype, device=device))
            self.bias_hh = Parameter(empty((num_chunks * hidden_size,), dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check_forward(self, input: Tensor, states: list) -> None:
        """PyTorch's cell checks: the input's feature size, then each state's batch and hidden sizes."""
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        for k, s in enumerate(states):
            if input.shape[0] != s.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size "
                                   f"{s.shape[0]}")
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {s.shape[1]}, expected "
                                   f"{self.hidden_size}")

    def _step(self, name: str, step, input: Tensor, states: list | None):
        """Batch an unbatched (1-D) input and states, run ``step`` once, and unbatch the result."""
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        if states is None:
            h = zeros((input.shape[0], self.hidden_size), dtype=input.dtype)
            states = [h, h] if step is _lstm_step else [h]
        elif not batched:
            states = [s.unsqueeze(0) for s in states]
        self._check_forward(input, states)
        state = tuple(states) if step is _lstm_step else states[0]
        out = step(linear(input, self.weight_ih, self.bias_ih), state, self.weight_hh.t(), self.bias_hh)
        if not batched:
            out = tuple(o.squeeze(0) for o in out) if isinstance(out, tuple) else out.squeeze(0)
        return out


class RNNCell(RNNCellBase):
    """``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu). Input (N, H_in) or (H_in); hx (N, H) or (H).

    :param input_size: H_in, the features of each input step.
    :param hidden_size: H, the features of the hidden state.
    :param bias: learn ``bias_ih`` and ``bias_hh``.
    :param nonlinearity: 'tanh' or 'relu'.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if hx is not None and hx.ndim not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.ndim}D instead")
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        step = _tanh_step if self.nonlinearity == "tanh" else _relu_step
        return self._step("RNNCell", step, input, None if hx is None else [hx])


class LSTMCell(RNNCellBase):
    """One LSTM step; ``hx`` is (h, c). Returns (h', c').

    :param input_size: H_in, the features of each input step.
    :param hidden_size: H, the features of the hidden state.
    :param bias: learn ``bias_ih`` and ``bias_hh``.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.ndim not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.ndim}D instead")
        return self._step("LSTMCell", _lstm_step, input, None if hx is None else list(hx))


class GRUCell(RNNCellBase):
    """One GRU step (PyTorch's formula, see GRU). Returns h'.

    :param input_size: H_in, the features of each input step.
    :param hidden_size: H, the features of the hidden state.
    :param bias: learn ``bias_ih`` and ``bias_hh``.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if hx is not None and hx.ndim not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.ndim}D instead")
        return self._step("GRUCell", _gru_step, input, None if hx is None else [hx])


__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
