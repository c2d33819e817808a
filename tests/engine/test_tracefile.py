"""``.bptrace`` files: a captured pass saved and loaded back bitwise, replayed without
PyTorch, and every malformed file refused in one line."""

from __future__ import annotations

import base64
import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from engine import tracefile
from engine.fileformat import FileFormatError
from support import torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    """A small model captured twice (so leaves have an earlier .grad), and its file."""
    if torch is None:
        pytest.skip("torch is not installed")
    from engine.capture import capture

    torch.manual_seed(4)
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)
    ).double()
    x = torch.randn(5, 3, dtype=torch.float64)
    capture(model(x).sum(), names=model)
    a, b = torch.chunk(model(x), 2, dim=1)
    trace = capture((a * b).sum() + a.exp().sum(), names=model)
    path = tmp_path_factory.mktemp("trace") / "model.bptrace"
    trace.save(path)
    return trace, path


@needs_torch
def test_round_trip_is_bitwise_and_keeps_small_jacobians(saved: tuple[object, Path]) -> None:
    trace, path = saved
    back = tracefile.load(path)
    assert back.output == trace.output and list(back.nodes) == list(trace.nodes)
    assert back.leaves == trace.leaves
    assert len(back.steps) == len(trace.steps)
    for a, b in zip(trace.steps, back.steps, strict=True):
        assert (a.consumer, a.operand, a.operand_index) == (b.consumer, b.operand, b.operand_index)
        for name in ("upstream", "vjp", "before", "accumulated"):
            x, y = getattr(a, name), getattr(b, name)
            assert (x is None) == (y is None) and (x is None or np.array_equal(x, y)), name
        assert b.structure() == a.structure()
        if a.jacobian_size <= tracefile.JACOBIAN_LIMIT:
            assert np.array_equal(a.jacobian(), b.jacobian())
        else:
            assert b.jacobian(force=True) is None
    assert any(s.before is not None for s in back.steps)  # the earlier .grad came back
    for name, g in trace.grads.items():
        assert g is None or np.array_equal(back.grads[name], g), name
    assert back.nodes["0.weight"].module == "0"


@needs_torch
def test_the_schema_describes_saved_files(saved: tuple[object, Path]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(gzip.decompress(saved[1].read_bytes()))
    jsonschema.validate(doc, tracefile.schema())
    assert doc["format"] == "backprop-studio-trace" and doc["version"] == 2


@needs_torch
def test_a_saved_trace_replays_without_torch(
    saved: tuple[object, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    back = tracefile.load(saved[1])
    small = [s for s in back.steps if s.jacobian() is not None]
    assert small
    for s in small:
        np.testing.assert_allclose(
            s.upstream.ravel() @ s.jacobian(), s.vjp.ravel(), rtol=0, atol=1e-12
        )


def _doc() -> dict:
    """A hand-made two-node trace: y = 2·x, x = [1, 2]."""

    def arr(values: list[float], shape: list[int]) -> dict:
        data = np.asarray(values, dtype="<f8").tobytes()
        return {"shape": shape, "data": base64.b64encode(data).decode()}

    return {
        "format": "backprop-studio-trace",
        "version": 1,
        "output": "Mul1",
        "gradient": arr([1.0, 1.0], [2]),
        "nodes": [
            {
                "id": "x",
                "kind": "AccumulateGrad",
                "shapes": [[2]],
                "inputs": [],
                "grad": arr([2.0, 2.0], [2]),
            },
            {
                "id": "Mul1",
                "kind": "Mul",
                "shapes": [[2]],
                "inputs": [["x", 0]],
                "module": "",
                "grad": arr([1.0, 1.0], [2]),
            },
        ],
        "steps": [
            {
                "consumer": "Mul1",
                "index": 0,
                "vjp": arr([2.0, 2.0], [2]),
                "jacobian": arr([2.0, 0.0, 0.0, 2.0], [2, 2]),
            }
        ],
    }


def test_a_hand_made_trace_loads() -> None:
    trace = tracefile.loads(json.dumps(_doc()))
    (step,) = trace.steps
    assert (step.consumer, step.operand) == ("Mul1", "x")
    np.testing.assert_array_equal(step.jacobian(), [[2.0, 0.0], [0.0, 2.0]])
    np.testing.assert_array_equal(step.accumulated, [2.0, 2.0])
    assert trace.leaves == ["x"]


def _break(edit: str) -> str:
    doc = _doc()
    exec(edit, {"doc": doc})
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not valid JSON"),
        ('{"format": "backprop-studio-graph", "version": 1}', "not a Backprop Studio trace"),
        (_break("doc['version'] = 3"), "unsupported trace version 3: this program reads 1 and 2"),
        (
            _break("doc['nodes'][1]['inputs'] = [['y', 0]]"),
            "node 'Mul1': input 0 is 'y', which is not an earlier node",
        ),
        (_break("doc['nodes'][1]['inputs'] = [['x', 3]]"), "'x' has no output slot 3"),
        (_break("doc['nodes'].append(dict(doc['nodes'][0]))"), "node 'x': the id is used twice"),
        (_break("doc['steps'][0]['consumer'] = 'Nope'"), "step 0: the consumer 'Nope' is not"),
        (_break("doc['steps'][0]['index'] = 1"), "step 0: node 'Mul1' has no operand 1"),
        (_break("doc['steps'][0]['vjp']['data'] = '!!'"), "step 0's vjp: the data is not base64"),
        (_break("doc['steps'][0]['vjp']['shape'] = [3]"), "holds 2 float64 values, the shape (3,)"),
        (_break("doc['steps'][0]['jacobian']['shape'] = [4]"), "the jacobian has shape (4,)"),
        (_break("doc['nodes'][0]['id'] = 7"), "nodes/0/id: must be a non-empty string"),
        (
            _break("doc['nodes'][0]['id'] = 'x\\u202e'"),
            "node 'x\\u202e': the id holds the bidirectional control U+202E, which would",
        ),
        (_break("del doc['nodes'][1]['shapes']"), "nodes/1: needs 'shapes'"),
        (_break("doc['output'] = 'z'"), "the output 'z' is not a node"),
        (_break("doc['gradient']['shape'] = [1, 2]"), "the gradient has shape (1, 2)"),
        (_break("doc['gradient']['dtype'] = 'int8'"), "the dtype must be float64 or float32"),
        (_break("doc['gradient']['dtype'] = 'float32'"), "holds 4 float32 values, the shape (2,)"),
        (
            _break("del doc['steps'][0]['vjp']; doc['nodes'][0]['grad'] = None"),
            "step 0: there is no vjp, and operand 'x' has no grad that is it",
        ),
    ],
)
def test_bad_files_are_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(FileFormatError) as err:
        tracefile.loads(text)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_limits_and_unreadable_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tracefile, "MAX_NODES", 1)
    with pytest.raises(FileFormatError, match="2 nodes; a trace may have at most 1"):
        tracefile.loads(json.dumps(_doc()))
    with pytest.raises(FileFormatError, match="no such file"):
        tracefile.load(tmp_path / "missing.bptrace")
    big = tmp_path / "big.bptrace"
    big.write_bytes(b" " * 64)
    monkeypatch.setattr(tracefile, "MAX_FILE_BYTES", 32)
    with pytest.raises(FileFormatError, match="the limit is"):
        tracefile.load(big)


def test_the_documented_example_loads() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "trace-format.md").read_text()
    example = text.split("```json\n", 1)[1].split("```", 1)[0]
    assert json.loads(example) == _doc() | {"version": 2, "nodes": json.loads(example)["nodes"]}
    trace = tracefile.loads(example)
    np.testing.assert_array_equal(trace.steps[0].jacobian(), [[2.0, 0.0], [0.0, 2.0]])


def test_float32_arrays_and_a_vjp_stored_once_as_its_operands_grad() -> None:
    """Version 2's economies: a float32 model's arrays in 4 bytes a value, and a vjp
    that is bit for bit its operand's grad (one consumer, no earlier .grad) not twice."""
    doc = _doc() | {"version": 2}
    doc["nodes"][0]["grad"] = {
        "shape": [2],
        "dtype": "float32",
        "data": base64.b64encode(np.array([2.0, 2.0], "<f4").tobytes()).decode(),
    }
    del doc["steps"][0]["vjp"]
    (step,) = tracefile.loads(json.dumps(doc)).steps
    assert step.vjp.dtype == np.float64 and not step.vjp.flags.writeable
    np.testing.assert_array_equal(step.vjp, [2.0, 2.0])
    np.testing.assert_array_equal(step.accumulated, [2.0, 2.0])


@needs_torch
def test_a_float32_capture_saves_compact_and_loads_bitwise(tmp_path: Path) -> None:
    from engine.capture import capture

    torch.manual_seed(8)
    model = torch.nn.Sequential(torch.nn.Linear(30, 40), torch.nn.ReLU(), torch.nn.Linear(40, 1))
    trace = capture(model(torch.randn(6, 30)).sum(), names=model)
    path = tmp_path / "f32.bptrace"
    trace.save(path)
    doc = json.loads(gzip.decompress(path.read_bytes()))
    assert all(n["grad"].get("dtype") == "float32" for n in doc["nodes"] if n["grad"])
    into_leaves = [s for s in doc["steps"] if s["consumer"] in ("Addmm1", "T1", "T2")]
    assert into_leaves and not any("vjp" in s for s in into_leaves)  # each leaf's grad is it
    back = tracefile.load(path)
    for a, b in zip(trace.steps, back.steps, strict=True):
        assert np.array_equal(a.vjp, b.vjp) and np.array_equal(a.upstream, b.upstream)
    for name, grad in trace.grads.items():
        assert np.array_equal(back.grads[name], grad), name
    for name, p in model.named_parameters():
        assert np.array_equal(back.grads[name], p.grad.double().numpy()), name


def test_a_plain_json_file_and_bad_gzip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "v1.bptrace"
    plain.write_text(json.dumps(_doc()))  # version 1 wrote plain JSON: it still opens
    assert tracefile.load(plain).leaves == ["x"]
    packed = gzip.compress(json.dumps(_doc()).encode())
    for name, data, message in [
        ("cut.bptrace", packed[:-12], "the gzip data is cut short"),
        ("bad.bptrace", packed[:10] + b"x" * 40, "the gzip data is damaged"),
    ]:
        (tmp_path / name).write_bytes(data)
        with pytest.raises(FileFormatError, match=message):
            tracefile.load(tmp_path / name)
    bomb = tmp_path / "bomb.bptrace"
    bomb.write_bytes(gzip.compress(b" " * 4096))  # a small file that unpacks past the limit
    monkeypatch.setattr(tracefile, "MAX_FILE_BYTES", 1024)
    with pytest.raises(FileFormatError, match="unpacks to more than"):
        tracefile.load(bomb)
