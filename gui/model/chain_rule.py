"""The chain-rule write-up of one frame, as HTML (no Qt): the chain-rule panel shows it
and exporters can render the same text headless."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.graph import Graph
from engine.trace import Step

from . import colours, labels
from .end_to_end import Computing, EndToEnd
from .forward_view import forward_mode_body
from .group_view import group_step_html
from .timeline import Frame, Phase, Timeline

#: The heading of the whole call's summary, written after the last step (a panel that
#: must keep the step in view finds where the step's text ends by it).
SUMMARY_HEADING = "Backward done"
#: The rule the summary starts with; the summary is the write-up's last part (an edit off
#: the output's path changes only the summary: the panel replaces that part alone).
SUMMARY_RULE = "<hr/>"
#: How many steps' write-ups a :class:`StepWriteups` keeps (a step is written in a few
#: shortenings; a full memo starts again).
STEPS_KEPT = 64


class StepWriteups:
    """Backward steps' write-ups (:func:`labels.step_html`), kept by everything they
    read: the step itself (its numbers: the same object, held here, so its id is never
    another's), its place in the pass, the names and the operation it writes, the
    colours' theme and the shortening. An edit off the output's path (a leaf added from
    the palette) shares the pass's steps (:func:`engine.autodiff.trace_after_edit`):
    the end of backward, shown after every such edit, then writes the whole call's
    summary anew below its last step, not the step (two fifths of the write-up's cost).
    A panel keeps one; an export writes every frame once and needs none. It keeps one
    pass's steps' write-ups (:meth:`of_pass`): the steps of a pass no longer shown, and
    what they hold (a captured model's autograd nodes), are not kept alive."""

    def __init__(self) -> None:
        self._kept: dict[tuple, tuple[Step, str]] = {}
        self._pass: object = None  # the steps (a trace's list) they were written from
        self.written = 0  # how many were written (tests count it)

    def of_pass(self, steps: Sequence[Step]) -> StepWriteups:
        """These, for the pass of ``steps`` (a trace's :attr:`~engine.trace.Trace.steps`,
        shared by a pass an edit left as it was): another pass's are forgotten."""
        if steps is not self._pass:
            self._kept.clear()
            self._pass = steps
        return self

    def step_html(self, step: Step, k: int, n: int, objective: str, fan_in: int,
                  contribution: int, graph: Graph, output: str, senders: Sequence[str],
                  compact: bool, elide: bool, interactive: bool, narrow: labels.Narrow) -> str:
        """:func:`labels.step_html` of these, written once per key (see the class)."""
        consumer = graph.nodes.get(step.consumer)
        # What the write-up reads of the graph: the consumer's operation over its
        # operands' names (a leaf or a missing node: its name alone, in the key already),
        # and whether the operand is a leaf (its .grad, or ∂A/∂o).
        title = None if consumer is None or consumer.is_leaf else consumer.computes(labels.h_name)
        key = (id(step), k, n, objective, fan_in, contribution, title,
               labels.node_is_leaf(graph, step.operand), output, tuple(senders), compact,
               elide, interactive, narrow, colours.current())
        kept = self._kept.get(key)
        if kept is not None and kept[0] is step:
            return kept[1]
        if len(self._kept) >= STEPS_KEPT:
            self._kept.clear()
        text = labels.step_html(step, k, n, objective, fan_in, contribution, graph, output,
                                senders, compact, elide, interactive, narrow)
        self._kept[key] = (step, text)
        self.written += 1
        return text


def chain_rule_html(
    graph: Graph,
    tl: Timeline,
    frame: Frame,
    end_to_end: Callable[[], EndToEnd | Computing | None],
    base_pt: float,
    compact: bool = False,
    elide: bool = False,
    sub_pt: float | None = None,
    update: str = "",
    interactive: bool = True,
    narrow: labels.Narrow = labels.Narrow.NO,
    steps: StepWriteups | None = None,
) -> str:
    """The write-up for one frame: forward progress, the start of backward, one step,
    or (at the end) the last step and the whole call as ``vᵀ J`` (``end_to_end`` is
    called only then: it is the expensive part; a panel's worker may still be computing
    it, and the page says so). ``compact``: a step's symbolic line
    and its numbers share one line; ``elide``: its matrices are written as their shapes
    (:func:`labels.step_html`); ``sub_pt``: sub- and superscripts at that size
    (:func:`labels.h_document`); ``update``: the training step's update that follows
    the pass (HTML, at its end), written first: it is what the canvas then shows (each
    parameter's new value), and after the last step and the summary it sat below the
    fold of the presentation panel at 1280x720. ``interactive``: the window's text, with
    its hints (a view to look in, a group to expand); an export has neither and says
    only what is true on paper. ``narrow``: how narrow a column the step's numbers are
    written for (:class:`labels.Narrow`; at its narrowest the summary is elided too).
    ``steps``: the backward steps' write-ups kept (a panel's), else each written anew."""
    results = tl.results
    trace = results.trace
    objective = "" if trace is None else labels.objective_name(trace.output, trace.gradient)
    body: list[str] = [update] if update else []
    if frame.phase in (Phase.NO_FORWARD, Phase.FORWARD):
        body.append(
            labels.forward_html(frame.position, tl.forward_order, results.forward.values, graph)
        )
    elif tl.tangents is not None:  # the forward direction: J·t edge by edge
        body.extend(forward_mode_body(tl.tangents, frame, tl.forward_order, elide))
    elif frame.phase is Phase.FORWARD_DONE and frame.active is None:
        if trace is None:
            reason = results.backward_error
            why = "No backward pass to show: " + labels.esc(str(reason) if reason else "—")
            body += [labels.h_heading("Forward done."), labels.h_para(why, colours.GRAD_TEXT)]
        else:
            body.append(labels.start_html(trace.output, trace.gradient, objective, frame.n))
    if frame.question:
        body.append(labels.h_heading(labels.esc(frame.question) + "?"))
    elif frame.active is not None and trace is not None:
        step = frame.active
        fan_in, senders = frame.fan_in.get(step.operand, 1), tl.senders(step.operand)
        write = labels.step_html if steps is None else steps.of_pass(trace.steps).step_html
        body.append(write(
            step, frame.k, frame.n, objective, fan_in, tl.contribution(frame.k), graph,
            trace.output, senders, compact, elide, interactive, narrow,
        ))
    elif frame.active_group is not None:
        body.append(group_step_html(
            graph, results.forward, frame.active_group, frame.k, frame.n, interactive, elide
        ))
    if frame.phase is Phase.BACKWARD_DONE and trace is not None:
        e2e = end_to_end()
        body.append(SUMMARY_RULE)
        body.append(labels.h_heading(SUMMARY_HEADING))
        if isinstance(e2e, Computing):
            body.append(labels.h_para(labels.COMPUTING_TEXT, colours.TEXT_MUTED))
        elif e2e is not None:
            body.append(e2e.html(elide=elide or narrow >= labels.Narrow.SUMMARY))
        lines = labels.leaf_grad_lines(trace.leaf_grads)
        body.append(labels.h_para(labels.h_lines(lines, colours.GRAD_TEXT), size="110%"))
    return labels.h_document("".join(body), base_pt, sub_pt)
