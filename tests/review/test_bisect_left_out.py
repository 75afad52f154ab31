"""`carrytool bisect` when the entry an assert guards (`entry:`) is not in the chain: it conflicted and was
skipped, so the assert fails; the entry that made it conflict is blamed (h179, DeepSpeed)."""

from __future__ import annotations

from tests.conftest import Cli, Small

STEP = "def step(opt, tel):\n    a = 1\n    b = 2\n    opt.step()\n    return a\n"
WRAPPED = STEP.replace("    opt.step()\n", "    opt_step(opt)\n")
TELEMETRY = STEP.replace("    opt.step()\n", "    opt.step()\n    if tel is not None:\n        tel.on_step()\n")
AFTER = {"name": "telemetry-after-step", "file": "a.py", "in": "step", "order": ["opt.step", "tel.on_step"],
         "entry": "carry/telemetry"}


def build(small: Small, *, upstream: str = STEP, asserts: tuple[dict, ...] = (AFTER,), on_pr: bool = False) -> None:
    """[pr/1, carry/wrap, pr/2, carry/telemetry]: carry/wrap renames opt.step(), so carry/telemetry, which adds
    a hook after it, conflicts and is skipped; AFTER (its `entry:`) fails. UPSTREAM: a.py on upstream. ON_PR:
    carry/telemetry is committed on pr/1's head."""
    base = small.up.commit({"a.py": STEP}, "base with step", parent=small.base)
    small.up.commit({"a.py": upstream}, "upstream moves on", parent=base, ref="refs/heads/main")
    heads = {n: small.up.commit({f"f{n}.txt": f"{n}\n"}, f"pr {n}", parent=base, ref=f"refs/pull/{n}/head")
             for n in (1, 2)}
    commits = {}
    for name, text in (("wrap", WRAPPED), ("telemetry", TELEMETRY)):
        parent = heads[1] if on_pr and name == "telemetry" else base
        commits[name] = small.up.commit({"a.py": text}, f"carry: {name}", parent=parent, ref=f"refs/heads/{name}")
        small.work.git("fetch", "-q", str(small.up.path), f"refs/heads/{name}:refs/heads/{name}")
    small.manifest([{"pr": 1}, {"carry": "wrap", "commit": commits["wrap"]}, {"pr": 2},
                    {"carry": "telemetry", "commit": commits["telemetry"]}],
                   policy={"on_conflict": "skip"}, asserts=list(asserts))


def test_the_entry_that_made_the_guarded_one_conflict_is_blamed(cli: Cli, small: Small) -> None:
    """h179: bisect said "Upstream itself fails: no entry of the chain broke it" (first_bad null, exit 0): the
    assert's `entry:` was never tried as a base, being no link of the chain. Upstream + carry/telemetry
    passes; adding carry/wrap makes it conflict: carry/wrap is blamed, with carry/telemetry; the same from
    the night's composed commit (`--rev`, the command sync's next step leads to)."""
    build(small)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 1 and report["result"]["sha"], report
    for rev in ((), ("--rev", report["result"]["sha"])):
        code, out = cli.json("bisect", "-m", small.manifest_path, "--repo", small.work.path, *rev)
        assert code == 0, out
        assert out["first_bad"] == "carry/wrap" and out["alone_bad"] is False, out
        assert out["interacts_with"] == ["carry/telemetry"], out
        assert [link["id"] for link in out["chain"]] == ["pr/1", "carry/wrap", "pr/2"], out
        # with --rev, the commit it was tried with: the night's, as sync recorded it (a red night writes no lock,
        # h193; sync records it under refs/carrytool/dev/nights, h201)
        tried = {"head": report["entries"][3]["head"], "night": True} if rev else {}
        assert out["left_out"] == [{"id": "carry/telemetry", "status": "conflict", "with": ["carry/wrap"],
                                    "upstream": False, "files": ["a.py"], **tried}], out
        assert out["bases"][0] == {"from": "entry", "entries": ["carry/telemetry"], "bad": False,
                                   "unapplied": []}, out
        assert out["next"].startswith("carrytool explain carry/telemetry carry/wrap "), out
        text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path, *rev).stdout
        assert "itself fails" not in text, text
        assert "First bad entry: carry/wrap (2 of 3 in the chain)" in text, text
        assert "carry/telemetry (the `entry:` of telemetry-after-step) is not in the chain: it conflicts with " \
               "carry/wrap in a.py" in text, text


def test_a_left_out_entry_is_tried_with_what_it_is_built_on(cli: Cli, small: Small) -> None:
    """carry/telemetry is committed on pr/1's head: the base holds pr/1 too, and carry/wrap is blamed."""
    build(small, on_pr=True)
    code, out = cli.json("bisect", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and out["first_bad"] == "carry/wrap", out
    assert out["bases"][0] == {"from": "entry", "entries": ["pr/1", "carry/telemetry"], "bad": False,
                               "unapplied": []}, out
    assert out["interacts_with"] == ["carry/telemetry"], out


def test_a_guarded_entry_conflicting_with_upstream_is_said_so(cli: Cli, small: Small) -> None:
    """Upstream renamed opt.step() itself: carry/telemetry conflicts with upstream alone, no base holds it and
    no entry is to blame; bisect says the assert's entry is not in the chain, conflicting with upstream,
    never that upstream fails with nothing to do."""
    build(small, upstream=STEP.replace("    opt.step()\n", "    opt.step2()\n"))
    code, out = cli.json("bisect", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and out["first_bad"] is None, out
    assert out["left_out"] == [{"id": "carry/telemetry", "status": "conflict", "with": [], "upstream": True,
                                "files": ["a.py"]}], out
    assert out["next"].startswith("carrytool explain carry/telemetry "), out
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "itself fails" not in text, text
    assert "carry/telemetry (the `entry:` of telemetry-after-step) is not in the chain: it conflicts with " \
           "upstream in a.py" in text, text


def test_each_tree_is_judged_once_when_the_asserts_are_searched_one_by_one(cli: Cli, small: Small) -> None:
    """h179: two asserts upstream fails, no entry to blame: the search with both, then with each alone, judged
    the same trees three times and counted them so (24 probes of 8 trees), where docs/bisect.md says each
    distinct tree is judged at most once per run. A tree judged already is not judged again."""
    called = {"name": "telemetry-called", "file": "a.py", "in": "step", "calls": "tel.on_step",
              "entry": "carry/telemetry"}
    build(small, upstream=STEP.replace("    opt.step()\n", "    opt.step2()\n"), asserts=(AFTER, called))
    code, both = cli.json("bisect", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and both["first_bad"] is None and both["searched_with"] == [AFTER["name"], "telemetry-called"]
    code, named = cli.json("bisect", "-m", small.manifest_path, "--repo", small.work.path,
                           "--assert", AFTER["name"], "--assert", "telemetry-called")
    assert code == 0 and named["first_bad"] is None, named
    assert both["probes"] == named["probes"], (both["probes"], named["probes"])



def test_a_tree_judged_with_more_asserts_is_not_evaluated_again(small: Small) -> None:
    """The search with one assert reads the outcome of a tree the search with all of them judged: no probe,
    no evaluation (a tree with no a.py would fail `defines`, were it evaluated)."""
    from carrytool.asserts.spec import AssertSpec
    from carrytool.gitlayer.git import Git
    from carrytool.review.probe import Checks, Prober

    one, other = AssertSpec("one", "a.py", "defines", "f"), AssertSpec("other", "a.py", "defines", "g")
    with Git(small.up.path) as git:
        tree = git.tree_of(small.base)
        wide = Prober(git, Checks((one, other)))
        assert not wide.judge(tree).bad and wide.probes == 1
        empty = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        wide.seen[empty] = wide.seen[tree]          # (as judged: no a.py is good, evaluated it would not be)
        narrow = Prober(git, Checks((other,)), known=wide.seen)
        assert not narrow.judge(empty).bad and narrow.probes == 0
        assert Prober(git, Checks((other,))).judge(empty).bad


def test_a_left_out_entry_changed_since_the_night_blames_nobody(cli: Cli, small: Small) -> None:
    """`--rev` of the night, after carry/telemetry was committed again where it applies (its hook at the top):
    upstream + it passes, and so does everything composed with it; the night's chain is not what fails with
    it now, and the last entry is not blamed for it. (The night was synced in another clone: no record of it
    here, refs/carrytool/dev/nights, says which commit it had.)"""
    build(small)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 1, report
    small.work.git("update-ref", "-d", "refs/carrytool/dev/nights")
    top = STEP.replace("):\n", "):\n    opt.step()\n    tel.on_step()\n", 1)
    night = small.up.rev("refs/heads/telemetry")
    again = small.up.commit({"a.py": top}, "carry: telemetry, again", parent=small.up.rev("refs/heads/telemetry~1"),
                            ref="refs/heads/telemetry")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/telemetry:refs/heads/telemetry")
    small.manifest_path.write_text(small.manifest_path.read_text().replace(night, again))
    code, out = cli.json("bisect", "-m", small.manifest_path, "--repo", small.work.path,
                         "--rev", report["result"]["sha"])
    assert code == 0 and out["first_bad"] is None, out
    assert out["bases"][0] == {"from": "entry", "entries": ["carry/telemetry"], "bad": False, "unapplied": []}, out


def test_a_guarded_entry_whose_head_was_never_fetched_is_said_not_tried(cli: Cli, small: Small) -> None:
    """h187: `bisect --rev` left out, without a word, an `entry:` whose PR head was never fetched here (added to
    the manifest after the night): it names it, why, and the command that fetches it. (The night was synced in
    another clone: no record of it here says it had no pr/3.)"""
    build(small)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 1 and report["result"]["sha"], report
    small.work.git("update-ref", "-d", "refs/carrytool/dev/nights")
    guard = {"name": "three-adds-x", "file": "x.py", "contains": "x = 3", "entry": "pr/3"}
    small.manifest([{"pr": 1}, {"carry": "wrap", "commit": report["entries"][1]["head"]}, {"pr": 2},
                    {"carry": "telemetry", "commit": report["entries"][3]["head"]}, {"pr": 3}],
                   policy={"on_conflict": "skip"}, asserts=[AFTER, guard])
    args = ("-m", small.manifest_path, "--repo", small.work.path, "--rev", report["result"]["sha"])
    code, out = cli.json("bisect", *args)
    assert code == 0, out
    assert out["left_out"][0]["id"] == "carry/telemetry", out
    assert out["left_out"][1] == {
        "id": "pr/3", "status": "not-tried", "with": [], "upstream": False, "files": [], "asserts": ["three-adds-x"],
        "why": "its head was never fetched here (no refs/carrytool/dev/pr/3)",
        "next": f"carrytool sync -m {small.manifest_path} --repo {small.work.path}"}, out
    text = cli("bisect", *args).stdout
    assert "pr/3 (the `entry:` of three-adds-x) is not in the chain and was not tried: its head was never fetched " \
           f"here (no refs/carrytool/dev/pr/3): run `carrytool sync -m {small.manifest_path} --repo " \
           f"{small.work.path}`, then bisect again" in text, text
