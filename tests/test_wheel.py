"""The built wheel works on its own: built from the sdist, installed into a fresh venv
outside the checkout, with and without the compiled tanh loop.

What a user who runs ``pip install backprop-studio`` gets must carry every data file
(examples, font, schemas, icon): a file left out of ``package-data`` fails here, as
does a subcommand missing from ``--help`` or an example not reachable by name. The
second wheel is built with the C compiler replaced by ``false``, as on a machine
without one: the optional extension is skipped and the same smoke run passes on numpy.
One venv serves both (the second wheel replaces the first, without its dependencies).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

from main import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = ("engine", "gui", "assets", "backprop_studio")
NOT_SHIPPED = {".so", ".pyd", ".pyc"}  # built per machine, or caches


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"{cmd} failed ({done.returncode}):\n{done.stderr[-3000:]}"
    return done.stdout


def _build(source: Path, out: Path, *what: str, env: dict[str, str] | None = None) -> None:
    _run([sys.executable, "-m", "build", *what, "--outdir", str(out), str(source)], out, env)


def _source_files() -> set[str]:
    """Every file of the packaged folders a wheel must hold, as wheel paths."""
    files = {"main.py"}
    for top in PACKAGED:
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and (
                path.suffix not in NOT_SHIPPED
            ):
                files.add(path.relative_to(ROOT).as_posix())
    return files


def _smoke(venv: Path, work: Path, compiled: bool) -> None:
    """The installed app's commands, run from outside the checkout."""
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    app, python = str(bin_dir / "backprop-studio"), str(bin_dir / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(work / "config"))
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert _run([app, "--version"], work, env).split()[-1] == version
    listed = _run([app, "--help"], work, env)
    for name in COMMANDS:
        assert f"\n  {name} " in listed, f"--help does not list {name}"
    expected = _run([sys.executable, str(ROOT / "main.py"), "run", "--example",
                     "seed2_stack_vjp"], ROOT)
    assert _run([app, "run", "--example", "seed2_stack_vjp"], work, env) == expected
    where = _run([python, "-c", "import backprop_studio, engine, importlib.util as u;"
                  "from engine.examples import example_path as e;"
                  "print(backprop_studio.__version__, engine.__file__,"
                  " e('seed2_stack_vjp'), u.find_spec('engine._fused') is not None)"],
                 work, env).split()
    assert where[0] == version and where[3] == str(compiled)
    assert all(Path(p).is_relative_to(venv) for p in where[1:3]), where
    frame = work / "frame.png"
    _run([app, "export", where[2], "--step", "3", "--out", str(frame), "--size", "640x360"],
         work, env)
    data = frame.read_bytes()
    assert data.startswith(b"\x89PNG") and b"Software" in data and b"Backprop Studio" in data
    frame.unlink()


def test_the_wheel_installs_and_runs_outside_the_checkout_with_and_without_c(
    tmp_path: Path,
) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    _build(ROOT, dist)  # the sdist, then the wheel from it
    sdist = next(dist.glob("*.tar.gz"))
    wheel = next(dist.glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(_source_files() - names)
    assert not missing, f"the wheel lacks {missing}: add them to [tool.setuptools.package-data]"
    assert any(n.startswith("engine/_fused.") and n.endswith((".so", ".pyd")) for n in names)

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "-q", "--disable-pip-version-check"]
    _run([*pip, "install", str(wheel)], tmp_path)
    _smoke(venv, tmp_path, compiled=True)

    # No C compiler: setuptools skips the optional extension, the wheel still installs.
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "src", filter="data")
    plain = tmp_path / "plain"
    plain.mkdir()
    _build(next((tmp_path / "src").iterdir()), plain, "--wheel",
           env={**os.environ, "CC": "false", "CXX": "false"})
    plain_wheel = next(plain.glob("*.whl"))
    assert not any(n.startswith("engine/_fused.") and n.endswith((".so", ".pyd"))
                   for n in zipfile.ZipFile(plain_wheel).namelist())
    _run([*pip, "install", "--force-reinstall", "--no-deps", str(plain_wheel)], tmp_path)
    _smoke(venv, tmp_path, compiled=False)
