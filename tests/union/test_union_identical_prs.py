"""A union of two PRs making one change and a third conflicting with them, settled at the stop for the third's side
(h249; h245's trial on huggingface/trl: #6283 and #6284 share one head, #6286 rewrites the same lines).

`union continue` said `the union lacks lines 12-25 of pr/1's hunk ... no other PR it folds changes those lines`, and
the same of pr/3's, though pr/2 does, and sync repeated it as provided-absent: the duplicates' shared change was
read as lying outside every conflict. Judged as one PR, what a union of pr/1 and pr/2 alone is told stands: the
insertion pr/2 changes the lines next to, dropped where both could be kept, and nothing of the replacement."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.gitrepo import init_repo

BASE = """\
def loop(fields, idxs, pct):
    if fields:
        out = {}
        for k, v in fields.items():
            sel = [v[i] for i in idxs]
            # pad per-token fields
            if isinstance(sel[0], list):
                sel = [
                    s + [0] * (len(p) - len(s))
                    for s, p in zip(sel, pct)
                ]
            out[k] = sel
    else:
        out = {}
    return out
"""
# pr/1 (and pr/3, the same head): counts rows (an insertion), then picks them (a replacement of the loop's body)
ROWS = BASE.replace("""        out = {}
        for k, v in fields.items():
            sel = [v[i] for i in idxs]
            # pad per-token fields
            if isinstance(sel[0], list):
                sel = [
                    s + [0] * (len(p) - len(s))
                    for s, p in zip(sel, pct)
                ]
""", """        out = {}

        # count rows per sample
        rows = fields.get("rows")
        per = None
        if rows is not None:
            per = [r * 2 for r in rows]

        for k, v in fields.items():
            if k == "rows" and per is not None:
                picked = []
                for i, r in enumerate(per):
                    if i in idxs:
                        picked.append(v[i])
                sel = picked
            else:
                sel = [v[i] for i in idxs]
                # pad per-token fields
                if isinstance(sel[0], list):
                    sel = [
                        s + [0] * (len(p) - len(s))
                        for s, p in zip(sel, pct)
                    ]
""")
# pr/2: splits the fields first and keeps tuples
SPLIT = "from f import split_fields, join_fields\n\n\n" + BASE.replace("""        out = {}
        for k, v in fields.items():
            sel = [v[i] for i in idxs]
            # pad per-token fields
            if isinstance(sel[0], list):""", """        split = split_fields(fields)
        out = {}
        for k, v in split.items():
            sel = [v[i] for i in idxs]
            if isinstance(v, tuple):
                sel = tuple(sel)
            # pad per-token fields
            elif isinstance(sel[0], list):""").replace("""            out[k] = sel
    else:""", """            out[k] = sel
        out = join_fields(out)
    else:""")

MANIFEST = """\
version: 1
upstream: {url: ../up, branch: main}
fork: {branch: dev}
entries:
  - pr: 1
  - pr: 2
  - pr: 3
  - carry: u
    patch: unions/u.patch
    supersedes: [%s]
"""


def _fold(root: Path, order: list[int], cli: Cli) -> tuple[str, list[str]]:
    """The union of ORDER folded, every stop settled for pr/2's side (its file whole): what continue says, and
    the args."""
    up = init_repo(root / "up")
    base = up.commit({"m.py": BASE}, "base", ref="refs/heads/main")
    for number, text in ((1, ROWS), (2, SPLIT), (3, ROWS)):
        up.commit({"m.py": text}, "rows" if text is ROWS else "split", parent=base, ref=f"refs/pull/{number}/head")
    work = init_repo(root / "work", bare=True).path
    manifest = root / "carries" / "manifest.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(MANIFEST % ", ".join(map(str, order)))
    args = ["-m", str(manifest), "--repo", str(work)]
    result = cli("union", "compose", "u", *args)
    said = ""
    for _stop in range(3):
        if result.exit_code != 3:
            break
        (work / "carrytool" / "union" / "u" / "tree" / "m.py").write_text(SPLIT)
        result = cli("union", "continue", "u", *args)
        said += result.stdout + result.stderr
    assert result.exit_code == 0, said
    return said, args


@pytest.mark.parametrize("order", [[1, 3, 2], [2, 1, 3], [1, 2, 3]])
def test_two_identical_prs_dropped_for_a_third_prs_side_are_told_as_one(cli: Cli, tmp_path: Path,
                                                                       order: list[int]) -> None:
    said, args = _fold(tmp_path, order, cli)
    warned = sorted(line for line in said.splitlines() if line.startswith("warning:"))
    # as for pr/1 and pr/2 alone: the rows count both could have kept, dropped; no more
    assert len(warned) == 2, said
    for pr, line in zip(("pr/1", "pr/3"), warned):
        assert line.startswith(f"warning: the union lacks {pr}'s hunk m.py:4-10 (loop), in no region it reconciled "
                               "(another PR it folds changes the lines next to it, and both could be kept"), said
    code, report = cli.json("sync", "--dry-run", *args)
    absent = sorted((w["entry"], w["lines"]) for w in report["warnings"] if w["kind"] == "provided-absent")
    assert code == 0 and absent == [("pr/1", [4, 10]), ("pr/3", [4, 10])], report["warnings"]
