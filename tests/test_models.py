"""lucid.models: every zoo model's forward shapes, its state_dict keys and shapes against the published PyTorch
architecture it follows (written out here), and - with torch installed - the same outputs as that PyTorch
architecture (reference classes written out below from torchvision, nanoGPT and pytorch/examples) given its
weights."""
import functools
import math
from collections import OrderedDict

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.models.dcgan import Discriminator, Generator, dcgan
from lucid.models.gpt import GPT, GPTConfig, gpt
from lucid.models.lenet import lenet5
from lucid.models.lstm_lm import RNNModel, lstm_lm, repackage_hidden
from lucid.models.mlp import mlp
from lucid.models.resnet import resnet18, resnet34
from lucid.models.vae import vae, vae_loss
from lucid.models.vit import vit


def keys_and_shapes(model) -> list:
    return [(k, tuple(v.shape)) for k, v in model.state_dict().items()]


def n_params(model) -> int:
    return sum(p.numel() for p in model.parameters())


# ------------------------------------------------------------------------- published architectures, written out
def bn(name: str, c: int) -> list:
    """A BatchNorm2d's state: affine parameters, running statistics and the batch counter."""
    return [(f"{name}.weight", (c,)), (f"{name}.bias", (c,)), (f"{name}.running_mean", (c,)),
            (f"{name}.running_var", (c,)), (f"{name}.num_batches_tracked", ())]


def torchvision_resnet(layers, num_classes=1000, width=64, stem=7, in_channels=3) -> list:
    """torchvision.models.ResNet with BasicBlock: conv1, bn1, layer{1..4}.{block}.{conv1,bn1,conv2,bn2,
    downsample.0,downsample.1} (downsample in a stage's first block where stride or width changes), fc."""
    keys = [("conv1.weight", (width, in_channels, stem, stem))] + bn("bn1", width)
    inplanes = width
    for stage, (blocks, planes) in enumerate(zip(layers, [width, 2 * width, 4 * width, 8 * width]), 1):
        for b in range(blocks):
            p = f"layer{stage}.{b}."
            keys += [(p + "conv1.weight", (planes, inplanes, 3, 3))] + bn(p + "bn1", planes)
            keys += [(p + "conv2.weight", (planes, planes, 3, 3))] + bn(p + "bn2", planes)
            if b == 0 and (stage > 1 or inplanes != planes):
                keys += [(p + "downsample.0.weight", (planes, inplanes, 1, 1))] + bn(p + "downsample.1", planes)
            inplanes = planes
    return keys + [("fc.weight", (num_classes, 8 * width)), ("fc.bias", (num_classes,))]


def nanogpt(vocab_size, block_size, n_layer, n_embd, bias=True) -> list:
    """nanoGPT's GPT state_dict (flash-attention path: no causal-mask buffer), lm_head tied to wte."""
    ln = lambda name: [(f"{name}.weight", (n_embd,))] + ([(f"{name}.bias", (n_embd,))] if bias else [])  # noqa
    lin = lambda name, o, i: [(f"{name}.weight", (o, i))] + ([(f"{name}.bias", (o,))] if bias else [])  # noqa
    keys = [("transformer.wte.weight", (vocab_size, n_embd)), ("transformer.wpe.weight", (block_size, n_embd))]
    for i in range(n_layer):
        h = f"transformer.h.{i}."
        keys += (ln(h + "ln_1") + lin(h + "attn.c_attn", 3 * n_embd, n_embd) + lin(h + "attn.c_proj", n_embd, n_embd)
                 + ln(h + "ln_2") + lin(h + "mlp.c_fc", 4 * n_embd, n_embd) + lin(h + "mlp.c_proj", n_embd, 4 * n_embd))
    return keys + ln("transformer.ln_f") + [("lm_head.weight", (vocab_size, n_embd))]


def torchvision_vit(image_size, patch_size, num_classes, dim, depth, mlp_dim, channels=3) -> list:
    """torchvision.models.VisionTransformer (no representation layer)."""
    keys = [("class_token", (1, 1, dim)), ("conv_proj.weight", (dim, channels, patch_size, patch_size)),
            ("conv_proj.bias", (dim,)), ("encoder.pos_embedding", (1, (image_size // patch_size) ** 2 + 1, dim))]
    for i in range(depth):
        e = f"encoder.layers.encoder_layer_{i}."
        keys += [(e + "ln_1.weight", (dim,)), (e + "ln_1.bias", (dim,)),
                 (e + "self_attention.in_proj_weight", (3 * dim, dim)), (e + "self_attention.in_proj_bias", (3 * dim,)),
                 (e + "self_attention.out_proj.weight", (dim, dim)), (e + "self_attention.out_proj.bias", (dim,)),
                 (e + "ln_2.weight", (dim,)), (e + "ln_2.bias", (dim,)),
                 (e + "mlp.0.weight", (mlp_dim, dim)), (e + "mlp.0.bias", (mlp_dim,)),
                 (e + "mlp.3.weight", (dim, mlp_dim)), (e + "mlp.3.bias", (dim,))]
    return keys + [("encoder.ln.weight", (dim,)), ("encoder.ln.bias", (dim,)),
                   ("heads.head.weight", (num_classes, dim)), ("heads.head.bias", (num_classes,))]


def word_language_model(ntoken, ninp, nhid, nlayers, gates=4) -> list:
    """pytorch/examples word_language_model RNNModel: encoder, rnn (gates*nhid rows per matrix), decoder."""
    keys = [("encoder.weight", (ntoken, ninp))]
    for k in range(nlayers):
        keys += [(f"rnn.weight_ih_l{k}", (gates * nhid, ninp if k == 0 else nhid)),
                 (f"rnn.weight_hh_l{k}", (gates * nhid, nhid)),
                 (f"rnn.bias_ih_l{k}", (gates * nhid,)), (f"rnn.bias_hh_l{k}", (gates * nhid,))]
    return keys + [("decoder.weight", (ntoken, nhid)), ("decoder.bias", (ntoken,))]


# ------------------------------------------------------------------------------------ shapes and state_dicts
def test_mlp():
    model = mlp()
    assert model(lucid.randn(5, 1, 8, 8)).shape == (5, 10)
    assert keys_and_shapes(model) == [("1.weight", (128, 64)), ("1.bias", (128,)), ("4.weight", (64, 128)),
                                      ("4.bias", (64,)), ("7.weight", (10, 64)), ("7.bias", (10,))]
    assert mlp(12, (7,), 3)(lucid.randn(2, 12)).shape == (2, 3)


LENET5 = [("conv1.weight", (6, 1, 5, 5)), ("conv1.bias", (6,)), ("conv2.weight", (16, 6, 5, 5)), ("conv2.bias", (16,)),
          ("fc1.weight", (120, 400)), ("fc1.bias", (120,)), ("fc2.weight", (84, 120)), ("fc2.bias", (84,)),
          ("fc3.weight", (10, 84)), ("fc3.bias", (10,))]


@pytest.mark.parametrize("size, flat", [(32, 400), (28, 400), (16, 256), (8, 64), (4, 16)])
def test_lenet5_shapes(size, flat):
    model = lenet5(input_size=size)
    assert model(lucid.randn(2, 1, size, size)).shape == (2, 10)
    expected = [(k, (120, flat) if k == "fc1.weight" else s) for k, s in LENET5]
    assert keys_and_shapes(model) == expected
    with pytest.raises(ValueError, match="at least 4x4"):
        lenet5(input_size=3)


def test_resnet18_is_torchvisions():
    model = resnet18()
    assert keys_and_shapes(model) == torchvision_resnet([2, 2, 2, 2])
    assert n_params(model) == 11_689_512  # torchvision's published count


def test_resnet34_is_torchvisions():
    model = resnet34(num_classes=10, width=8)
    assert keys_and_shapes(model) == torchvision_resnet([3, 4, 6, 3], num_classes=10, width=8)
    assert model(lucid.randn(1, 3, 64, 64)).shape == (1, 10)


def test_resnet_small_input_stem():
    model = resnet18(num_classes=6, small_input=True, in_channels=1, width=8)
    assert keys_and_shapes(model) == torchvision_resnet([2, 2, 2, 2], 6, width=8, stem=3, in_channels=1)
    assert isinstance(model.maxpool, nn.Identity) and model.conv1.stride == (1, 1)
    x = lucid.randn(2, 1, 28, 28)
    assert model(x).shape == (2, 6)
    stem = model.relu(model.bn1(model.conv1(x)))
    assert model.layer4(model.layer3(model.layer2(model.layer1(stem)))).shape == (2, 64, 4, 4)  # 28 / 8, rounded up


def test_vit():
    model = vit()
    assert model(lucid.randn(2, 3, 32, 32)).shape == (2, 6)
    assert keys_and_shapes(model) == torchvision_vit(32, 4, 6, 64, 4, 128)
    assert vit(16, 8, 3, 32, 1, 2, 16, channels=1)(lucid.randn(1, 1, 16, 16)).shape == (1, 3)
    with pytest.raises(ValueError, match="32x32"):
        model(lucid.randn(1, 3, 16, 16))
    with pytest.raises(ValueError, match="multiple of patch_size"):
        vit(image_size=30)


@pytest.mark.parametrize("bias", [True, False])
def test_gpt_keys_and_tying(bias):
    model = gpt(block_size=16, vocab_size=11, n_layer=2, n_head=2, n_embd=8, bias=bias)
    assert keys_and_shapes(model) == nanogpt(11, 16, 2, 8, bias)
    assert model.lm_head.weight is model.transformer.wte.weight
    assert n_params(model) == sum(math.prod(s) for k, s in nanogpt(11, 16, 2, 8, bias) if k != "lm_head.weight")


def test_gpt_forward_and_loss():
    model = gpt(block_size=8, vocab_size=11, n_layer=1, n_head=2, n_embd=8)
    idx = lucid.randint(0, 11, (3, 8))
    logits, loss = model(idx, idx)
    assert logits.shape == (3, 8, 11) and loss.shape == () and abs(loss.item() - math.log(11)) < 0.5
    logits, loss = model(idx)
    assert logits.shape == (3, 1, 11) and loss is None
    with pytest.raises(ValueError, match="block size is only 8"):
        model(lucid.randint(0, 11, (1, 9)))
    assert isinstance(GPT(GPTConfig(block_size=4, vocab_size=5, n_layer=1, n_head=1, n_embd=4)), nn.Module)


def test_gpt_causal():
    """A token's logits do not depend on the tokens after it."""
    model = gpt(block_size=8, vocab_size=11, n_layer=2, n_head=2, n_embd=8).eval()
    a = lucid.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])
    b = lucid.tensor([[1, 2, 3, 4, 0, 0, 0, 0]])
    la, _ = model(a, a)
    lb, _ = model(b, b)
    np.testing.assert_allclose(la[:, :4].detach().numpy(), lb[:, :4].detach().numpy(), atol=1e-6)


def test_gpt_generate():
    model = gpt(block_size=4, vocab_size=7, n_layer=1, n_head=1, n_embd=8).eval()
    lucid.manual_seed(1)
    out = model.generate(lucid.tensor([[1, 2]]), 10, temperature=0.8, top_k=3)  # longer than block_size: cropped
    assert out.shape == (1, 12) and out[:, :2].tolist() == [[1, 2]] and out.dtype == lucid.int64
    assert 0 <= out.min().item() and out.max().item() < 7
    lucid.manual_seed(1)
    assert model.generate(lucid.tensor([[1, 2]]), 10, temperature=0.8, top_k=3).tolist() == out.tolist()
    greedy = model.generate(lucid.tensor([[3]]), 1, top_k=1)
    logits, _ = model(lucid.tensor([[3]]))
    assert greedy[0, 1].item() == logits[0, -1].argmax().item()
    with pytest.raises(ValueError, match="temperature"):
        model.generate(lucid.tensor([[3]]), 1, temperature=0.0)


def test_sample_follows_probabilities():
    """GPT.generate draws the next token with lucid.multinomial(probs, 1)."""
    lucid.manual_seed(0)
    probs = lucid.tensor([[0.0, 0.25, 0.75, 0.0]]).expand(4000, 4)
    counts = np.bincount(lucid.multinomial(probs, 1).numpy().ravel(), minlength=4)
    assert counts[0] == 0 and counts[3] == 0 and abs(counts[2] / 4000 - 0.75) < 0.03


@pytest.mark.parametrize("rnn_type, gates", [("LSTM", 4), ("GRU", 3), ("RNN_TANH", 1)])
def test_lstm_lm(rnn_type, gates):
    model = lstm_lm(13, ninp=6, nhid=5, nlayers=2, rnn_type=rnn_type)
    assert keys_and_shapes(model) == word_language_model(13, 6, 5, 2, gates)
    hidden = model.init_hidden(3)
    log_probs, hidden = model(lucid.randint(0, 13, (7, 3)), hidden)
    assert log_probs.shape == (21, 13)
    np.testing.assert_allclose(log_probs.exp().sum(1).detach().numpy(), 1.0, rtol=1e-5)
    states = hidden if rnn_type == "LSTM" else (hidden,)
    assert all(h.shape == (2, 3, 5) for h in states)
    assert all(not h.requires_grad for h in (repackage_hidden(hidden) if rnn_type == "LSTM" else (repackage_hidden(hidden),)))


def test_lstm_lm_tied():
    model = lstm_lm(13, ninp=6, nhid=6, tie_weights=True)
    assert model.decoder.weight is model.encoder.weight
    assert [k for k, _ in keys_and_shapes(model)] == [k for k, _ in word_language_model(13, 6, 6, 2)]
    with pytest.raises(ValueError, match="nhid must be equal to emsize"):
        lstm_lm(13, ninp=6, nhid=5, tie_weights=True)
    with pytest.raises(ValueError, match="rnn_type must be one of"):
        RNNModel("LSTMX", 13, 6, 6, 1)


def test_vae():
    model = vae()
    assert keys_and_shapes(model) == [("fc1.weight", (400, 784)), ("fc1.bias", (400,)), ("fc21.weight", (20, 400)),
                                      ("fc21.bias", (20,)), ("fc22.weight", (20, 400)), ("fc22.bias", (20,)),
                                      ("fc3.weight", (400, 20)), ("fc3.bias", (400,)), ("fc4.weight", (784, 400)),
                                      ("fc4.bias", (784,))]
    small = vae(64, 32, 4)
    x = lucid.rand(5, 1, 8, 8)
    recon, mu, logvar = small(x)
    assert recon.shape == (5, 64) and mu.shape == logvar.shape == (5, 4)
    assert 0 <= recon.min().item() and recon.max().item() <= 1
    loss = vae_loss(recon, x, mu, logvar)
    assert loss.shape == () and loss.item() > 0


def test_vae_loss_formula():
    """BCE summed plus the closed-form KL of N(mu, exp(logvar)) from N(0, 1), written in numpy."""
    rng = np.random.default_rng(0)
    x, recon = rng.uniform(0.05, 0.95, (3, 6)), rng.uniform(0.05, 0.95, (3, 6))
    mu, logvar = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    bce = -(x * np.log(recon) + (1 - x) * np.log(1 - recon)).sum()
    kld = 0.5 * (np.exp(logvar) + mu ** 2 - 1 - logvar).sum()
    got = vae_loss(*(lucid.tensor(a.astype(np.float32)) for a in (recon, x, mu, logvar)))
    np.testing.assert_allclose(got.item(), bce + kld, rtol=1e-5)


def dcgan_64(nz, ngf, ndf, nc):
    """pytorch/examples dcgan at 64x64: the Generator's and the Discriminator's keys."""
    g = [("main.0.weight", (nz, ngf * 8, 4, 4))] + bn("main.1", ngf * 8)
    g += [("main.3.weight", (ngf * 8, ngf * 4, 4, 4))] + bn("main.4", ngf * 4)
    g += [("main.6.weight", (ngf * 4, ngf * 2, 4, 4))] + bn("main.7", ngf * 2)
    g += [("main.9.weight", (ngf * 2, ngf, 4, 4))] + bn("main.10", ngf) + [("main.12.weight", (ngf, nc, 4, 4))]
    d = [("main.0.weight", (ndf, nc, 4, 4)), ("main.2.weight", (ndf * 2, ndf, 4, 4))] + bn("main.3", ndf * 2)
    d += [("main.5.weight", (ndf * 4, ndf * 2, 4, 4))] + bn("main.6", ndf * 4)
    d += [("main.8.weight", (ndf * 8, ndf * 4, 4, 4))] + bn("main.9", ndf * 8) + [("main.11.weight", (1, ndf * 8, 4, 4))]
    return g, d


def test_dcgan_is_pytorch_examples():
    netG, netD = dcgan()
    assert (keys_and_shapes(netG), keys_and_shapes(netD)) == dcgan_64(100, 64, 64, 3)
    assert (n_params(netG), n_params(netD)) == (3_576_704, 2_765_568)


def test_dcgan_small_images():
    netG, netD = dcgan(nz=8, ngf=4, ndf=4, nc=1, image_size=16)
    g = [("main.0.weight", (8, 8, 4, 4))] + bn("main.1", 8) + [("main.3.weight", (8, 4, 4, 4))] + bn("main.4", 4)
    g += [("main.6.weight", (4, 1, 4, 4))]
    d = [("main.0.weight", (4, 1, 4, 4)), ("main.2.weight", (8, 4, 4, 4))] + bn("main.3", 8)
    d += [("main.5.weight", (1, 8, 4, 4))]
    assert (keys_and_shapes(netG), keys_and_shapes(netD)) == (g, d)
    fake = netG(lucid.randn(5, 8, 1, 1))
    assert fake.shape == (5, 1, 16, 16) and -1 <= fake.min().item() and fake.max().item() <= 1
    p = netD(fake)
    assert p.shape == (5,) and 0 <= p.min().item() and p.max().item() <= 1
    assert Generator(image_size=32)(lucid.randn(1, 100, 1, 1)).shape == (1, 3, 32, 32)
    assert Discriminator(image_size=32)(lucid.randn(2, 3, 32, 32)).shape == (2,)
    with pytest.raises(ValueError, match="power of two"):
        Generator(image_size=48)


# ------------------------------------------------------------------------------- PyTorch references (optional)
@functools.lru_cache(maxsize=1)
def torch_refs():
    """The PyTorch modules the zoo follows, written out from their sources (nanoGPT model.py, pytorch/examples
    word_language_model, vae and dcgan, torchvision's ResNet and VisionTransformer)."""
    torch = pytest.importorskip("torch")
    tnn, TF = torch.nn, torch.nn.functional

    # -- nanoGPT (flash-attention path)
    class LayerNorm(tnn.Module):
        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = tnn.Parameter(torch.ones(ndim))
            self.bias = tnn.Parameter(torch.zeros(ndim)) if bias else None

        def forward(self, x):
            return TF.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(tnn.Module):
        def __init__(self, c):
            super().__init__()
            self.c_attn = tnn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
            self.c_proj = tnn.Linear(c.n_embd, c.n_embd, bias=c.bias)
            self.attn_dropout, self.resid_dropout = tnn.Dropout(c.dropout), tnn.Dropout(c.dropout)
            self.n_head, self.n_embd = c.n_head, c.n_embd

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
            y = TF.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C)))

    class MLP(tnn.Module):
        def __init__(self, c):
            super().__init__()
            self.c_fc = tnn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
            self.gelu = tnn.GELU()
            self.c_proj = tnn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
            self.dropout = tnn.Dropout(c.dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(tnn.Module):
        def __init__(self, c):
            super().__init__()
            self.ln_1, self.attn = LayerNorm(c.n_embd, c.bias), CausalSelfAttention(c)
            self.ln_2, self.mlp = LayerNorm(c.n_embd, c.bias), MLP(c)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class TorchGPT(tnn.Module):
        def __init__(self, c):
            super().__init__()
            self.transformer = tnn.ModuleDict(dict(
                wte=tnn.Embedding(c.vocab_size, c.n_embd), wpe=tnn.Embedding(c.block_size, c.n_embd),
                drop=tnn.Dropout(c.dropout), h=tnn.ModuleList([Block(c) for _ in range(c.n_layer)]),
                ln_f=LayerNorm(c.n_embd, c.bias)))
            self.lm_head = tnn.Linear(c.n_embd, c.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets):
            pos = torch.arange(0, idx.size(1), dtype=torch.long)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return logits, TF.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

    # -- pytorch/examples word_language_model
    class TorchRNNModel(tnn.Module):
        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
            super().__init__()
            self.ntoken = ntoken
            self.drop = tnn.Dropout(dropout)
            self.encoder = tnn.Embedding(ntoken, ninp)
            self.rnn = getattr(tnn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = tnn.Linear(nhid, ntoken)
            if tie_weights:
                self.decoder.weight = self.encoder.weight

        def forward(self, input, hidden):
            output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
            decoded = self.decoder(self.drop(output)).view(-1, self.ntoken)
            return TF.log_softmax(decoded, dim=1), hidden

    # -- pytorch/examples vae
    class TorchVAE(tnn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc21, self.fc22 = tnn.Linear(784, 400), tnn.Linear(400, 20), tnn.Linear(400, 20)
            self.fc3, self.fc4 = tnn.Linear(20, 400), tnn.Linear(400, 784)

        def encode(self, x):
            h1 = TF.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def decode(self, z):
            return torch.sigmoid(self.fc4(TF.relu(self.fc3(z))))

    def vae_loss_function(recon_x, x, mu, logvar):
        BCE = TF.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
        return BCE - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    # -- pytorch/examples dcgan (64x64)
    class TorchGenerator(tnn.Module):
        def __init__(self, nz, ngf, nc):
            super().__init__()
            self.main = tnn.Sequential(
                tnn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), tnn.BatchNorm2d(ngf * 8), tnn.ReLU(True),
                tnn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), tnn.BatchNorm2d(ngf * 4), tnn.ReLU(True),
                tnn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), tnn.BatchNorm2d(ngf * 2), tnn.ReLU(True),
                tnn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), tnn.BatchNorm2d(ngf), tnn.ReLU(True),
                tnn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), tnn.Tanh())

        def forward(self, input):
            return self.main(input)

    class TorchDiscriminator(tnn.Module):
        def __init__(self, ndf, nc):
            super().__init__()
            self.main = tnn.Sequential(
                tnn.Conv2d(nc, ndf, 4, 2, 1, bias=False), tnn.LeakyReLU(0.2, inplace=True),
                tnn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), tnn.BatchNorm2d(ndf * 2), tnn.LeakyReLU(0.2, True),
                tnn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), tnn.BatchNorm2d(ndf * 4), tnn.LeakyReLU(0.2, True),
                tnn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False), tnn.BatchNorm2d(ndf * 8), tnn.LeakyReLU(0.2, True),
                tnn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False), tnn.Sigmoid())

        def forward(self, input):
            return self.main(input).view(-1, 1).squeeze(1)

    # -- torchvision ResNet (BasicBlock)
    class BasicBlock(tnn.Module):
        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = tnn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = tnn.BatchNorm2d(planes)
            self.relu = tnn.ReLU(inplace=True)
            self.conv2 = tnn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = tnn.BatchNorm2d(planes)
            self.downsample = downsample

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(out)) + identity)

    class TorchResNet(tnn.Module):
        def __init__(self, layers, num_classes, width, small_input):
            super().__init__()
            self.inplanes = width
            self.conv1 = (tnn.Conv2d(3, width, 3, 1, 1, bias=False) if small_input
                          else tnn.Conv2d(3, width, 7, 2, 3, bias=False))
            self.bn1 = tnn.BatchNorm2d(width)
            self.relu = tnn.ReLU(inplace=True)
            self.maxpool = tnn.Identity() if small_input else tnn.MaxPool2d(3, 2, 1)
            self.layer1 = self._make_layer(width, layers[0])
            self.layer2 = self._make_layer(2 * width, layers[1], 2)
            self.layer3 = self._make_layer(4 * width, layers[2], 2)
            self.layer4 = self._make_layer(8 * width, layers[3], 2)
            self.avgpool = tnn.AdaptiveAvgPool2d((1, 1))
            self.fc = tnn.Linear(8 * width, num_classes)

        def _make_layer(self, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes:
                downsample = tnn.Sequential(tnn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                                            tnn.BatchNorm2d(planes))
            layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes
            return tnn.Sequential(*layers, *[BasicBlock(planes, planes) for _ in range(1, blocks)])

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    # -- torchvision VisionTransformer
    class MLPBlock(tnn.Sequential):
        def __init__(self, dim, mlp_dim):
            super().__init__(tnn.Linear(dim, mlp_dim), tnn.GELU(), tnn.Dropout(0.0), tnn.Linear(mlp_dim, dim),
                             tnn.Dropout(0.0))

    class EncoderBlock(tnn.Module):
        def __init__(self, heads, dim, mlp_dim):
            super().__init__()
            self.ln_1 = tnn.LayerNorm(dim, eps=1e-6)
            self.self_attention = tnn.MultiheadAttention(dim, heads, batch_first=True)
            self.dropout = tnn.Dropout(0.0)
            self.ln_2 = tnn.LayerNorm(dim, eps=1e-6)
            self.mlp = MLPBlock(dim, mlp_dim)

        def forward(self, input):
            x = self.ln_1(input)
            x, _ = self.self_attention(x, x, x, need_weights=False)
            x = self.dropout(x) + input
            return x + self.mlp(self.ln_2(x))

    class Encoder(tnn.Module):
        def __init__(self, seq_length, depth, heads, dim, mlp_dim):
            super().__init__()
            self.pos_embedding = tnn.Parameter(torch.empty(1, seq_length, dim).normal_(std=0.02))
            self.dropout = tnn.Dropout(0.0)
            self.layers = tnn.Sequential(OrderedDict(
                (f"encoder_layer_{i}", EncoderBlock(heads, dim, mlp_dim)) for i in range(depth)))
            self.ln = tnn.LayerNorm(dim, eps=1e-6)

        def forward(self, input):
            return self.ln(self.layers(self.dropout(input + self.pos_embedding)))

    class TorchViT(tnn.Module):
        def __init__(self, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim):
            super().__init__()
            self.dim = dim
            self.conv_proj = tnn.Conv2d(3, dim, patch_size, patch_size)
            self.class_token = tnn.Parameter(torch.zeros(1, 1, dim))
            self.encoder = Encoder((image_size // patch_size) ** 2 + 1, depth, heads, dim, mlp_dim)
            self.heads = tnn.Sequential(OrderedDict(head=tnn.Linear(dim, num_classes)))

        def forward(self, x):
            n = x.shape[0]
            x = self.conv_proj(x).reshape(n, self.dim, -1).permute(0, 2, 1)
            x = torch.cat([self.class_token.expand(n, -1, -1), x], dim=1)
            return self.heads(self.encoder(x)[:, 0])

    return dict(torch=torch, GPT=TorchGPT, RNNModel=TorchRNNModel, VAE=TorchVAE, vae_loss=vae_loss_function,
                Generator=TorchGenerator, Discriminator=TorchDiscriminator, ResNet=TorchResNet, ViT=TorchViT)


def randomized(torch_module, seed=0):
    """The module with every parameter and batch-norm statistic random (so no zero or unit initialisation hides a
    mismatch), in eval mode."""
    torch = torch_refs()["torch"]
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in torch_module.state_dict(keep_vars=True).items():
            if not t.is_floating_point():
                continue
            if name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=gen) + 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=gen) * (0.2 if t.dim() < 2 else 1 / math.sqrt(t[0].numel())))
    return torch_module.eval()


def load_torch(model, torch_module):
    """The lucid model with the PyTorch module's weights, as a user converts them."""
    sd = torch_module.state_dict()
    assert list(sd) == list(model.state_dict())
    result = model.load_state_dict({k: lucid.tensor(v.detach().numpy()) for k, v in sd.items()})
    assert not result.missing_keys and not result.unexpected_keys
    return model.eval()


def close(lucid_out, torch_out, rtol=1e-4):
    expected = torch_out.detach().numpy()
    np.testing.assert_allclose(lucid_out.detach().numpy(), expected, rtol=rtol, atol=rtol * max(1.0, np.abs(expected).max()))


def test_mlp_matches_torch():
    torch = torch_refs()["torch"]
    tnn = torch.nn
    ref = randomized(tnn.Sequential(tnn.Flatten(), tnn.Linear(64, 128), tnn.ReLU(), tnn.Dropout(0.1),
                                    tnn.Linear(128, 64), tnn.ReLU(), tnn.Dropout(0.1), tnn.Linear(64, 10)))
    model = load_torch(mlp(), ref)
    x = np.random.default_rng(0).random((4, 1, 8, 8), dtype=np.float32)
    close(model(lucid.tensor(x)), ref(torch.from_numpy(x)))


@pytest.mark.parametrize("size", [32, 28, 8])
def test_lenet5_matches_torch(size):
    """PyTorch's "Neural Networks" tutorial Net (padded where the input is small)."""
    torch = torch_refs()["torch"]
    tnn, TF = torch.nn, torch.nn.functional
    pad1, pad2 = {32: (0, 0), 28: (2, 0), 8: (2, 2)}[size]
    flat = {32: 5, 28: 5, 8: 2}[size]

    class Net(tnn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = tnn.Conv2d(1, 6, 5, padding=pad1), tnn.Conv2d(6, 16, 5, padding=pad2)
            self.fc1, self.fc2, self.fc3 = tnn.Linear(16 * flat * flat, 120), tnn.Linear(120, 84), tnn.Linear(84, 10)

        def forward(self, x):
            x = TF.max_pool2d(TF.relu(self.conv1(x)), 2)
            x = torch.flatten(TF.max_pool2d(TF.relu(self.conv2(x)), 2), 1)
            return self.fc3(TF.relu(self.fc2(TF.relu(self.fc1(x)))))

    ref = randomized(Net())
    model = load_torch(lenet5(input_size=size), ref)
    x = np.random.default_rng(0).random((3, 1, size, size), dtype=np.float32)
    close(model(lucid.tensor(x)), ref(torch.from_numpy(x)))


@pytest.mark.parametrize("small_input", [True, False])
def test_resnet_matches_torch(small_input):
    refs = torch_refs()
    ref = randomized(refs["ResNet"]([2, 2, 2, 2], 5, 8, small_input))
    model = load_torch(resnet18(num_classes=5, small_input=small_input, width=8), ref)
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32), dtype=np.float32)
    close(model(lucid.tensor(x)), ref(refs["torch"].from_numpy(x)))


def test_vit_matches_torch():
    refs = torch_refs()
    ref = randomized(refs["ViT"](16, 4, 5, 16, 2, 2, 32))
    model = load_torch(vit(image_size=16, patch_size=4, num_classes=5, dim=16, depth=2, heads=2, mlp_dim=32), ref)
    x = np.random.default_rng(0).random((2, 3, 16, 16), dtype=np.float32)
    close(model(lucid.tensor(x)), ref(refs["torch"].from_numpy(x)))


@pytest.mark.parametrize("bias", [True, False])
def test_gpt_matches_nanogpt(bias):
    refs = torch_refs()
    config = GPTConfig(block_size=8, vocab_size=11, n_layer=2, n_head=2, n_embd=16, bias=bias)
    ref = randomized(refs["GPT"](config))
    model = load_torch(GPT(config), ref)
    assert model.lm_head.weight is model.transformer.wte.weight  # loading keeps the tie
    idx = np.random.default_rng(0).integers(0, 11, (3, 8))
    logits, loss = model(lucid.tensor(idx), lucid.tensor(idx))
    ref_logits, ref_loss = ref(refs["torch"].from_numpy(idx), refs["torch"].from_numpy(idx))
    close(logits, ref_logits)
    close(loss, ref_loss)


@pytest.mark.parametrize("rnn_type, tie", [("LSTM", False), ("GRU", True)])
def test_rnn_model_matches_pytorch_examples(rnn_type, tie):
    refs = torch_refs()
    torch = refs["torch"]
    ref = randomized(refs["RNNModel"](rnn_type, 13, 6, 6, 2, 0.2, tie))
    model = load_torch(lstm_lm(13, 6, 6, 2, 0.2, tie, rnn_type), ref)
    tokens = np.random.default_rng(0).integers(0, 13, (5, 3))
    state = np.random.default_rng(1).standard_normal((2, 2, 3, 6), dtype=np.float32)
    if rnn_type == "LSTM":
        hidden, ref_hidden = tuple(map(lucid.tensor, state)), tuple(map(torch.from_numpy, state))
    else:
        hidden, ref_hidden = lucid.tensor(state[0]), torch.from_numpy(state[0])
    out, hidden = model(lucid.tensor(tokens), hidden)
    ref_out, ref_hidden = ref(torch.from_numpy(tokens), ref_hidden)
    close(out, ref_out)
    for h, rh in zip(*((hidden, ref_hidden) if rnn_type == "LSTM" else ((hidden,), (ref_hidden,)))):
        close(h, rh)


def test_vae_matches_pytorch_examples():
    refs = torch_refs()
    torch = refs["torch"]
    ref = randomized(refs["VAE"]())
    model = load_torch(vae(), ref)
    x = np.random.default_rng(0).random((4, 1, 28, 28), dtype=np.float32)
    mu, logvar = model.encode(lucid.tensor(x).reshape(-1, 784))
    ref_mu, ref_logvar = ref.encode(torch.from_numpy(x).view(-1, 784))
    close(mu, ref_mu)
    close(logvar, ref_logvar)
    recon, ref_recon = model.decode(mu), ref.decode(ref_mu)
    close(recon, ref_recon)
    close(vae_loss(recon, lucid.tensor(x), mu, logvar), refs["vae_loss"](ref_recon, torch.from_numpy(x), ref_mu,
                                                                         ref_logvar))


def test_dcgan_matches_pytorch_examples():
    refs = torch_refs()
    torch = refs["torch"]
    ref_g, ref_d = randomized(refs["Generator"](8, 4, 3)), randomized(refs["Discriminator"](4, 3), seed=1)
    netG = load_torch(Generator(nz=8, ngf=4, nc=3, image_size=64), ref_g)
    netD = load_torch(Discriminator(ndf=4, nc=3, image_size=64), ref_d)
    z = np.random.default_rng(0).standard_normal((2, 8, 1, 1), dtype=np.float32)
    fake, ref_fake = netG(lucid.tensor(z)), ref_g(torch.from_numpy(z))
    close(fake, ref_fake)
    close(netD(fake), ref_d(ref_fake))
