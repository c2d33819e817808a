"""Every hostile input class of issue 15 through the loader and ``run``: each ends with a
result or one clean line (the GUI side, File > Open, Paste and export, is in
tests/gui/test_hostile_fuzz_gui.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine import cli
from engine.fileformat import FileFormatError, GraphFile, dumps, load, loads
from engine.layout_keys import check_file_keys, check_node_keys
from hostile_inputs import hostile_files, loadable_files

INPUTS = list(hostile_files()) + list(loadable_files())


def one_line(text: str) -> bool:
    return text.count("\n") == 1 and text.endswith("\n") and len(text) < 400


def test_every_input_loads_or_is_refused_in_one_line() -> None:
    refused = 0
    for name, text in INPUTS:
        for partial in (True, False):
            try:
                gf = loads(text, partial=partial)
            except FileFormatError as exc:
                refused += 1
                assert one_line(str(exc) + "\n"), name
                continue
            check_loaded(name, gf)
    assert refused > len(INPUTS)  # most of them are refused, in both modes


def check_loaded(name: str, gf: GraphFile) -> None:
    """What loaded is sane for the GUI and survives a save."""
    check_file_keys(gf.extra)
    for extra in gf.node_extra.values():
        check_node_keys(extra)
    again = loads(dumps(gf), partial=True)
    assert list(again.graph.nodes) == list(gf.graph.nodes), name
    assert again.extra == gf.extra and again.node_extra == gf.node_extra, name


@pytest.mark.parametrize("which", ["hostile", "loadable"])
def test_run_ends_with_a_result_or_one_line(
    which: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = hostile_files() if which == "hostile" else loadable_files()
    for k, (name, text) in enumerate(inputs):
        path = tmp_path / f"{k}.bpgraph"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        for args in ([str(path)], [str(path), "--json", "--steps"]):
            status = cli.main(args)
            out, err = capsys.readouterr()
            assert status in (0, 2), (name, err)
            if status == 2:
                assert one_line(err) and err.startswith("error: ") and not out, name
            else:
                assert out and all(one_line(line + "\n") for line in err.splitlines()), name
                if "--json" in args:
                    json.loads(out)
        if which == "loadable":
            assert status == 0, name


def test_run_on_special_paths_ends_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it would block forever
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    paths = [str(fifo), str(tmp_path), "/dev/zero", "", str(tmp_path / "missing"), str(loop)]
    for path in paths:
        assert cli.main([path]) == 2, path
        out, err = capsys.readouterr()
        assert one_line(err) and not out, (path, err)
        with pytest.raises(FileFormatError):
            load(path)
