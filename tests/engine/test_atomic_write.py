"""Atomic saves leave no junk, follow links and never replace a read-only file unasked."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from engine.atomic_write import remove_stale_temps, temp_name, write_atomic
from engine.fileformat import GraphFile, ReadOnlyTarget, load, save
from engine.graph import Graph


def small_file() -> GraphFile:
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0])
    g.add_node("s", "sum", inputs=["x"])
    return GraphFile(graph=g, output="s")


def dead_pid() -> int:
    """The id of a process that has certainly ended."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_a_killed_saves_temp_file_is_removed_by_the_next_save(tmp_path: Path) -> None:
    target = tmp_path / "g.bpgraph"
    stale = tmp_path / f".g.bpgraph.{dead_pid()}.0123abcd.tmp"
    stale.write_text("half a file")
    alive = tmp_path / f".g.bpgraph.{os.getppid()}.0123abcd.tmp"  # a running save elsewhere
    alive.write_text("being written")
    unrelated = [tmp_path / ".g.bpgraph.notes.tmp", tmp_path / f".other.{dead_pid()}.0123abcd.tmp"]
    for p in unrelated:
        p.write_text("not ours")
    save(target, small_file())
    assert not stale.exists()
    assert alive.exists()
    assert all(p.exists() for p in unrelated)
    assert load(target).output == "s"


def test_stale_cleanup_matches_only_our_exact_pattern(tmp_path: Path) -> None:
    target = tmp_path / "a[1]*.bpgraph"  # glob characters in the name are literal
    pid = dead_pid()
    ours = tmp_path / f".a[1]*.bpgraph.{pid}.deadbeef.tmp"
    ours.write_text("x")
    near = tmp_path / f".a1x.bpgraph.{pid}.deadbeef.tmp"
    near.write_text("x")
    assert remove_stale_temps(target) == [ours]
    assert near.exists()
    assert temp_name(target).name.startswith(".a[1]*.bpgraph.")


def test_save_as_onto_a_symlink_writes_its_target(tmp_path: Path) -> None:
    real = tmp_path / "real.bpgraph"
    real.write_text("old")
    link = tmp_path / "link.bpgraph"
    link.symlink_to(real)
    save(link, small_file())
    assert link.is_symlink()
    assert load(real).output == "s"


def test_a_read_only_target_is_refused_until_the_caller_says_replace(tmp_path: Path) -> None:
    target = tmp_path / "ro.bpgraph"
    target.write_text("keep me")
    target.chmod(0o444)
    with pytest.raises(ReadOnlyTarget, match="read-only"):
        save(target, small_file())
    assert target.read_text() == "keep me"
    save(target, small_file(), replace_read_only=True)
    assert load(target).output == "s"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444  # still read-only, as the user had it


def test_a_failed_write_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "g.bpgraph"
    target.write_text("old")

    def full(_fd: int, _data: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError):
        write_atomic(target, b"new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["g.bpgraph"]
