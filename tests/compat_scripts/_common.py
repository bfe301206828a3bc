"""Shared by the PyTorch test scripts: the command line, equal starting weights, and the losses written out.

It imports ``torch`` inside each function, so it serves whichever ``torch`` the running script has: real PyTorch,
or lucid.compat.torch under ``run_script``. The data come from numpy with a fixed seed, so both see the same."""
import argparse
import json

import numpy as np


def options(steps: int = 4, **extra) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--init", help="load the starting weights from this .npz")
    parser.add_argument("--save-init", help="write the starting weights to this .npz")
    parser.add_argument("--out", help="write the losses to this .json")
    for name, default in extra.items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    return parser.parse_args()


def start_from(args, *modules) -> None:
    """Make every run start from the same weights: save them (the PyTorch run) or load them (the lucid run)."""
    import torch
    if args.save_init:
        np.savez(args.save_init, **{f"{i}/{k}": v.detach().numpy() for i, m in enumerate(modules)
                                    for k, v in m.state_dict().items()})
    if args.init:
        saved = np.load(args.init)
        for i, m in enumerate(modules):
            m.load_state_dict({k.split("/", 1)[1]: torch.tensor(saved[k]) for k in saved.files
                               if k.startswith(f"{i}/")})


def report(args, **results) -> None:
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f)
