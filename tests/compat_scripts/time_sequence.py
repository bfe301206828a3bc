"""pytorch/examples' time_sequence_prediction, shrunk: two LSTMCells unrolled by hand over sine waves, in float64,
trained with optim.LBFGS and a closure (the loss of every closure call recorded), then predicting the future
under no_grad."""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

from _common import options, report, start_from

HIDDEN = 16


class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, HIDDEN)
        self.lstm2 = nn.LSTMCell(HIDDEN, HIDDEN)
        self.linear = nn.Linear(HIDDEN, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


def main():
    args = options(steps=2)
    # generate_sine_wave.py: N waves of length L, each shifted at random
    np.random.seed(2)
    T, L, N = 20, 30, 8
    x = np.empty((N, L), "int64")
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype("float64")
    np.random.seed(0)
    torch.manual_seed(0)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    seq = Sequence()
    seq.double()
    start_from(args, seq)
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=8)
    losses, test_losses = [], []
    for i in range(args.steps):
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            losses.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        with torch.no_grad():
            future = 10
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            test_losses.append(loss.item())
            y = pred.detach().numpy()
    assert y.shape == (3, L - 1 + future) and y.dtype == np.float64
    print(f"time sequence: {len(losses)} closure calls, loss {losses[-1]:.6f}, test loss {test_losses[-1]:.6f}")
    report(args, losses=losses, test_losses=test_losses)


if __name__ == "__main__":
    main()
