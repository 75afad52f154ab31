"""Manifest v1: what loads, and every input error naming its key path and line (exit 2)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from carrytool.errors import ManifestError
from carrytool.manifest.load import load_manifest, manifest_path

GOOD = """\
version: 1
upstream:
  url: https://github.com/vllm-project/vllm.git
  branch: main
fork:
  url: git@github.com:example/vllm.git
  branch: intarweb-dev
identity: {name: nightly, email: nightly@example.com}
policy:
  on_conflict: skip
  precompiled:
    paths: ["csrc/**", "**/*.cu"]
entries:
  - pr: 45552
    title: "cumem: synchronize at wake exit"
    head: 1a2b3c4
  - pr: 45398
    on_conflict: theirs
  - pr: 45612
    enabled: false
  - carry: wake-path-union
    commit: 0123456789abcdef0123456789abcdef01234567
    supersedes:
      - 45398
      - {pr: 45610, head: f24612b}
      - {pr: 45612, paths: [vllm/v1/worker/gpu_worker.py]}
    owns: [vllm/v1/worker/gpu_worker.py]
    excludes: [vllm/device_allocator/cumem.py]
asserts:
  - name: resume-once
    file: vllm/v1/worker/gpu_worker.py
    in: Worker.wake_up
    calls: backend.resume
    times: 1
    why: "#45612 handshake must gate backend.resume"
    entry: carry/wake-path-union
  - file: csrc/x.cu
    matches: "cuMem(Map|Create)"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "manifest.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_good_manifest_loads_with_defaults(tmp_path: Path) -> None:
    m = load_manifest(write(tmp_path, GOOD))
    assert m.upstream.pr_ref == "refs/pull/{number}/head"
    assert m.upstream.pr_ref_for(7) == "refs/pull/7/head"
    assert m.identity.name == "nightly"
    assert m.policy.on_conflict == "skip" and m.policy.precompiled == ("csrc/**", "**/*.cu")
    assert [e.id for e in m.entries] == ["pr/45552", "pr/45398", "pr/45612", "carry/wake-path-union"]
    union = m.entries[3]
    assert [s.pr for s in union.supersedes] == [45398, 45610, 45612]
    assert union.supersedes[1].head == "f24612b" and union.supersedes[2].paths == ("vllm/v1/worker/gpu_worker.py",)
    assert m.entries[0].head == "1a2b3c4"
    assert m.on_conflict(m.entries[1]) == "theirs" and m.on_conflict(m.entries[0]) == "skip"
    assert not m.entries[2].enabled
    assert m.asserts[0].name == "resume-once" and m.asserts[0].times == 1 and m.asserts[0].scope == "Worker.wake_up"
    assert m.asserts[1].name == "matches cuMem(Map|Create) in csrc/x.cu"
    assert m.find_entry("45552").id == "pr/45552" and m.find_entry("wake-path-union").id == "carry/wake-path-union"


def test_an_asserts_entry_may_be_a_bare_pr_number(tmp_path: Path) -> None:
    """helper-91: `entry: 45398` (a YAML integer) was refused, "must be a string, got '45398'", though the
    docs say a bare number is taken."""
    m = load_manifest(write(tmp_path, GOOD.replace("    entry: carry/wake-path-union", "    entry: 45398")))
    assert m.asserts[0].entry == "pr/45398"
    # written with a leading zero, YAML 1.1 reads octal: the digits as written decide (helper-93)
    m = load_manifest(write(tmp_path, GOOD.replace("    entry: carry/wake-path-union", "    entry: 045398")))
    assert m.asserts[0].entry == "pr/45398"
    with pytest.raises(ManifestError, match="no entry pr/9999"):     # helper-94: int() of 5,000 digits crashed
        load_manifest(write(tmp_path, GOOD.replace("    entry: carry/wake-path-union", f"    entry: '{'9' * 5000}'")))


def test_numeric_looking_shas_stay_text(tmp_path: Path) -> None:
    m = load_manifest(write(tmp_path, GOOD.replace("head: 1a2b3c4", "head: 1234567")))
    assert m.entries[0].head == "1234567"


def test_manifest_path_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARRYTOOL_MANIFEST", "env.yaml")
    assert manifest_path(None) == Path("env.yaml")
    assert manifest_path("opt.yaml") == Path("opt.yaml")
    monkeypatch.delenv("CARRYTOOL_MANIFEST")
    assert manifest_path(None) == Path("carries/manifest.yaml")


BAD = [
    # (replace old, with new, expected words in the message, line)
    ("  branch: intarweb-dev", "  branch: intarweb-dev\n  brnach: x", ["fork.brnach", "unknown key 'brnach'", "did you mean 'branch'"], 8),
    ("    title: \"cumem: synchronize at wake exit\"", "    titel: x", ["entries[0].titel", "did you mean 'title'"], 15),
    ("  - pr: 45398\n", "  - pr: 45552\n", ["duplicate entry pr/45552", "first at line 14"], 17),
    ("  - pr: 45398\n", "  - pr: abc\n", ["entries[1].pr", "must be an integer", "'abc'"], 17),
    ("  - pr: 45398\n", "  - pr: true\n", ["entries[1].pr", "must be an integer"], 17),
    ("  branch: intarweb-dev", "  branch: -delete", ["fork.branch", "starts with '-'"], 7),
    ("  branch: intarweb-dev", "  branch: a..b", ["fork.branch", "'..'"], 7),
    ("  branch: main", "  branch: 'main lock'", ["upstream.branch", "space"], 4),
    ("    owns: [vllm/v1/worker/gpu_worker.py]", "    owns: [../etc/passwd]", ["entries[3].owns[0]", "leaves the tree"], 27),
    ("    owns: [vllm/v1/worker/gpu_worker.py]", "    owns: [/etc/passwd]", ["entries[3].owns[0]", "absolute"], 27),
    ("  branch: main\n", "  branch: main\n  pr_ref: refs/pull/head\n", ["upstream.pr_ref", "{number}"], 5),
    ("    matches: \"cuMem(Map|Create)\"", "    matches: \"cuMem(Map\"", ["asserts[1].matches", "invalid regular expression"], 38),
    ("    calls: backend.resume\n", "", ["asserts[0]", "exactly one check key", "found none"], 30),
    ("    calls: backend.resume\n", "    calls: backend.resume\n    not_calls: x\n", ["asserts[0]", "found calls, not_calls"], 30),
    ("    times: 1\n", "    times: -1\n", ["asserts[0].times", "negative"], 34),
    ("    times: 1\n", "    times: 1\n    min: 1\n", ["asserts[0].times", "either"], 34),
    ("  - file: csrc/x.cu\n", "  - file: csrc/x.cu\n    times: 2\n", ["asserts[1].times", "only goes with 'calls'"], 38),
    ("  - file: csrc/x.cu\n", "  - file: csrc/x.cu\n    min: 1\n", ["asserts[1].min", "only goes with 'calls'"], 38),
    ("  - file: csrc/x.cu\n", "  - file: csrc/x.cu\n    max: 1\n", ["asserts[1].max", "only goes with 'calls'"], 38),
    ("    entry: carry/wake-path-union", "    entry: pr/1", ["asserts[0].entry", "no entry pr/1"], 36),
    ("    entry: carry/wake-path-union", "    entry: 1", ["asserts[0].entry", "no entry pr/1"], 36),
    ("    entry: carry/wake-path-union", "    entry: true", ["asserts[0].entry", "must be an entry"], 36),
    ("    entry: carry/wake-path-union", "    entry: 0xB1F6", ["asserts[0].entry", "decimal digits", "0xB1F6"], 36),
    ("    entry: carry/wake-path-union", "    entry: 1:30", ["asserts[0].entry", "decimal digits"], 36),
    ("version: 1", "version: 2", ["unsupported version 2"], 1),
    ("  url: https://github.com/vllm-project/vllm.git", "  url: ext::sh -c touch% /tmp/pwned", ["upstream.url", "ext::"], 3),
    ("  url: https://github.com/vllm-project/vllm.git", "  url: --upload-pack=touch /tmp/x", ["upstream.url", "starts with '-'"], 3),
    ("    commit: 0123456789abcdef0123456789abcdef01234567", "    commit: main", ["entries[3].commit", "7 to 40 hex"], 22),
    ("    commit: 0123456789abcdef0123456789abcdef01234567\n", "", ["carry/wake-path-union needs exactly one of 'commit' or 'patch'"], 21),
    ("      - {pr: 45610, head: f24612b}", "      - {pr: 45398, head: f24612b}", ["supersedes[1]", "pr/45398 is listed twice"], 25),
    ("      - 45398\n", "      - fortyfive\n", ["supersedes[0]", "must be a PR number"], 24),
    ("  on_conflict: skip", "  on_conflict: theirs", ["policy.on_conflict", "fail, skip"], 10),
    ("identity: {name: nightly, email: nightly@example.com}", "identity: {name: 'a <b>', email: x}", ["identity.name"], 8),
    ("    excludes: [vllm/device_allocator/cumem.py]", "    excludes: [vllm/v1/worker]", ["both owns and excludes"], 28),
    ("  - pr: 45398\n", "  - pr: 45398\n    patch: x.patch\n", ["entries[1].patch", "belongs to a carry"], 18),
    ("    in: Worker.wake_up", "    in: Worker wake_up", ["asserts[0].in", "not a dotted Python name"], 32),
    # helper-115: these passed `check` and failed only at verify (exit 1)
    ("    matches: \"cuMem(Map|Create)\"", "    matches: \"\"", ["asserts[1].matches", "must not be empty"], 38),
    ("    matches: \"cuMem(Map|Create)\"", "    matches: \"(cuMem)?\"", ["asserts[1].matches", "matches the empty text",
                                                                          "holds on every file"], 38),
    ("    calls: backend.resume\n    times: 1\n", "    order: [a, b, a]\n",
     ["asserts[0].order", "lists a twice", "can never hold"], 33),
    ("    owns: [vllm/v1/worker/gpu_worker.py]", "    owns: vllm/v1/worker/gpu_worker.py", ["entries[3].owns", "must be a list"], 27),
    ("    times: 1\n", "    times: 1\n    paths: sometimes\n", ["asserts[0].paths", "all, returning", "'sometimes'"], 35),
    ("    times: 1\n", "    paths: returning\n", ["asserts[0].paths", "needs 'times', 'min' or 'max'"], 34),
    ("  - file: csrc/x.cu\n", "  - file: csrc/x.cu\n    paths: all\n", ["asserts[1].paths", "only goes with 'calls'"], 38),
    ("    times: 1\n", "    times: 1\n    through: remote\n", ["asserts[0].through", "must be one of local"], 35),
    ("    times: 1\n", "    times: 1\n    args: {op: 'Reduce Op'}\n", ["asserts[0].args.op", "a keyword, or a position"], 35),
    ("    times: 1\n", "    times: 1\n    args: {}\n", ["asserts[0].args", "at least one argument"], 35),
    ("    times: 1\n", "    times: 1\n    args: {n: 3}\n", ["asserts[0].args.n", "got 3", "true, false or null"], 35),
    ("    times: 1\n", "    times: 1\n    args: [op]\n", ["asserts[0].args", "must be a mapping"], 35),
    ("    times: 1\n", "    times: 1\n    after: [a b]\n", ["asserts[0].after", "call targets"], 35),
    ("    times: 1\n", "    times: 1\n    in_try: yes please\n", ["asserts[0].in_try", "true or false"], 35),
    ("    calls: backend.resume\n", "    calls: '*.'\n", ["asserts[0].calls", "not a call target"], 33),
    ("  - file: csrc/x.cu\n", "  - file: csrc/x.cu\n    through: local\n", ["asserts[1].through", "only goes with 'calls'"], 38),
    ("  - file: csrc/x.cu\n", "  - file: csrc/x.cu\n    in_try: true\n", ["asserts[1].in_try", "only goes with 'calls'"], 38),
]


def test_new_call_keys_load(tmp_path: Path) -> None:
    text = GOOD.replace("    calls: backend.resume\n    times: 1\n",
                        "    calls: '*.resume'\n    times: 1\n    through: local\n    args: {'0': tags, op: ReduceOp.MIN}\n"
                        "    after: [create_and_map]\n    in_try: true\n")
    spec = load_manifest(write(tmp_path, text)).asserts[0]
    assert (spec.target, spec.through, spec.args, spec.after, spec.in_try) == \
        ("*.resume", "local", (("0", "tags"), ("op", "ReduceOp.MIN")), ("create_and_map",), True)
    plain = load_manifest(write(tmp_path, GOOD)).asserts[0]
    assert (plain.through, plain.args, plain.after, plain.in_try) == (None, None, None, None)


def test_a_python_check_on_a_file_that_is_not_python_is_refused(tmp_path: Path) -> None:
    """h258 (pola-rs/polars): `defines:` (or `calls:`, or `in:` with a text check) on a Rust file passed
    `check`, and `verify` failed the assert every night with "syntax error ... if the project needs a newer
    Python, run carrytool with it". Those read Python's syntax tree: `check` refuses them on a file with
    another suffix and names the text checks; a .py or .pyi file, or a script without a suffix, takes them."""
    text_check = '    matches: "cuMem(Map|Create)"\n'
    for new, key, line in (("    defines: cuMemMap\n", "defines", 38), ("    calls: cuMemMap\n", "calls", 38),
                           ("    in: fmt\n    contains: cuMem\n", "in", 38)):
        path = write(tmp_path, GOOD.replace(text_check, new, 1))
        with pytest.raises(ManifestError) as info:
            load_manifest(path)
        assert info.value.exit_code == 2 and info.value.where == f"{path}:{line}", (key, info.value.where)
        assert f"asserts[1].{key}" in str(info.value) and "csrc/x.cu is not a Python file" in str(info.value), \
            str(info.value)
        assert "contains, absent or matches" in (info.value.hint or ""), info.value.hint
    for file in ("bin/tool", "stubs/m.pyi", "M.PY"):
        load_manifest(write(tmp_path, GOOD.replace("  - file: csrc/x.cu\n" + text_check,
                                                   f"  - file: {file}\n    in: f\n    defines: g\n", 1)))


@pytest.mark.parametrize("old,new,words,line", BAD, ids=[b[2][0] for b in BAD])
def test_input_errors_name_key_and_line(tmp_path: Path, old: str, new: str, words: list[str], line: int) -> None:
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    text = str(info.value)
    assert info.value.exit_code == 2
    for word in words:
        assert word in text
    assert info.value.where == f"{path}:{line}"


@pytest.mark.parametrize("text,words", [
    ("version: 1\nupstream: !!python/object/apply:os.system ['touch /tmp/x']\n", ["tag", "not allowed"]),
    ("version: 1\nupstream: {url: x}\nupstream: {url: y}\nfork: {branch: b}\n", ["duplicate key 'upstream'"]),
    ("version: 1\nupstream: {url: x\n", ["not valid YAML"]),
    ("", ["empty"]),
    ("- a\n- b\n", ["must be a mapping"]),
    ("version: 1\nfork: {branch: b}\n", ["upstream: is required"]),
    ("a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
     "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
     ["too many values"]),
    ("version: 1\n<<: {a: 1}\n", ["merge keys"]),
    ("version: 1\n1: x\n", ["a key must be a string"]),
])
def test_hostile_or_broken_yaml(tmp_path: Path, text: str, words: list[str]) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifest(write(tmp_path, text))
    for word in words:
        assert word in str(info.value)


def test_missing_manifest_says_how_to_point_at_one(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path / "nope.yaml")
    assert "no manifest at" in str(info.value) and "-m FILE" in str(info.value)


def test_two_unions_cannot_supersede_the_same_pr(tmp_path: Path) -> None:
    text = GOOD.replace("asserts:", """\
  - carry: other
    commit: abcdef0
    supersedes: [45398]
asserts:""", 1)
    with pytest.raises(ManifestError) as info:
        load_manifest(write(tmp_path, text))
    assert "pr/45398 is superseded by both carry/wake-path-union" in str(info.value)


def test_two_unions_may_split_one_pr_by_paths(tmp_path: Path) -> None:
    text = GOOD.replace("asserts:", """\
  - carry: other
    commit: abcdef0
    supersedes: [{pr: 45612, paths: [vllm/device_allocator/cumem.py]}]
asserts:""", 1)
    assert load_manifest(write(tmp_path, text)).entries[-1].supersedes[0].paths == ("vllm/device_allocator/cumem.py",)


def test_call_targets_may_name_calls_in_the_chain(tmp_path: Path) -> None:
    text = GOOD.replace("    calls: backend.resume\n", "    calls: get_pp_group().all_reduce\n")
    assert load_manifest(write(tmp_path, text)).asserts[0].target == "get_pp_group().all_reduce"
    with pytest.raises(ManifestError) as info:
        load_manifest(write(tmp_path, GOOD.replace("    calls: backend.resume\n", "    calls: a(x).b\n")))
    assert "not a call target" in str(info.value)


def test_duplicate_derived_assert_names_are_numbered(tmp_path: Path) -> None:
    text = GOOD + "  - file: csrc/x.cu\n    matches: \"cuMem(Map|Create)\"\n"
    m = load_manifest(write(tmp_path, text))
    assert [a.name for a in m.asserts][1:] == ["matches cuMem(Map|Create) in csrc/x.cu", "matches cuMem(Map|Create) in csrc/x.cu#2"]


def test_paths_returning_reaches_the_assert(tmp_path: Path) -> None:
    m = load_manifest(write(tmp_path, GOOD.replace("    times: 1\n", "    times: 1\n    paths: returning\n")))
    assert m.asserts[0].paths == "returning"
    assert load_manifest(write(tmp_path, GOOD)).asserts[0].paths == "all"


def test_an_unnamed_assert_is_named_by_its_check_target_and_scope(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(GOOD.replace("  - name: resume-once\n    file:", "  - file:"))
    m = load_manifest(path)
    assert m.asserts[0].name == "calls backend.resume in Worker.wake_up"


def test_a_pr_id_with_leading_zeros_names_the_pr(tmp_path: Path) -> None:
    """An older note: `entry: pr/045398` was "no entry pr/045398", though `entry: 045398` named pr/45398; and
    `explain pr/045398` found nothing."""
    m = load_manifest(write(tmp_path, GOOD.replace("    entry: carry/wake-path-union", "    entry: pr/045398")))
    assert m.asserts[0].entry == "pr/45398"
    assert m.find_entry("pr/045398").id == m.find_entry("045398").id == "pr/45398"
    assert m.find_entry("pr/0") is None and m.find_entry("carry/wake-path-union").id == "carry/wake-path-union"


@pytest.mark.parametrize("key, value", [
    ("in", "Café.résumé"), ("mentions", "réveil"), ("defines", "Café.résumé"), ("calls", "backend.réveil"),
    ("calls", "'*.réveil'"), ("not_calls", "obtenir().réveil"), ("order", "[réveil, Café.résumé]"),
    ("reads", "ΔT"), ("guarded_by", "été"), ("after", "[réveil]"), ("args", "{mode: Mode.RAPIDE_É}"),
])
def test_unicode_identifiers_are_names(tmp_path: Path, key: str, value: str) -> None:
    # helper-115: `in: "Café.résumé"` was "not a dotted Python name"; Python accepts it (str.isidentifier)
    check = "" if key in ("mentions", "defines", "calls", "not_calls", "order", "reads") else "    calls: g\n"
    text = GOOD.replace("    calls: backend.resume\n    times: 1\n", f"{check}    {key}: {value}\n")
    if key == "in":
        text = text.replace("    in: Worker.wake_up\n", "")
    spec = load_manifest(write(tmp_path, text)).asserts[0]
    assert spec.file == "vllm/v1/worker/gpu_worker.py"


@pytest.mark.parametrize("key, value", [
    ("mentions", "réveil.2x"), ("calls", "backend.ré veil"), ("in", "Café..résumé"), ("args", "{mode: 'a-b'}"),
])
def test_what_python_does_not_take_for_a_name_is_still_refused(tmp_path: Path, key: str, value: str) -> None:
    check = "" if key in ("mentions", "calls") else "    calls: g\n"
    text = GOOD.replace("    calls: backend.resume\n    times: 1\n", f"{check}    {key}: {value}\n")
    if key == "in":
        text = text.replace("    in: Worker.wake_up\n", "")
    with pytest.raises(ManifestError) as info:
        load_manifest(write(tmp_path, text))
    assert info.value.exit_code == 2 and f"asserts[0].{key}" in str(info.value)


def test_yaml_true_false_null_are_the_constants_in_args(tmp_path: Path) -> None:
    # helper-115: `args: {polar: True}` was refused though True/False/None compare as constants
    text = GOOD.replace("    times: 1\n", "    times: 1\n    args: {polar: True, strict: false, group: null, op: 'None'}\n")
    spec = load_manifest(write(tmp_path, text)).asserts[0]
    assert spec.args == (("polar", "True"), ("strict", "False"), ("group", "None"), ("op", "None"))
