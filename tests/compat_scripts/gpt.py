"""nanoGPT, shrunk: causal self-attention with F.scaled_dot_product_attention, AdamW with decay groups (and
nanoGPT's check for a `fused` option), torch.compile(model) on its default path, the CUDA/autocast/GradScaler
boilerplate, estimate_loss under eval()/no_grad, a checkpoint saved and loaded back (stripping `_orig_mod.`),
and generate sampling
with torch.multinomial after top-k."""
import inspect
import math
import os
from contextlib import nullcontext

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

from _common import options, report, start_from


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)]), ln_f=nn.LayerNorm(n_embd)))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits, loss = self.lm_head(x[:, [-1], :]), None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [{"params": decay_params, "weight_decay": weight_decay},
                        {"params": nodecay_params, "weight_decay": 0.0}]
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == "cuda"
        extra_args = dict(fused=True) if use_fused else dict()
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def main():
    args = options(steps=4, compile=1, out_dir="")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
    torch.manual_seed(1337)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device_type = "cuda" if "cuda" in device else "cpu"
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
    block_size, batch_size, vocab_size = 16, 4, 64
    data = np.random.default_rng(0).integers(0, vocab_size, 2000).astype(np.int64)
    batch_rng = np.random.default_rng(1)

    def get_batch():
        ix = batch_rng.integers(0, len(data) - block_size, batch_size)
        x = torch.stack([torch.from_numpy(data[i:i + block_size]) for i in ix])
        y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block_size]) for i in ix])
        return x.to(device), y.to(device)

    model_args = dict(vocab_size=vocab_size, block_size=block_size, n_layer=2, n_head=2, n_embd=32)
    model = GPT(**model_args)
    start_from(args, model)
    model.to(device)
    scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), device_type)
    if args.compile:
        unoptimized_model = model
        model = torch.compile(model)

    @torch.no_grad()
    def estimate_loss():
        model.eval()
        losses = torch.zeros(2)
        for k in range(2):
            X, Y = get_batch()
            with ctx:
                _, loss = model(X, Y)
            losses[k] = loss.item()
        model.train()
        return losses.mean()

    losses = []
    X, Y = get_batch()
    for it in range(args.steps):
        with ctx:
            logits, loss = model(X, Y)
        X, Y = get_batch()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    val_loss = estimate_loss().item()

    raw_model = model
    checkpoint = {"model": raw_model.state_dict(), "optimizer": optimizer.state_dict(), "model_args": model_args,
                  "iter_num": args.steps, "best_val_loss": val_loss, "config": {"dtype": dtype}}
    if args.out_dir:
        path = os.path.join(args.out_dir, "ckpt.pt")
        torch.save(checkpoint, path)
        checkpoint = torch.load(path, map_location=device)
    state_dict = checkpoint["model"]
    unwanted_prefix = "_orig_mod."
    for k, v in list(state_dict.items()):
        if k.startswith(unwanted_prefix):
            state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
    sampler = GPT(**checkpoint["model_args"])
    sampler.load_state_dict(state_dict)
    sampler.eval()
    start = torch.tensor(data[:4], dtype=torch.long, device=device)[None, ...]
    with torch.no_grad():
        with ctx:
            y = sampler.generate(start.repeat(3, 1), 8, temperature=0.8, top_k=10)
            greedy = sampler.generate(start, 8, top_k=1)  # sampling from one token: reproducible in any library
    assert y.shape == (3, 12) and bool(((y >= 0) & (y < vocab_size)).all())
    assert torch.equal(y[:, :4], start.repeat(3, 1))
    print(f"GPT: loss {losses[-1]:.4f}, val {val_loss:.4f}, samples {y[:, 4:].tolist()}")
    report(args, losses=losses, val_loss=val_loss, greedy=greedy[0].tolist())


if __name__ == "__main__":
    main()
