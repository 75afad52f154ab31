"""The result so far's conflict regions read from the chained merge (compose_conflicts._meeting) name the
same conflicts as a content merge of the same three blobs, whatever the file's line ends, a last line without
its newline, lines that look like conflict markers, or a structured merge asked first (h229's probes of
9411716, which its author could not make differ). CI runs this file on git 2.39 and on a current git."""

from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_naming_reads import _both_ways

NINE = "".join(f"v{i} = {i}\n" for i in range(1, 10))


def _text(style: str, **lines: str) -> dict[str, str]:
    text = NINE
    for name, value in lines.items():
        text = text.replace(f"{name} = {name[1:]}\n", f"{name} = {value}\n")
    if style == "markers":      # lines in the file itself that look like a conflict's markers
        text = text.replace("v5 = 5\n", "s = '''\n<<<<<<< HEAD\n=======\n>>>>>>> x\n'''\n")
    elif style == "crlf":
        text = text.replace("\n", "\r\n")
    elif style == "no-eol":
        text = text.rstrip("\n")
    elif style == "mixed":      # one CRLF line among LF ones
        text = text.replace("v2 = ", "\r\nv2 = ")
    return {"n.py": text}


@pytest.mark.parametrize("style", ["lf", "crlf", "markers", "no-eol", "mixed"])
@pytest.mark.parametrize("structured", [False, True])
def test_regions_read_from_the_chained_merge_name_what_merging_again_names(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch, style: str, structured: bool) -> None:
    """pr/3 and pr/2 conflict with upstream alone at v1; pr/1 and pr/4 edit the lines after it: the result so
    far is weighed for each, its regions read from the chained merge; the report is merging again's."""
    up = small.up
    base = up.commit(_text(style), "nine", parent="main", ref="refs/heads/main")
    up.commit(_text(style, v1="'upstream'"), "upstream", parent=base, ref="refs/heads/main")
    small.pr(5, _text(style, v8="'five'"), parent=base)
    small.pr(1, _text(style, v2="'one'"), parent=base)
    small.pr(4, _text(style, v3="'four'"), parent=base)
    small.pr(3, _text(style, v1="'three'"), parent=base)
    small.pr(2, _text(style, v1="'two'", v2="'two'"), parent=base)
    policy: dict = {"on_conflict": "skip"}
    if structured:
        policy["structured_merge"] = {"paths": ["**/*.py"]}
    small.manifest([{"pr": n} for n in (5, 1, 4, 3, 2)], policy=policy)
    read, with_reading, merged_again = _both_ways(cli, small, monkeypatch)
    conflicts = {e["id"]: e.get("conflicts") for e in read["entries"]}
    assert [{k: c[k] for k in ("file", "with", "upstream")} for c in conflicts["pr/3"]] == \
        [{"file": "n.py", "with": [], "upstream": True}]
    assert with_reading < merged_again
