"""pytorch/examples' word language model, shrunk: Embedding, a 2-layer LSTM, tied decoder weights, truncated BPTT
(repackaged hidden state), gradient clipping and the example's hand-written SGD update."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import options, report, start_from


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.0, tie_weights=True):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.nhid, self.nlayers = nhid, nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        return (torch.zeros(self.nlayers, bsz, self.nhid), torch.zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def main():
    args = options(steps=4, bptt=8, lr=5.0, clip=0.25)
    torch.manual_seed(1111)
    ntokens, bsz = 50, 4
    data = torch.tensor(np.random.default_rng(0).integers(0, ntokens, (args.steps * args.bptt + 1, bsz)))
    model = RNNModel(ntokens, 16, 16, 2)
    start_from(args, model)
    criterion = nn.NLLLoss()
    model.train()
    hidden = model.init_hidden(bsz)
    losses = []
    for i in range(0, args.steps * args.bptt, args.bptt):
        inp, target = data[i:i + args.bptt], data[i + 1:i + 1 + args.bptt].reshape(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(inp, hidden)
        loss = criterion(output, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-args.lr)
        losses.append(loss.item())
    print(f"LSTM LM: loss {losses[-1]:.3f}, ppl {math.exp(losses[-1]):.1f}")
    report(args, losses=losses)


if __name__ == "__main__":
    main()
