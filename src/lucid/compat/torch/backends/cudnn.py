"""torch.backends.cudnn: lucid has no cuDNN; the flags are accepted and do nothing."""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version():
    return None
