"""Outputs never destroy what they replace (issue 25, items 5 and 6): ``--out`` equal
to the input is refused in one line, also through a link, and a write that fails (a
full disk, simulated with RLIMIT_FSIZE in a child process) is a one-line failure
that leaves the old file as it was."""

from __future__ import annotations

import json
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from engine.examples import EXAMPLES_DIR
from engine.pytorch_cli import export_main, import_main
from gui.export.cli import main as export_cli

MAIN = Path(__file__).resolve().parents[2] / "main.py"
SEED2 = EXAMPLES_DIR / "seed2_stack_vjp.bpgraph"


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    target = tmp_path / "lesson.bpgraph"
    shutil.copyfile(SEED2, target)
    return target


def _refused(capsys: pytest.CaptureFixture[str], source: Path, before: bytes) -> None:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--out is the input file itself" in err
    assert source.read_bytes() == before


def test_export_torch_and_import_refuse_their_own_input_as_out(graph, tmp_path, capsys) -> None:  # noqa: ANN001
    before = graph.read_bytes()
    assert export_main([str(graph), "--out", str(graph)]) == 2
    _refused(capsys, graph, before)
    link = tmp_path / "alias.py"
    link.symlink_to(graph)
    assert export_main([str(graph), "--out", str(link)]) == 2
    _refused(capsys, graph, before)
    snippet = tmp_path / "snip.py"
    snippet.write_text("import torch\nx = torch.ones(2, requires_grad=True)\ny = x.sum()\n")
    kept = snippet.read_bytes()
    assert import_main([str(snippet), "--out", str(snippet)]) == 2
    _refused(capsys, snippet, kept)


@pytest.mark.parametrize("out", ["lesson.html", "lesson.pdf", "lesson.png"])
def test_export_refuses_its_own_input_as_out(tmp_path, capsys, out) -> None:  # noqa: ANN001
    source = tmp_path / out  # any extension loads: a graph file named like the output
    shutil.copyfile(SEED2, source)
    before = source.read_bytes()
    args = ["--step", "1"] if out.endswith(".png") else ["--all"]
    assert export_cli([str(source), *args, "--out", str(tmp_path / "." / out)]) == 2
    _refused(capsys, source, before)


def _limited() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))


@pytest.mark.parametrize(
    ("command", "name"),
    [(["export", "--all"], "old.pdf"), (["export-torch"], "old.py")],
)
def test_a_full_disk_fails_in_one_line_and_keeps_the_old_file(
    graph, tmp_path, command, name
) -> None:  # noqa: ANN001
    old = tmp_path / name
    old.write_bytes(b"the old file " * 3000)  # over the limit: a truncation would show
    before = old.read_bytes()
    if command == ["export-torch"]:
        # a script over the 20 KB limit: 5,000 numbers in the input's literal
        nodes = [
            {"id": "x", "op": "input", "value": [0.125] * 5000, "requires_grad": True},
            {"id": "s", "op": "sum", "inputs": ["x"]},
        ]
        graph.write_text(
            json.dumps(
                {
                    "format": "backprop-studio-graph",
                    "version": 1,
                    "nodes": nodes,
                    "backward": {"output": "s"},
                }
            )
        )
    # -B: the size limit must not cut a .pyc short (it would break later imports)
    args = [
        sys.executable,
        "-B",
        str(MAIN),
        command[0],
        str(graph),
        *command[1:],
        "--out",
        str(old),
    ]
    proc = subprocess.run(
        args,
        preexec_fn=_limited,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={
            "QT_QPA_PLATFORM": "offscreen",
            "PATH": "/usr/bin:/bin",
            "PYTHONDONTWRITEBYTECODE": "1",
        },
    )
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert "\n" not in err and "File too large" in err, err
    assert old.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
