"""Capture a real PyTorch backward pass as the engine's own steps.

    from engine.capture import capture, recording
    trace = capture(loss, names=model)        # runs loss.backward() once, recording it
    trace.save("mlp.bptrace"); trace.show()

    with recording(names=model) as traces:    # whatever backward() runs in here
        loss.backward()

    with tracking(model):                     # optional: module paths and forward values
        out = model(x)

PyTorch does all the computing; nothing is recomputed here. At backward time
the autograd graph is walked from ``output.grad_fn`` over ``next_functions``
(iteratively: deep models must not hit the recursion limit; in-place ops and
views have already swapped their ``grad_fn`` by then), a hook goes on every node
for one real ``backward``, and every hook is removed in ``finally``. A node's
hook sees the gradients it received (``grad_outputs``) and sent to each operand
(``grad_inputs``): one :class:`~engine.trace.Step` per edge, in the order
PyTorch ran them. AccumulateGrad's hook sees no ``grad_inputs``, so the vjp of
each edge into a leaf comes from its consumer.

A step's local Jacobian is built only when asked, by pulling basis vectors
through that node's own backward (``torch.func.vmap`` where it works, a loop
where not), reduced to the operand's shape with ``sum_to_size`` as PyTorch's
engine does; that needs the graph, which ``capture`` keeps by default.

PyTorch is optional (the ``torch`` extra) and imported only when capturing.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from . import tracefile
from .capture_graph import forward_order, inner_modules, kind_of, modules, name_nodes, walk
from .captured import CapturedNode, CapturedTrace, Shape, jacobian_words
from .errors import shape_text
from .gradient_flow import FlowRow, trace_flow
from .trace import Step

#: Keys :func:`tracking` leaves in a node's ``metadata``.
_MODULE, _VALUE = "backprop_studio_module", "backprop_studio_value"

INSTALL_HINT = 'capturing needs PyTorch: pip install "backprop-studio[torch]"'


class CaptureError(Exception):
    """Something to capture that cannot be; ``str`` is one line, naming the node and
    saying what to change."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows in a notebook cell instead of a traceback: the line."""
        return [f"{type(self).__name__}: {self}"]


#: PyTorch's words for a saved tensor changed in place, and for a freed graph.
_IN_PLACE = "modified by an inplace operation"
_FREED = "backward through the graph a second time"
#: ``[torch.FloatTensor [3, 4]], which is output 0 of Exp``: the tensor it means.
_SAVED_TENSOR = re.compile(r"\[torch\.\w+ \[([\d, ]*)\]\], which is output (\d+) of (\w+)")


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise CaptureError(INSTALL_HINT) from None
    return torch


def _numpy(t: Any) -> np.ndarray:
    """A detached float64 copy (``create_graph=True`` gradients carry a grad_fn), made
    in one pass from float32 or float64 (a resnet18's gradients are 11 million values)."""
    torch = _torch()
    t = t.detach().cpu()
    if t.dtype not in (torch.float32, torch.float64):
        t = t.double()  # numpy has no bfloat16
    return np.array(t.numpy(), dtype=np.float64)


@dataclass(slots=True)
class TorchContext:
    """A step's context that pulls back through PyTorch's own node (kept alive here)."""

    node: Any  # torch.autograd.graph.Node
    info: CapturedNode
    dtypes: list[Any]
    operand_shape: Shape

    def _pull(self, flat: Any, index: int) -> Any:
        torch = _torch()
        grads, start = [], 0
        for shape, dtype in zip(self.info.shapes, self.dtypes, strict=True):
            n = math.prod(shape)
            grads.append(flat[start : start + n].reshape(shape).to(dtype))
            start += n
        out = self.node(*grads)
        result = out[index] if isinstance(out, tuple) else out
        if result is None:  # the node sends nothing this way: a zero row
            return torch.zeros(self.operand_shape, dtype=torch.float64)
        return result.sum_to_size(self.operand_shape).double()

    def pullback(self, index: int, g: np.ndarray) -> np.ndarray:
        torch = _torch()
        with torch.no_grad():
            flat = torch.as_tensor(np.ravel(g), dtype=torch.float64)
            return _numpy(self._pull(flat, index)).reshape(self.operand_shape)

    def jacobian(self, index: int, upstream_shape: Shape) -> np.ndarray | None:
        """Rows are the pull-backs of the basis vectors, all at once where vmap can."""
        torch = _torch()
        m, n = math.prod(upstream_shape), math.prod(self.operand_shape)
        with torch.no_grad():
            basis = torch.eye(m, dtype=torch.float64)
            try:
                rows = torch.func.vmap(lambda e: self._pull(e, index))(basis)
            except Exception:  # a node vmap cannot batch: one row at a time
                try:
                    rows = torch.stack([self._pull(e, index) for e in basis])
                except RuntimeError:  # the graph was freed (retain_graph=False)
                    return None
            return _numpy(rows).reshape(m, n)

    def describe(self, index: int) -> str:
        return jacobian_words(self.info, self.operand_shape)


@dataclass
class TorchTrace(CapturedTrace):
    """What :func:`capture` returns: a captured trace to save, show or read."""

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write a ``.bptrace`` file (it replays without PyTorch)."""
        tracefile.save(path, self)

    def show(self) -> subprocess.Popen[bytes] | None:
        """Open the app on this trace in a separate process (this one carries on); None
        is for a subclass that shows it where it is (``backprop_studio`` in a notebook)."""
        fd, name = tempfile.mkstemp(suffix=tracefile.SUFFIX, prefix="capture-")
        os.close(fd)
        self.save(name)
        main = Path(__file__).resolve().parent.parent / "main.py"
        return subprocess.Popen([sys.executable, str(main), name])

    def gradient_flow(self) -> list[FlowRow]:
        """One row per parameter in depth order: ``name``, ``module``, ``shape``,
        ``mean_abs``, ``max_abs``, ``norm``, ``ratio`` (‖grad‖ / ‖weight‖), and a
        vanishing/exploding ``flag`` with its ``reason`` (see :mod:`engine.gradient_flow`)."""
        return trace_flow(self)


T = TypeVar("T", bound=TorchTrace)


def _parameter_names(names: Any) -> dict[int, str]:
    """id(tensor) -> name, from an ``nn.Module`` or a ``{name: tensor}`` mapping."""
    if names is None:
        return {}
    if hasattr(names, "named_parameters"):
        return {id(p): n for n, p in names.named_parameters()}
    if isinstance(names, Mapping):
        return {id(t): str(n) for n, t in names.items()}
    raise CaptureError("names must be an nn.Module or a {name: tensor} mapping")


def _module_classes(names: Any) -> dict[str, str]:
    """Module path -> class name (``"layers.0": "Linear"``), from an ``nn.Module``."""
    if not hasattr(names, "named_modules"):
        return {}
    return {path: type(m).__name__ for path, m in names.named_modules() if path}


class _Recorder:
    """Hooks on every node of one graph, removed in ``finally``; the records after."""

    def __init__(self, root: Any, names: Any, kind: type[TorchTrace] = TorchTrace) -> None:
        self.kind = kind
        self.nodes = forward_order(walk(root))
        self.root = root
        self.ids = name_nodes(self.nodes, _parameter_names(names))
        self.classes = _module_classes(names)
        self.records: list[tuple[Any, tuple[Any, ...], tuple[Any, ...]]] = []
        self.prior = {
            n: _numpy(n.variable.grad)
            for n in self.nodes
            if hasattr(n, "variable") and n.variable.grad is not None
        }

    @contextmanager
    def hooked(self) -> Iterator[None]:
        records = self.records

        def make(node: Any) -> Callable[[tuple[Any, ...], tuple[Any, ...]], None]:
            def hook(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> None:
                # Keep the tensors themselves: a detached alias could let PyTorch's input
                # buffer accumulate into them in place. Returning None changes nothing.
                records.append((node, grad_inputs, grad_outputs))

            return hook

        handles = []
        try:
            for n in self.nodes:
                if not hasattr(n, "variable"):
                    handles.append(self._attach(n, make(n)))
            yield
        finally:
            for h in handles:
                h.remove()

    def _attach(self, node: Any, hook: Callable[..., None]) -> Any:
        try:
            return node.register_hook(hook)
        except (RuntimeError, TypeError, AttributeError, NotImplementedError) as exc:
            raise CaptureError(
                f"node {self.ids[node]!r} ({kind_of(node)}): PyTorch refused a backward hook "
                f"({_first_line(exc)}); capture hooks every node: run the model eagerly "
                "(not under torch.jit or torch.compile) for the capture"
            ) from None

    def explain(self, exc: RuntimeError) -> str:
        """PyTorch's backward failure as one line naming the node it failed at, and the fix."""
        text = str(exc)
        if _IN_PLACE in text:
            m = _SAVED_TENSOR.search(text)
            shape = tuple(int(n) for n in m[1].split(",") if n.strip()) if m else ()
            what = f" (shape {shape_text(shape)}, output {m[2]} of {m[3]})" if m else ""
            return (
                f"{self._failed_at(_IN_PLACE)}a tensor its backward saved{what} was changed in "
                "place after the forward used it: use the out-of-place op (y = y + 1, not "
                "y += 1 or y.add_(1); nn.ReLU() without inplace=True) or change a .clone()"
            )
        if _FREED in text:
            return (
                f"{self._failed_at(_FREED)}an earlier backward() freed this graph: run the "
                "forward again before capturing, or give that backward retain_graph=True"
            )
        return f"PyTorch's backward failed: {_first_line(exc)}"

    def _failed_at(self, words: str) -> str:
        """``node 'Exp1' (Exp): ``, the first node in backward order whose saved tensors
        PyTorch refuses with ``words`` ("" when none does)."""
        for n in reversed(self.nodes):
            for attr in dir(n):
                if not attr.startswith("_saved_"):
                    continue
                try:
                    getattr(n, attr)
                except RuntimeError as exc:
                    if words in str(exc):
                        return f"node {self.ids[n]!r} ({kind_of(n)}): "
        return ""

    def trace(self, gradient: np.ndarray) -> TorchTrace:
        ids = self.ids
        infos: dict[str, CapturedNode] = {}
        dtypes: dict[Any, list[Any]] = {}
        tracked = any(_MODULE in n.metadata for n in self.nodes if not hasattr(n, "variable"))
        for n in self.nodes:
            meta = n._input_metadata
            dtypes[n] = [m.dtype for m in meta]
            leaf = hasattr(n, "variable")
            infos[ids[n]] = CapturedNode(
                id=ids[n],
                kind=kind_of(n),
                shapes=[tuple(n.variable.shape)] if leaf else [tuple(m.shape) for m in meta],
                inputs=[
                    (ids[src], slot) if src is not None else None for src, slot in n.next_functions
                ],
                module=ids[n].rpartition(".")[0] if leaf else n.metadata.get(_MODULE, ""),
                value=_numpy(n.variable) if leaf and tracked else n.metadata.get(_VALUE),
            )
        if tracked:
            inner_modules(infos, {ids[n] for n in self.nodes if _MODULE in n.metadata})
        else:  # no forward was tracked: guess from the parameters
            modules(infos, list(infos))
        root_id = ids[self.root]
        trace = self.kind(output=root_id, gradient=gradient, nodes=infos)
        trace.module_classes = self.classes
        sums: dict[tuple[str, int], np.ndarray] = {(ids[n], 0): g for n, g in self.prior.items()}
        for node, grad_inputs, grad_outputs in self.records:
            info = infos[ids[node]]
            parts = [
                _numpy(g) if g is not None else np.zeros(s)
                for g, s in zip(grad_outputs, info.shapes, strict=True)
            ]
            upstream = parts[0] if len(parts) == 1 else np.concatenate([p.ravel() for p in parts])
            trace.grads[info.id] = upstream
            for i, (src, g) in enumerate(zip(node.next_functions, grad_inputs, strict=True)):
                if src[0] is None or g is None:
                    continue
                vjp = _numpy(g)
                key = (ids[src[0]], src[1])
                before = sums.get(key)
                after = vjp if before is None else before + vjp
                sums[key] = after
                ctx = TorchContext(node, info, dtypes[node], vjp.shape)
                trace.steps.append(Step(info.id, key[0], i, upstream, vjp, before, after, ctx))
        for n in self.nodes:
            if hasattr(n, "variable"):
                leaf_id = ids[n]
                trace.leaves.append(leaf_id)
                trace.weight_norms[leaf_id] = _norm(n.variable)
                grad = n.variable.grad
                trace.grads[leaf_id] = _numpy(grad) if grad is not None else None
        return trace


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _norm(t: Any) -> float:
    """``‖t‖₂`` in float64, without copying a parameter into numpy."""
    torch = _torch()
    return float(torch.linalg.vector_norm(t.detach(), dtype=torch.float64))


def _root(output: Any) -> Any:
    torch = _torch()
    if not isinstance(output, torch.Tensor):
        raise CaptureError(f"capture needs a tensor, not {type(output).__name__}")
    if not output.is_floating_point() and not output.is_complex():
        raise CaptureError(
            f"the output is {output.dtype}, not floating point, so it carries no gradient "
            "(argmax, comparisons and .long() cut the graph): capture the float loss, "
            "e.g. cross_entropy(logits, target), not logits.argmax()"
        )
    if output.grad_fn is None:
        raise CaptureError(
            "the output has no grad_fn: it does not depend on anything that requires grad"
        )
    return output.grad_fn


def _seed(output: Any, gradient: Any, node: str) -> np.ndarray:
    """The ``v`` of ``output.backward(gradient=v)``: ones for a one-element output."""
    shape = tuple(output.shape)
    if output.is_complex():
        raise CaptureError(
            f"node {node!r}: the output is {output.dtype}: capture a real loss "
            "(output.abs().sum(), or output.real)"
        )
    if gradient is None:
        if output.numel() != 1:
            raise CaptureError(
                f"node {node!r}: the output has shape {shape_text(shape)}, so PyTorch needs "
                "gradient= (the v of output.backward(gradient=v), that shape): pass one, "
                "or reduce the output to a scalar first (output.sum())"
            )
        return np.ones(shape)
    seed = _numpy(_torch().as_tensor(gradient))
    if seed.shape != shape:
        raise CaptureError(
            f"node {node!r}: gradient= has shape {shape_text(seed.shape)}, the output "
            f"{shape_text(shape)}: give v the output's shape"
        )
    return seed


def _record(
    backward: Callable[[], None], output: Any, gradient: Any, names: Any, kind: type[T]
) -> T:
    recorder = _Recorder(_root(output), names, kind)
    seed = _seed(output, gradient, recorder.ids[recorder.root])
    with recorder.hooked():
        try:
            backward()
        except RuntimeError as exc:  # PyTorch's words, made one line about the node
            raise CaptureError(recorder.explain(exc)) from None
    trace = recorder.trace(seed)
    assert isinstance(trace, kind)
    return trace


def capture(
    output: Any,
    gradient: Any = None,
    names: Any = None,
    *,
    keep_graph: bool = True,
    kind: type[T] = TorchTrace,  # type: ignore[assignment]
) -> T:
    """Run ``output.backward(gradient)`` once and return it as a trace.

    ``names`` (an ``nn.Module`` or ``{name: tensor}``) names the leaves; gradients
    accumulate into ``.grad`` as with any backward. ``keep_graph`` retains the graph
    so Jacobians can be built later by pulling back through PyTorch's nodes. ``kind``
    is the trace class made (``backprop_studio`` passes its own, which adds the GUI's
    exports without the engine importing them).
    """
    torch = _torch()
    return _record(
        lambda: torch.autograd.backward(output, gradient, retain_graph=keep_graph),
        output,
        gradient,
        names,
        kind,
    )


@contextmanager
def recording(
    names: Any = None,
    *,
    keep_graph: bool = True,
    kind: type[T] = TorchTrace,  # type: ignore[assignment]
) -> Iterator[list[T]]:
    """Capture every ``backward()`` run inside; yields the list the traces go into.

    ``Tensor.backward`` calls ``torch.autograd.backward``, which is wrapped for the
    duration (the graph is retained unless ``keep_graph=False``).
    """
    torch = _torch()
    traces: list[T] = []
    original = torch.autograd.backward

    def backward(
        tensors: Any,
        grad_tensors: Any = None,
        retain_graph: Any = None,
        create_graph: bool = False,
        grad_variables: Any = None,
        inputs: Any = None,
    ) -> None:
        output, gradient = _single(torch, tensors, grad_tensors)
        retain = retain_graph if retain_graph is not None else (keep_graph or create_graph)
        traces.append(
            _record(
                lambda: original(
                    tensors, grad_tensors, retain, create_graph, grad_variables, inputs=inputs
                ),
                output,
                gradient,
                names,
                kind,
            )
        )

    torch.autograd.backward = backward
    try:
        yield traces
    finally:
        torch.autograd.backward = original


@contextmanager
def tracking(model: Any = None, *, values: bool = True) -> Iterator[None]:
    """Run a forward pass inside to label its nodes: each node gets the path of the
    innermost ``nn.Module`` running when it was made (so ``Relu``, ``Softmax`` and the
    rest group with their module, not only the nodes that touch parameters) and, with
    ``values``, its forward value. A later :func:`capture` reads both from the nodes'
    ``metadata``.
    """
    torch = _torch()  # optional: PyTorch is imported only when a capture is asked for
    from torch.nn.modules import module as nn_module
    from torch.overrides import TorchFunctionMode

    paths = {m: name for name, m in model.named_modules()} if model is not None else {}
    stack: list[str] = []

    class Labeller(TorchFunctionMode):
        def __torch_function__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            out = func(*args, **(kwargs or {}))
            for t in out if isinstance(out, (tuple, list)) else (out,):
                node = getattr(t, "grad_fn", None) if isinstance(t, torch.Tensor) else None
                if node is not None and _MODULE not in node.metadata:
                    node.metadata[_MODULE] = stack[-1] if stack else ""
                    if values and len(node._input_metadata) == 1:
                        node.metadata[_VALUE] = _numpy(t)
            return out

    def enter(m: Any, _args: Any) -> None:
        stack.append(paths.get(m, stack[-1] if stack else ""))

    def leave(_m: Any, _args: Any, _out: Any) -> None:
        stack.pop()

    handles = [
        nn_module.register_module_forward_pre_hook(enter),
        nn_module.register_module_forward_hook(leave, always_call=True),
    ]
    try:
        with Labeller():
            yield
    finally:
        for h in handles:
            h.remove()


def _single(torch: Any, tensors: Any, grads: Any) -> tuple[Any, Any]:
    if isinstance(tensors, torch.Tensor):
        return tensors, grads[0] if isinstance(grads, (tuple, list)) else grads
    if len(tensors) != 1:
        raise CaptureError(f"capture one output at a time, not {len(tensors)}")
    g = grads[0] if isinstance(grads, (tuple, list)) else grads
    return tensors[0], g
