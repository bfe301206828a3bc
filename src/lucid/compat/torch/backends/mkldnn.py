"""torch.backends.mkldnn: lucid has no oneDNN; the flag is accepted and does nothing."""
enabled = True


def is_available() -> bool:
    return False
