"""The settled plan kept across runs (pipeline.keptplan): explain after a sync of the same inputs composes
nothing, and says exactly what composing again says. Differential: each explain below is compared with the
same explain whose kept plans are all ignored (KeptPlans.get answers nothing). The rest of the suite runs
with CARRYTOOL_CHECK_KEPT_PLANS=1 (conftest): every plan used there is composed again and compared.
CI runs this file on git 2.39 and on a current git."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from carrytool.gitlayer.objects import Change
from carrytool.pipeline.compose import Composer
from carrytool.pipeline.keptplan import KeptPlans, Unkept, decode, encode
from tests.conftest import Cli, Small
from tests.review.test_reduced_pairs import _corpus


@pytest.fixture(autouse=True)
def _plans_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """Here a kept plan is used as a user's run uses it: not composed again."""
    monkeypatch.delenv("CARRYTOOL_CHECK_KEPT_PLANS", raising=False)
    monkeypatch.setattr(KeptPlans, "check", False)


def _composing(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item per composition made from here on."""
    made: list[int] = []
    real = Composer.compose

    def spy(self, steps):  # noqa: ANN001, ANN202
        made.append(len(steps))
        return real(self, steps)

    monkeypatch.setattr(Composer, "compose", spy)
    return made


def _fresh(cli: Cli, monkeypatch: pytest.MonkeyPatch, *args: object) -> tuple[int, dict]:
    """ARGS run with every kept plan ignored: composed again."""
    with monkeypatch.context() as m:
        m.setattr(KeptPlans, "get", lambda self, key: None)
        return cli.json(*args)


def _plans(repo: Path) -> Path:
    found = sorted((repo / "carrytool" / "cache").glob("plans-git*.json"))
    assert len(found) == 1
    return found[0]


def _explain(small: Small) -> tuple[object, ...]:
    return ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")


def test_explain_after_sync_composes_nothing_and_says_what_composing_says(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    made = _composing(monkeypatch)
    code, synced = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and made and synced["result"]["sha"] == small.branch()
    statuses = {e["status"] for e in synced["entries"]}
    assert {"applied", "conflict"} <= statuses           # the corpus has conflicts and clean entries
    kept = json.loads(_plans(small.work.path).read_text())["plans"]
    assert len(kept) == 1
    made.clear()
    code, explained = cli.json(*_explain(small))
    assert made == []                                    # the plan came from the file
    fresh_code, fresh = _fresh(cli, monkeypatch, *_explain(small))
    assert made                                          # (composed again: the comparison means something)
    assert (code, explained) == (fresh_code, fresh)
    assert explained["result"]["sha"] == synced["result"]["sha"]
    made.clear()
    text = cli(*_explain(small)).stdout
    assert made == []
    with monkeypatch.context() as m:
        m.setattr(KeptPlans, "get", lambda self, key: None)
        assert cli(*_explain(small)).stdout == text
    made.clear()
    monkeypatch.setattr(Composer, "explicit_bases", False)   # another way of composing: its own key
    assert cli.json(*_explain(small)) == (code, explained)
    assert made


def test_the_demo_explained_from_its_kept_plan_is_the_demo_composed(cli: Cli, demo, monkeypatch) -> None:  # noqa: ANN001
    """The demo: unions that supersede PRs, a conflict, a structured resolution and the landing checks."""
    made = _composing(monkeypatch)
    cli.json("sync", "-m", demo.manifest, "--repo", demo.work)
    args = ("explain", "-m", demo.manifest, "--repo", demo.work, "--offline")
    made.clear()
    code, explained = cli.json(*args)
    assert made == []
    assert (code, explained) == _fresh(cli, monkeypatch, *args)
    for entry in ("pr/45612", "carry/offload-union"):     # stories read the settled steps too
        made.clear()
        story = cli(*args, entry).stdout
        assert made == []
        with monkeypatch.context() as m:
            m.setattr(KeptPlans, "get", lambda self, key: None)
            assert cli(*args, entry).stdout == story


def test_sync_keeps_a_plan_but_composes_every_time_and_a_dry_run_keeps_none(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    sync = ("sync", "-m", small.manifest_path, "--repo", small.work.path)
    cli.json(*sync, "--dry-run")
    assert not list((small.work.path / "carrytool" / "cache").glob("plans-git*.json"))
    made = _composing(monkeypatch)
    cli.json(*sync)
    cli.json(*sync)
    assert len(made) == 2                                # the nightly build is composed, whatever is kept
    code, verified = cli.json("verify", "-m", small.manifest_path, "--repo", small.work.path, "--rebuild")
    assert len(made) == 3


def test_a_moved_pr_is_composed_again(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    head = small.up.rev("refs/pull/3/head")
    small.up.commit({"pkg/m3.py": "moved on\n"}, "pr 3 moves on", parent=head, ref="refs/pull/3/head")
    made = _composing(monkeypatch)
    online = ("explain", "-m", small.manifest_path, "--repo", small.work.path)
    code, explained = cli.json(*online)                  # fetches the moved head: another plan
    assert made
    assert (code, explained) == _fresh(cli, monkeypatch, *online)
    pr3 = next(e for e in explained["entries"] if e["id"] == "pr/3")
    assert pr3["head"] != head


def _edit_plan(repo: Path, edit) -> None:  # noqa: ANN001
    path = _plans(repo)
    data = json.loads(path.read_text())
    (key, state), = data["plans"].items()
    data["plans"][key] = edit(state)
    path.write_text(json.dumps(data))


def _missing_result(state: dict) -> dict:
    state["result"] = "0" * 40
    return state


def _other_entry(state: dict) -> dict:
    state["steps"][0]["id"] = "pr/999"
    return state


def _not_encoded(state: dict) -> dict:
    state["trees"] = {"a": "b"}          # a plain object: `encode` never writes one
    return state


def _not_a_plan(state: dict) -> list:
    return ["garbage"]


@pytest.mark.parametrize("edit", [_missing_result, _other_entry, _not_encoded, _not_a_plan])
def test_a_plan_that_does_not_fit_is_composed_again(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch,
                                                    edit) -> None:  # noqa: ANN001
    """A plan naming an object the store lacks (pruned, or never there), one of other entries, one not as
    `encode` writes it, or no plan at all: composed again, as if nothing were kept."""
    _corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    _edit_plan(small.work.path, edit)
    made = _composing(monkeypatch)
    code, explained = cli.json(*_explain(small))
    assert made
    assert (code, explained) == _fresh(cli, monkeypatch, *_explain(small))


def test_what_the_plan_holds_is_what_explain_says_and_the_check_finds_a_difference(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is where a used plan comes from (a detail written there is the one explain prints); composed
    again under CARRYTOOL_CHECK_KEPT_PLANS=1, a plan that differs fails the run."""
    _corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)

    def reworded(state: dict) -> dict:
        state["steps"][1]["detail"] = "written in the kept plan"
        return state

    _edit_plan(small.work.path, reworded)
    code, explained = cli.json(*_explain(small))
    assert explained["entries"][1]["detail"] == "written in the kept plan"
    monkeypatch.setenv("CARRYTOOL_CHECK_KEPT_PLANS", "1")
    with pytest.raises(AssertionError, match="kept plan differs"):
        cli.json(*_explain(small))


def test_encode_gives_back_each_type_and_refuses_what_it_cannot_hold() -> None:
    change = Change("R", "new.py", "old.py", "100644", "100644", "a" * 40, "b" * 40)
    value = {"list": [1, 2.5, None, True, "s"], ("a", 1): (change, frozenset({"x", "y"})), 3: {("p", "f")},
             "empty": ((), [], set(), {})}
    again = decode(json.loads(json.dumps(encode(value))))
    assert again == value
    assert [type(v) for v in again] == [type(v) for v in value]
    assert type(again[("a", 1)][1]) is frozenset and type(again[3]) is set and type(again["empty"][0]) is tuple
    assert list(again) == list(value)                    # order kept
    assert encode({"b", "a", "c"}) == encode({"c", "a", "b"}) == {"s": ["a", "b", "c"]}

    class Named(tuple):
        pass

    for unkept in (object(), Named((1,)), Path("x"), b"bytes"):
        with pytest.raises(Unkept):
            encode([unkept])
    for bad in ({"x": []}, {"t": 1}, {"t": [], "s": []}, {"c": ["A"]}, {"s": [[1]]}, {"d": [[1]]}):
        with pytest.raises(Unkept):
            decode(bad)


def test_a_changed_manifest_is_composed_again(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a comment (the text is in the key: an entry's line, which messages name, moves with it)."""
    _corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    path = Path(small.manifest_path)
    path.write_text("# reviewed\n" + path.read_text())
    made = _composing(monkeypatch)
    code, explained = cli.json(*_explain(small))
    assert made
    assert (code, explained) == _fresh(cli, monkeypatch, *_explain(small))


def test_where_history_is_cut_is_in_the_key(tmp_path: Path) -> None:
    """A shallow clone's boundary (or grafts) decides merge bases: deepened, the plan is another one."""
    from carrytool.manifest.model import Fork, Manifest, Upstream
    from carrytool.pipeline.resolve import Resolved

    plans = KeptPlans(None, (2, 39, 5))
    manifest = Manifest(tmp_path / "m.yaml", Upstream("u", "main"), Fork("dev"), text="x")
    resolved = Resolved("a" * 40, {1: "b" * 40})
    keys = [plans.key(manifest, resolved, (True,), tmp_path)]
    (tmp_path / "shallow").write_text("c" * 40 + "\n")
    keys.append(plans.key(manifest, resolved, (True,), tmp_path))
    (tmp_path / "shallow").write_text("d" * 40 + "\n")
    keys.append(plans.key(manifest, resolved, (True,), tmp_path))
    (tmp_path / "shallow").unlink()
    (tmp_path / "info").mkdir()
    (tmp_path / "info" / "grafts").write_text("e" * 40 + "\n")
    keys.append(plans.key(manifest, resolved, (True,), tmp_path))
    keys.append(plans.key(manifest, resolved, (False,), tmp_path))
    keys.append(plans.key(manifest, Resolved("a" * 40, {1: "f" * 40}), (False,), tmp_path))
    assert len(set(keys)) == len(keys)
    (tmp_path / "info" / "grafts").unlink()
    assert plans.key(manifest, resolved, (True,), tmp_path) == keys[0]


def test_a_plan_another_python_composed_is_not_used(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """The structured rule and the landing checks parse with the running Python's grammar (h270: a plan kept by
    Python 3.12 applied a structurally resolved PR whose merged file 3.11 cannot parse)."""
    from types import SimpleNamespace

    from carrytool.pipeline import keptplan

    _corpus(small)
    with monkeypatch.context() as m:
        m.setattr(keptplan, "sys", SimpleNamespace(version_info=(3, 99, 0), implementation=SimpleNamespace(name="x")))
        cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    made = _composing(monkeypatch)
    cli.json(*_explain(small))
    assert made                                          # the other Python's plan: composed again
    made.clear()
    cli.json(*_explain(small))                           # (and this one's, kept by that explain, is used)
    assert made == []


def _fold_scenario(cli: Cli, small: Small) -> str:
    """PR 1 force-pushed since carry/u folded it (its old head, abbreviated in the manifest, changed line 5; the
    new one 5 and 15): the union lacks line 15. Synced while the repository lacks the old head; returns it."""
    def body(**changed: str) -> str:
        return "".join(f"line_{i} = {changed.get(f'l{i}', i)}\n" for i in range(1, 21))

    base = small.up.commit({"pkg/m.py": body()}, "m", parent="main", ref="refs/heads/main")
    old = small.up.commit({"pkg/m.py": body(l5='"A"')}, "pr 1 old", parent=base, ref="refs/old/1")
    small.up.commit({"pkg/m.py": body(l5='"A"', l15='"B"')}, "pr 1 force-pushed", parent=base,
                    ref="refs/pull/1/head")
    union = small.up.commit({"pkg/m.py": body(l5='"A"')}, "carry: u\n\nCarry-Union: u\nCarry-Supersedes: 1\n",
                            parent=base, ref="refs/heads/union")
    small.manifest([{"pr": 1}, {"carry": "u", "commit": union, "supersedes": [{"pr": 1, "head": old[:12]}]}],
                   fork={"branch": "dev", "url": "../up"}, policy={"on_conflict": "skip"})
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    return old


def test_a_folded_head_that_arrives_or_goes_after_the_sync_is_read_again(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """The landing tells a PR that moved since its union's fold by the folded head the repository has: one that
    arrives after the sync, or goes, changes the warning (h270: the kept plan said "dropped at a stop of the
    fold?" where a fresh explain said "the PR moved since"; pruned, it named a commit the store lacked)."""
    old = _fold_scenario(cli, small)
    small.work.git("fetch", "-q", str(small.up.path), "refs/old/1:refs/old/1")     # the folded head arrives
    made = _composing(monkeypatch)
    code, explained = cli.json(*_explain(small))
    assert made, explained.get('error')
    assert (code, explained) == _fresh(cli, monkeypatch, *_explain(small))
    assert "the PR moved since" in json.dumps(explained)
    made.clear()
    assert cli.json(*_explain(small)) == (code, explained) and made == []    # kept with what it was asked
    small.work.git("update-ref", "-d", "refs/old/1")                         # and it goes
    small.work.git("reflog", "expire", "--expire=now", "--all")
    small.work.git("gc", "-q", "--prune=now")
    assert not small.work.git("rev-parse", "-q", "--verify", f"{old}^{{commit}}", check=False).strip()
    code, explained = cli.json(*_explain(small))
    assert made
    assert (code, explained) == _fresh(cli, monkeypatch, *_explain(small))
    assert "the PR moved since" not in json.dumps(explained)


def test_a_field_at_its_default_is_not_written_and_reads_back_as_its_default() -> None:
    """What a fresh step holds there (e.g. a head the facts read) gives way to the kept default."""
    from carrytool.manifest.model import Entry
    from carrytool.pipeline.keptplan import capture, settle
    from carrytool.pipeline.plan import Step

    entry = Entry(kind="pr", number=7)
    kept = Step(entry, status="skipped", reason="redundant", redundant_with=["pr/3"], provided={("pr/1", "a", (1, 2)): "x"})
    kept._filtered_commit = "c" * 40          # what composing writes beside the fields
    state = json.loads(json.dumps(capture([kept], "r" * 40, {}, [], [], [], {})))
    written = state["steps"][0]
    assert set(written) == {"id", "status", "reason", "redundant_with", "provided", "_filtered_commit"}
    fresh = Step(entry, detail="from the facts", conflicts=[{"file": "x"}], upstream_merged=True)
    assert settle(state, [fresh]) is not None
    assert fresh.detail is None and fresh.conflicts == [] and fresh.upstream_merged is False
    assert (fresh.status, fresh.reason, fresh.redundant_with) == ("skipped", "redundant", ["pr/3"])
    assert fresh.provided == {("pr/1", "a", (1, 2)): "x"} and fresh._filtered_commit == "c" * 40
    fresh.conflicts.append({"x": 1})
    assert Step(entry).conflicts == []        # a default read back is a fresh one, never shared


@pytest.mark.parametrize("name", ["entry", "changes", "__class__", "__dict__", "nonsense"])
def test_a_plan_setting_what_composing_never_sets_is_not_used(name: str) -> None:
    from carrytool.manifest.model import Entry
    from carrytool.pipeline.keptplan import capture, settle
    from carrytool.pipeline.plan import Step

    entry = Entry(kind="pr", number=7)
    state = json.loads(json.dumps(capture([Step(entry, status="applied")], "r" * 40, {}, [], [], [], {})))
    state["steps"][0][name] = "x"
    fresh = Step(entry)
    assert settle(state, [fresh]) is None
    assert fresh.status == "pending" and type(fresh) is Step


def test_what_settle_refuses_capture_does_not_keep_and_a_deep_file_is_no_plan() -> None:
    """h271: an attribute composing might write under another name (`scope_cache`) was kept and then refused on
    every read, silently; now no plan is kept (and under CARRYTOOL_CHECK_KEPT_PLANS the run fails). A kept
    file nested deeper than `decode` recurses is not a plan either (it was a RecursionError)."""
    from carrytool.manifest.model import Entry
    from carrytool.pipeline.keptplan import capture, settle
    from carrytool.pipeline.plan import Step

    entry = Entry(kind="pr", number=7)
    step = Step(entry, status="applied")
    step.scope_cache = "x"
    assert capture([step], "r" * 40, {}, [], [], [], {}) is None
    state = json.loads(json.dumps(capture([Step(entry, status="applied")], "r" * 40, {}, [], [], [], {})))
    deep: object = []
    for _ in range(5000):
        deep = {"t": [deep]}
    state["steps"][0]["landing"] = deep
    fresh = Step(entry)
    assert settle(state, [fresh]) is None and fresh.status == "pending"


@pytest.mark.parametrize(("name", "value"), [("conflicts", 5), ("head", 7), ("status", None), ("upstream_merged", "yes"),
                                             ("stacked_onto", ["a", "b"])])
def test_a_field_of_another_class_than_its_own_is_no_plan(name: str, value: object) -> None:
    """A kept file edited by hand (`"conflicts": 5`) is no plan: its step would fail later, far from the file."""
    from carrytool.manifest.model import Entry
    from carrytool.pipeline.keptplan import capture, settle
    from carrytool.pipeline.plan import Step

    entry = Entry(kind="pr", number=7)
    state = json.loads(json.dumps(capture([Step(entry, status="applied", stacked_onto=("a", "b"))],
                                          "r" * 40, {}, [], [], [], {})))
    assert settle(json.loads(json.dumps(state)), [Step(entry)]) is not None
    state["steps"][0][name] = value
    fresh = Step(entry)
    assert settle(state, [fresh]) is None and fresh.status == "pending"


def test_a_hand_edited_plan_is_composed_again(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)

    def edit(state: dict) -> dict:
        state["steps"][0]["conflicts"] = 5
        return state

    _edit_plan(small.work.path, edit)
    made = _composing(monkeypatch)
    code, explained = cli.json(*_explain(small))
    assert made and (code, explained) == _fresh(cli, monkeypatch, *_explain(small))


def test_capture_keeps_no_field_settle_would_refuse_for_its_class() -> None:
    """h272: a field composing fills with another class than its annotation (a set in `composed_with`, a list in
    `held_by`) would be kept and refused on every explain, silently: no plan is kept (and under
    CARRYTOOL_CHECK_KEPT_PLANS the run fails)."""
    from carrytool.manifest.model import Entry
    from carrytool.pipeline.keptplan import capture
    from carrytool.pipeline.plan import Step

    entry = Entry(kind="pr", number=7)
    assert capture([Step(entry, held_by=("pr/1",), composed_with=frozenset({1}))], "r" * 40, {}, [], [], [], {})
    assert capture([Step(entry, held_by=["pr/1"])], "r" * 40, {}, [], [], [], {}) is None    # type: ignore[arg-type]
    assert capture([Step(entry, composed_with={1})], "r" * 40, {}, [], [], [], {}) is None  # type: ignore[arg-type]
