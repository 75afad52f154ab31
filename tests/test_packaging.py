"""What users install: the sdist and the wheel `python -m build` makes, checked as PyPI would, installed
into a fresh venv (no system site packages, dependencies from the package index) and run."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import carrytool

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = {"carrytool/py.typed", "carrytool/schemas/manifest.schema.json", "carrytool/schemas/report.schema.json", "carrytool/demo/sources.py",
           "carrytool/demo/scenario.py", "carrytool/cli/__init__.py"}


def copy_source(dest: Path) -> Path:
    """The files of this checkout that git would commit (tracked or new, not ignored), copied to DEST."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            (dest / name).write_bytes((ROOT / name).read_bytes())
    return dest


def test_the_version_lives_in_one_place() -> None:
    text = (ROOT / "pyproject.toml").read_text()          # (no tomllib on Python 3.10)
    project = text.split("\n[project]\n", 1)[1].split("\n[", 1)[0]
    assert not re.search(r"^version\s*=", project, flags=re.M) and re.search(r'^dynamic = \["version"\]', project, re.M)
    assert '\n[tool.setuptools.dynamic]\nversion = {attr = "carrytool.__version__"}\n' in text
    assert re.fullmatch(r"\d+\.\d+\.\d+", carrytool.__version__)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, flags=re.M)
    assert released and released[0] == carrytool.__version__, "CHANGELOG.md's newest release is not __version__"
    assert changelog.index("## [Unreleased]") < changelog.index(f"## [{carrytool.__version__}]")
    package_data = re.search(r"^\[tool\.setuptools\.package-data\]\n(?:#.*\n)*carrytool = \[(.*)\]$", text, re.M)
    assert package_data
    for pattern in re.findall(r'"([^"]+)"', package_data[1]):
        assert list((ROOT / "carrytool").glob(pattern)), f"package-data {pattern} matches nothing"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sdist + wheel built from a copy of the checkout (building writes egg-info beside the sources)."""
    tmp = tmp_path_factory.mktemp("dist")
    source = copy_source(tmp / "src")
    out = tmp / "dist"
    proc = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(source)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.mark.slow
def test_sdist_and_wheel_hold_the_schema_the_demo_and_py_typed(dist: Path) -> None:
    version = carrytool.__version__
    wheel = dist / f"carrytool-{version}-py3-none-any.whl"
    sdist = dist / f"carrytool-{version}.tar.gz"
    assert sorted(p.name for p in dist.iterdir()) == sorted([wheel.name, sdist.name])
    names = set(zipfile.ZipFile(wheel).namelist())
    assert SHIPPED <= names, SHIPPED - names
    assert not any(n.startswith(("tests/", "bench/", "carries/")) for n in names)
    metadata = zipfile.ZipFile(wheel).read(f"carrytool-{version}.dist-info/METADATA").decode()
    assert f"\nVersion: {version}\n" in metadata and "Requires-Python: >=3.10" in metadata
    # the licence pyproject.toml declares ships in both (PEP 639), word for word
    assert "\nLicense-Expression: Apache-2.0\n" in metadata and "\nLicense-File: LICENSE\n" in metadata
    licence = (ROOT / "LICENSE").read_bytes()
    assert zipfile.ZipFile(wheel).read(f"carrytool-{version}.dist-info/licenses/LICENSE") == licence
    assert licence.lstrip().startswith(b"Apache License") and b"Version 2.0, January 2004" in licence
    entry = zipfile.ZipFile(wheel).read(f"carrytool-{version}.dist-info/entry_points.txt").decode()
    assert "carrytool = carrytool.__main__:entry" in entry
    members = {m.split("/", 1)[1] for m in tarfile.open(sdist).getnames() if "/" in m}
    assert SHIPPED | {"CHANGELOG.md", "README.md", "pyproject.toml", "action.yml", "LICENSE"} <= members
    twine = Path(sys.executable).parent / "twine"
    proc = subprocess.run([str(twine), "check", "--strict", str(wheel), str(sdist)], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.count("PASSED") == 2, proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_fresh_venv_installs_the_wheel_and_runs_the_demo(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    wheel = dist / f"carrytool-{carrytool.__version__}-py3-none-any.whl"
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           str(wheel)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    exe = venv / "bin" / "carrytool"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_GLOBAL": "/dev/null", "NO_COLOR": "1"}
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert version.returncode == 0 and version.stdout == f"carrytool {carrytool.__version__}\n"
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import carrytool; print(carrytool.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, check=True).stdout.strip()
    assert Path(where).is_relative_to(venv), where          # the installed copy, not this checkout
    demo = subprocess.run([str(exe), "demo", "--keep", str(tmp_path / "scenario")], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=600)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert "same inputs, same SHA" in demo.stdout and "carrytool explain" in demo.stdout
    assert (tmp_path / "scenario" / "carries" / "manifest.yaml").is_file()
    schema = subprocess.run([str(exe), "schema"], capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
    assert schema.stdout == (ROOT / "carrytool" / "schemas" / "manifest.schema.json").read_text()
