"""pytorch/examples' word language model, its checkpoint part: the whole model saved with ``torch.save(model, f)``
after training, and loaded back as the example does - ``torch.load(f)`` (``weights_only=True``, PyTorch's default)
inside ``torch.serialization.safe_globals([...])`` naming the model's classes - then evaluated on test data."""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

from _common import options, report, start_from
from lstm_lm import RNNModel, repackage_hidden


def evaluate(model, data, bptt, bsz):
    model.eval()
    criterion, total = nn.NLLLoss(), 0.0
    hidden = model.init_hidden(bsz)
    with torch.no_grad():
        for i in range(0, data.size(0) - 1, bptt):
            inp, target = data[i:i + bptt], data[i + 1:i + 1 + bptt].reshape(-1)
            output, hidden = model(inp, hidden)
            hidden = repackage_hidden(hidden)
            total += len(inp) * criterion(output, target).item()
    return total / (len(data) - 1)


def main():
    args = options(steps=3, bptt=6, lr=5.0, clip=0.25, out_dir="")
    torch.manual_seed(1111)
    ntokens, bsz = 40, 4
    rng = np.random.default_rng(1)
    train = torch.tensor(rng.integers(0, ntokens, (args.steps * args.bptt + 1, bsz)))
    test = torch.tensor(rng.integers(0, ntokens, (2 * args.bptt + 1, bsz)))
    model = RNNModel(ntokens, 12, 12, 2)
    start_from(args, model)
    criterion, losses = nn.NLLLoss(), []
    model.train()
    hidden = model.init_hidden(bsz)
    for i in range(0, args.steps * args.bptt, args.bptt):
        inp, target = train[i:i + args.bptt], train[i + 1:i + 1 + args.bptt].reshape(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(inp, hidden)
        loss = criterion(output, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-args.lr)
        losses.append(loss.item())
    save = os.path.join(args.out_dir or tempfile.mkdtemp(), "model.pt")
    with open(save, "wb") as f:
        torch.save(model, f)
    before = evaluate(model, test, args.bptt, bsz)
    with open(save, "rb") as f:
        safe_globals = [RNNModel, torch.nn.modules.dropout.Dropout, torch.nn.modules.sparse.Embedding,
                        torch.nn.modules.rnn.LSTM, torch.nn.modules.linear.Linear]
        with torch.serialization.safe_globals(safe_globals):
            model = torch.load(f)
        model.rnn.flatten_parameters()
    assert model.decoder.weight is model.encoder.weight  # the tied weights stay one Parameter
    test_loss = evaluate(model, test, args.bptt, bsz)
    print(f"word language model: train loss {losses[-1]:.3f}, test loss {test_loss:.3f} (before saving {before:.3f})")
    report(args, losses=losses, test_loss=test_loss, test_loss_before_saving=before)


if __name__ == "__main__":
    main()
