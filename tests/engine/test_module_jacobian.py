"""A captured module's own Jacobian, from its inner steps' VJPs: equal to PyTorch's
``torch.autograd.functional.jacobian`` of the module, and ``upstream · J`` is the vjp its
one collapsed step hands its inputs (live capture and saved file alike)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import tracefile
from engine.capture import capture, tracking
from engine.captured import as_graph
from engine.groups import GroupStep, playback_steps, step_jacobian
from support import torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _captured(tmp_path: Path, live: bool):  # noqa: ANN202
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(), torch.nn.Linear(2, 2))
    model = model.double()
    x = torch.randn(2, 3, dtype=torch.float64)
    with tracking(model):
        out = model(x)
        loss = (out * torch.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=torch.float64)).sum()
    trace = capture(loss, names=model)
    if not live:
        trace.save(tmp_path / "m.bptrace")
        trace = tracefile.load(tmp_path / "m.bptrace")
    return model, x, trace


@pytest.mark.parametrize("live", [True, False], ids=["live", "file"])
def test_a_module_jacobian_is_pytorchs_and_upstream_times_it_is_the_vjp(
    tmp_path: Path, live: bool
) -> None:
    model, x, trace = _captured(tmp_path, live)
    shown = as_graph(trace)
    steps = [s for s in playback_steps(shown.graph, trace, shown.groups)
             if isinstance(s, GroupStep)]
    last = next(s for s in steps if s.group.id == "2")  # Linear(2, 2) on the Tanh's output
    assert last.inputs[1:] == ["2.weight", "2.bias"] and len(last.inputs) == 3
    h = torch.tanh(model[0](x)).detach()
    w, b = model[2].weight.detach(), model[2].bias.detach()
    blocks = torch.autograd.functional.jacobian(lambda h, w, b: h @ w.T + b, (h, w, b))
    expected = np.concatenate([j.reshape(4, -1).numpy() for j in blocks], axis=1)
    jac = step_jacobian(shown.graph, shown.forward, last)
    assert jac is not None and jac.shape == (4, 4 + 4 + 2)
    np.testing.assert_allclose(jac, expected, rtol=1e-12, atol=1e-15)
    for step in steps:  # every module: upstream · J is what its step delivers
        jac = step_jacobian(shown.graph, shown.forward, step)
        assert jac is not None
        row = np.concatenate([np.ravel(step.upstream[o]) for o in step.outputs])
        out = np.concatenate([np.ravel(step.vjps[x]) for x in step.inputs])
        np.testing.assert_allclose(row @ jac, out, rtol=1e-10, atol=1e-14)
    assert step_jacobian(shown.graph, shown.forward, last, limit=39) is None  # 40 entries
