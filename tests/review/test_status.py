"""carrytool status against a fake forge on 127.0.0.1: merged (landed or partly reverted), closed, moved,
refold, retitled, 404, 500, pagination, rate limits, ETag reuse, --offline, the token, --write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.fakeforge import FakeForge, Reply
from tests.gitrepo import built_once, copy_built, init_repo

TOKEN = "ghp_SECRET0123456789abcdefABCDEF012345"
B = "".join(f"b{i} = {i}\n" for i in range(20))
C = "".join(f"c{i} = {i}\n" for i in range(20))

MANIFEST = """\
version: 1
upstream:
  url: {url}
  branch: main
fork:
  branch: dev
entries:
  # landed upstream: status says drop
  - pr: 1
    title: "f returns ten"
  - pr: 2            # merged, then partly reverted upstream
  - pr: 3
  - pr: 4
  - carry: u
    commit: 0123456789abcdef0123456789abcdef01234567
    supersedes:
      - {{pr: 5, head: {p5a}}}
  - pr: 6
    title: old title   # will be retitled
  - pr: 7
"""


class Forge:
    """Upstream's history (real commits), the fork's bare repository with what the last sync fetched, and
    the forge's recorded answers for PRs 1-7."""

    def __init__(self, root: Path) -> None:
        up = self.up = init_repo(root / "up")
        self.base = up.commit({"a.py": "def f():\n    return 1\n", "b.py": B, "c.py": C, "d.txt": "d\n"},
                              "base", ref="refs/heads/main")
        self.p1 = up.commit({"a.py": "def f():\n    return 10\n"}, "f returns ten", parent=self.base,
                            ref="refs/pull/1/head")
        self.m1 = up.commit({"a.py": "def f():\n    return 10\n"}, "Merge #1", parent="main",
                            parents=["main", self.p1], ref="refs/heads/main")
        self.p2 = up.commit({"b.py": B.replace("b3 = 3", "b3 = 33"), "c.py": C.replace("c7 = 7", "c7 = 77")},
                            "pr 2", parent=self.base, ref="refs/pull/2/head")
        self.m2 = up.commit({"b.py": B.replace("b3 = 3", "b3 = 33"), "c.py": C.replace("c7 = 7", "c7 = 77")},
                            "Merge #2", parent="main", parents=["main", self.p2], ref="refs/heads/main")
        up.commit({"c.py": C}, "Revert the c.py half of #2", parent="main", ref="refs/heads/main")
        self.p3 = up.commit({"d.txt": "d3\n"}, "pr 3", parent=self.base, ref="refs/pull/3/head")
        self.p4a = up.commit({"e.txt": "e\n"}, "pr 4", parent=self.base, ref="refs/keep/p4a")
        self.p4b = up.commit({"e.txt": "e2\n"}, "pr 4 v2", parent=self.p4a, ref="refs/pull/4/head")
        self.p5a = up.commit({"g.txt": "g\n"}, "pr 5", parent=self.base, ref="refs/keep/p5a")
        self.p5b = up.commit({"g.txt": "g2\n"}, "pr 5 v2", parent=self.p5a, ref="refs/pull/5/head")
        self.p6 = up.commit({"h.txt": "h\n"}, "pr 6", parent=self.base, ref="refs/pull/6/head")
        self.work = init_repo(root / "work", bare=True)
        self.work.git("fetch", "-q", str(up.path), "+refs/*:refs/up/*")
        self.work.git("update-ref", "refs/carrytool/dev/upstream", "refs/up/heads/main")
        self.work.git("update-ref", "refs/carrytool/dev/pr/4", self.p4a)
        self.manifest = root / "carries" / "manifest.yaml"
        self.manifest.parent.mkdir()

    def write_manifest(self, url: str = "https://github.com/acme/widget.git") -> str:
        text = MANIFEST.format(url=url, p5a=self.p5a)
        self.manifest.write_text(text)
        return text

    def github(self, fake: FakeForge) -> None:
        def pr(n: int, head: str, *, state: str = "open", merged: str | None = None, title: str = "") -> None:
            body = {"number": n, "state": state, "title": title or f"pr {n}", "head": {"sha": head},
                    "base": {"sha": self.base}, "merged": merged is not None, "merge_commit_sha": merged,
                    "merged_at": "2026-11-29T03:00:00Z" if merged else None}
            fake.route(f"/repos/acme/widget/pulls/{n}", Reply(body, etag=f'"pr{n}"'))
            if n != 6:
                fake.route(f"/repos/acme/widget/issues/{n}/labels?per_page=100", Reply([]))

        pr(1, self.p1, state="closed", merged=self.m1, title="f returns ten")
        pr(2, self.p2, state="closed", merged=self.m2)
        pr(3, self.p3, state="closed")
        pr(4, self.p4b)
        pr(5, self.p5b)
        pr(6, self.p6, title="new title")
        fake.route("/repos/acme/widget/issues/6/labels?per_page=100",
                   Reply([{"name": "bug"}], headers={"Link": '<{root}/repos/acme/widget/issues/6/labels?'
                                                             'per_page=100&page=2>; rel="next"'}))
        fake.route("/repos/acme/widget/issues/6/labels?per_page=100&page=2", Reply([{"name": "carried"}]))


def _built_forge(root: Path) -> Forge:
    f = Forge(root)
    f.write_manifest()
    return f


@pytest.fixture
def forge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Forge:
    """A Forge with its manifest in TMP_PATH, each test's own copy (the same SHAs)."""
    for name in ("GITHUB_TOKEN", "GITLAB_TOKEN", "CARRYTOOL_GITHUB_API", "CARRYTOOL_GITLAB_API"):
        monkeypatch.delenv(name, raising=False)
    template = built_once(tmp_path_factory, "forge", _built_forge)      # once a session: each test its own copy
    return copy_built(template, template.up.path.parent, tmp_path)


def _status(cli: Cli, forge: Forge, url: str, *args: str, env: dict | None = None):
    return cli("status", "-m", forge.manifest, "--repo", forge.work.path, "--api-url", url, *args, env=env)


def test_status_suggestions(cli: Cli, forge: Forge) -> None:
    with FakeForge() as fake:
        forge.github(fake)
        result = _status(cli, forge, fake.url, "--format", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["source"] == "api"
    by_id = {e["id"]: e for e in out["entries"]}
    assert {i: (e["state"], e["suggestion"], e["landed"]) for i, e in by_id.items()} == {
        "pr/1": ("merged", "drop", True),
        "pr/2": ("merged", "keep", False),
        "pr/3": ("closed", "investigate", None),
        "pr/4": ("open", "keep", None),
        "pr/5": ("open", "refold", None),
        "pr/6": ("open", "retitle", None),
        "pr/7": ("unknown", "investigate", None)}
    assert by_id["pr/1"]["merged_as"] == forge.m1 and by_id["pr/1"]["head"] == forge.p1
    assert by_id["pr/2"]["why"] == (f"merged upstream as {forge.m2[:12]}, but upstream lacks 1 of its 2 hunks: "
                                    "c.py:8")
    assert f"head moved {forge.p4a[:12]} -> {forge.p4b[:12]}" in by_id["pr/4"]["why"]
    assert "carrytool union compose u" in by_id["pr/5"]["why"]
    assert by_id["pr/6"]["labels"] == ["bug", "carried"]                  # both pages
    assert by_id["pr/6"]["title"] == "new title"
    assert "404" in by_id["pr/7"]["why"]
    assert by_id["pr/5"]["superseded_only"] is True


def test_gitlab(cli: Cli, forge: Forge) -> None:
    forge.write_manifest("https://gitlab.example.com/grp/sub/widget.git")
    with FakeForge() as fake:
        base = "/projects/grp%2Fsub%2Fwidget/merge_requests"
        fake.route(f"{base}/1", Reply({"iid": 1, "state": "merged", "title": "f returns ten", "sha": forge.p1,
                                       "merge_commit_sha": forge.m1, "labels": ["x"],
                                       "diff_refs": {"base_sha": forge.base}}))
        fake.route(f"{base}/3", Reply({"iid": 3, "state": "opened", "title": "pr 3", "sha": forge.p3,
                                       "labels": []}))
        result = _status(cli, forge, fake.url + "/api/v4".replace("/api/v4", ""), "--format", "json")
    out = json.loads(result.stdout)
    by_id = {e["id"]: e for e in out["entries"]}
    assert (by_id["pr/1"]["suggestion"], by_id["pr/1"]["labels"], by_id["pr/1"]["landed"]) == ("drop", ["x"], True)
    assert (by_id["pr/3"]["state"], by_id["pr/3"]["suggestion"]) == ("open", "keep")


def test_etag_reuse_offline_and_cache_file(cli: Cli, forge: Forge) -> None:
    with FakeForge() as fake:
        forge.github(fake)
        first = json.loads(_status(cli, forge, fake.url, "--format", "json").stdout)
        fake.seen.clear()
        second = json.loads(_status(cli, forge, fake.url, "--format", "json").stdout)
        asked = {s.path: s for s in fake.seen}
        url = fake.url
    assert second == first
    assert asked["/repos/acme/widget/pulls/1"].status == 304
    assert asked["/repos/acme/widget/pulls/1"].headers["If-None-Match"] == '"pr1"'
    cache = forge.work.path / "carrytool" / "forge-cache.json"
    assert cache.is_file()
    offline = json.loads(cli("status", "-m", forge.manifest, "--repo", forge.work.path, "--api-url", url,
                             "--offline", "--format", "json").stdout)
    assert offline["source"] == "cache"
    assert offline["entries"] == first["entries"]
    # without --api-url: the cache holds one API root's answers, which offline reads (it found nothing
    # under the default root, every PR `investigate`: an older note)
    alone = json.loads(cli("status", "-m", forge.manifest, "--repo", forge.work.path, "--offline",
                           "--format", "json").stdout)
    assert alone["entries"] == first["entries"]


def test_an_api_url_that_is_not_http_is_bad_input(cli: Cli, forge: Forge) -> None:
    """`--api-url example.com/api` (no scheme) was exit 4, "cannot reach the forge" (helper-85)."""
    result = _status(cli, forge, "example.com/api")
    assert result.exit_code == 2 and "is not an http(s) URL" in result.stderr, result.output


def test_offline_without_cache(cli: Cli, forge: Forge) -> None:
    out = json.loads(cli("status", "-m", forge.manifest, "--repo", forge.work.path, "--offline",
                         "--format", "json").stdout)
    assert {e["suggestion"] for e in out["entries"]} == {"investigate"}
    assert out["entries"][0]["why"] == "not in the cache: run without --offline"


def test_offline_without_cache_says_what_the_repository_knows(cli: Cli, forge: Forge) -> None:
    """h187: with an empty forge cache, a PR whose head sync fetched and upstream's history holds (or whose change
    upstream has: a squash) was `unknown`, `investigate`, "not in the cache": offline status says what upstream
    holds of it, by which evidence, whether its hunks are on upstream, and that the forge must confirm the merge
    (h194: never `merged`, never `drop`, on this evidence alone)."""
    p7 = forge.up.commit({"x.txt": "x\n"}, "pr 7", parent=forge.base, ref="refs/pull/7/head")
    forge.up.commit({"x.txt": "x\n"}, "pr 7, squashed", parent="main", ref="refs/heads/main")
    forge.work.git("fetch", "-q", str(forge.up.path), "+refs/*:refs/up/*")
    forge.work.git("update-ref", "refs/carrytool/dev/upstream", "refs/up/heads/main")
    for n, head in ((1, forge.p1), (2, forge.p2), (3, forge.p3), (7, p7)):
        forge.work.git("update-ref", f"refs/carrytool/dev/pr/{n}", head)
    out = json.loads(cli("status", "-m", forge.manifest, "--repo", forge.work.path, "--offline",
                         "--format", "json").stdout)
    assert out["source"] == "cache"
    by_id = {e["id"]: e for e in out["entries"]}
    assert {i: (e["state"], e["suggestion"], e["landed"], e["merged_as"], e["head"]) for i, e in by_id.items()} == {
        "pr/1": ("unknown", "investigate", None, None, forge.p1),
        "pr/2": ("unknown", "investigate", None, None, forge.p2),   # merged, then the c.py half reverted
        "pr/3": ("unknown", "investigate", None, None, None),       # closed unmerged: nothing here says so
        "pr/4": ("unknown", "investigate", None, None, None),
        "pr/5": ("unknown", "investigate", None, None, None),
        "pr/6": ("unknown", "investigate", None, None, None),
        "pr/7": ("unknown", "investigate", None, None, p7)}
    assert by_id["pr/1"]["why"] == (
        f"upstream has its commits, as this repository tells: its head {forge.p1[:12]} (as the last sync fetched it) "
        f"is in upstream's history, merged by {forge.m1[:12]}; the one hunk of its diff is on upstream; whether "
        "the PR was merged is the forge's to say (an open PR with nothing pushed since looks the same here): confirm "
        "online, run without --offline")
    assert by_id["pr/2"]["why"].startswith(f"upstream has its commits, as this repository tells: its head "
                                           f"{forge.p2[:12]} ")
    assert "; upstream lacks 1 of its 2 hunks: c.py:8;" in by_id["pr/2"]["why"]
    assert by_id["pr/7"]["why"].startswith(
        f"upstream has its commits, as this repository tells: its head {p7[:12]} (as the last sync fetched it) is not "
        "in upstream's history, but merging it onto upstream changes nothing (squashed or picked); ")
    assert by_id["pr/3"]["why"] == "not in the cache: run without --offline"
    text = cli("status", "-m", forge.manifest, "--repo", forge.work.path, "--offline").stdout
    assert "upstream has its commits, as this repository tells" in text, text


def test_token_sent_never_printed(cli: Cli, forge: Forge) -> None:
    with FakeForge() as fake:
        forge.github(fake)
        fake.route("/repos/acme/widget/pulls/3", Reply({"message": "boom"}, 500))
        result = _status(cli, forge, fake.url, env={"GITHUB_TOKEN": TOKEN})
        seen = list(fake.seen)
    assert seen[0].headers["Authorization"] == f"Bearer {TOKEN}"
    assert result.exit_code == 4
    assert "pulls/3: HTTP 500" in result.stderr
    assert TOKEN not in result.output
    cache = forge.work.path / "carrytool" / "forge-cache.json"
    assert TOKEN not in cache.read_text()
    assert [s.path for s in seen].count("/repos/acme/widget/pulls/3") == 2      # one retry


def test_the_token_follows_no_redirect_to_another_host(cli: Cli, forge: Forge) -> None:
    """A redirect to another host received the token (urllib copies every header but the content ones:
    helper-85); to the same host it is kept (GitHub redirects a renamed repository's API there)."""
    with FakeForge() as fake, FakeForge() as other:
        forge.github(fake)
        fake.route("/repos/acme/widget/pulls/3", Reply({}, 302, {"Location": other.url + "/moved/3"}))
        fake.route("/repos/acme/widget/pulls/2", Reply({}, 301, {"Location": "{root}/repositories/9/pulls/2"}))
        result = _status(cli, forge, fake.url, env={"GITHUB_TOKEN": TOKEN})
        elsewhere, here = list(other.seen), [s for s in fake.seen if s.path == "/repositories/9/pulls/2"]
    assert [s.path for s in elsewhere] == ["/moved/3"] and "Authorization" not in elsewhere[0].headers
    assert here and here[0].headers["Authorization"] == f"Bearer {TOKEN}", result.output
    assert TOKEN not in result.output


@pytest.mark.parametrize("answer", [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{", b"GARBAGE\r\n\r\n",
                                    b"HTTP/1.1 302 Found\r\nLocation: http://[::1/x\r\nContent-Length: 0\r\n\r\n"])
def test_a_broken_answer_is_exit_4_not_a_traceback(cli: Cli, forge: Forge, answer: bytes) -> None:
    """A truncated body (IncompleteRead) or a garbled status line (BadStatusLine) is http.client's, not an
    OSError: it was a traceback, exit 70 (helper-85)."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        # the socket is closed only once this thread is done: closed under a blocked accept, its number
        # went to the next test's server while this thread still accepted on it (that test hung)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                conn.recv(65536)
                conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        result = _status(cli, forge, f"http://127.0.0.1:{server.getsockname()[1]}")
    finally:
        stop.set()
        thread.join()
        server.close()
    assert result.exit_code == 4 and "cannot reach the forge" in result.stderr, result.output
    assert "Traceback" not in result.output


def test_rate_limit_retry_after_then_too_long(cli: Cli, forge: Forge) -> None:
    with FakeForge() as fake:
        forge.github(fake)
        ok = fake.routes["/repos/acme/widget/pulls/1"][0]
        fake.route("/repos/acme/widget/pulls/1", Reply({"message": "slow down"}, 429, {"Retry-After": "0"}), ok)
        result = _status(cli, forge, fake.url, "--format", "json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["entries"][0]["suggestion"] == "drop"
        assert fake.paths().count("/repos/acme/widget/pulls/1") == 2
        fake.route("/repos/acme/widget/pulls/1",
                   Reply({"message": "API rate limit exceeded"}, 403,
                         {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "9999999999"}))
        result = _status(cli, forge, fake.url)
    assert result.exit_code == 4
    assert "rate limit holds for" in result.stderr and "--offline" in result.stderr


def test_a_rate_limit_that_keeps_answering_is_said_to_be_one(cli: Cli, forge: Forge) -> None:
    """Short rate limits four times in a row ended as "access is forbidden, check GITHUB_TOKEN" (helper-85)."""
    with FakeForge() as fake:
        forge.github(fake)
        fake.route("/repos/acme/widget/pulls/1", Reply({"message": "slow down"}, 403, {"Retry-After": "0"}))
        result = _status(cli, forge, fake.url)
    assert result.exit_code == 4 and "the forge's rate limit held through 4 tries" in result.stderr, result.stderr
    assert "forbidden" not in result.stderr


def test_write_drops_and_retitles_keeping_comments(cli: Cli, forge: Forge) -> None:
    before = forge.manifest.read_text()
    with FakeForge() as fake:
        forge.github(fake)
        result = _status(cli, forge, fake.url, "--write")
    assert result.exit_code == 0, result.output
    assert "wrote: pr/1: removed (merged upstream)" in result.stdout
    expected = (before.replace('  - pr: 1\n    title: "f returns ten"\n', "")
                .replace("title: old title   # will be retitled", 'title: "new title"   # will be retitled'))
    assert forge.manifest.read_text() == expected
    assert cli("check", "-m", forge.manifest).exit_code == 0


def test_a_second_finding_goes_into_the_why_of_the_first(cli: Cli, forge: Forge) -> None:
    """An older note: one suggestion per PR hid a second (a retitle hid that the head had moved since the
    last sync). The suggestion stays the strongest; its `why` says the other."""
    forge.work.git("update-ref", "refs/carrytool/dev/pr/6", forge.base)       # the last sync saw another head
    with FakeForge() as fake:
        forge.github(fake)
        code, out = cli.json("status", "-m", forge.manifest, "--repo", forge.work.path, "--api-url", fake.url)
    [item] = [e for e in out["entries"] if e["id"] == "pr/6"]
    assert code == 0 and item["suggestion"] == "retitle", item
    assert item["why"] == (f"the title upstream is now 'new title' (manifest: 'old title'); also, its head moved "
                           f"{forge.base[:12]} -> {forge.p6[:12]} since the last sync (`carrytool diff` after the "
                           "next sync shows what changed)")


def test_write_keeps_a_crlf_manifest_crlf(cli: Cli, forge: Forge) -> None:
    """--write on a manifest with CRLF line ends keeps every line's end (it did; `union new` did not, and
    both now edit through manifest.edit.in_its_line_ends)."""
    before = forge.manifest.read_bytes().replace(b"\n", b"\r\n")
    forge.manifest.write_bytes(before)
    with FakeForge() as fake:
        forge.github(fake)
        result = _status(cli, forge, fake.url, "--write")
    assert result.exit_code == 0, result.output
    expected = (before.replace(b'  - pr: 1\r\n    title: "f returns ten"\r\n', b"")
                .replace(b"title: old title   # will be retitled", b'title: "new title"   # will be retitled'))
    assert forge.manifest.read_bytes() == expected != before
    assert cli("check", "-m", forge.manifest).exit_code == 0


def test_githubs_base_sha_is_the_branch_tip_and_a_merge_not_fetched_is_investigated(cli: Cli, forge: Forge) -> None:
    """GitHub's `base.sha` is the base branch's tip when the PR was last updated: #1's diff from there
    counted #2's merged changes as #1's own, reversed, and said `keep` (upstream lacks them); its fork point
    with the head is the base. A PR merged after upstream was last fetched here (its merge commit not in
    upstream as fetched) said `keep`, "upstream lacks ... hunks": it is `investigate` (helper-85)."""
    with FakeForge() as fake:
        forge.github(fake)
        # the base branch's tip when #1 was last updated: #2's change in, #1 not yet
        tip = forge.up.commit({"b.py": B.replace("b3 = 3", "b3 = 33")}, "#2 first", parent=forge.base,
                              ref="refs/keep/tip")
        forge.work.git("fetch", "-q", str(forge.up.path), "refs/keep/tip:refs/up/keep/tip")
        body = dict(fake.routes["/repos/acme/widget/pulls/1"][0].body)
        body["base"] = {"sha": tip}
        fake.route("/repos/acme/widget/pulls/1", Reply(body))
        late = forge.up.commit({"e.txt": "e2\n"}, "Merge #4", parent="main", parents=["main", forge.p4b],
                               ref="refs/heads/main")      # upstream moved on; this repository has not fetched it
        body4 = dict(fake.routes["/repos/acme/widget/pulls/4"][0].body)
        body4.update(state="closed", merged=True, merge_commit_sha=late)
        fake.route("/repos/acme/widget/pulls/4", Reply(body4))
        code, out = cli.json("status", "-m", forge.manifest, "--repo", forge.work.path, "--api-url", fake.url)
    by = {item["id"]: item for item in out["entries"]}
    assert (by["pr/1"]["suggestion"], by["pr/1"]["landed"]) == ("drop", True), by["pr/1"]["why"]
    assert by["pr/4"]["suggestion"] == "investigate" and by["pr/4"]["landed"] is None, by["pr/4"]
    assert f"its merge commit {late[:12]} is not in this repository (merged since the last sync?)" in by["pr/4"]["why"]


def test_a_base_that_holds_the_head_falls_back_to_the_merge(cli: Cli, forge: Forge) -> None:
    """A base SHA that already holds the head (the branch tip after the merge) forks at the head itself:
    that said "cannot tell the PR's base" (helper-86); the merge commit's first parent tells it."""
    with FakeForge() as fake:
        forge.github(fake)
        body = dict(fake.routes["/repos/acme/widget/pulls/1"][0].body)
        body["base"] = {"sha": forge.m1}
        fake.route("/repos/acme/widget/pulls/1", Reply(body))
        code, out = cli.json("status", "-m", forge.manifest, "--repo", forge.work.path, "--api-url", fake.url)
    [item] = [e for e in out["entries"] if e["id"] == "pr/1"]
    assert (item["suggestion"], item["landed"]) == ("drop", True), item["why"]


def test_a_merge_commit_here_but_not_in_upstream_is_judged_by_its_hunks(cli: Cli, forge: Forge) -> None:
    """A merge commit this repository has that upstream's history does not (merged into another branch,
    the change picked over; or merged since the last sync): the hunks decide, and the words say why
    upstream may lack them (helper-86: investigate for good was never resolved by a sync)."""
    with FakeForge() as fake:
        forge.github(fake)
        body = dict(fake.routes["/repos/acme/widget/pulls/4"][0].body)
        body.update(state="closed", merged=True, merge_commit_sha=forge.p5a)     # here, not upstream's
        fake.route("/repos/acme/widget/pulls/4", Reply(body))
        code, out = cli.json("status", "-m", forge.manifest, "--repo", forge.work.path, "--api-url", fake.url)
    [item] = [e for e in out["entries"] if e["id"] == "pr/4"]
    assert (item["suggestion"], item["landed"]) == ("keep", False), item
    assert f"(its merge commit {forge.p5a[:12]} is not in upstream as fetched here: merged since the last " \
        "sync, or elsewhere)" in item["why"]


def test_write_never_replaces_a_symlinked_manifest(cli: Cli, forge: Forge) -> None:
    """A manifest that is a symlink was replaced by a regular file, its target left as it was (helper-85):
    refused (exit 2), as every file carrytool writes beside the manifest."""
    real = forge.manifest.with_name("real.yaml")
    forge.manifest.rename(real)
    forge.manifest.symlink_to(real.name)
    before = real.read_text()
    with FakeForge() as fake:
        forge.github(fake)
        result = _status(cli, forge, fake.url, "--write")
    assert result.exit_code == 2 and "is a symlink" in result.stderr, result.output
    assert forge.manifest.is_symlink() and real.read_text() == before


def test_status_without_write_leaves_the_manifest(cli: Cli, forge: Forge) -> None:
    before = forge.manifest.read_text()
    with FakeForge() as fake:
        forge.github(fake)
        _status(cli, forge, fake.url)
    assert forge.manifest.read_text() == before


def test_write_never_leaves_an_invalid_manifest(cli: Cli, forge: Forge) -> None:
    """helper-79: `status --write` dropped pr/1 (merged upstream) while an assert named it (`entry: pr/1`):
    exit 0, and the next `check` exit 2. Nothing is written; the error names what to change."""
    text = forge.manifest.read_text()
    assert "asserts:" not in text
    text += "asserts:\n  - {name: f-ten, file: a.py, contains: 'return 10', entry: pr/1}\n"
    forge.manifest.write_text(text)
    assert cli("check", "-m", forge.manifest).exit_code == 0
    with FakeForge() as fake:
        forge.github(fake)
        result = _status(cli, forge, fake.url, "--write")
    assert result.exit_code == 2 and "--write would leave the manifest invalid, so nothing was written" in result.stderr
    assert "pr/1" in result.stderr and forge.manifest.read_text() == text


def test_write_applies_the_title_a_refold_names(cli: Cli, forge: Forge) -> None:
    """An older note: a PR both carried as an entry (with a title) and folded into a union, whose head moved
    and whose title changed upstream, is suggested `refold`, the title said in its `why`; `--write` applied
    only `retitle` suggestions, so the title said there was never written."""
    text = forge.manifest.read_text().replace("  - pr: 7\n", "  - pr: 7\n  - pr: 5\n    title: old five\n")
    forge.manifest.write_text(text)
    with FakeForge() as fake:
        forge.github(fake)
        fake.route("/repos/acme/widget/pulls/5", Reply({"number": 5, "state": "open", "title": "five, renamed",
                                                        "head": {"sha": forge.p5b}, "base": {"sha": forge.base},
                                                        "merged": False, "merge_commit_sha": None,
                                                        "merged_at": None}, etag='"pr5b"'))
        code, out = cli.json("status", "-m", forge.manifest, "--repo", forge.work.path, "--api-url", fake.url)
        [item] = [e for e in out["entries"] if e["id"] == "pr/5"]
        assert item["suggestion"] == "refold" and "also, the title upstream is now 'five, renamed'" in item["why"]
        result = _status(cli, forge, fake.url, "--write")
    assert result.exit_code == 0, result.output
    assert "pr/5: title set to 'five, renamed'" in result.stdout
    assert '  - pr: 5\n    title: "five, renamed"\n' in forge.manifest.read_text()


def test_offline_never_calls_merged_nor_drops_on_this_repositorys_evidence(cli: Cli, tmp_path: Path) -> None:
    """h194: offline with an empty cache, pr/2 (part 2 of pr/1, still open, its branch at pr/1's head when sync
    fetched it) was `merged`, `drop` on pr/1's hunks, and `--write` deleted its entry; pr/3 (a draft whose head
    is its base on main) was `merged` too. A head upstream's history holds says upstream has the PR's commits,
    not that the PR was merged: `unknown`, `investigate`, confirm online; `--write` changes nothing."""
    up = init_repo(tmp_path / "up")
    base = up.commit({"a.py": "def f():\n    return 1\n"}, "base", ref="refs/heads/main")
    p1 = up.commit({"a.py": "def f():\n    return 10\n"}, "pr 1", parent=base, ref="refs/pull/1/head")
    merge = up.commit({"a.py": "def f():\n    return 10\n"}, "Merge #1", parent="main", parents=["main", p1],
                      ref="refs/heads/main")
    work = init_repo(tmp_path / "work", bare=True)
    work.git("fetch", "-q", str(up.path), "+refs/*:refs/up/*")
    work.git("update-ref", "refs/carrytool/dev/upstream", "refs/up/heads/main")
    for n, head in ((1, p1), (2, p1), (3, base)):
        work.git("update-ref", f"refs/carrytool/dev/pr/{n}", head)
    manifest = tmp_path / "carries" / "manifest.yaml"
    manifest.parent.mkdir()
    text = ("version: 1\nupstream: {url: 'https://github.com/acme/widget.git', branch: main}\nfork: {branch: dev}\n"
            "entries:\n  - pr: 1\n  - pr: 2   # part 2 of #1, still open\n  - pr: 3   # draft\n")
    manifest.write_text(text)
    args = ("status", "-m", manifest, "--repo", work.path, "--offline")
    out = json.loads(cli(*args, "--format", "json").stdout)
    by_id = {e["id"]: e for e in out["entries"]}
    assert {i: (e["state"], e["suggestion"], e["landed"], e["merged_as"], e["head"]) for i, e in by_id.items()} == {
        "pr/1": ("unknown", "investigate", None, None, p1),
        "pr/2": ("unknown", "investigate", None, None, p1),
        "pr/3": ("unknown", "investigate", None, None, base)}
    assert by_id["pr/1"]["why"] == (
        f"upstream has its commits, as this repository tells: its head {p1[:12]} (as the last sync fetched it) is in "
        f"upstream's history, merged by {merge[:12]}; its head is pr/2's too, so which hunks are its own cannot be "
        "told here; whether the PR was merged is the forge's to say (an open PR with nothing pushed since looks the "
        "same here): confirm online, run without --offline")
    assert "is pr/1's too" in by_id["pr/2"]["why"] and "on upstream" not in by_id["pr/2"]["why"].split("pr/1's too")[1]
    assert by_id["pr/3"]["why"].startswith(f"upstream has its commits, as this repository tells: its head {base[:12]} ")
    written = cli(*args, "--write")
    assert written.exit_code == 0 and "wrote:" not in written.stdout, written.output
    assert manifest.read_text() == text


def test_a_pr_pushed_past_its_pin_says_so_with_both_heads_and_the_edit(cli: Cli, forge: Forge) -> None:
    """h244 (h239's trial on sqlalchemy): an entry pinned (`head:`) to the PR's last good head; the PR was pushed
    again. The last sync fetched its ref at the new head (the lock has the pin): status said "open upstream", as if
    the fork carried the PR's head, and nothing of the pin the fork is held at."""
    text = forge.manifest.read_text().replace("  - pr: 4\n", f"  - pr: 4\n    head: {forge.p4a}\n")
    forge.manifest.write_text(text)
    forge.work.git("update-ref", "refs/carrytool/dev/pr/4", forge.p4b)      # as the last sync fetched it
    with FakeForge() as fake:
        forge.github(fake)
        code, out = cli.json("status", "-m", forge.manifest, "--repo", forge.work.path, "--api-url", fake.url)
    [item] = [e for e in out["entries"] if e["id"] == "pr/4"]
    assert code == 0 and (item["suggestion"], item["head"]) == ("keep", forge.p4b), item
    assert item["why"] == (
        f"open; pinned to {forge.p4a[:12]} by its entry's `head:` ({forge.manifest}:13), but the PR's head is now "
        f"{forge.p4b[:12]}: it was pushed since the pin, and sync composes the pin; to carry the new head, set "
        f"`head: {forge.p4b}` in its entry (or remove `head:` to follow the PR), then `carrytool sync`")


def test_a_closed_pr_upstream_made_as_another_commit_is_a_drop(cli: Cli, forge: Forge) -> None:
    """h248 (h245's trl trial): a PR closed unmerged whose change upstream made as its own commit, which
    conflicts with the PR, was `investigate`, "the fork now carries it alone"; explain named the commit."""
    p8 = forge.up.commit({"b.py": B.replace("b10 = 10", "b10 = 100")}, "pr 8", parent=forge.base,
                         ref="refs/pull/8/head")
    made = forge.up.commit({"b.py": B.replace("b10 = 10\nb11 = 11", "b10 = 100\nb11 = 111")}, "b ten is 100",
                           parent="main", ref="refs/heads/main")
    forge.work.git("fetch", "-q", str(forge.up.path), "+refs/*:refs/up/*")
    forge.work.git("update-ref", "refs/carrytool/dev/upstream", "refs/up/heads/main")
    forge.manifest.write_text(forge.manifest.read_text() + "  - pr: 8\n")
    with FakeForge() as fake:
        forge.github(fake)
        fake.route("/repos/acme/widget/pulls/8", Reply({"number": 8, "state": "closed", "title": "pr 8",
                                                        "head": {"sha": p8}, "base": {"sha": forge.base},
                                                        "merged": False, "merge_commit_sha": None}))
        fake.route("/repos/acme/widget/issues/8/labels?per_page=100", Reply([]))
        result = _status(cli, forge, fake.url, "--format", "json")
    assert result.exit_code == 0, result.output
    by_id = {e["id"]: e for e in json.loads(result.stdout)["entries"]}
    assert by_id["pr/8"]["suggestion"] == "drop"
    assert by_id["pr/8"]["why"] == (
        "closed upstream without merging: the fork now carries it alone; but upstream already has its one hunk "
        f"(b.py: 1 of 1, line 11): likely merged upstream as {made[:10]} \"b ten is 100\"; upstream has its one "
        "hunk, so `carrytool status --write` removes its entry (`carrytool explain pr/8` says more)")
    assert (by_id["pr/3"]["state"], by_id["pr/3"]["suggestion"]) == ("closed", "investigate")   # nothing upstream
