"""The bundled "tiny Shakespeare" text (``load_tinyshakespeare``), for character-level language models (gpt,
lstm_lm) that train offline."""
from __future__ import annotations

import functools
import gzip
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from .. import _dtype
from .._creation import tensor
from .._tensor import Tensor


@functools.lru_cache(maxsize=1)
def _text() -> str:
    """The whole text (1,115,394 characters), decompressed once per process."""
    raw = resources.files(__package__).joinpath("data", "tinyshakespeare.txt.gz").read_bytes()
    return gzip.decompress(raw).decode("utf-8")


@dataclass(frozen=True, eq=False)
class CharCorpus:
    """A text with its character vocabulary and a train/val split of its token ids.

    - ``text``: the whole text;
    - ``chars``: the sorted list of distinct characters (the vocabulary; ``vocab_size == len(chars)``);
    - ``stoi`` / ``itos``: character -> id and id -> character;
    - ``train`` / ``val``: int64 Tensors (n,) of token ids, the first ``train_fraction`` of the text and the rest.
    """
    text: str
    chars: list
    stoi: dict
    itos: dict
    train: Tensor = field(repr=False)
    val: Tensor = field(repr=False)

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, s: str) -> list:
        """The token ids of ``s``; a character outside the vocabulary raises ``KeyError`` naming it."""
        try:
            return [self.stoi[c] for c in s]
        except KeyError as e:
            raise KeyError(f"character {e.args[0]!r} is not in the vocabulary of {self.vocab_size} characters") from None

    def decode(self, ids) -> str:
        """The text of a sequence of token ids (a list, numpy array or 1-D Tensor)."""
        if isinstance(ids, Tensor):
            ids = ids.tolist()
        return "".join(self.itos[int(i)] for i in ids)


def load_tinyshakespeare(train_fraction: float = 0.9) -> CharCorpus:
    """Tiny Shakespeare (the char-rnn corpus of Karpathy: 40,000 lines of Shakespeare, public domain) as a
    character-level corpus: the first ``train_fraction`` (default 90%) of the characters is ``.train``, the rest
    ``.val``, as in nanoGPT's shakespeare_char. See lucid/datasets/data/NOTICE.txt for the source."""
    if not 0.0 < train_fraction < 1.0:
        raise ValueError(f"train_fraction should be strictly between 0 and 1, got {train_fraction}")
    text = _text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    lookup = np.zeros(max(map(ord, chars)) + 1, dtype=np.int64)
    lookup[[ord(c) for c in chars]] = np.arange(len(chars))
    ids = lookup[np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)]
    split = int(train_fraction * len(ids))
    return CharCorpus(text=text, chars=chars, stoi=stoi, itos=dict(enumerate(chars)),
                      train=tensor(ids[:split], dtype=_dtype.int64), val=tensor(ids[split:], dtype=_dtype.int64))
