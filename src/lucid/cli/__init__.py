"""The ``lucid`` command: train, sample from and evaluate the model zoo.

    lucid models                          the zoo, one line each
    lucid train MODEL [options]           train with a progress bar; checkpoint and figures in runs/MODEL
    lucid sample MODEL --from DIR         generate from a trained gpt, lstm_lm, vae or dcgan
    lucid eval MODEL --from DIR           the test metric of a checkpoint
    lucid info                            versions, device, BLAS
    lucid run SCRIPT [ARGS...]            a PyTorch program, unchanged, with ``torch`` resolved to lucid.compat.torch

``main(argv)`` runs in-process and returns the exit status (0 ok, 2 bad input, 130 stopped by Ctrl-C).
"""
from __future__ import annotations

import argparse
import json
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
    train.add_argument("--seed", type=int, help="seed for data, initialisation and batches (default 0)")
    train.add_argument("--out", help="output directory (default runs/MODEL, or the --resume directory)")
    train.add_argument("--eval-every", type=_positive_int, help="steps between evaluations and checkpoints")
    train.add_argument("--compile", action="store_true", help="compile the training step with lucid.compile")
    train.add_argument("--resume", metavar="DIR", help="continue from the checkpoint in DIR")
    train.add_argument("--device", choices=["cpu", "gpu"], default=None, help="where to run (default: MLX's)")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.add_argument("--amp", choices=["bf16", "fp16"], default=None, help=(
        "mixed precision: forward and loss under lucid.autocast in bfloat16 or float16 (parameters and optimizer "
        "stay float32; fp16 adds a GradScaler); not for dcgan, maml, pinn"))
    train.add_argument("--distributed", action="store_true", help=(
        "data-parallel training over the processes started by mlx.launch (DistributedDataParallel; each process "
        "trains on its share of every batch; rank 0 writes the outputs)"))

    sample = sub.add_parser("sample", help="generate from a trained model")
    sample.add_argument("model", choices=samplers, metavar="MODEL", help="one of: " + ", ".join(samplers))
    sample.add_argument("--from", dest="run", required=True, metavar="DIR", help="a lucid train output directory")
    sample.add_argument("--out", help="where samples.png goes for vae/dcgan (default: the --from directory)")
    sample.add_argument("--prompt", default="\n", help="gpt/lstm_lm: the text to continue")
    sample.add_argument("--length", type=_positive_int, default=500, help="gpt/lstm_lm: characters to generate")
    sample.add_argument("--temperature", type=_positive_float, default=0.8, help="gpt/lstm_lm: sampling temperature")
    sample.add_argument("--top-k", type=_positive_int, default=None, help="gpt: sample from the k likeliest")
    sample.add_argument("--num", type=_positive_int, default=64, help="vae/dcgan: images to draw")
    sample.add_argument("--seed", type=int, default=0, help="sampling seed")

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


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


# ------------------------------------------------------------------------------------------------------ commands
def cmd_models(args) -> int:
    from .recipes import RECIPES
    width = max(map(len, RECIPES))
    for name, recipe in RECIPES.items():
        print(f"{name:<{width}}  {recipe.summary}")
    return 0


def _set_device(device: str | None) -> None:
    import lucid
    if device is not None:
        try:
            lucid.set_default_device(device)
        except RuntimeError as e:
            raise _usage_error(f"--device {device}: {e}")


def _usage_error(message: str):
    from .trainer import UsageError
    return UsageError(message)


def cmd_train(args) -> int:
    from .recipes import RECIPES
    from .trainer import Trainer, ensure_writable, read_config
    cls = RECIPES[args.model]
    saved = read_config(Path(args.resume)) if args.resume else None
    same_model = saved is not None and saved.get("model") == args.model
    saved_args = saved.get("args", {}) if same_model else {}

    def pick(name, default):
        value = getattr(args, name)
        return value if value is not None else saved_args.get(name, default)
    out = Path(args.out or args.resume or f"runs/{args.model}")
    ensure_writable(out)
    _set_device(args.device)
    if args.distributed:
        import lucid.distributed
        lucid.distributed.init_process_group()
    amp = pick("amp", None)
    if amp and not cls.supports_amp:
        raise _usage_error(f"--amp: {args.model}'s training step does not support mixed precision")
    if amp == "fp16" and args.compile:
        raise _usage_error("--amp fp16 cannot be combined with --compile: the GradScaler reads the found-inf flag at "
                     "every step (use --amp bf16, which needs no scaler)")
    recipe = cls(saved["model_config"] if same_model else None, seed=pick("seed", 0),
                 batch_size=pick("batch_size", cls.batch_size))
    recipe.amp = amp
    if amp == "fp16":
        import lucid.amp
        recipe.scaler = lucid.amp.GradScaler()
    lr = pick("lr", cls.lr)
    trainer = Trainer(recipe, out, lr, compile=args.compile, eval_every=pick("eval_every", None),
                      progress=not args.quiet, distributed=args.distributed,
                      args={"compile": args.compile, "eval_every": args.eval_every, "lr_given": args.lr is not None,
                            "device": args.device, "amp": amp})
    if args.steps:
        trainer.total = args.steps
    elif args.epochs:
        trainer.total = args.epochs * recipe.steps_per_epoch
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
          f"lr {lr:g}, seed {recipe.seed}{', compiled' if args.compile else ''}"
          f"{f', {trainer.world} processes' if trainer.world > 1 else ''}); writing to {out}", file=sys.stderr)
    status = trainer.run()
    result = ", ".join(f"{k} {v:.4g}" for k, v in trainer.result.items())
    print(f"{args.model}: {result} after {trainer.step} steps ({trainer.train_time:.1f} s training); "
          f"outputs in {out}")
    return status


def _load_run(model: str, run: Path):
    """A recipe with its data and trained modules from a lucid train directory."""
    from .recipes import RECIPES
    from .trainer import load_weights, read_config
    saved = read_config(run)
    if saved.get("model") != model:
        raise _usage_error(f"{run} holds a {saved.get('model')!r} run, not {model!r}")
    args = saved.get("args", {})
    recipe = RECIPES[model](saved.get("model_config"), seed=args.get("seed", 0), batch_size=args.get("batch_size"))
    recipe.load_data()
    modules = recipe.build()
    load_weights(modules, run, model, saved.get("model"))
    for name, module in modules.items():
        setattr(recipe, name, module)
    return recipe, modules


def cmd_sample(args) -> int:
    import lucid
    from . import figures
    from .trainer import ensure_writable, evaluation
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
    try:
        run_script(args.script, args.args)
    except FileNotFoundError as e:
        print(f"{e}", file=sys.stderr)
        return 2
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
    from .trainer import UsageError
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # argparse printed the usage and the problem (unknown model: the valid names)
        return int(e.code or 0)
    try:
        return COMMANDS[args.command](args)
    except UsageError as e:
        print(f"lucid {args.command}: error: {e}", file=sys.stderr)
        return 2
