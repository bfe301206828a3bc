"""pytorch/examples' DCGAN reading its images as the example does: torchvision's ImageFolder (``--dataroot``,
one folder per class) with Resize, CenterCrop, ToTensor and Normalize, a DataLoader, and vutils.save_image grids
of the real batch and of the generator's samples after each epoch (``--outf``). The networks are dcgan.py's."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torchvision.datasets as dset
import torchvision.transforms as transforms
import torchvision.utils as vutils

from _common import options, report, start_from
from dcgan import Discriminator, Generator, nz, weights_init


def main():
    args = options(steps=2, epochs=2, dataroot="data", outf=".", imageSize=16, batchSize=4)
    torch.manual_seed(999)
    dataset = dset.ImageFolder(root=args.dataroot, transform=transforms.Compose([
        transforms.Resize(args.imageSize), transforms.CenterCrop(args.imageSize), transforms.ToTensor(),
        transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]))
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=args.batchSize, shuffle=False)
    device = torch.device("cpu")
    netG, netD = Generator(1).to(device), Discriminator(1).to(device)
    netG.apply(weights_init)
    netD.apply(weights_init)
    start_from(args, netG, netD)
    criterion = nn.BCELoss()
    rng = np.random.default_rng(0)
    fixed_noise = torch.tensor(rng.standard_normal((16, nz, 1, 1)).astype(np.float32))
    optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    losses = []
    for epoch in range(args.epochs):
        for i, data in enumerate(dataloader, 0):
            if i == args.steps:
                break
            netD.zero_grad()
            real_cpu = data[0].to(device)
            batch_size = real_cpu.size(0)
            label = torch.full((batch_size,), 1.0, dtype=real_cpu.dtype, device=device)
            errD_real = criterion(netD(real_cpu), label)
            errD_real.backward()
            noise = torch.tensor(rng.standard_normal((batch_size, nz, 1, 1)).astype(np.float32))
            fake = netG(noise)
            label.fill_(0.0)
            errD_fake = criterion(netD(fake.detach()), label)
            errD_fake.backward()
            optimizerD.step()
            netG.zero_grad()
            label.fill_(1.0)
            errG = criterion(netD(fake), label)
            errG.backward()
            optimizerG.step()
            losses.append([(errD_real + errD_fake).item(), errG.item()])
            if i == 0:
                vutils.save_image(real_cpu, f"{args.outf}/real_samples.png", normalize=True)
                fake = netG(fixed_noise)
                vutils.save_image(fake.detach(), f"{args.outf}/fake_samples_epoch_{epoch:03d}.png", normalize=True)
    report(args, losses=losses, written=sorted(os.listdir(args.outf)))


if __name__ == "__main__":
    main()
