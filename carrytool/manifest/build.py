"""Validation of a manifest document, key by key: every error names its key path and line.

The keys themselves are declared in manifest.SCHEMA; this module checks values against it and builds
the frozen dataclasses of model.py. It reports every error in one pass: each section, entry and assert
is validated on its own (the first error inside one stops only that one), and the errors are raised
together as one ManifestError.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from carrytool.errors import ManifestError
from carrytool.gitlayer.urls import refname_problem, url_problem
from carrytool.manifest import paths as pathlib_
from carrytool.manifest.build_asserts import _Asserts
from carrytool.manifest.build_entries import _Entries
from carrytool.manifest.build_keys import _Keys, _kind
from carrytool.manifest.model import Fork, Identity, Manifest, Policy, Upstream
from carrytool.manifest.yamlload import YList, YMap

T = TypeVar("T")


def build_manifest(data: Any, text: str, path: Path) -> Manifest:
    """Validate the YAML DATA read from PATH and build the Manifest."""
    return _Builder(path).build(data, text)


class _Builder(_Keys, _Entries, _Asserts):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.errors: list[ManifestError] = []
        self.failed_ids: set[str] = set()   # ids of entries that did not validate: asserts may still name them

    def collect(self, build: Callable[[], T]) -> T | None:
        """Validate one independent part; record its errors (None) and let the caller go on."""
        try:
            return build()
        except ManifestError as exc:
            self.errors += exc.errors
            return None

    # -- sections -------------------------------------------------------------------------------------
    def build(self, data: Any, text: str) -> Manifest:
        if data is None:
            raise self.fail("", 1, "the manifest is empty", hint="start from docs/manifest.md")
        if not isinstance(data, YMap):
            self.section(data, "manifest", "", 1)
        top: YMap = data
        problems = self.section_problems(top, "manifest", "", 1)
        self.errors += [error for _, error in problems]
        bad = {key for key, _ in problems}

        def part(key: str, build: Callable[[Any], T], default: Any = None) -> T | None:
            if key in bad:
                return None
            return self.collect(lambda: build(top.get(key, default)))

        if "version" not in bad and top["version"] != 1:
            self.errors.append(self.fail("version", top.key_lines["version"], f"unsupported version "
                                         f"{top['version']}; this carrytool reads version 1"))
        upstream = part("upstream", self.upstream)
        fork = part("fork", self.fork)
        identity = part("identity", self.identity)
        policy = part("policy", self.policy)
        entries = part("entries", lambda items: self.entries(items, top), YList()) or ()
        asserts = part("asserts", lambda items: self.asserts(items, top, entries), YList()) or ()
        if self.errors:
            raise ManifestError.of(self.errors)
        assert upstream and fork and identity and policy  # each is built, or an error was recorded
        return Manifest(self.path, upstream, fork, identity, policy, entries, asserts, 1, text)

    def upstream(self, data: Any) -> Upstream:
        data = self.section(data, "upstream", "upstream", None)
        url = self.url(data, "upstream")
        branch = self.branch(data, "upstream")
        pr_ref = data.get("pr_ref", "refs/pull/{number}/head")
        line = data.key_lines.get("pr_ref", data.line)
        if pr_ref.count("{number}") != 1 or re.search(r"[{}]", pr_ref.replace("{number}", "")):
            raise self.fail("upstream.pr_ref", line, f"must contain {{number}} exactly once, got '{pr_ref}'",
                            hint="GitHub: refs/pull/{number}/head; GitLab: refs/merge-requests/{number}/head")
        sample = pr_ref.replace("{number}", "1")
        problem = refname_problem(sample)
        if problem or not sample.startswith("refs/"):
            raise self.fail("upstream.pr_ref", line, f"is not a valid ref under refs/: {problem or pr_ref}")
        return Upstream(url, branch, pr_ref)

    def fork(self, data: Any) -> Fork:
        data = self.section(data, "fork", "fork", None)
        url = self.url(data, "fork") if "url" in data else None
        return Fork(self.branch(data, "fork"), url)

    def url(self, data: YMap, keypath: str) -> str:
        url = data["url"]
        problem = url_problem(url)
        if problem:
            raise self.fail(f"{keypath}.url", data.key_lines["url"], f"refused: {problem}")
        return url

    def branch(self, data: YMap, keypath: str) -> str:
        branch = data.get("branch", "main")
        if branch.startswith("refs/"):
            branch = branch[len("refs/heads/"):] if branch.startswith("refs/heads/") else branch
        problem = refname_problem(branch, branch=True)
        if problem:
            raise self.fail(f"{keypath}.branch", data.key_lines.get("branch", data.line),
                            f"is not a valid branch name: {problem}")
        return branch

    def identity(self, data: Any) -> Identity:
        if data is None:
            return Identity()
        data = self.section(data, "identity", "identity", None)
        values = {}
        for key in ("name", "email"):
            if key in data:
                if re.search(r"[<>\n\r\0]", data[key]):
                    raise self.fail(f"identity.{key}", data.key_lines[key], "must not contain <, > or newlines")
                values[key] = data[key].strip()
        return Identity(**values)

    def policy(self, data: Any) -> Policy:
        if data is None:
            return Policy()
        data = self.section(data, "policy", "policy", None)
        precompiled: tuple[str, ...] = ()
        if "precompiled" in data:
            pre = self.section(data["precompiled"], "precompiled", "policy.precompiled", data.key_lines["precompiled"])
            precompiled = self.patterns(pre["paths"], "policy.precompiled.paths")
        structured = self.structured_merge(data, "policy") if "structured_merge" in data else ()
        return Policy(data.get("on_conflict", "fail"), data.get("on_missing", "fail"), precompiled, structured,
                      data.get("stacked", "whole"))

    def structured_merge(self, data: YMap, keypath: str) -> tuple[str, ...]:
        section = self.section(data["structured_merge"], "structured_merge", f"{keypath}.structured_merge",
                               data.key_lines["structured_merge"])
        return self.patterns(section["paths"], f"{keypath}.structured_merge.paths")

    def patterns(self, items: YList, keypath: str) -> tuple[str, ...]:
        out = []
        for i, item in enumerate(items):
            line = items.item_lines[i]
            if not isinstance(item, str):
                raise self.fail(f"{keypath}[{i}]", line, f"must be a path, got {_kind(item)}")
            problem = pathlib_.glob_problem(item)
            if problem:
                raise self.fail(f"{keypath}[{i}]", line, f"refused: {problem}")
            out.append(pathlib_.normalize(item))
        return tuple(out)
