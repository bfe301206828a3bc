"""lucid.viz.draw_graph (the autograd graph as a graphviz.Digraph) and lucid.summary (torchinfo's table), on every
zoo model."""
import re
import shutil

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid import models

graphviz = pytest.importorskip("graphviz")


def _zoo():
    """(name, model, example input_data, output to draw) for every zoo model."""
    g, d = models.dcgan(nz=8, ngf=4, ndf=4, nc=1, image_size=16)
    lm = models.lstm_lm(20, ninp=8, nhid=8, nlayers=2)
    tokens = lucid.randint(0, 20, (5, 2))
    return [
        ("mlp", models.mlp(), lucid.randn(2, 64)),
        ("lenet5", models.lenet5(), lucid.randn(2, 1, 28, 28)),
        ("resnet18", models.resnet18(num_classes=10, small_input=True, width=8), lucid.randn(1, 3, 32, 32)),
        ("vit", models.vit(), lucid.randn(1, 3, 32, 32)),
        ("gpt", models.gpt(vocab_size=30, block_size=8, n_layer=2, n_head=2, n_embd=16),
         lucid.randint(0, 30, (2, 8))),
        ("lstm_lm", lm, (tokens, lm.init_hidden(2))),
        ("vae", models.vae(), lucid.rand(2, 784)),
        ("dcgan_G", g, lucid.randn(2, 8, 1, 1)),
        ("dcgan_D", d, lucid.randn(2, 1, 16, 16)),
        ("maml", models.maml.sine_mlp(), lucid.randn(5, 1)),
        ("pinn", models.pinn.PoissonPINN(), lucid.rand(7, 2)),
    ]


ZOO = _zoo()


def _first_tensor(out):
    while not isinstance(out, lucid.Tensor):
        out = out[0]
    return out


# ------------------------------------------------------------------------------------------------ draw_graph
def test_draw_graph_names_nodes_as_grad_fn_and_leaves_by_parameter():
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    y = model(lucid.randn(1, 8)).mean()
    dot = lucid.viz.draw_graph(y, params=dict(model.named_parameters()))
    assert isinstance(dot, graphviz.Digraph)
    src = dot.source
    for name in ("AddmmBackward0", "TanhBackward0", "MeanBackward0"):
        assert f"label={name}" in src
    for label in ('"0.weight\n(16, 8)"', '"0.bias\n(16)"', '"2.weight\n(1, 16)"'):
        assert label in src
    assert "fillcolor=lightblue" in src and "fillcolor=darkolivegreen1" in src
    assert "orange" not in src  # saved tensors only on request


def test_draw_graph_shows_saved_tensors_on_request():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x.exp()).sum()
    src = lucid.viz.draw_graph(y, show_saved=True).source
    assert '"result\n(2)" fillcolor=orange' in src  # ExpBackward0 keeps its result
    assert '"self\n(2)" fillcolor=orange' in src and '"other\n(2)" fillcolor=orange' in src  # MulBackward0 both
    y.backward()  # frees the saved tensors: nothing left to show
    assert "orange" not in lucid.viz.draw_graph(y, show_saved=True).source


def test_draw_graph_follows_pytorchs_saved_tensor_choice():
    # a Linear on data: PyTorch's addmm saves the input (for the weight's gradient), not the weight or the bias
    lin = nn.Linear(3, 2)
    src = lucid.viz.draw_graph(lin(lucid.randn(4, 3)), show_saved=True).source
    assert src.count("fillcolor=orange") == 1 and '"(4, 3)" fillcolor=orange' not in src


def test_draw_graph_of_several_outputs_and_of_a_deep_graph():
    x = lucid.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(3000):  # far deeper than Python's recursion limit
        y = y * 1.0
    src = lucid.viz.draw_graph((y, x.sin())).source
    assert src.count("MulBackward0") == 3000 and "SinBackward0" in src


def test_draw_graph_rejects_what_is_not_a_tensor():
    with pytest.raises(TypeError, match="Tensor"):
        lucid.viz.draw_graph([1.0])
    with pytest.raises(TypeError, match=r"params\['w'\]"):
        lucid.viz.draw_graph(lucid.ones(1), params={"w": 1.0})


@pytest.mark.parametrize("name,model,data", ZOO, ids=[z[0] for z in ZOO])
def test_draw_graph_on_every_zoo_model(name, model, data):
    out = model(*data) if isinstance(data, tuple) else model(data)
    dot = lucid.viz.draw_graph(_first_tensor(out).sum(), params=dict(model.named_parameters()))
    src = dot.source
    for pname, p in model.named_parameters():
        assert f'"{pname}\n(' in src, pname  # every parameter appears, named
    assert "Backward" in src
    full = lucid.viz.draw_graph(_first_tensor(out).sum(), show_attrs=True, show_saved=True).source
    assert "fillcolor=orange" in full and "[saved tensor]" in full
    # every saved field named as PyTorch's are (an identifier, a shape field or name[i]), never by bare position
    fields = re.findall(r"^(\S+?) *: ", full, re.M) + re.findall(r'label="(\S+)\n\(.*fillcolor=orange', full)
    assert fields and all(re.fullmatch(r"[a-z][a-z0-9_]*(\[\d+\])?", f) and not re.fullmatch(r"arg\d+", f)
                          for f in fields), sorted(set(fields))


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_draw_graph_renders(tmp_path):
    model = models.lenet5()
    dot = lucid.viz.draw_graph(model(lucid.randn(1, 1, 28, 28)).sum(), params=dict(model.named_parameters()))
    assert dot.pipe(format="svg").startswith(b"<?xml")
    path = dot.render(tmp_path / "lenet", format="png", cleanup=True)
    assert open(path, "rb").read(4) == b"\x89PNG"
    assert "image/svg+xml" in dot._repr_mimebundle_()  # what Jupyter shows


def test_rendering_without_dot_says_how_to_install_it(monkeypatch):
    monkeypatch.setenv("PATH", "")
    dot = lucid.viz.draw_graph(lucid.tensor(1.0, requires_grad=True).exp())
    assert "ExpBackward0" in dot.source  # the DOT text needs no dot program
    with pytest.raises(graphviz.ExecutableNotFound, match="apt-get install graphviz"):
        dot.pipe(format="svg")
    with pytest.raises(graphviz.ExecutableNotFound, match="brew install graphviz") as info:
        dot._repr_mimebundle_()
    assert str(info.value).count("Install it") == 1


# ------------------------------------------------------------------------------------------------ draw_graph vs PyTorch
def _r(*shape):
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


# (id, computation written once for both libraries (module, functional, *inputs), inputs, which inputs require grad,
#  PyTorch's fields (or nodes) lucid does not keep or cannot know, lucid's fields (or nodes) that PyTorch has not)
SAVED_CASES = [
    ("mm", lambda m, F, a, b: a @ b, (_r(2, 3), _r(3, 4)), None, (), ()),
    ("mm_on_data", lambda m, F, a, b: a @ b, (_r(2, 3), _r(3, 4)), (False, True), (), ()),
    ("linear", lambda m, F, x, w, b, v: F.linear(F.linear(x, w, b), v), (_r(2, 3), _r(4, 3), _r(4), _r(2, 4)),
     (False, True, True, True), {"TBackward0"}, ()),  # PyTorch's node for weight.t(): lucid's linear needs none
    ("bmm", lambda m, F, a, b: m.bmm(a, b), (_r(2, 2, 3), _r(2, 3, 2)), None, (), ()),
    ("addmm", lambda m, F, c, a, b: m.addmm(c, a, b), (_r(4), _r(2, 3), _r(3, 4)), None, (), ()),
    ("sum_mean", lambda m, F, a: a.sum(1, keepdim=True).mean() + a.sum() * a.mean(0).sum(), (_r(2, 3),), None, (), ()),
    ("pointwise", lambda m, F, a, b: m.cat([
        a.softmax(1), b.log_softmax(1), a ** 2, a ** b, m.lerp(a, b, b.sigmoid()), a.clamp(0, 1),
        a.max() * b.exp().tanh().relu(), (a / b.sqrt()) - b + a, F.gelu(a),
        m.stack([a, b], 1).sum((1, 2)).logsumexp(0) * a.cumsum(1), a.std(1, keepdim=True) * a], 0),
     (_r(2, 3), _r(2, 3)), None, {"correction"}, ()),
    ("shapes", lambda m, F, a, e: a.view(3, 2).transpose(0, 1).permute(1, 0).t() + e.expand(2, 3),
     (_r(2, 3), _r(1, 3)), None, (), ()),
    ("conv", lambda m, F, x, w, b: F.conv2d(x, w, padding=1).sum() + F.conv2d(x, w, b, stride=2, padding=2).sum(),
     (_r(1, 2, 5, 5), _r(3, 2, 3, 3), _r(3)), None, (), ()),
    ("conv_transpose", lambda m, F, x, w, b, v: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1).sum()
     + F.conv_transpose2d(x, v, stride=(1, 2), padding=(2, 0), dilation=2, groups=2).sum(),
     (_r(1, 2, 5, 5), _r(2, 3, 3, 3), _r(3), _r(2, 2, 3, 3)), None, (),
     {"TransposeBackward0", "ViewBackward0"}),  # lucid's nodes turning the kernel into the gradient convolution's
    ("cross_entropy", lambda m, F, a, t: F.cross_entropy(a, t), (_r(2, 3), np.array([0, 2])), (True, False),
     {"ignore_index", "total_weight"}, ()),
    ("nll_weighted", lambda m, F, a, t, w: F.nll_loss(a, t, weight=w, reduction="sum"),
     (_r(2, 3), np.array([0, 2]), np.ones(3, np.float32)), (True, False, False), {"ignore_index", "total_weight"}, ()),
    ("layer_norm", lambda m, F, a, w, b: F.layer_norm(a, (3,)).sum() + F.layer_norm(a, (2, 3), w, b).sum(),
     (_r(2, 3), _r(2, 3), _r(2, 3)), None, {"result1", "result2"}, ()),
    ("indexing", lambda m, F, a, i, j: a[i].sum() + a.gather(1, j).sum() + F.embedding(i, a).sum(),
     (_r(2, 3), np.array([0, 1]), np.array([[0], [2]])), (True, False, False),
     {"self", "sparse_grad", "padding_idx", "scale_grad_by_freq", "sparse"}, ()),
    ("batch_norm", lambda m, F, a, w, b: F.batch_norm(a, m.zeros(3), m.ones(3), w, b, training=True).sum()
     + F.batch_norm(a, m.zeros(3), m.ones(3), w, b, eps=1e-3).sum(), (_r(4, 3), _r(3), _r(3)), None,
     {"running_mean", "running_var", "result1", "result2"}, ()),
    ("activations", lambda m, F, a: F.leaky_relu(a, 0.2) + F.hardtanh(a) + F.silu(a) + a.norm(dim=1, keepdim=True),
     (_r(2, 3),), None, {"ord"}, ()),  # (lucid keeps ord as a float: PyTorch shows the number as given)
    ("slicing", lambda m, F, a: a[1].sum() + a[:, 1:].sum() + a[:, None].squeeze(1).sum() + a[None].squeeze().sum(),
     (_r(2, 3),), None, {"dim", "index", "start", "end", "step"}, ()),
    ("where", lambda m, F, c, a, b: m.where(c, a, b), (_r(2, 3) > 0, _r(2, 3), _r(2, 3)), (False, True, True), (),
     {"self", "other"}),  # lucid's where keeps both branches (its backward reads their shapes and dtypes)
]


def _walk(fn, edges):
    """The backward nodes (AccumulateGrad left out) in one depth-first order, edges followed in the order given."""
    out, seen, todo = [], set(), [fn]
    while todo:
        f = todo.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        if type(f).__name__ != "AccumulateGrad":
            out.append(f)
        todo += [e[0] for e in edges(f) if e is not None]
    return out


def _torch_saved(torch, fn):
    """({field: shape} of the saved tensors, {field: str(value)} of the rest) from PyTorch's ``_saved_*`` fields, as
    torchviz reads them (a tuple of tensors as ``field[i]``)."""
    tensors, attrs = {}, {}
    for name in dir(fn):
        if not name.startswith("_saved_"):
            continue
        v, name = getattr(fn, name), name[len("_saved_"):]
        if torch.is_tensor(v):
            tensors[name] = tuple(v.shape)
        elif isinstance(v, tuple) and any(torch.is_tensor(t) for t in v):
            tensors.update((f"{name}[{i}]", tuple(t.shape)) for i, t in enumerate(v))
        else:  # (PyTorch shows a negative int64 such as ignore_index=-100 through an unsigned type)
            attrs[name] = str(v - 2 ** 64 if isinstance(v, int) and v >= 2 ** 63 else v)
    return tensors, attrs


@pytest.mark.parametrize("case", SAVED_CASES, ids=[c[0] for c in SAVED_CASES])
def test_saved_fields_are_pytorchs(case):
    torch = pytest.importorskip("torch")
    from lucid.viz._fields import saved
    _, fn, arrays, grads, omitted, extra = case
    grads = grads or (True,) * len(arrays)
    t_in = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    l_in = [lucid.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    t_nodes = [f for f in _walk(fn(torch, torch.nn.functional, *t_in).grad_fn, lambda f: f.next_functions)
               if type(f).__name__ not in omitted]
    l_nodes = [f for f in _walk(fn(lucid, lucid.nn.functional, *l_in).grad_fn, lambda f: f.next)
               if f.name() not in extra]
    assert [f.name() for f in l_nodes] == [type(f).__name__ for f in t_nodes]
    for tf, lf in zip(t_nodes, l_nodes):
        t_tensors, t_attrs = _torch_saved(torch, tf)
        l_tensors, l_attrs = saved(lf)
        l_tensors = {k: tuple(s) for k, s in l_tensors}
        l_attrs = {k: str(v) for k, v in l_attrs.items()}
        where = lf.name()
        extra_fields = {e for e in extra if "Backward" not in e}  # (the rest: node names)
        assert set(l_tensors) | set(l_attrs) == (set(t_tensors) | set(t_attrs)) - set(omitted) | extra_fields, where
        assert {k: s for k, s in l_tensors.items() if k not in extra} == {
            k: s for k, s in t_tensors.items() if k not in omitted}, where
        assert l_attrs == {k: v for k, v in t_attrs.items() if k not in omitted}, where


def test_linear_saves_pytorchs_addmm_fields():
    # PyTorch records AddmmBackward0 and a TBackward0 for weight.t(); lucid one AddmmBackward0 of the weight itself
    lin = nn.Linear(3, 4)
    node = lin(lucid.randn(2, 3, requires_grad=True)).grad_fn
    from lucid.viz._fields import saved
    tensors, attrs = saved(node)
    assert [(k, tuple(s)) for k, s in tensors] == [("mat1", (2, 3)), ("mat2", (3, 4))]  # mat2: weight.t()
    assert attrs == {"alpha": 1, "beta": 1, "mat1_sym_sizes": (2, 3), "mat1_sym_strides": (3, 1),
                     "mat2_sym_sizes": (3, 4), "mat2_sym_strides": (1, 3)}
    src = lucid.viz.draw_graph(lin(lucid.randn(2, 3)), show_saved=True).source
    assert '"mat1\n(2, 3)" fillcolor=orange' in src and "mat2" not in src  # data in: the weight is not kept
    assert "arg" not in lucid.viz.draw_graph(lin(lucid.randn(2, 3)), show_saved=True, show_attrs=True).source


def test_show_attrs_lists_saved_values_as_torchviz():
    x = lucid.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = x.sum(1, keepdim=True)
    label = lucid.viz.draw_graph(y, show_attrs=True).body
    text = next(line for line in label if "SumBackward1" in line)
    assert "dim           :   (1,)" in text and "keepdim       :   True" in text
    assert "self_sym_sizes: (1, 3)" in text and "-" * 22 in text
    short = "".join(lucid.viz.draw_graph(y, show_attrs=True, max_attr_chars=4).body)
    assert "self_sym_sizes: (..." in short  # values cut to max_attr_chars, as torchviz
    z = (x * x).exp().sum(1, keepdim=True)
    src = lucid.viz.draw_graph(z, show_attrs=True).source
    assert "other: [saved tensor]" in src and "result: [saved tensor]" in src
    assert "fillcolor=orange" not in src  # show_attrs alone draws no saved-tensor boxes
    z.backward()  # frees the saved tensors; the other fields stay, as in PyTorch
    src = lucid.viz.draw_graph(z, show_attrs=True).source
    assert "[saved tensor]" not in src and "self_sym_sizes: (1, 3)" in src and "label=MulBackward0" in src


def _canonical(dot, merge_accumulate: bool):
    """The graph a Digraph draws, independent of ids: its nodes as (label lines, fill colour) and its edges as
    (tail's, head's, style); with ``merge_accumulate`` torchviz's leaf box and its AccumulateGrad box become one."""
    nodes, edges = {}, []
    for stmt in dot.body:
        m = re.fullmatch(r'\s*(\S+) -> (\S+)(?: \[(.*)\])?\s*', stmt)
        if m:
            edges.append((m[1], m[2], m[3] or ""))
            continue
        m = re.fullmatch(r'\s*(\S+) \[label=(".*"|\S+)(?: fillcolor=(\S+))?\]\s*', stmt, re.S)
        assert m, stmt
        nodes[m[1]] = (tuple(s.strip() for s in m[2].strip('"').split("\n") if s.strip()), m[3] or "")
    if merge_accumulate:
        for key, (label, _) in list(nodes.items()):
            if label == ("AccumulateGrad",):
                (leaf,) = [a for a, b, _ in edges if b == key]
                edges = [(leaf if a == key else a, b, s) for a, b, s in edges if b != key]
                del nodes[key]
    return sorted(nodes.values()), sorted((nodes[a], nodes[b], s) for a, b, s in edges)


def test_dot_text_has_torchvizs_structure():
    torch = pytest.importorskip("torch")
    torchviz = pytest.importorskip("torchviz")
    x, w = _r(2, 3), _r(2, 3)
    tw = torch.tensor(w, requires_grad=True)
    lw = lucid.tensor(w, requires_grad=True)
    ty = (torch.tensor(x) * tw).exp().sum(1).mean()
    ly = (lucid.tensor(x) * lw).exp().sum(1).mean()
    for kw in (dict(), dict(show_attrs=True, show_saved=True), dict(show_attrs=True, max_attr_chars=5)):
        ref = torchviz.make_dot(ty, params={"w": tw}, **kw)
        mine = lucid.viz.draw_graph(ly, params={"w": lw}, **kw)
        assert _canonical(mine, False) == _canonical(ref, True), kw


# ------------------------------------------------------------------------------------------------ summary
@pytest.mark.parametrize("name,model,data", ZOO, ids=[z[0] for z in ZOO])
def test_summary_on_every_zoo_model(name, model, data):
    model.train()
    s = lucid.summary(model, input_data=list(data) if isinstance(data, tuple) else data, verbose=0)
    params = list(model.parameters())
    assert s.total_params == sum(p.numel() for p in params) > 0
    assert s.trainable_params == s.total_params
    text = str(s)
    assert f"Total params: {s.total_params:,}" in text and "Estimated Total Size (MB)" in text
    assert text.splitlines()[3].startswith(type(model).__name__)
    assert model.training and all(m.training for m in model.modules())  # the train/eval modes are restored
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())  # hooks removed
    assert s._repr_html_().startswith("<table>")


def test_summary_table_rows_shapes_and_counts():
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Sequential(nn.Linear(128, 10), nn.Softmax(-1)))
    model[0].requires_grad_(False)
    s = lucid.summary(model, input_size=(2, 64), verbose=0)
    rows = str(s).splitlines()
    assert rows[1].split() == ["Layer", "(type", "(var_name):depth-idx)", "Output", "Shape", "Param", "#", "Trainable"]
    assert rows[3].split() == ["Sequential", "(Sequential)", "[2,", "10]", "--", "Partial"]
    assert rows[4].split() == ["├─Linear", "(0):", "1-1", "[2,", "128]", "(8,320)", "False"]  # frozen: (count)
    assert rows[5].split() == ["├─ReLU", "(1):", "1-2", "[2,", "128]", "--", "--"]
    assert rows[6].split() == ["├─Sequential", "(2):", "1-3", "[2,", "10]", "--", "True"]
    assert rows[7].split() == ["│", "└─Linear", "(0):", "2-1", "[2,", "10]", "1,290", "True"]
    assert (s.total_params, s.trainable_params) == (9610, 1290)
    assert "Non-trainable params: 8,320" in str(s)
    assert s.total_input == 2 * 64 * 4
    assert s.total_output_bytes == 2 * (2 * 128 + 2 * 10) * 4  # torchinfo: leaf layers with parameters, x2
    assert s.total_param_bytes == 9610 * 4
    shallow = str(lucid.summary(model, input_size=(2, 64), depth=1, verbose=0))
    assert "└─Linear" not in shallow and "├─Sequential (2): 1-3" in shallow
    assert "1,290" in shallow  # at the depth limit a row counts everything below it


def test_summary_shows_uncalled_containers_and_recursive_calls():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.blocks[0](x)  # called again

    s = str(lucid.summary(Net(), input_size=(1, 4), verbose=0))
    assert "├─ModuleList (blocks): 1-1" in s
    assert "└─Linear (0): 2-1" in s and "└─Linear (0): 2-3" in s and "(recursive)" in s
    assert "Total params: 40" in s


def test_summary_input_forms_and_errors(capsys):
    model = models.gpt(vocab_size=30, block_size=8, n_layer=1, n_head=2, n_embd=16)
    idx = lucid.randint(0, 30, (2, 8))
    a = lucid.summary(model, input_size=(2, 8), dtypes=[lucid.int64], verbose=0)
    b = lucid.summary(model, input_data={"idx": idx, "targets": idx}, verbose=0)
    assert a.total_params == b.total_params
    assert "[2, 8, 30]" in str(b)  # with targets GPT returns the logits of every position
    lucid.summary(model, input_data=idx, verbose=1)
    assert "Total params" in capsys.readouterr().out
    with pytest.raises(ValueError, match="exactly one"):
        lucid.summary(model)
    with pytest.raises(ValueError, match="unknown column"):
        lucid.summary(model, input_data=idx, col_names=("kernel",))
    with pytest.raises(ValueError, match="unknown row setting"):
        lucid.summary(model, input_data=idx, row_settings=("depths",))
    with pytest.raises(ValueError, match="mode"):
        lucid.summary(model, input_data=idx, mode="training")
    with pytest.raises(TypeError, match="nn.Module"):
        lucid.summary(lambda x: x, input_size=(1,))


def test_summary_totals_match_torchinfo():
    torch = pytest.importorskip("torch")
    torchinfo = pytest.importorskip("torchinfo")
    tm = torch.nn.Sequential(torch.nn.Conv2d(1, 6, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                             torch.nn.Flatten(), torch.nn.Linear(6 * 14 * 14, 10))
    lm = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                       nn.Linear(6 * 14 * 14, 10))
    ref = torchinfo.summary(tm, input_size=(2, 1, 28, 28), verbose=0)
    mine = lucid.summary(lm, input_size=(2, 1, 28, 28), verbose=0)
    assert (mine.total_params, mine.trainable_params) == (ref.total_params, ref.trainable_params)
    assert (mine.total_output_bytes, mine.total_param_bytes) == (ref.total_output_bytes, ref.total_param_bytes)
    assert mine.total_input == 2 * 28 * 28 * 4  # the tensor's bytes (torchinfo adds Python object overhead)


@pytest.mark.parametrize("kwargs", [
    {},
    {"row_settings": ("depth",), "col_names": ("kernel_size", "output_size", "num_params", "mult_adds")},
    {"row_settings": ("var_names", "ascii_only"), "col_names": ("input_size", "params_percent"), "col_width": 18},
    {"depth": 1, "verbose": 2, "col_names": ("output_size", "num_params", "mult_adds", "trainable")},
    {"mode": "train", "row_settings": ("depth", "var_names", "hide_recursive_layers")},
])
def test_summary_table_is_torchinfos(kwargs):
    """The same table, character for character, as torchinfo prints for the same PyTorch model (less the input
    size, where torchinfo counts Python object overhead, and its "(Units.MEGABYTES)" spelling on Python >= 3.11)."""
    torch = pytest.importorskip("torch")
    torchinfo = pytest.importorskip("torchinfo")

    def build(nn_):
        return nn_.Sequential(nn_.Conv2d(1, 6, 5, padding=2), nn_.BatchNorm2d(6), nn_.ReLU(), nn_.MaxPool2d(2),
                              nn_.Sequential(nn_.Flatten(), nn_.Linear(6 * 14 * 14, 32), nn_.ReLU()),
                              nn_.Linear(32, 10))
    kw = {"row_settings": ("depth", "var_names"), "col_names": ("output_size", "num_params", "trainable"), **kwargs}
    ref = torchinfo.summary(build(torch.nn), input_size=(2, 1, 28, 28), **{"verbose": 0, **kw})
    mine = lucid.summary(build(nn), input_size=(2, 1, 28, 28), **{"verbose": 0, **kw})

    def comparable(text):
        return [t.replace("(Units.MEGABYTES)", "(M)") for t in text.splitlines()
                if not t.startswith(("Input size", "Estimated Total"))]
    assert comparable(str(mine)) == comparable(str(ref))
    assert mine.total_mult_adds == ref.total_mult_adds
