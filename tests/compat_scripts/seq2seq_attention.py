"""Sequence to sequence with attention, in the form of PyTorch's translation tutorial (shrunk): a GRU encoder, a GRU
decoder with Luong's dot-product attention over the encoder outputs, teacher forcing half of the time, log_softmax
outputs and NLLLoss, SGD. The task: reverse a sequence of digits. The attention weights come from
``F.softmax(scores)`` without ``dim``, as older code has it (PyTorch picks dim 1 for 2-D scores and warns)."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import options, report, start_from

SOS_token, EOS_token = 0, 1
N_DIGITS = 8  # tokens 2..9 stand for the digits 0..7


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)

    def forward(self, input):
        return self.gru(self.embedding(input))


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.concat = nn.Linear(2 * hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, input, hidden, encoder_outputs):
        """One step: input (batch,), hidden (1, batch, hidden); returns log-probabilities, hidden, attention."""
        embedded = self.embedding(input).unsqueeze(1)
        output, hidden = self.gru(embedded, hidden)
        output = output.squeeze(1)
        scores = torch.bmm(encoder_outputs, output.unsqueeze(2)).squeeze(2)  # (batch, source length)
        attn_weights = F.softmax(scores)
        context = torch.bmm(attn_weights.unsqueeze(1), encoder_outputs).squeeze(1)
        concat_output = torch.tanh(self.concat(torch.cat((output, context), 1)))
        return F.log_softmax(self.out(concat_output), dim=1), hidden, attn_weights


def make_pairs(n, length, rng):
    source = rng.integers(2, 2 + N_DIGITS, (n, length))
    target = np.concatenate([source[:, ::-1], np.full((n, 1), EOS_token)], 1)
    return torch.from_numpy(source.astype(np.int64)), torch.from_numpy(target.astype(np.int64))


def train(input_tensor, target_tensor, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion,
          teacher_forcing_ratio):
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    encoder_outputs, encoder_hidden = encoder(input_tensor)
    decoder_input = torch.full((input_tensor.size(0),), SOS_token, dtype=torch.long)
    decoder_hidden = encoder_hidden
    use_teacher_forcing = random.random() < teacher_forcing_ratio
    loss = 0
    for di in range(target_tensor.size(1)):
        decoder_output, decoder_hidden, _ = decoder(decoder_input, decoder_hidden, encoder_outputs)
        loss += criterion(decoder_output, target_tensor[:, di])
        if use_teacher_forcing:
            decoder_input = target_tensor[:, di]
        else:
            _, topi = decoder_output.topk(1)
            decoder_input = topi.squeeze(1).detach()
    loss.backward()
    nn.utils.clip_grad_norm_(encoder.parameters(), 5.0)
    nn.utils.clip_grad_norm_(decoder.parameters(), 5.0)
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.item() / target_tensor.size(1)


def main():
    args = options(steps=8, batch_size=16, hidden_size=32, length=5, teacher_forcing_ratio=0.5, lr=0.05)
    random.seed(0)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    vocab = 2 + N_DIGITS
    encoder = EncoderRNN(vocab, args.hidden_size)
    decoder = AttnDecoderRNN(args.hidden_size, vocab)
    start_from(args, encoder, decoder)
    encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=args.lr, momentum=0.9)
    decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=args.lr, momentum=0.9)
    criterion = nn.NLLLoss()
    losses = []
    for _ in range(args.steps):
        source, target = make_pairs(args.batch_size, args.length, rng)
        losses.append(train(source, target, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion,
                            args.teacher_forcing_ratio))
    source, target = make_pairs(64, args.length, rng)
    with torch.no_grad():  # teacher-forced loss and attention on held-out pairs
        encoder_outputs, hidden = encoder(source)
        decoder_input, eval_loss = torch.full((64,), SOS_token, dtype=torch.long), 0.0
        attentions = []
        for di in range(target.size(1)):
            output, hidden, attn = decoder(decoder_input, hidden, encoder_outputs)
            eval_loss += criterion(output, target[:, di]).item() / target.size(1)
            attentions.append(attn)
            decoder_input = target[:, di]
    attention = torch.stack(attentions, 1)  # (batch, target length, source length)
    assert torch.allclose(attention.sum(-1), torch.ones(64, target.size(1)))
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}, held-out {eval_loss:.4f}")
    report(args, losses=losses, eval_loss=eval_loss, attention_first_row=attention[0, 0].tolist())


if __name__ == "__main__":
    main()
