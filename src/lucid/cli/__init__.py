"""The ``lucid`` command: train, sample from and evaluate the model zoo.

    lucid models                          the zoo, one line each
    lucid train MODEL [options]           train with a progress bar; checkpoint and figures in runs/MODEL
    lucid sample MODEL --from DIR         generate from a trained gpt, lstm_lm, vae, dcgan or ddpm
    lucid eval MODEL --from DIR           the test metric of a checkpoint
    lucid info                            versions, device, BLAS
    lucid run SCRIPT [ARGS...]            a PyTorch program, unchanged, with ``torch`` resolved to lucid.compat.torch

``main(argv)`` runs in-process and returns the exit status (0 ok, 2 bad input, 130 stopped by Ctrl-C).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    from .recipes import RECIPES
    names = list(RECIPES)
    samplers = [n for n, r in RECIPES.items() if r.can_sample]
    parser = argparse.ArgumentParser(prog="lucid", description="lucid's model zoo: train, sample, evaluate.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("models", help="list the zoo's models")

    train = sub.add_parser("train", help="train a zoo model", description=(
        "Train MODEL with a progress bar, evaluating periodically; writes model.safetensors, optimizer.safetensors, "
        "config.json, metrics.csv, loss.png and the model's figure into --out. --steps/--epochs is the run's total "
        "length counted from step 0, so --resume DIR continues an interrupted run to its end, or further with a "
        "larger --steps; the result equals an uninterrupted run of the same length."))
    train.add_argument("model", choices=names, metavar="MODEL", help="one of: " + ", ".join(names))
    length = train.add_mutually_exclusive_group()
    length.add_argument("--steps", type=_positive_int, help="total training steps (default: the model's)")
    length.add_argument("--epochs", type=_positive_int, help="total epochs (passes over the training data)")
    train.add_argument("--batch-size", type=_positive_int, help="examples per step (default: the model's)")
    train.add_argument("--lr", type=_positive_float, help="learning rate (default: the model's)")
    train.add_argument("--seed", type=_seed, help=(
        "seed for data, initialisation and batches (default 0); as torch.manual_seed, any integer in "
        "[-2**63, 2**64), a negative one counting as its 64-bit two's complement"))
    train.add_argument("--out", help="output directory (default runs/MODEL, or the --resume directory)")
    train.add_argument("--eval-every", type=_positive_int, help="steps between evaluations and checkpoints")
    train.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                       help="compile the training step with lucid.compile")
    train.add_argument("--resume", metavar="DIR", help=(
        "continue from the checkpoint in DIR, with the options the run was started with (--compile, --amp, "
        "--lr, --batch-size, ...) unless given again"))
    train.add_argument("--data", metavar="ROOT", help=(
        "classifiers (mlp, lenet5, resnet18, vit): train on dataset files under ROOT in torchvision's layout "
        "(ROOT/MNIST/raw/, ROOT/FashionMNIST/raw/, ROOT/KMNIST/raw/, ROOT/cifar-10-batches-py/, "
        "ROOT/cifar-100-python/), the model sized to its images and classes"))
    train.add_argument("--dataset", choices=["mnist", "fashionmnist", "kmnist", "cifar10", "cifar100"], help=(
        "which dataset under --data ROOT (needed only when ROOT holds several)"))
    train.add_argument("--device", choices=["cpu", "gpu"], default=None, help="where to run (default: MLX's)")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.add_argument("--amp", choices=["bf16", "fp16"], default=None, help=(
        "mixed precision: forward and loss under lucid.autocast in bfloat16 or float16 (parameters and optimizer "
        "stay float32; fp16 adds a GradScaler); not for dcgan, realnvp, maml, pinn"))
    train.add_argument("--distributed", action="store_true", help=(
        "data-parallel training over the processes started by mlx.launch (DistributedDataParallel; each process "
        "trains on its share of every batch; rank 0 writes the outputs)"))

    sample = sub.add_parser("sample", help="generate from a trained model")
    sample.add_argument("model", choices=samplers, metavar="MODEL", help="one of: " + ", ".join(samplers))
    sample.add_argument("--from", dest="run", required=True, metavar="DIR", help="a lucid train output directory")
    sample.add_argument("--out", help="where samples.png goes for vae/dcgan/ddpm (default: the --from directory)")
    sample.add_argument("--prompt", default="\n", help="gpt/lstm_lm: the text to continue")
    sample.add_argument("--length", type=_positive_int, default=500, help="gpt/lstm_lm: characters to generate")
    sample.add_argument("--temperature", type=_positive_float, default=0.8, help="gpt/lstm_lm: sampling temperature")
    sample.add_argument("--top-k", type=_positive_int, default=None, help="gpt: sample from the k likeliest")
    sample.add_argument("--num", type=_positive_int, default=64, help="vae/dcgan/ddpm: images to draw")
    sample.add_argument("--seed", type=_seed, default=0, help="sampling seed (as --seed of lucid train)")

    evaluate = sub.add_parser("eval", help="evaluate a trained model on its test data")
    evaluate.add_argument("model", choices=names, metavar="MODEL", help="one of: " + ", ".join(names))
    evaluate.add_argument("--from", dest="run", required=True, metavar="DIR", help="a lucid train output directory")
    sub.add_parser("info", help="versions, device, BLAS, optional packages")

    run = sub.add_parser("run", help="run a PyTorch script unchanged on lucid", description=(
        "Run SCRIPT as `python SCRIPT ARGS...` would, with `import torch` (and every torch.* submodule) resolved to "
        "lucid's PyTorch-compatibility layer, lucid.compat.torch. The script's exit status is the command's."))
    run.add_argument("script", metavar="SCRIPT", help="a Python file")
    run.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's own arguments")
    return parser


# The options' types: a value they refuse becomes argparse's "argument --x: ..." line (exit status 2).
def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value


def _seed(text: str) -> int:
    """torch.manual_seed's seeds: an integer in [-2**63, 2**64), a negative one taken as its two's complement
    (-1 is 2**64 - 1, as torch.initial_seed() reports it), so the data's numpy generators get it too."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not -(1 << 63) <= value < 1 << 64:
        raise argparse.ArgumentTypeError(f"expected an integer in [-2**63, 2**64), got {text!r}")
    return value % (1 << 64)


# ------------------------------------------------------------------------------------------------------ commands
def cmd_models(args) -> int:
    from .recipes import RECIPES
    width = max(map(len, RECIPES))
    for name, recipe in RECIPES.items():
        print(f"{name:<{width}}  {recipe.summary}")
    return 0


def _set_device(device: str | None, origin: str = "") -> None:
    import lucid
    if device is not None:
        try:
            lucid.set_default_device(device)
        except RuntimeError as e:
            raise _usage_error(f"--device {device}{origin}: {e}")


def _usage_error(message: str):
    from .recipes.base import UsageError
    return UsageError(message)


def _refuse_another_models_run(out: Path, args) -> None:
    """``--out`` must not hold another model's run (training would replace it)."""
    from .runs import READY, read_config
    if args.resume and Path(args.resume).resolve() == out.resolve():
        return  # resuming in place: the checkpoint's own checks report a mismatch
    if not (out / "config.json").is_file() and not (out / READY).is_dir():
        return
    existing = read_config(out)["model"]
    if existing != args.model:
        raise _usage_error(f"--out {out} holds a run of {existing!r}, which lucid train {args.model} would replace: "
                           f"choose another --out, remove the folder {out}, or continue that run with "
                           f"`lucid train {existing} --resume {out}`")


def cmd_train(args) -> int:
    from .recipes import RECIPES
    from .runs import ensure_writable, read_config
    from .trainer import Trainer
    cls = RECIPES[args.model]
    saved = read_config(Path(args.resume)) if args.resume else None
    same_model = saved is not None and saved["model"] == args.model
    saved_args = saved["args"] if same_model else {}

    def pick(name, default):
        """The option as given, else as the resumed run was started, else ``default``."""
        value = getattr(args, name)
        return value if value is not None else saved_args.get(name, default)
    out = Path(args.out or args.resume or f"runs/{args.model}")
    _refuse_another_models_run(out, args)
    ensure_writable(out)
    args.out = str(out)  # named by main() if a second Ctrl-C stops the run
    device = pick("device", None)
    _set_device(device, "" if args.device else f" (the setting of {args.resume}; give --device to change it)")
    if args.distributed:
        import lucid.distributed
        lucid.distributed.init_process_group()
    amp, compile = pick("amp", None), pick("compile", False)
    if amp and not cls.supports_amp:
        raise _usage_error(f"--amp: {args.model}'s training step does not support mixed precision")
    if amp == "fp16" and compile:
        raise _usage_error("--amp fp16 cannot be combined with --compile: the GradScaler reads the found-inf flag at "
                           "every step (use --amp bf16, which needs no scaler)")
    recipe = cls(saved["model_config"] if same_model else None, seed=pick("seed", 0),
                 batch_size=pick("batch_size", cls.batch_size))
    data_root, dataset = pick("data", None), pick("dataset", None)
    if (data_root or dataset) and not cls.accepts_data:
        raise _usage_error(f"--data: {args.model} trains on its own data; the image classifiers (mlp, lenet5, "
                           "resnet18, vit) take --data")
    if dataset and not data_root:
        raise _usage_error("--dataset needs --data ROOT (the folder holding the dataset files)")
    recipe.data_root, recipe.dataset = data_root, dataset
    recipe.amp = amp
    if amp == "fp16":
        import lucid.amp
        recipe.scaler = lucid.amp.GradScaler()
    lr, eval_every = pick("lr", cls.lr), pick("eval_every", None)
    trainer = Trainer(recipe, out, lr, compile=compile, eval_every=eval_every, progress=not args.quiet,
                      distributed=args.distributed,
                      args={"compile": compile, "eval_every": eval_every, "lr_given": args.lr is not None,
                            "device": device, "amp": amp, "data": data_root, "dataset": recipe.dataset})
    trainer.args["dataset"] = recipe.dataset  # as found under --data (saved for --resume and lucid eval)
    if args.steps:
        trainer.total = args.steps
    elif args.epochs:
        trainer.total = args.epochs * max(1, recipe.steps_per_epoch)  # a batch larger than an epoch: 1 step each
    else:
        trainer.total = saved_args.get("steps", cls.steps)
    if saved is not None:
        trainer.resume(Path(args.resume), saved)
        if trainer.step > trainer.total:
            raise _usage_error(f"{args.resume} is at step {trainer.step}, beyond --steps {trainer.total}: ask "
                               f"for more steps to continue training")
    start = trainer.step
    if trainer.rank != 0:
        return trainer.run()
    print(f"lucid train {args.model}: {recipe.data}; steps {start}->{trainer.total} (batch {recipe.batch_size}, "
          f"lr {lr:g}, seed {recipe.seed}{', compiled' if compile else ''}{f', amp {amp}' if amp else ''}"
          f"{f', {trainer.world} processes' if trainer.world > 1 else ''}); writing to {out}", file=sys.stderr)
    status = trainer.run()
    result = ", ".join(f"{k} {v:.4g}" for k, v in trainer.result.items())
    print(f"{args.model}: {result} after {trainer.step} steps ({trainer.train_time:.1f} s training); "
          f"outputs in {out}")
    return status


def _load_run(model: str, run: Path):
    """A recipe with its data and trained modules from a lucid train directory."""
    from .recipes import RECIPES
    from .runs import build, load_weights, read_config
    saved = read_config(run)
    if saved["model"] != model:
        raise _usage_error(f"{run} holds a {saved['model']!r} run, not {model!r}")
    args = saved["args"]
    recipe = RECIPES[model](saved["model_config"], seed=args.get("seed", 0), batch_size=args.get("batch_size"))
    if args.get("data"):  # trained on dataset files (--data): evaluated on their test split
        recipe.data_root, recipe.dataset = args["data"], args.get("dataset")
    recipe.load_data()
    modules = build(recipe)
    load_weights(modules, run, model, saved["model"])
    for name, module in modules.items():
        setattr(recipe, name, module)
    return recipe, modules


def cmd_sample(args) -> int:
    import lucid
    from . import figures
    from .runs import ensure_writable
    from .trainer import evaluation
    recipe, modules = _load_run(args.model, Path(args.run))
    out = Path(args.out or args.run)
    ensure_writable(out)
    lucid.manual_seed(args.seed)
    with evaluation(modules):
        print(recipe.sample(out, figures.pyplot(), prompt=args.prompt, length=args.length,
                            temperature=args.temperature, top_k=args.top_k, num=args.num))
    return 0


def cmd_eval(args) -> int:
    from .trainer import evaluation
    recipe, modules = _load_run(args.model, Path(args.run))
    with evaluation(modules):
        metrics = recipe.evaluate()
    print(json.dumps({"model": args.model, "from": args.run, **metrics}))
    return 0


def cmd_info(args) -> int:
    import numpy as np

    import lucid
    lucid.show_config()  # versions, device, float64, BLAS, compile
    optional = []
    for name in ("tqdm", "matplotlib", "torch"):
        try:
            optional.append(f"{name} {__import__(name).__version__}")
        except ImportError:
            optional.append(f"{name} (not installed)")
    for key, value in {"numpy": np.__version__, "cpu cores": str(os.cpu_count()),
                       "optional": ", ".join(optional)}.items():
        print(f"{key:<9}  {value}")
    return 0


def cmd_run(args) -> int:
    from ..compat.run import run_script
    if not os.path.isfile(args.script):  # checked here: a FileNotFoundError of the script itself is its own
        raise _usage_error(f"no such script: {args.script!r}")
    try:
        run_script(args.script, args.args)
    except SystemExit as e:  # the script's own exit status
        code = e.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0


COMMANDS = {"models": cmd_models, "train": cmd_train, "sample": cmd_sample, "eval": cmd_eval, "info": cmd_info,
            "run": cmd_run}


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    if argv is None:
        argv = sys.argv[1:]
    from .recipes.base import UsageError
    from .trainer import INTERRUPTED
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # argparse printed the usage and the problem (unknown model: the valid names)
        return int(e.code or 0)
    try:
        return COMMANDS[args.command](args)
    except UsageError as e:
        print(f"lucid {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a second Ctrl-C during training, or one elsewhere: no traceback
        if args.command == "run":
            raise  # as `python SCRIPT` ends
        kept = f"; {args.out} keeps its last complete checkpoint" if args.command == "train" and args.out else ""
        print(f"lucid {args.command}: stopped by Ctrl-C{kept}", file=sys.stderr)
        return INTERRUPTED
