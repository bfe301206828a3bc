"""pytorch/examples' super_resolution, shrunk: the sub-pixel CNN (Conv2d layers and nn.PixelShuffle) with
orthogonal init and calculate_gain, Adam on MSELoss, PSNR on a test batch, and the example's whole-model
checkpoint (torch.save(model), loaded back with weights_only=False)."""
import os
from math import log10

import numpy as np
import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim

from _common import options, report, start_from


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv4.weight)


def make_batches(rng, n, size, upscale_factor):
    """(low-resolution input, target) pairs: smooth random images, the input their box-filtered downsampling."""
    target = np.cumsum(np.cumsum(rng.uniform(-1, 1, (n, 1, size, size)), axis=2), axis=3)
    target = (target - target.min()) / (target.max() - target.min())
    low = target.reshape(n, 1, size // upscale_factor, upscale_factor, size // upscale_factor, upscale_factor)
    low = low.mean(axis=(3, 5))
    return torch.from_numpy(low.astype(np.float32)), torch.from_numpy(target.astype(np.float32))


def main():
    args = options(steps=4, upscale_factor=2, out_dir="")
    torch.manual_seed(123)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    rng = np.random.default_rng(0)
    training = [make_batches(rng, 4, 16, args.upscale_factor) for _ in range(args.steps)]
    testing = make_batches(rng, 4, 16, args.upscale_factor)
    model = Net(upscale_factor=args.upscale_factor).to(device)
    start_from(args, model)
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=0.001)
    losses = []
    model.train()
    for input, target in training:
        input, target = input.to(device), target.to(device)
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    avg_psnr = 0
    with torch.no_grad():
        input, target = testing[0].to(device), testing[1].to(device)
        prediction = model(input)
        mse = criterion(prediction, target)
        psnr = 10 * log10(1 / mse.item())
        avg_psnr += psnr
    assert prediction.shape == (4, 1, 16, 16)
    if args.out_dir:
        model_out_path = os.path.join(args.out_dir, "model_epoch_1.pth")
        torch.save(model, model_out_path)
        loaded = torch.load(model_out_path, weights_only=False)
        assert isinstance(loaded, Net) and torch.equal(loaded(input), model(input))
    print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr))
    report(args, losses=losses, psnr=avg_psnr)


if __name__ == "__main__":
    main()
