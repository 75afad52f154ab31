"""Regenerate every block of command output in README.md and docs/*.md from the demo scenario.

A generated block sits between two markers in the Markdown:

    <!-- generated: NAME -->
    ```
    $ carrytool explain ...        (the command, as run in the demo directory)
    ...its output...
    ```
    <!-- /generated -->

NAME is a key of BLOCKS below, which says what to run and how to abridge it. `make docs` (this module)
builds the demo (`carrytool demo --keep DIR`: fixed identities and dates, so the same SHAs on every
machine), runs every block's command there and rewrites the regions; `--check` writes nothing, prints
the diff and exits 1 when a committed block differs (tests/test_docs_generated.py runs the same check).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHOWN_ROOT = "/tmp/demo"          # the demo directory as the docs name it (`carrytool demo --keep /tmp/demo`)
REGION = re.compile(r"^<!-- generated: ([\w-]+) -->\n(.*?)^<!-- /generated -->$", re.M | re.S)


def keep_all(text: str) -> str:
    return text


def head(lines: int) -> Callable[[str], str]:
    """The first LINES lines, then `...` when anything was cut."""
    def cut(text: str) -> str:
        kept = text.splitlines()
        return "\n".join(kept[:lines] + (["..."] if len(kept) > lines else [])) + "\n"
    return cut


def json_first_items(text: str) -> str:
    """Every list cut to its first item (the rest counted), printed one key per line at the top level."""
    def trim(value: object) -> object:
        if isinstance(value, list):
            return [trim(v) for v in value[:1]] + ([f"... {len(value) - 1} more"] if len(value) > 1 else [])
        if isinstance(value, dict):
            return {k: trim(v) for k, v in value.items()}
        return value
    return dumps_top_level(trim(json.loads(text)))


def json_changed_entries(text: str) -> str:
    """A diff report with its `unchanged` entries left out."""
    doc = json.loads(text)
    doc["entries"] = [e for e in doc["entries"] if e["change"] != "unchanged"]
    return dumps_top_level(doc)


def dumps_top_level(doc: dict) -> str:
    """One line per top-level key (and per item of a top-level list): short, and diffable line by line."""
    out = []
    for key, value in doc.items():
        if isinstance(value, list) and value:
            items = [json.dumps(v) for v in value]
            out.append(f' "{key}": [\n  ' + ",\n  ".join(items) + "]")
        else:
            out.append(f' "{key}": {json.dumps(value)}')
    return "{" + ",\n".join(out)[1:] + "}\n"


@dataclass(frozen=True)
class Block:
    """What one generated region shows: ARGV run in the demo directory, its output through ABRIDGE."""

    argv: tuple[str, ...]
    abridge: Callable[[str], str] = keep_all
    exit_code: int = 0
    lang: str = ""
    stream: str = "stdout"


DEMO = ("-m", "carries/manifest.yaml", "--repo", "work.git")
BLOCKS: dict[str, Block] = {
    "explain-text": Block(("carrytool", "explain", *DEMO, "--offline")),
    "explain-story": Block(("carrytool", "explain", "pr/45612", *DEMO, "--offline")),
    "explain-markdown": Block(("carrytool", "explain", *DEMO, "--offline", "--format", "markdown"),
                              abridge=head(45), lang="markdown"),
    "explain-commit-message": Block(("carrytool", "explain", "carry/wake-path-union", *DEMO, "--offline",
                                     "--format", "commit-message")),
    "diff-text": Block(("carrytool", "diff", "last-night.lock", "carries/manifest.yaml.lock", "--repo", "work.git")),
    "diff-json": Block(("carrytool", "diff", "last-night.lock", "carries/manifest.yaml.lock", "--repo", "work.git",
                        "--format", "json"), abridge=json_changed_entries, lang="json"),
    "diff-missing": Block(("carrytool", "diff", "carries/manifest.yaml.lock", "other-machine.lock", "--repo",
                           "work.git")),
    "verify-mutants-json": Block(("carrytool", "verify", "--mutants", *DEMO, "--rev", "intarweb-dev", "--format",
                                  "json"), abridge=json_first_items, lang="json"),
}
DOCS = ("README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))))


def clean_env() -> dict[str, str]:
    """The caller's environment without anything that could change carrytool's output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CARRYTOOL_", "GITHUB_", "FORCE_COLOR"))}
    env.update(NO_COLOR="1", COLUMNS="120", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", TZ="UTC")
    return env


def carrytool(argv: tuple[str, ...] | list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run `carrytool ARGV[1:]` with this interpreter, in CWD."""
    return subprocess.run([sys.executable, "-m", "carrytool", *argv[1:]], cwd=cwd, env=clean_env(),
                          capture_output=True, text=True)


def build_demo(root: Path) -> None:
    """`carrytool demo --keep ROOT`, and the files the blocks read besides it."""
    proc = carrytool(("carrytool", "demo", "--keep", str(root)), ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"carrytool demo failed ({proc.returncode}):\n{proc.stderr}")
    # a lock from another machine: pr/45554's head there is an object this repository never fetched
    lock = json.loads((root / "carries" / "manifest.yaml.lock").read_text())
    for entry in lock["entries"]:
        if entry["id"] == "pr/45554":
            entry["head"] = "1" * 40
    (root / "other-machine.lock").write_text(json.dumps(lock, indent=2) + "\n")


def run_block(name: str, root: Path) -> str:
    """The region body of block NAME: the fenced command and its (abridged) output."""
    block = BLOCKS[name]
    proc = carrytool(block.argv, root)
    if proc.returncode != block.exit_code:
        raise SystemExit(f"{name}: `{shlex.join(block.argv)}` exited {proc.returncode}, "
                         f"not {block.exit_code}:\n{proc.stderr}")
    output = getattr(proc, block.stream).replace(str(root), SHOWN_ROOT)
    output = block.abridge(output)
    fence = "````" if "```" in output else "```"
    return f"{fence}{block.lang}\n$ {shlex.join(block.argv)}\n{output}{fence}\n"


def generate_all(root: Path) -> dict[str, str]:
    build_demo(root)
    return {name: run_block(name, root) for name in BLOCKS}


def splice(text: str, generated: dict[str, str], where: str) -> str:
    """TEXT with every generated region's body replaced by GENERATED[name]."""
    def replace(match: re.Match) -> str:
        name = match[1]
        if name not in generated:
            raise SystemExit(f"{where}: no block named {name!r} in tools/gendocs.py BLOCKS")
        return f"<!-- generated: {name} -->\n{generated[name]}<!-- /generated -->"
    return REGION.sub(replace, text)


def regions(text: str) -> list[str]:
    return [m[1] for m in REGION.finditer(text)]


def stale_docs(generated: dict[str, str], root: Path = ROOT) -> dict[str, str]:
    """{doc: unified diff} for every doc whose regions differ from GENERATED."""
    out = {}
    for doc in DOCS:
        text = (root / doc).read_text()
        new = splice(text, generated, doc)
        if new != text:
            out[doc] = "".join(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                    f"{doc} (committed)", f"{doc} (generated now)"))
    return out


def unused_blocks(root: Path = ROOT) -> set[str]:
    used = {name for doc in DOCS for name in regions((root / doc).read_text())}
    return set(BLOCKS) - used


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gendocs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 with the diff when stale")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="carrytool-docs-") as tmp:
        generated = generate_all(Path(tmp) / "demo")
    stale = stale_docs(generated)
    unused = unused_blocks()
    if unused:
        print(f"blocks no doc shows: {sorted(unused)}", file=sys.stderr)
    if args.check:
        for diff in stale.values():
            sys.stdout.write(diff)
        if stale:
            print("generated docs are stale: run make docs", file=sys.stderr)
        return 1 if stale or unused else 0
    for doc in stale:
        path = ROOT / doc
        path.write_text(splice(path.read_text(), generated, doc))
        print(f"wrote {doc}")
    return 1 if unused else 0


if __name__ == "__main__":
    sys.exit(main())
