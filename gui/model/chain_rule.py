"""The chain-rule write-up of one frame, as HTML (no Qt): the chain-rule panel shows it
and exporters can render the same text headless."""

from __future__ import annotations

from collections.abc import Callable

from engine.graph import Graph

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
    written for (:class:`labels.Narrow`; at its narrowest the summary is elided too)."""
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
        body.append(labels.step_html(
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
