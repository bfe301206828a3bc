"""lucid.viz.draw_graph (the autograd graph as a graphviz.Digraph) and lucid.summary (torchinfo's table), on every
zoo model."""
import shutil

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
