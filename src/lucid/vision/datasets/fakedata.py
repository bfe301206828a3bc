"""torchvision's ``FakeData``: random images, the same for the same index (each drawn from the generator seeded
with ``index + random_offset``, the caller's generator state left as it was)."""
from __future__ import annotations

import lucid

from .vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """``size`` random PIL images of ``image_size`` (C, H, W) with random targets in [0, num_classes)."""

    def __init__(self, size: int = 1000, image_size=(3, 224, 224), num_classes: int = 10, transform=None,
                 target_transform=None, random_offset: int = 0):
        super().__init__(transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index: int):
        from lucid.vision.transforms.functional import to_pil_image
        if index >= len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        state = lucid.get_rng_state()
        try:
            lucid.manual_seed(index + self.random_offset)
            img = lucid.randn(*self.image_size)
            target = lucid.randint(0, self.num_classes, size=(1,), dtype=lucid.long)[0]
        finally:
            lucid.set_rng_state(state)
        img, target = self._apply(to_pil_image(img), target)
        return img, target.item()

    def __len__(self):
        return self.size
