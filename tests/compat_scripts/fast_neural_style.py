"""pytorch/examples' fast_neural_style, shrunk: its TransformerNet (ReflectionPad2d convolutions, InstanceNorm2d
with affine, residual blocks, nn.Upsample then convolution), normalize_batch with an in-place div_, gram-matrix
style loss and content loss on a frozen feature network's namedtuple outputs (a small stand-in for VGG16, which
needs torchvision), Adam for a few steps."""
from collections import namedtuple

import numpy as np
import torch
from torch.optim import Adam

from _common import options, report, start_from


class TransformerNet(torch.nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        # Initial convolution layers
        self.conv1 = ConvLayer(3, 8, kernel_size=9, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(8, affine=True)
        self.conv2 = ConvLayer(8, 16, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(16, affine=True)
        # Residual layers
        self.res1 = ResidualBlock(16)
        self.res2 = ResidualBlock(16)
        # Upsampling Layers
        self.deconv1 = UpsampleConvLayer(16, 8, kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(8, affine=True)
        self.deconv3 = ConvLayer(8, 3, kernel_size=9, stride=1)
        # Non-linearities
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.deconv3(y)
        return y


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class ResidualBlock(torch.nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = torch.nn.Upsample(scale_factor=upsample, mode="nearest") if upsample else None
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = self.upsample(x_in)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


class Features(torch.nn.Module):
    """VGG16's role (torchvision's vgg16 with its pretrained weights in the example): frozen slices of
    convolutions, outputs as a namedtuple."""

    def __init__(self, requires_grad=False):
        super(Features, self).__init__()
        self.slice1 = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU())
        self.slice2 = torch.nn.Sequential(torch.nn.MaxPool2d(2, 2), torch.nn.Conv2d(8, 16, 3, padding=1),
                                          torch.nn.ReLU())
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h_relu1_2 = self.slice1(X)
        h_relu2_2 = self.slice2(h_relu1_2)
        vgg_outputs = namedtuple("VggOutputs", ["relu1_2", "relu2_2"])
        return vgg_outputs(h_relu1_2, h_relu2_2)


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    # normalize using imagenet mean and std
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def main():
    args = options(steps=3, content_weight=1e5, style_weight=1e10)
    torch.manual_seed(42)
    rng = np.random.default_rng(0)
    images = [torch.from_numpy(rng.uniform(0, 255, (2, 3, 16, 16)).astype(np.float32)) for _ in range(args.steps)]
    style = torch.from_numpy(rng.uniform(0, 255, (1, 3, 16, 16)).astype(np.float32))
    transformer = TransformerNet()
    vgg = Features(requires_grad=False)
    start_from(args, transformer, vgg)
    optimizer = Adam(transformer.parameters(), 1e-3)
    mse_loss = torch.nn.MSELoss()
    style = style.repeat(2, 1, 1, 1)
    features_style = vgg(normalize_batch(style))
    gram_style = [gram_matrix(y) for y in features_style]
    losses = []
    transformer.train()
    for batch_id, x in enumerate(images):
        n_batch = len(x)
        optimizer.zero_grad()
        y = transformer(x)
        y = normalize_batch(y)
        x = normalize_batch(x)
        features_y = vgg(y)
        features_x = vgg(x)
        content_loss = args.content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)
        style_loss = 0.
        for ft_y, gm_s in zip(features_y, gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
        style_loss *= args.style_weight
        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()
        losses.append([content_loss.item(), style_loss.item()])
    assert all(p.grad is None for p in vgg.parameters())
    print("fast neural style: content {:.4f} style {:.4f}".format(*losses[-1]))
    report(args, losses=losses)


if __name__ == "__main__":
    main()
