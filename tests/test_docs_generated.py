"""Every block of command output in README.md and docs/ is what the demo prints now (tools/gendocs.py).

A block lives between `<!-- generated: NAME -->` and `<!-- /generated -->`; `make docs` rewrites them all.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import isolate_env
from tools import gendocs

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def generated(kept_demo: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """gendocs.generate_all, on a copy of the session's kept demo (gendocs.build_demo) rather than a new one."""
    root = tmp_path_factory.mktemp("gendocs") / "demo"
    shutil.copytree(kept_demo, root, symlinks=True)
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)                                     # as in every test
        return {name: gendocs.run_block(name, root) for name in gendocs.BLOCKS}


def test_every_generated_block_is_what_the_demo_prints_now(generated: dict[str, str]) -> None:
    stale = gendocs.stale_docs(generated)
    assert not stale, "generated docs are stale: run make docs\n" + "\n".join(stale.values())


def test_every_block_is_shown_somewhere_and_every_region_names_a_block() -> None:
    assert not gendocs.unused_blocks(), "a block of tools/gendocs.py that no doc shows"
    for doc in gendocs.DOCS:
        for name in gendocs.regions((ROOT / doc).read_text()):
            assert name in gendocs.BLOCKS, f"{doc}: region {name!r} has no block in tools/gendocs.py"


def test_changing_one_line_of_demo_output_in_a_doc_fails(generated: dict[str, str], tmp_path: Path) -> None:
    """The check compares whole blocks: one edited SHA in one committed line is caught, and named."""
    copy = tmp_path / "repo"
    for doc in gendocs.DOCS:
        (copy / doc).parent.mkdir(parents=True, exist_ok=True)
        (copy / doc).write_text((ROOT / doc).read_text())
    assert not gendocs.stale_docs(generated, copy)
    explain = copy / "docs" / "explain.md"
    text = explain.read_text()
    line = next(m[0] for m in re.finditer(r"^.*intarweb-dev = [0-9a-f]{12}.*$", text, flags=re.M))
    edited = re.sub(r"= [0-9a-f]{12}", "= 14e2bca1c7bb", line)
    assert edited != line
    explain.write_text(text.replace(line, edited, 1))
    stale = gendocs.stale_docs(generated, copy)
    assert list(stale) == ["docs/explain.md"]
    assert f"-{edited}\n+{line}\n" in stale["docs/explain.md"]


def test_a_region_without_a_block_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no block named 'nope'"):
        gendocs.splice("<!-- generated: nope -->\n```\nx\n```\n<!-- /generated -->\n", {}, "x.md")


def test_every_output_block_in_the_docs_is_generated() -> None:
    """A fenced block that shows carrytool's output (a `$ carrytool` line, an upstream/plan line, a report's
    JSON with SHAs) must be inside a generated region: hand-written output is how docs went stale."""
    output_like = re.compile(r"^\$ carrytool |^upstream main at |^story of |\"sha\": \"[0-9a-f]{40}\"|"
                             r"^carrytool: error: ", re.M)
    for doc in gendocs.DOCS:
        text = gendocs.REGION.sub("", (ROOT / doc).read_text())
        for block in re.findall(r"^(`{3,})\S*\n(.*?)^\1$", text, flags=re.M | re.S):
            assert not output_like.search(block[1]), f"{doc}: output outside a generated region:\n{block[1][:300]}"


def test_every_schema_file_the_docs_name_exists() -> None:
    for doc in (*gendocs.DOCS, "bench/README.md"):
        for path in re.findall(r"[\w./-]*schemas/[\w.-]+\.json", (ROOT / doc).read_text()):
            if path.startswith("../"):
                path = path[3:]
            assert (ROOT / path).is_file() and path.startswith("carrytool/schemas/"), f"{doc}: {path}"
