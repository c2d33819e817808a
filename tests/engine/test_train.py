"""Training (issue 30): the engine's optimizers against the exported torch.optim loop,
the train block in files, import(export(G)), and ``main.py train``."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
from typing import Any

import numpy as np
import pytest

from engine import train_cli
from engine.examples import EXAMPLES_DIR
from engine.fileformat import FileFormatError, GraphFile, dumps, load, loads
from engine.graph import Graph
from engine.pytorch_export import export_script, python_names
from engine.pytorch_import import import_code
from engine.train import OPTIMIZERS, Trainer, TrainError, TrainSpec

EXAMPLES = ("fit_line", "logistic_points", "xor_mlp")
RTOL = 1e-12


def example(name: str) -> GraphFile:
    return load(EXAMPLES_DIR / f"{name}.bpgraph")


def torch_run(gf: GraphFile, spec: TrainSpec) -> tuple[list[float], dict[str, np.ndarray]]:
    """The exported script run with torch.optim: its losses and final parameters."""
    script = export_script(gf.graph, gf.output, gf.gradient, train=spec)
    namespace: dict[str, Any] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(script, "<exported>", "exec"), namespace)  # our own script, not a user's
    names = python_names(gf.graph)
    params = {p: namespace[names[p]].detach().numpy() for p in Trainer(gf.graph, spec).params}
    return namespace["losses"], params


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("zero_grad", [True, False], ids=["zero_grad", "accumulate"])
def test_fifty_steps_equal_torch_optim(name: str, optimizer: str, zero_grad: bool) -> None:
    gf = example(name)
    assert gf.train is not None
    lr = gf.train.lr if zero_grad else gf.train.lr / 20  # accumulating grads grow fast
    spec = dataclasses.replace(gf.train, optimizer=optimizer, steps=50, zero_grad=zero_grad,
                               lr=lr)
    want_losses, want_params = torch_run(gf, spec)
    trainer = Trainer(gf.graph, spec)
    losses = trainer.run(50)
    np.testing.assert_allclose(losses, want_losses, rtol=RTOL, atol=0)
    assert len(set(losses)) > 40  # it trained: the loss changed at every step
    for p, value in want_params.items():
        np.testing.assert_allclose(gf.graph.nodes[p].value, value, rtol=RTOL, atol=1e-15)


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_drawn_update_is_the_parameter_change(optimizer: str) -> None:
    gf = example("xor_mlp")
    assert gf.train is not None
    trainer = Trainer(gf.graph, dataclasses.replace(gf.train, optimizer=optimizer))
    for _ in range(3):
        before = {p: gf.graph.nodes[p].value.copy() for p in trainer.params}
        result = trainer.step()
        for p, up in result.updates.items():
            np.testing.assert_array_equal(up.old, before[p])
            np.testing.assert_array_equal(up.new, gf.graph.nodes[p].value)
            np.testing.assert_allclose(up.old - up.delta, up.new, rtol=1e-15, atol=1e-17)
            if optimizer == "sgd":
                np.testing.assert_array_equal(up.new, up.old - gf.train.lr * up.grad)
            if optimizer == "adam":
                assert up.m_hat is not None and up.v_hat is not None
                step = gf.train.lr * up.m_hat / (np.sqrt(up.v_hat) + gf.train.eps)
                np.testing.assert_allclose(up.delta, step, rtol=1e-12)


def test_zero_grad_off_accumulates_as_pytorch() -> None:
    """Without zero_grad the second step's .grad is the sum of both steps' gradients."""
    gf = example("fit_line")
    assert gf.train is not None
    trainer = Trainer(gf.graph, dataclasses.replace(gf.train, zero_grad=False))
    first = trainer.step()
    fresh = Trainer(gf.graph, dataclasses.replace(gf.train, zero_grad=True)).step
    second = trainer.step()
    g_now = {p: u.grad for p, u in second.updates.items()}
    gf.graph.nodes["w"].value = second.updates["w"].old
    gf.graph.nodes["b"].value = second.updates["b"].old
    alone = fresh()
    for p in ("w", "b"):
        np.testing.assert_allclose(g_now[p], first.updates[p].grad + alone.updates[p].grad,
                                   rtol=1e-14)


def test_xor_learns_below_its_target() -> None:
    gf = example("xor_mlp")
    assert gf.train is not None and gf.train.target is not None
    # the 2-4-1 tanh net: 2 inputs (and X's ones column), 4 hidden units, 1 output
    assert gf.graph.nodes["W1"].value.shape == (3, 4)
    assert gf.graph.nodes["W2"].value.shape == (4, 1)
    losses = Trainer(gf.graph, gf.train).run(gf.train.steps)
    assert losses[0] > 0.2 and losses[-1] < gf.train.target


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_reach_their_targets_and_export_round_trips(name: str) -> None:
    gf = example(name)
    assert gf.train is not None and gf.train.target is not None and gf.description
    script = export_script(gf.graph, gf.output, gf.gradient, train=gf.train)
    imported = import_code(script)
    assert imported.train is not None and imported.warnings == []
    assert imported.train.to_json() == gf.train.to_json()
    assert Trainer(gf.graph, gf.train).run(gf.train.steps)[-1] < gf.train.target


def test_import_reads_zero_grad_off_and_sgd_momentum() -> None:
    gf = example("logistic_points")
    assert gf.train is not None
    spec = dataclasses.replace(gf.train, zero_grad=False, target=None, steps=7)
    back = import_code(export_script(gf.graph, gf.output, gf.gradient, train=spec)).train
    assert back is not None and back.to_json() == spec.to_json()
    assert back.optimizer == "momentum" and back.zero_grad is False


def test_code_after_backward_that_is_no_loop_keeps_its_warning() -> None:
    code = "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * x\ny.backward()\n"
    code += "opt = torch.optim.SGD([x], lr=0.1)\nprint(x.grad)\n"
    imported = import_code(code)
    assert imported.train is None
    assert any("ignored" in w for w in imported.warnings)


# --------------------------------------------------------------------------- file format


def test_train_block_is_minor_version_2_and_older_files_stay_unchanged() -> None:
    gf = example("fit_line")
    text = dumps(gf)
    assert '"minor_version": 2' in text
    assert loads(text).train == gf.train
    gf.train = None
    assert "minor_version" not in dumps(gf) and '"train"' not in dumps(gf)
    seed = (EXAMPLES_DIR / "seed1_square_sum.bpgraph").read_text(encoding="utf-8")
    assert dumps(loads(seed)) == seed


def test_unknown_train_keys_are_kept() -> None:
    doc = json.loads(dumps(example("fit_line")))
    doc["train"]["schedule"] = {"kind": "cosine"}
    again = json.loads(dumps(loads(json.dumps(doc))))
    assert again["train"]["schedule"] == {"kind": "cosine"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"lr": 0}, "learning rate must be a positive number"),
        ({"optimizer": "rmsprop"}, "train.optimizer"),
        ({"loss": "nope"}, "train: names node 'nope', which does not exist"),
        ({"params": ["w", "ghost"]}, "names node 'ghost'"),
        ({"betas": [0.9]}, "betas must be two numbers"),
        ({"steps": 1.5}, "train.steps"),
    ],
)
def test_bad_train_blocks_are_one_line_refusals(change: dict[str, Any], message: str) -> None:
    doc = json.loads(dumps(example("fit_line")))
    doc["train"].update(change)
    with pytest.raises(FileFormatError, match=message.replace("(", r"\(")) as info:
        loads(json.dumps(doc))
    assert "\n" not in str(info.value)


def test_a_parameter_must_be_a_trainable_input() -> None:
    gf = example("fit_line")
    with pytest.raises(TrainError, match="node 'x': a parameter must be an input that requires"):
        Trainer(gf.graph, TrainSpec(loss="loss", params=["x"], lr=0.1))


# --------------------------------------------------------------------------- CLI


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = train_cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_prints_losses_and_params(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES_DIR / "fit_line.bpgraph"
    code, out, err = cli([path, "--steps", "2", "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["loss"] == pytest.approx([11.256, 3.362208], rel=1e-12)
    assert doc["params"] == pytest.approx({"w": 1.252, "b": 0.9328}, rel=1e-12)
    code, out, _ = cli([path, "--steps", "3", "--optimizer", "adam", "--lr", "0.5"], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0] == "step 1: loss = 11.256" and lines[3].startswith("w = tensor(")


def _file_without_params(tmp_path: Any) -> str:
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0], requires_grad=False)
    g.add_node("s", "sum", ["x"])
    path = tmp_path / "fixed.bpgraph"
    path.write_text(dumps(GraphFile(graph=g, train=TrainSpec(loss="s"))), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lr", "0"], "learning rate must be a positive number, not 0.0"),
        (["--lr", "nan"], "learning rate must be a positive number, not nan"),
        (["--optimizer", "rmsprop"], "invalid choice"),
    ],
)
def test_cli_refusals(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli([EXAMPLES_DIR / "fit_line.bpgraph", *args], capsys)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_cli_refuses_non_scalar_loss_and_no_trainable_leaf(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    code, _, err = cli([EXAMPLES_DIR / "seed2_stack_vjp.bpgraph"], capsys)
    assert code == 2 and "the loss must be a scalar, but it has shape (3,)" in err
    code, _, err = cli([_file_without_params(tmp_path)], capsys)
    assert code == 2 and "train: no trainable leaf" in err and err.count("\n") == 1
