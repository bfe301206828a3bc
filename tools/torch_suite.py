"""Run PyTorch's own nn/optim test files against lucid, next to real PyTorch, and count what passes.

Usage (from the repository root, with torch installed in the same environment)::

    PYTHONPATH=$PWD/src python tools/torch_suite.py                       # the 13 default files, table to stdout
    PYTHONPATH=$PWD/src python tools/torch_suite.py nn/test_dropout.py    # one file (path inside <mirror>/test/)
    PYTHONPATH=$PWD/src python tools/torch_suite.py --json /tmp/r.json --failures 5 --timeout 60 --mem-gb 6

The test files are read at run time from a clone of a repository that keeps PyTorch's tests (``--mirror``: a
bare git directory or a work tree; default the Ascend/pytorch copy at /work/.mirror/Ascend+pytorch/repo). Nothing of
them is copied into this repository.

Each file is run twice, each time in its own subprocess with a memory cap (``--mem-gb``, RLIMIT_AS) and a
per-test timeout (``--timeout``, SIGALRM; a test stuck inside native code is ended by killing the worker, which then
resumes after it):

- under real ``torch``: this decides which tests count;
- with ``torch`` rebound to ``lucid.compat.torch``: the file's source is executed with an ``__import__`` that
  resolves ``torch`` and ``torch.*`` to ``lucid.compat.torch`` and its submodules. PyTorch's testing internals
  (``torch.testing._internal``: TestCase, device-type instantiation, parametrization) stay real torch, except
  ``common_nn`` and ``common_optimizers``, whose module/optimizer test tables are executed again with the same
  rebinding so that they build lucid modules; ``TestCase.assertEqual`` compares lucid tensors by converting them to
  torch tensors first, and torch dtypes handed to tests by the internals are mapped to lucid's. ``torch_npu`` (the
  Ascend plugin the copies import) is a stub that reports no device.

A test counts when it passes under real torch and is in scope: CPU, float32/float64 (or no floating dtype in its
name), and none of the features lucid does not model (see ``OUT_OF_SCOPE``). lucid's outcome on each counted test is
one of: pass, unexpected exception, missing API, wrong error type/message, wrong numbers, timeout, crash.
"""
from __future__ import annotations

import argparse
import ast
import builtins
import collections
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
import types
import unittest

MIRROR = "/work/.mirror/Ascend+pytorch/repo"
FILES = {  # short name -> path inside the mirror's test/
    "nn": "test_nn.py", "embedding": "nn/test_embedding.py", "pooling": "nn/test_pooling.py",
    "convolution": "nn/test_convolution.py", "module_hooks": "nn/test_module_hooks.py",
    "optim": "optim/test_optim.py", "swa_utils": "optim/test_swa_utils.py",
    "packed_sequence": "nn/test_packed_sequence.py", "lrscheduler": "optim/test_lrscheduler.py",
    "parametrization": "nn/test_parametrization.py", "multihead_attention": "nn/test_multihead_attention.py",
    "init": "nn/test_init.py", "dropout": "nn/test_dropout.py",
}
# Test names naming a feature lucid does not model (layouts, quantization, TorchScript, devices, low precision,
# compilers) are out of scope; so are device-type variants for a dtype other than float32/float64 among floats.
OUT_OF_SCOPE = re.compile(
    r"sparse|quantiz|qat|_jit|jit_|script|_trace|channels_last|memory_format|nhwc|ndhwc|cuda|cudnn|npu|mkldnn|"
    r"mps|xla|_meta|"
    r"half|bfloat16|bf16|float16|fp16|complex|nested|dynamo|compile|privateuse1|multi_?gpu|_fx|fx_|"
    r"data_parallel|dataparallel|float8|fused|weightcoo|weightcsr|weightcsc|fb_fc_packed")
# ... and tests whose body builds quantization-aware modules (``torch.ao``) or TorchScript, whatever their names say
OUT_OF_SCOPE_SOURCE = re.compile(r"\btorch\.(ao\.|jit\.(trace|script)\b)")
# internals whose test tables build modules/optimizers: executed again with torch rebound (see the docstring)
REBOUND_INTERNALS = ("common_nn", "common_optimizers")
CLASSES = ("pass", "unexpected exception", "missing API", "wrong error type/message", "wrong numbers", "timeout",
           "crash")


class TestTimeout(Exception):
    """Raised by SIGALRM in a test that ran past --timeout."""


# ---------------------------------------------------------------------------------------------------- the worker

def _npu_stub():
    """torch_npu, as imported by the Ascend copies: no NPU present, every decorator a skip."""
    pkg = types.ModuleType("torch_npu")
    npu = types.ModuleType("torch_npu.npu")
    npu.is_available = lambda: False
    npu.device_count = lambda: 0
    npu.get_device_name = lambda *a: ""
    npu.get_device_capability = lambda *a: (0, 0)
    npu.synchronize = npu.empty_cache = lambda *a: None
    testing = types.ModuleType("torch_npu.testing")
    common_utils = types.ModuleType("torch_npu.testing.common_utils")
    common_distributed = types.ModuleType("torch_npu.testing.common_distributed")

    def skip_factory(*a, **k):
        return unittest.skip("needs an Ascend NPU")

    common_utils.SupportedDevices = skip_factory
    common_distributed.skipIfUnsupportMultiNPU = skip_factory
    pkg.npu, pkg.testing = npu, testing
    testing.common_utils, testing.common_distributed = common_utils, common_distributed
    for m in (pkg, npu, testing, common_utils, common_distributed):
        sys.modules[m.__name__] = m
    return npu


class _Missing:
    """What ``from torch.x import name`` binds for a name lucid lacks: the file still loads, and each test that
    uses the name fails with the AttributeError (a missing API) instead of the whole file."""

    def __init__(self, module, name):
        self._message = f"module '{module}' has no attribute '{name}'"
        self._name = self.__name__ = name

    def __str__(self):  # as a dtype lucid lacks (torch.cdouble) in @dtypes: the variant's name, then failing
        return f"torch.{self._name}"

    def __call__(self, *args, **kwargs):
        raise AttributeError(self._message)

    def __mro_entries__(self, bases):  # a test's subclass of a class lucid lacks fails when instantiated
        message = self._message

        class Absent:
            def __init__(self, *args, **kwargs):
                raise AttributeError(message)
        return (Absent,)

    def __getattr__(self, name):
        raise AttributeError(self._message)


class _AbsentHelper:
    """A testing-internals name this torch lacks (the copies follow another torch release): false as a flag,
    and as a decorator (``@skipIfMps``, ``@skipCUDAIf(cond, why)``) it leaves the test as is."""

    def __bool__(self):
        return False

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda f: f


class _Lenient:
    """A lucid module as the test file sees it: its names, its submodules (lenient too), else a _Missing, so that
    a name lucid lacks fails the tests using it rather than the file's loading. Assignments go to the module."""

    def __init__(self, module):
        object.__setattr__(self, "_module", module)

    def __getattr__(self, name):
        import importlib
        try:
            value = getattr(self._module, name)
        except AttributeError:
            try:
                value = importlib.import_module(f"{self._module.__name__}.{name}")
            except ImportError:
                return _Missing(self._module.__name__.replace("lucid.compat.", ""), name)
        return _Lenient(value) if isinstance(value, types.ModuleType) else value

    def __setattr__(self, name, value):
        setattr(self._module, name, value)

    def __delattr__(self, name):
        delattr(self._module, name)


def _suite_entry(make):
    """One entry of a rebound internal's test table, or None where building it fails on lucid (a complex128
    input): that entry's tests are absent, the rest of the table stays."""
    try:
        return make()
    except Exception:
        return None


class _GuardTables(ast.NodeTransformer):
    """Rewrites each long list literal of calls/dicts (common_nn's module and criterion tables) into a list of
    the entries that build: ``[e for e in [_suite_entry(lambda: <entry>), ...] if e is not None]``."""

    def visit_List(self, node):
        self.generic_visit(node)
        if len(node.elts) < 8 or not all(isinstance(e, (ast.Call, ast.Dict)) for e in node.elts):
            return node
        no_args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                defaults=[])
        guarded = ast.List(elts=[ast.Call(func=ast.Name("_suite_entry", ast.Load()),
                                          args=[ast.Lambda(no_args, e)], keywords=[]) for e in node.elts],
                           ctx=ast.Load())
        keep = ast.comprehension(target=ast.Name("_e", ast.Store()), iter=guarded, is_async=0,
                                 ifs=[ast.Compare(ast.Name("_e", ast.Load()), [ast.IsNot()], [ast.Constant(None)])])
        return ast.ListComp(elt=ast.Name("_e", ast.Load()), generators=[keep])


class _Lucid:
    """The rebinding: lucid.compat.torch in place of torch for the test file and the rebound internals."""

    def __init__(self):
        import numpy as np
        import torch
        import lucid.compat.torch as lt
        self.np, self.torch, self.lt = np, torch, lt
        import lucid
        self.Tensor = lucid.Tensor
        names = ("float32 float64 float16 bfloat16 int8 int16 int32 int64 uint8 bool complex64").split()
        self.to_real = {getattr(lt, n): getattr(torch, n) for n in names if hasattr(lt, n)}
        self.to_lucid = {v: k for k, v in self.to_real.items()}
        self.internals = {}
        lt.npu = _npu_stub()

    # -- values crossing between the real internals and lucid
    def lucid_value(self, obj):
        """torch dtypes in what the real internals hand out (dtype lists, tolerance tables) become lucid's."""
        if isinstance(obj, self.torch.dtype):
            return self.to_lucid.get(obj, obj)
        if isinstance(obj, (list, tuple, set, frozenset)):
            return type(obj)(self.lucid_value(o) for o in obj)
        if isinstance(obj, dict):
            return {self.lucid_value(k): self.lucid_value(v) for k, v in obj.items()}
        return obj

    def real_value(self, obj):
        """lucid tensors/dtypes/sizes in what a test compares become torch's, for the real assertEqual."""
        if isinstance(obj, self.Tensor):
            x = obj.detach()
            if str(x.dtype).endswith("bfloat16"):
                return self.torch.from_numpy(self.np.array(x.float().numpy())).to(self.torch.bfloat16)
            return self.torch.from_numpy(self.np.array(x.numpy()))
        if isinstance(obj, (list, tuple)):  # a namedtuple (PackedSequence) as its fields
            return type(obj)(self.real_value(o) for o in obj) if type(obj) in (list, tuple) else \
                tuple(self.real_value(o) for o in obj)
        if isinstance(obj, self.lt.TypedStorage):  # compared by value, as torch's TypedStoragePair does
            return self.torch.tensor(obj.tolist(), dtype=self.real_value(obj.dtype)).storage()
        if type(obj) in (dict, collections.OrderedDict) or isinstance(obj, (self.lt.nn.ParameterDict,
                                                                               self.lt.nn.ModuleDict)):
            return {k: self.real_value(v) for k, v in obj.items()}  # (a state_dict is an OrderedDict)
        if isinstance(obj, (self.lt.nn.ParameterList, self.lt.nn.ModuleList, self.lt.nn.Sequential)):
            return [self.real_value(o) for o in obj]
        try:
            if obj in self.to_real:
                return self.to_real[obj]
        except TypeError:
            pass
        return obj

    # -- the import hook
    def proxy(self, name, real):  # noqa: C901
        """A module forwarding to the real internal ``real``, with torch dtypes mapped to lucid's and lucid's
        gradcheck/TestCase in place of torch's."""
        if name in self.internals:
            return self.internals[name]
        mod = types.ModuleType(real.__name__)
        for k, v in vars(real).items():
            if k.startswith("__"):
                continue
            setattr(mod, k, self._wrap_callable(v) if callable(v) and not isinstance(v, type)
                    and k.endswith(("_types", "_types_and", "dtypes", "_dtypes")) else self.lucid_value(v))
        if real.__name__.endswith(".common_utils"):
            mod.TestCase = self.test_case(real.TestCase)
            mod.gradcheck, mod.gradgradcheck = self.lt.autograd.gradcheck, self.lt.autograd.gradgradcheck
            mod.set_default_dtype = self.set_default_dtype
            mod.freeze_rng_state = self.freeze_rng_state

            def checks(test_case, apply_fn, inputs, **kw):
                test_case.assertTrue(self.lt.autograd.gradcheck(apply_fn, inputs, **kw))
                test_case.assertTrue(self.lt.autograd.gradgradcheck(apply_fn, inputs, **kw))
            mod._assertGradAndGradgradChecks = checks
        self.internals[name] = mod
        return mod

    def _wrap_callable(self, fn):
        return lambda *a, **k: self.lucid_value(fn(*self.real_value(a), **k))

    def set_default_dtype(self, dtype):
        import contextlib
        lt = self.lt

        @contextlib.contextmanager
        def ctx():
            old = lt.get_default_dtype()
            lt.set_default_dtype(dtype)
            try:
                yield
            finally:
                lt.set_default_dtype(old)
        return ctx()

    def freeze_rng_state(self):
        import contextlib
        lt = self.lt

        @contextlib.contextmanager
        def ctx():
            state = lt.get_rng_state()
            try:
                yield
            finally:
                lt.set_rng_state(state)
        return ctx()

    def test_case(self, base):
        adapter = self

        class LucidTestCase(base):
            def assertEqual(self, x, y, *args, **kwargs):
                return super().assertEqual(adapter.real_value(x), adapter.real_value(y), *args, **kwargs)

            def assertNotEqual(self, x, y, *args, **kwargs):
                return super().assertNotEqual(adapter.real_value(x), adapter.real_value(y), *args, **kwargs)
        LucidTestCase.__name__ = LucidTestCase.__qualname__ = "TestCase"
        return LucidTestCase

    def rebound_internal(self, short):
        """common_nn / common_optimizers executed again with torch rebound."""
        key = "rebound." + short
        if key not in self.internals:
            import importlib
            real = importlib.import_module("torch.testing._internal." + short)
            mod = types.ModuleType("lucid_suite." + short)
            mod.__file__ = real.__file__
            self.internals[key] = mod
            sys.modules[mod.__name__] = mod
            with open(real.__file__) as f:
                tree = _GuardTables().visit(ast.parse(f.read()))
            mod.__dict__["_suite_entry"] = _suite_entry
            self.execute(compile(ast.fix_missing_locations(tree), real.__file__, "exec"), mod)
            if short == "common_nn":
                mod.NewModuleTest.noncontiguize = lambda test, obj: self.noncontiguize(test, obj)
        return self.internals[key]

    def noncontiguize(self, test, obj):
        """common_nn's strided view of an input (stack, then select), without its assertion that the view is
        non-contiguous: lucid tensors have no user-visible strides (``is_contiguous()`` is always True), so the
        module still runs on the view and is compared as in PyTorch."""
        if isinstance(obj, (list, tuple)):
            return type(obj)(self.noncontiguize(test, o) for o in obj)
        dim = next((d + 1 for d in range(obj.dim()) if obj.size(d) > 1), obj.dim())
        view = self.lt.stack([self.lt.empty_like(obj), obj], dim).select(dim, 1).detach()
        view.requires_grad = obj.requires_grad
        return view

    def importer(self):
        real_import = builtins.__import__
        internal_prefix = "torch.testing._internal"

        def hook(name, globals=None, locals=None, fromlist=(), level=0):
            if level or not (name == "torch" or name.startswith("torch.")):
                return real_import(name, globals, locals, fromlist, level)
            if name.startswith(internal_prefix):
                short = name[len(internal_prefix) + 1:]
                if not fromlist:
                    real_import(name, globals, locals, fromlist, level)
                    return _Lenient(self.lt)
                if not short:  # from torch.testing._internal import common_utils
                    pkg = types.ModuleType(name)
                    for f in fromlist:
                        pkg.__dict__[f] = self.internal(f)
                    return pkg
                module = self.internal(short)
                for f in fromlist:
                    if not hasattr(module, f):
                        setattr(module, f, _AbsentHelper())
                return module
            lucid_name = "lucid.compat." + name
            try:
                module = real_import(lucid_name, globals, locals, fromlist, level)
            except ModuleNotFoundError:  # a module lucid lacks: empty, so each test using it fails alone
                module = sys.modules[lucid_name] = types.ModuleType(lucid_name)
                if not fromlist:
                    return _Lenient(self.lt)
            return _Lenient(self.lt if not fromlist else sys.modules.get(lucid_name, module))
        return hook

    def internal(self, short):
        import importlib
        if short in REBOUND_INTERNALS:
            return self.rebound_internal(short)
        return self.proxy(short, importlib.import_module("torch.testing._internal." + short))

    def execute(self, code, module):
        b = dict(vars(builtins))
        b["__import__"] = self.importer()
        module.__dict__["__builtins__"] = b
        exec(code, module.__dict__)

    def prepare(self):
        """What the real internals need to see lucid's objects as torch's."""
        import torch.testing._internal.common_device_type as cdt
        import torch.testing._internal.common_utils as cu
        names = {k: str(v).split(".")[-1] for k, v in self.to_real.items()}
        real_dtype_name = cdt.dtype_name
        cdt.dtype_name = lambda d: names.get(d) or real_dtype_name(d) if not isinstance(d, self.torch.dtype) \
            else real_dtype_name(d)
        # the dtype decorators (dtypes, toleranceOverride, precisionOverride) check isinstance(d, torch.dtype)
        import mlx.core as mx
        shim = types.ModuleType("torch")
        shim.__getattr__ = lambda name: getattr(self.torch, name)
        shim.dtype = (self.torch.dtype, mx.Dtype, _Missing)
        # TestCase.setUp seeds the generators (set_rng_seed -> torch.manual_seed): lucid's too, so that each test
        # draws the same inputs whatever ran before it
        shim.manual_seed = lambda seed: (self.lt.manual_seed(seed), self.torch.manual_seed(seed))[1]
        cdt.torch = cu.torch = shim
        cu.dtype_name = cdt.dtype_name
        # assertEqual compares containers of modules/parameters item by item: lucid's containers count as such too
        for name in ("Sequential", "ModuleList", "ParameterList", "ModuleDict", "ParameterDict"):
            setattr(cu, name, (getattr(self.torch.nn, name), getattr(self.lt.nn, name)))
        # internal module `torch.testing._internal.X` reached by attribute from lucid's torch
        internal = types.ModuleType("torch.testing._internal")
        internal.__getattr__ = self.internal
        self.lt.testing._internal = internal


def _in_scope(test_id):
    return not OUT_OF_SCOPE.search(test_id.lower())


def _out_of_scope_by_source(path):
    """Names of test methods whose source uses a feature out of scope (``OUT_OF_SCOPE_SOURCE``)."""
    with open(path) as f:
        tree = ast.parse(f.read())
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
            and OUT_OF_SCOPE_SOURCE.search(ast.unparse(node))}


def _named_by(method, names):
    """Whether a test method is one of ``names`` or a device/dtype variant of one (``name_cpu``, ``name_cpu_float32``)."""
    return any(method in (n, n + "_cpu") or method.startswith(n + "_cpu_") for n in names)


def _selected(test_id, pattern):
    return pattern is None or re.search(pattern, test_id) is not None


def _classify(test, err, source_file):
    import traceback
    etype, value, tb = err
    if etype is TestTimeout:
        return "timeout"
    text = str(value)
    if etype in (AttributeError, ImportError, ModuleNotFoundError) or \
            (etype is TypeError and re.search(r"unexpected keyword argument|takes \d+ positional|"
                                              r"missing \d+ required|not callable", text)):
        return "missing API"
    if etype is AssertionError and re.search(r"not raised|does not match|didn't match|not found in|"
                                             r"Warning not triggered|warning", text):
        return "wrong error type/message"
    # an exception of another type escaping a `with self.assertRaises...` block
    frames = [f for f in traceback.extract_tb(tb) if f.filename == source_file]
    if frames and etype is not AssertionError:
        try:
            with open(source_file) as f:
                lines = f.readlines()
            near = "".join(lines[max(0, frames[-1].lineno - 5):frames[-1].lineno])
            if "assertRaises" in near or "assertWarns" in near:
                return "wrong error type/message"
        except OSError:
            pass
    if etype is AssertionError:
        return "wrong numbers"
    return "unexpected exception"


class _Recorder(unittest.TestResult):
    """Writes one JSON line per test as it ends (the parent resumes after a test that killed the worker)."""

    def __init__(self, out, timeout, source_file):
        super().__init__()
        self.out, self.timeout, self.source_file = out, timeout, source_file
        self.written = set()

    def _write(self, test, outcome, message=""):
        if test.id() in self.written:  # a test's first failing subtest decides it
            return
        self.written.add(test.id())
        self.out.write(json.dumps({"id": test.id().split(".", 1)[-1], "outcome": outcome,
                                   "message": message[-900:]}) + "\n")
        self.out.flush()

    def startTest(self, test):
        super().startTest(test)
        self.out.write(json.dumps({"start": test.id().split(".", 1)[-1]}) + "\n")
        self.out.flush()
        signal.alarm(self.timeout)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)

    def addSuccess(self, test):
        self._write(test, "pass")

    def addSkip(self, test, reason):
        self._write(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        self._write(test, "skip", "expected failure")

    def addUnexpectedSuccess(self, test):
        self._write(test, "skip", "unexpected success")

    def addError(self, test, err):
        import traceback
        where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}"
                            for f in reversed(traceback.extract_tb(err[2])[-4:]))
        self._write(test, _classify(test, err, self.source_file), f"{err[0].__name__}: {err[1]}"[:400] + f"  @ {where}")

    addFailure = addError

    def addSubTest(self, test, subtest, err):
        if err is not None:
            self.addError(test, err)


def _tolerant_internals():
    """The __import__ for the real-torch run: internals' names this torch lacks become _AbsentHelper."""
    real_import = builtins.__import__

    def hook(name, globals=None, locals=None, fromlist=(), level=0):
        module = real_import(name, globals, locals, fromlist, level)
        if fromlist and name.startswith("torch.testing._internal"):
            missing = [f for f in fromlist if not hasattr(module, f)]
            for f in missing:
                setattr(module, f, _AbsentHelper())
        return module
    return hook


def worker(path, backend, out_path, timeout, done):
    os.environ.setdefault("PYTORCH_TESTING_DEVICE_ONLY_FOR", "cpu")
    try:
        import expecttest  # noqa: F401  (common_utils' TestCase base; a plain unittest.TestCase when missing)
    except ImportError:
        sys.modules["expecttest"] = types.ModuleType("expecttest")
        sys.modules["expecttest"].TestCase = unittest.TestCase
    import torch  # noqa: F401  (real torch first: the internals bind it)
    import torch.testing._internal.common_utils  # noqa: F401
    npu = _npu_stub()
    torch.npu = npu
    module = types.ModuleType("torch_suite_target")
    module.__file__ = path
    sys.path[:0] = [os.path.dirname(path), path[:path.rindex("/test/") + 5]]  # its folder, and test/ (helpers)
    with open(path) as f:
        code = compile(f.read(), path, "exec")
    if backend == "lucid":
        adapter = _Lucid()
        adapter.prepare()
        adapter.execute(code, module)
    else:
        b = dict(vars(builtins))
        b["__import__"] = _tolerant_internals()
        module.__dict__["__builtins__"] = b
        exec(code, module.__dict__)
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    for obj in list(vars(module).values()):
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase) and obj.__module__ == module.__name__:
            for t in loader.loadTestsFromTestCase(obj):
                tid = t.id().split(".", 1)[-1]
                if tid not in done and _in_scope(tid) and _selected(tid, os.environ.get("TORCH_SUITE_K")):
                    suite.addTest(t)

    def on_alarm(signum, frame):
        raise TestTimeout(f"ran past {timeout} s")
    signal.signal(signal.SIGALRM, on_alarm)
    with open(out_path, "a") as out:
        suite.run(_Recorder(out, timeout, path))


# ---------------------------------------------------------------------------------------------------- the parent

def _source(mirror, rel, tmp):
    """The test file's path: in a work tree as is; from a bare git directory, written under ``tmp``."""
    work_tree = os.path.join(mirror, "test", rel)
    if os.path.exists(work_tree):
        return work_tree
    dest = os.path.join(tmp, "test", rel)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    for name, target in ((f"test/{rel}", dest), ("test/url.py", os.path.join(tmp, "test", "url.py"))):
        text = subprocess.run(["git", "-C", mirror, "show", f"HEAD:{name}"], capture_output=True, text=True)
        if text.returncode == 0:  # url.py: a helper the Ascend copies import
            with open(target, "w") as f:
                f.write(text.stdout)
    return dest


def _read(out_path):
    results, started = {}, None
    if os.path.exists(out_path):
        with open(out_path) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if "start" in rec:
                    started = rec["start"]
                else:
                    results[rec["id"]] = rec
                    started = None if started == rec["id"] else started
    return results, started


def run_file(path, backend, args, tmp):
    """Runs the worker until every test has a result; a test that killed it (timeout, crash) is recorded."""
    out_path = os.path.join(tmp, f"{os.path.basename(path)}.{backend}.jsonl")
    if backend == "torch" and not args.rerun_torch and os.path.exists(out_path + ".complete"):
        return _read(out_path)[0]  # torch's outcomes do not change with lucid: kept from the last run
    for old in (out_path, out_path + ".complete"):
        if os.path.exists(old):
            os.remove(old)
    mem = args.mem_gb * 2 ** 30

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    deadline = time.time() + args.file_timeout
    while True:
        results, _ = _read(out_path)
        done_file = out_path + ".done"
        with open(done_file, "w") as f:
            json.dump(sorted(results), f)
        cmd = [sys.executable, __file__, "--worker", path, backend, out_path, str(args.timeout), done_file]
        try:
            proc = subprocess.run(cmd, preexec_fn=cap, capture_output=True, text=True,
                                  timeout=max(30, deadline - time.time()) + args.timeout)
            rc, tail = proc.returncode, proc.stderr[-2000:]
        except subprocess.TimeoutExpired:
            rc, tail = "timeout", ""
        results, started = _read(out_path)
        if started is None:
            if rc not in (0, "timeout") and not results:
                sys.stderr.write(f"{path} [{backend}] failed to load:\n{tail}\n")
            elif not os.environ.get("TORCH_SUITE_K"):  # a run of selected tests is not a complete record
                open(out_path + ".complete", "w").close()
            return results
        outcome = "timeout" if rc == "timeout" or rc == -signal.SIGKILL else "crash"
        with open(out_path, "a") as f:
            f.write(json.dumps({"id": started, "outcome": outcome, "message": f"worker ended: {rc}"}) + "\n")
        if time.time() > deadline:
            return _read(out_path)[0]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="*", help="paths inside <mirror>/test/ or short names (default: all of FILES)")
    p.add_argument("--mirror", default=MIRROR)
    p.add_argument("--timeout", type=int, default=60, help="seconds per test")
    p.add_argument("--file-timeout", type=int, default=3600, help="seconds per file and backend")
    p.add_argument("--mem-gb", type=int, default=8, help="address-space cap per worker, GiB")
    p.add_argument("--json", help="write every test's outcome here")
    p.add_argument("--failures", type=int, default=0, help="print this many failures per class and file")
    p.add_argument("--tmp", default="/tmp/torch_suite", help="work folder (test sources, per-test outcomes)")
    p.add_argument("-k", dest="pattern", help="only the tests whose id matches this regular expression")
    p.add_argument("--rerun-torch", action="store_true", help="run real torch again (default: reuse its outcomes)")
    args = p.parse_args(argv)
    if args.pattern:  # the workers read it (real torch's outcomes are then not cached: they cover only these tests)
        os.environ["TORCH_SUITE_K"] = args.pattern
    os.makedirs(args.tmp, exist_ok=True)
    chosen = args.files or list(FILES)
    table, everything = [], {}
    totals = dict.fromkeys(CLASSES, 0)
    for name in chosen:
        rel = FILES.get(name, name)
        path = _source(args.mirror, rel, args.tmp)
        real = run_file(path, "torch", args, args.tmp)
        by_source = _out_of_scope_by_source(path)
        counted = sorted(t for t, r in real.items() if r["outcome"] == "pass" and _in_scope(t)
                         and _selected(t, args.pattern) and not _named_by(t.split(".")[-1], by_source))
        mine = run_file(path, "lucid", args, args.tmp)
        outcomes = {t: mine.get(t, {"outcome": "unexpected exception", "message": "not run (file failed to load)"})
                    for t in counted}
        classes = dict.fromkeys(CLASSES, 0)
        for t, r in outcomes.items():
            classes[r["outcome"] if r["outcome"] in classes else "unexpected exception"] += 1
        for k, v in classes.items():
            totals[k] += v
        short = next((k for k, v in FILES.items() if v == rel), rel)
        table.append((short, classes["pass"], len(counted), classes))
        everything[short] = outcomes
        print(f"{short}: {classes['pass']}/{len(counted)}  " +
              ", ".join(f"{k} {v}" for k, v in classes.items() if v and k != "pass"), flush=True)
        for cls in CLASSES[1:]:
            shown = [(t, r) for t, r in outcomes.items() if r["outcome"] == cls][:args.failures]
            for t, r in shown:
                print(f"    [{cls}] {t}: {r.get('message', '')[:300]}")
    passed, counted = sum(r[1] for r in table), sum(r[2] for r in table)
    print("\n| file | lucid / counted |\n|---|---|")
    for short, ok, n, _ in table:
        print(f"| {short} | {ok}/{n} |")
    print(f"| **total** | **{passed}/{counted}** ({100 * passed / max(counted, 1):.1f}%) |")
    print("\nfailures by class: " + ", ".join(f"{k} {v}" for k, v in totals.items() if k != "pass"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(everything, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _, _, path, backend, out_path, timeout, done_file = sys.argv
        with open(done_file) as f:
            worker(path, backend, out_path, int(timeout), set(json.load(f)))
    else:
        main()
