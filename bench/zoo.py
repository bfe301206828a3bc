"""The zoo's models as benchmark workloads: nanoGPT, ResNet-18, the DCGAN generator step and the word-language-model
LSTM, each run by lucid (the zoo's own module), PyTorch (the same zoo source executed against ``torch``) and mlx.nn
(written the MLX way, with the weight converters that copy lucid's initial weights into it).

The PyTorch twin is the zoo module's own source with its three lucid imports pointed at ``torch``: the zoo is
written to PyTorch's API, so both frameworks run one definition and load the same state_dict.
"""
from __future__ import annotations

import importlib
import inspect
import math
import sys
import types

import mlx.core as mx
import mlx.nn as mnn
import numpy as np

_TORCH_IMPORTS = {"import lucid\n": "import torch as lucid\n", "from .. import nn\n": "from torch import nn\n",
                  "from ..nn import functional as F\n": "from torch.nn import functional as F\n"}


def zoo_module(root, name: str) -> types.ModuleType:
    """``lucid.models.<name>``, or for ``root`` torch the same source run against torch."""
    module = importlib.import_module(f"lucid.models.{name}")
    if root.__name__ == "lucid":
        return module
    source = inspect.getsource(module)
    for old, new in _TORCH_IMPORTS.items():
        source = source.replace(old, new)
    twin = sys.modules.setdefault(f"bench_torch_twin_{name}", types.ModuleType(f"bench_torch_twin_{name}"))
    exec(compile(source, f"<torch twin of {module.__file__}>", "exec"), twin.__dict__)
    return twin


# ---------------------------------------------------------------------------------------------------- PyTorch API
GPT_CONFIG = dict(block_size=64, vocab_size=65, n_layer=2, n_head=4, n_embd=64, dropout=0.0)  # `lucid train gpt`
LSTM_CONFIG = dict(ntoken=65, ninp=64, nhid=128, nlayers=2, dropout=0.0)  # `lucid train lstm_lm`, no dropout
DCGAN_CONFIG = dict(nz=100, ngf=64, ndf=64, nc=3, image_size=32)


def gpt(root):
    m = zoo_module(root, "gpt")
    return m.GPT(m.GPTConfig(**GPT_CONFIG))


def resnet18(root):
    return zoo_module(root, "resnet").resnet18(num_classes=10, small_input=True, width=16)


def lstm_lm(root):
    return zoo_module(root, "lstm_lm").lstm_lm(**LSTM_CONFIG)


def dcgan(root):
    """The generator's step of a GAN: D(G(z)) against "real" (``netG``'s transposed convolutions forward and
    backward, ``netD``'s strided convolutions' input gradients)."""
    m = zoo_module(root, "dcgan")
    c = DCGAN_CONFIG

    class GAN(root.nn.Module):
        def __init__(self):
            super().__init__()
            self.netG = m.Generator(c["nz"], c["ngf"], c["nc"], c["image_size"])
            self.netD = m.Discriminator(c["ndf"], c["nc"], c["image_size"])

        def forward(self, z):
            return self.netD(self.netG(z))

    model = GAN()
    model.apply(m.weights_init)
    return model


# the losses as the zoo's training recipes compute them: (F, model, x, y) -> loss
def gpt_loss(F, model, x, y):
    return model(x, y)[1]


def lstm_loss(F, model, x, y):
    log_probs, _ = model(x.t(), model.init_hidden(x.shape[0]))  # time-first, as pytorch/examples
    return F.nll_loss(log_probs, y.t().reshape(-1))


def bce_loss(F, model, x, y):
    return F.binary_cross_entropy(model(x), y)


# ---------------------------------------------------------------------------------------------------- mlx.nn
class MLXBlock(mnn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = mnn.LayerNorm(d), mnn.LayerNorm(d)
        self.attn = {"c_attn": mnn.Linear(d, 3 * d), "c_proj": mnn.Linear(d, d)}
        self.mlp = {"c_fc": mnn.Linear(d, 4 * d), "c_proj": mnn.Linear(4 * d, d)}

    def __call__(self, x):
        b, t, d = x.shape
        q, k, v = mx.split(self.attn["c_attn"](self.ln_1(x)), 3, axis=-1)
        q, k, v = (a.reshape(b, t, self.heads, -1).transpose(0, 2, 1, 3) for a in (q, k, v))
        y = mx.fast.scaled_dot_product_attention(q, k, v, scale=1 / math.sqrt(d // self.heads), mask="causal")
        x = x + self.attn["c_proj"](y.transpose(0, 2, 1, 3).reshape(b, t, d))
        return x + self.mlp["c_proj"](mnn.gelu(self.mlp["c_fc"](self.ln_2(x))))


class MLXGPT(mnn.Module):
    def __init__(self, block_size, vocab_size, n_layer, n_head, n_embd, dropout=0.0):
        super().__init__()
        self.wte, self.wpe = mnn.Embedding(vocab_size, n_embd), mnn.Embedding(block_size, n_embd)
        self.h = [MLXBlock(n_embd, n_head) for _ in range(n_layer)]
        self.ln_f = mnn.LayerNorm(n_embd)

    def __call__(self, idx):
        x = self.wte(idx) + self.wpe(mx.arange(idx.shape[1]))
        for block in self.h:
            x = block(x)
        return self.wte.as_linear(self.ln_f(x))  # the tied output layer


def gpt_weights(sd):
    return [(k.removeprefix("transformer."), mx.array(v)) for k, v in sd.items() if k != "lm_head.weight"]


class MLXBasicBlock(mnn.Module):
    def __init__(self, inplanes, planes, stride):
        super().__init__()
        self.conv1 = mnn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = mnn.BatchNorm(planes)
        self.conv2 = mnn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = mnn.BatchNorm(planes)
        if stride != 1 or inplanes != planes:
            self.downsample = [mnn.Conv2d(inplanes, planes, 1, stride, bias=False), mnn.BatchNorm(planes)]

    def __call__(self, x):
        identity = self.downsample[1](self.downsample[0](x)) if "downsample" in self else x
        out = mnn.relu(self.bn1(self.conv1(x)))
        return mnn.relu(self.bn2(self.conv2(out)) + identity)


class MLXResNet18(mnn.Module):
    """The small-input ResNet-18 on NHWC images."""

    def __init__(self, num_classes=10, width=16):
        super().__init__()
        self.conv1, self.bn1 = mnn.Conv2d(3, width, 3, 1, 1, bias=False), mnn.BatchNorm(width)
        planes, widths = width, (width, 2 * width, 4 * width, 8 * width)
        for i, (w, s) in enumerate(zip(widths, (1, 2, 2, 2))):
            setattr(self, f"layer{i + 1}", [MLXBasicBlock(planes, w, s), MLXBasicBlock(w, w, 1)])
            planes = w
        self.fc = mnn.Linear(8 * width, num_classes)

    def __call__(self, x):
        x = mnn.relu(self.bn1(self.conv1(x)))
        for i in range(4):
            for block in getattr(self, f"layer{i + 1}"):
                x = block(x)
        return self.fc(x.mean((1, 2)))


def _conv_weights(sd, rename=lambda k: k, transposed=()):
    """OIHW -> OHWI (transposed convolutions: (I, O, kH, kW) -> (O, kH, kW, I)); batch norm's step count dropped."""
    out = []
    for k, v in sd.items():
        if k.endswith("num_batches_tracked"):
            continue
        if v.ndim == 4:
            v = v.transpose(1, 2, 3, 0) if k.rsplit(".", 1)[0] in transposed else v.transpose(0, 2, 3, 1)
        out.append((rename(k), mx.array(np.ascontiguousarray(v))))
    return out


def resnet_weights(sd):
    return _conv_weights(sd)


class MLXLSTMLM(mnn.Module):
    """Embedding, two mlx.nn.LSTM layers, the decoder: batch-first (N, S) ids -> (N, S, ntoken) logits."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.0):
        super().__init__()
        self.encoder = mnn.Embedding(ntoken, ninp)
        self.rnn = [mnn.LSTM(ninp if i == 0 else nhid, nhid) for i in range(nlayers)]
        self.decoder = mnn.Linear(nhid, ntoken)

    def __call__(self, idx):
        x = self.encoder(idx)
        for layer in self.rnn:
            x, _ = layer(x)
        return self.decoder(x)


def lstm_weights(sd):
    out = [(k, mx.array(sd[k])) for k in ("encoder.weight", "decoder.weight", "decoder.bias")]
    for i in range(LSTM_CONFIG["nlayers"]):  # mlx.nn.LSTM: one bias, gates i, f, g, o as PyTorch's
        out += [(f"rnn.{i}.Wx", mx.array(sd[f"rnn.weight_ih_l{i}"])),
                (f"rnn.{i}.Wh", mx.array(sd[f"rnn.weight_hh_l{i}"])),
                (f"rnn.{i}.bias", mx.array(sd[f"rnn.bias_ih_l{i}"] + sd[f"rnn.bias_hh_l{i}"]))]
    return out


class MLXGAN(mnn.Module):
    """The DCGAN generator and discriminator on NHWC images, layer indices as the zoo's ``main``."""

    def __init__(self, nz, ngf, ndf, nc, image_size):
        super().__init__()
        stages = int(round(math.log2(image_size))) - 2
        width = ngf * 2 ** (stages - 1)
        g = [mnn.ConvTranspose2d(nz, width, 4, 1, 0, bias=False), mnn.BatchNorm(width), mnn.ReLU()]
        for _ in range(stages - 1):
            g += [mnn.ConvTranspose2d(width, width // 2, 4, 2, 1, bias=False), mnn.BatchNorm(width // 2), mnn.ReLU()]
            width //= 2
        g += [mnn.ConvTranspose2d(width, nc, 4, 2, 1, bias=False), mnn.Tanh()]
        d, width = [mnn.Conv2d(nc, ndf, 4, 2, 1, bias=False), mnn.LeakyReLU(0.2)], ndf
        for _ in range(stages - 1):
            d += [mnn.Conv2d(width, 2 * width, 4, 2, 1, bias=False), mnn.BatchNorm(2 * width), mnn.LeakyReLU(0.2)]
            width *= 2
        d += [mnn.Conv2d(width, 1, 4, 1, 0, bias=False), mnn.Sigmoid()]
        self.netG, self.netD = mnn.Sequential(*g), mnn.Sequential(*d)

    def __call__(self, z):
        return self.netD(self.netG(z)).reshape(-1)


def dcgan_weights(sd):
    transposed = {k.rsplit(".", 1)[0] for k, v in sd.items() if k.startswith("netG.") and v.ndim == 4}
    return _conv_weights(sd, lambda k: k.replace(".main.", ".layers."), transposed)
