"""The recurrent language model of pytorch/examples ``word_language_model`` (``RNNModel``): an embedding
``encoder``, a multi-layer LSTM/GRU/RNN ``rnn``, a linear ``decoder`` to the vocabulary, optionally tied to the
embedding (Press & Wolf 2016; Inan et al. 2016)."""
from __future__ import annotations

import lucid

from .. import nn
from ..nn import functional as F

_RNN_TYPES = {"LSTM", "GRU", "RNN_TANH", "RNN_RELU"}


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder.

    ``forward(input, hidden)``: token ids (seq_len, batch) (time first, as in pytorch/examples) and the hidden state
    from ``init_hidden(batch)`` or the previous chunk -> ``(log_probs, hidden)`` with log-probabilities
    (seq_len * batch, ntoken). Keys: ``encoder.weight`` (ntoken, ninp), ``rnn.weight_ih_l{k}`` (G*nhid, in),
    ``rnn.weight_hh_l{k}`` (G*nhid, nhid), ``rnn.bias_ih_l{k}``, ``rnn.bias_hh_l{k}`` (G = 4 for LSTM, 3 for GRU,
    1 for RNN), ``decoder.weight`` (ntoken, nhid), ``decoder.bias``; with ``tie_weights`` the decoder's weight is
    the encoder's (one Parameter, both keys in the state_dict), which needs ``nhid == ninp``.

    :param rnn_type: 'LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU'.
    :param ntoken: the vocabulary size.
    :param ninp: the embedding width.
    :param nhid: the recurrent layers' hidden width.
    :param nlayers: the recurrent layers.
    :param dropout: the dropout rate.
    :param tie_weights: share the embedding and decoder weights (needs ``nhid == ninp``).
    """

    def __init__(self, rnn_type: str, ntoken: int, ninp: int, nhid: int, nlayers: int, dropout: float = 0.5,
                 tie_weights: bool = False):
        super().__init__()
        if rnn_type not in _RNN_TYPES:
            raise ValueError(f"rnn_type must be one of {sorted(_RNN_TYPES)}, got {rnn_type!r}")
        if tie_weights and nhid != ninp:
            raise ValueError("When using the tied flag, nhid must be equal to emsize")
        self.rnn_type, self.ntoken, self.nhid, self.nlayers = rnn_type, ntoken, nhid, nlayers
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ("LSTM", "GRU"):
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()

    def init_weights(self) -> None:
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz: int):
        """Zeros: ``(h, c)``, each (nlayers, bsz, nhid), for an LSTM; ``h`` for a GRU or RNN."""
        h = lucid.zeros(self.nlayers, bsz, self.nhid)
        return (h, lucid.zeros(self.nlayers, bsz, self.nhid)) if self.rnn_type == "LSTM" else h


def repackage_hidden(h):
    """The hidden state detached from its history (truncated backpropagation through time between chunks)."""
    return h.detach() if isinstance(h, lucid.Tensor) else tuple(repackage_hidden(v) for v in h)


def lstm_lm(ntoken: int, ninp: int = 128, nhid: int = 128, nlayers: int = 2, dropout: float = 0.2,
            tie_weights: bool = False, rnn_type: str = "LSTM") -> RNNModel:
    """An ``RNNModel`` (LSTM by default) over a vocabulary of ``ntoken`` tokens.

    :param ntoken: the vocabulary size.
    :param ninp: the embedding width.
    :param nhid: the recurrent layers' hidden width.
    :param nlayers: the recurrent layers.
    :param dropout: the dropout rate.
    :param tie_weights: share the embedding and decoder weights (needs ``nhid == ninp``).
    :param rnn_type: 'LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU'.
    """
    return RNNModel(rnn_type, ntoken, ninp, nhid, nlayers, dropout, tie_weights)
