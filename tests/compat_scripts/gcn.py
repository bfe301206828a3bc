"""A graph convolutional network (Kipf & Welling, as in tkipf/pygcn): two GraphConvolution layers over the sparse
normalized adjacency D^-1/2 (A + I) D^-1/2 of a random graph (torch.sparse_coo_tensor, torch.spmm), trained with
Adam on nll_loss of log_softmax over the labelled nodes."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import options, report, start_from


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
        self.bias = nn.Parameter(torch.FloatTensor(out_features)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.spmm(adj, support)
        return output + self.bias if self.bias is not None else output


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        x = self.gc2(x, adj)
        return F.log_softmax(x, dim=1)


def normalized_adjacency(n, rng):
    """A random undirected graph with self-loops, symmetrically normalized, as a sparse COO tensor."""
    a = rng.random((n, n)) < 0.05
    a = (a | a.T | np.eye(n, dtype=bool)).astype(np.float32)
    d = 1 / np.sqrt(a.sum(1))
    rows, cols = np.nonzero(a)
    indices = torch.from_numpy(np.vstack((rows, cols)).astype(np.int64))
    values = torch.from_numpy((d[rows] * d[cols]).astype(np.float32))
    return torch.sparse_coo_tensor(indices, values, torch.Size((n, n))).coalesce()


def main():
    args = options(steps=30, dropout=0.0)
    rng = np.random.default_rng(0)
    n, nfeat, nclass = 120, 16, 4
    adj = normalized_adjacency(n, rng)
    features = torch.from_numpy(rng.normal(size=(n, nfeat)).astype(np.float32))
    labels = torch.from_numpy((adj.to_dense().numpy() @ features.numpy() @ rng.normal(size=(nfeat, nclass)))
                              .argmax(1).astype(np.int64))
    idx_train, idx_val = torch.arange(0, 80), torch.arange(80, n)
    torch.manual_seed(0)
    model = GCN(nfeat, 32, nclass, args.dropout)
    start_from(args, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    losses = []
    for epoch in range(args.steps):
        model.train()
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        loss_train.backward()
        optimizer.step()
        losses.append(loss_train.item())
    model.eval()
    output = model(features, adj)
    acc_val = (output[idx_val].argmax(1) == labels[idx_val]).float().mean().item()
    print(f"epoch {args.steps}: loss_train {losses[-1]:.4f}, acc_val {acc_val:.4f}")
    report(args, losses=losses, acc_val=acc_val)


if __name__ == "__main__":
    main()
