"""A small REST client for the forge (GitHub or GitLab), standard library only: tokens from the
environment (never shown), an ETag cache under the git dir, rate limits honoured, Link pagination.

It reads pull/merge request state only; it never writes to the forge.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

from carrytool.errors import EnvironmentProblem, InputError
from carrytool.gitlayer.jsonread import load_json, read_json
from carrytool.gitlayer.urls import redact
from carrytool.pipeline.atomic import write_atomic

API_ROOTS = {"github": "https://api.github.com", "gitlab": "https://gitlab.com/api/v4"}
TOKEN_VARS = {"github": "GITHUB_TOKEN", "gitlab": "GITLAB_TOKEN"}
API_VARS = {"github": "CARRYTOOL_GITHUB_API", "gitlab": "CARRYTOOL_GITLAB_API"}
MAX_WAIT = 60.0          # seconds a rate limit may hold us before we give up (exit 4)
TIMEOUT = 30.0
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


class ForgeError(EnvironmentProblem):
    """The forge could not answer: network, server error, rate limit too long, bad credentials (exit 4)."""


@dataclass(frozen=True)
class Answer:
    """A forge reply: the JSON body (None: 404), and whether it came from the network or the cache."""

    body: Any
    source: str               # "api" | "cache"
    status: int = 200


def guess_forge(url: str) -> str:
    """`gitlab` when the upstream URL's host says so, else `github`."""
    host = re.sub(r"^[a-z+]+://", "", url).split("/")[0].split(":")[0].rsplit("@", 1)[-1]
    return "gitlab" if "gitlab" in host.lower() else "github"


def project_path(url: str) -> str:
    """`owner/repo` (GitLab: `group/subgroup/repo`) of an upstream git URL (https, ssh or scp form)."""
    text = url.strip()
    if "://" in text:
        path = urllib.parse.urlsplit(text).path
    elif re.match(r"^[^/]+@[^/:]+:", text) or re.match(r"^[^/:]+:", text):
        path = text.split(":", 1)[1]
    else:
        raise InputError(f"cannot tell the forge project from upstream.url {redact(url)}",
                         hint="status asks the forge about PRs: upstream.url must be the forge's URL (to fetch "
                              "from a local mirror all the same, keep the forge's URL and tell git: "
                              "`git config url./path/to/mirror.insteadOf https://github.com/OWNER/REPO`)")
    path = path.strip("/")
    path = path[:-4] if path.endswith(".git") else path
    if path.count("/") < 1:
        raise InputError(f"cannot tell owner/repository from upstream.url {redact(url)}")
    return path


class ForgeClient:
    """GET JSON from one forge's REST API, with an ETag cache and rate-limit waits."""

    def __init__(self, forge: str, api_root: str | None, cache_file: Path, *, offline: bool = False,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time) -> None:
        self.forge = forge
        chosen = api_root or os.environ.get(API_VARS[forge])
        self.root = (chosen or API_ROOTS[forge]).rstrip("/")
        if not re.match(r"https?://[^/]", self.root, re.I):
            raise InputError(f"the forge's API root {redact(self.root)} is not an http(s) URL",
                             hint="pass --api-url https://HOST/... (GitHub Enterprise: https://HOST/api/v3)")
        self._token = os.environ.get(TOKEN_VARS[forge]) or None
        self.cache_file = cache_file
        self.offline = offline
        self.sleep, self.clock = sleep, clock
        self._cache = _read_cache(cache_file)
        if offline and not chosen:
            # answers cached from one other API root (a run with --api-url): offline, without one, read
            # those rather than find nothing for the default root
            marker = "/repos/" if forge == "github" else "/projects/"
            roots = {url.split(marker, 1)[0] for url in self._cache if marker in url}
            if len(roots) == 1 and self.root not in roots:
                self.root = roots.pop()
        self._dirty = False
        self.used_network = False

    # -- public -------------------------------------------------------------------------------------------
    def get(self, path: str) -> Answer:
        """GET ROOT/PATH: the JSON body; a 404 is `body=None`; anything else unusable raises ForgeError."""
        url = f"{self.root}/{path.lstrip('/')}"
        cached = self._cache.get(url)
        if self.offline:
            return Answer(cached["body"] if cached else None, "cache", cached["status"] if cached else 0)
        status, headers, body = self._request(url, cached.get("etag") if cached else None)
        if status == 304 and cached:
            return Answer(cached["body"], "api", cached["status"])
        if status == 404:
            self._remember(url, None, 404, None)
            return Answer(None, "api", 404)
        data = _json(body, url)
        self._remember(url, headers.get("ETag"), status, data)
        return Answer(data, "api", status)

    def get_all(self, path: str) -> Answer:
        """GET every page of a list (following `Link: rel="next"`), concatenated."""
        first = self.get(path)
        items, source = list(first.body if isinstance(first.body, list) else []), first.source
        url = self._cache.get(f"{self.root}/{path.lstrip('/')}", {}).get("next")
        pages = 1
        while url and pages < 50:
            page = self.get(url[len(self.root):]) if url.startswith(self.root) else Answer(None, source)
            items += page.body if isinstance(page.body, list) else []
            url = self._cache.get(url, {}).get("next")
            pages += 1
        return Answer(items if first.body is not None else None, source, first.status)

    def save(self) -> None:
        """Write the cache back (atomically) when it changed."""
        if self._dirty:
            write_atomic(self.cache_file, json.dumps(self._cache, indent=1, sort_keys=True) + "\n")
            self._dirty = False

    # -- HTTP ---------------------------------------------------------------------------------------------
    def _headers(self, etag: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "carrytool"}
        if self.forge == "github":
            headers["Accept"] = "application/vnd.github+json"
        if self._token:
            headers.update({"Authorization": f"Bearer {self._token}"} if self.forge == "github"
                           else {"PRIVATE-TOKEN": self._token})
        if etag:
            headers["If-None-Match"] = etag
        return headers

    def _request(self, url: str, etag: str | None) -> tuple[int, Message, bytes]:
        """One GET with rate-limit waits and one retry on a server error; return (status, headers, body)."""
        self.used_network = True
        for attempt in range(4):
            try:
                with _OPENER.open(urllib.request.Request(url, headers=self._headers(etag)),
                                  timeout=TIMEOUT) as reply:
                    self._link(url, reply.headers)
                    return reply.status, reply.headers, reply.read()
            except urllib.error.HTTPError as exc:
                exc.close()                   # its headers stay readable; the socket must not leak
                if exc.code in (304, 404):
                    return exc.code, exc.headers, b""
                wait = self._rate_limit_wait(exc)
                if wait is not None and attempt < 3:
                    self.sleep(wait)
                    continue
                if wait is not None:      # still rate-limited: not "access is forbidden" (helper-85)
                    raise ForgeError(f"the forge's rate limit held through {attempt + 1} tries of {redact(url)}",
                                     hint=self._limit_hint()) from None
                if exc.code >= 500 and attempt == 0:
                    self.sleep(0.5)
                    continue
                raise self._failure(url, exc) from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                # a truncated answer or a garbled status line is no traceback either (helper-85)
                reason = getattr(exc, "reason", None) or f"{type(exc).__name__}: {exc}"
                raise ForgeError(f"cannot reach the forge at {redact(self.root)}: {reason}",
                                 hint="check --api-url / the network, or answer from the cache with --offline") \
                    from None
        raise ForgeError(f"the forge kept refusing {redact(url)}")

    def _rate_limit_wait(self, exc: urllib.error.HTTPError) -> float | None:
        """Seconds to wait when EXC is a rate limit we can sit out; raise when it is too long; None otherwise."""
        if exc.code not in (403, 429):
            return None
        retry_after = exc.headers.get("Retry-After")
        reset = exc.headers.get("X-RateLimit-Reset") or exc.headers.get("RateLimit-Reset")
        remaining = exc.headers.get("X-RateLimit-Remaining") or exc.headers.get("RateLimit-Remaining")
        if retry_after and retry_after.strip().isdigit():
            wait = float(retry_after)
        elif reset and reset.strip().isdigit() and (remaining == "0" or exc.code == 429):
            wait = max(0.0, float(reset) - self.clock())
        elif exc.code == 429:
            wait = 60.0
        else:
            return None
        if wait > MAX_WAIT:
            raise ForgeError(f"the forge's rate limit holds for {int(wait)}s more (limit reached)",
                             hint=self._limit_hint())
        return wait

    def _limit_hint(self) -> str:
        return f"set {TOKEN_VARS[self.forge]} for a higher limit, wait, or answer from the cache with --offline"

    def _failure(self, url: str, exc: urllib.error.HTTPError) -> ForgeError:
        what = {401: "the token was refused", 403: "access is forbidden"}.get(exc.code, f"HTTP {exc.code}")
        hint = (f"check {TOKEN_VARS[self.forge]}" if exc.code in (401, 403)
                else "retry later, or answer from the cache with --offline")
        return ForgeError(f"the forge answered {redact(url)}: {what}", hint=hint)

    def _link(self, url: str, headers: Message) -> None:
        match = _NEXT.search(headers.get("Link") or "")
        entry = self._cache.setdefault(url, {"etag": None, "status": 0, "body": None})
        nxt = match.group(1) if match else None
        if entry.get("next") != nxt:
            entry["next"] = nxt
            self._dirty = True

    def _remember(self, url: str, etag: str | None, status: int, body: Any) -> None:
        entry = self._cache.setdefault(url, {})
        entry.update(etag=etag, status=status, body=body)
        self._dirty = True


class _SameHostAuth(urllib.request.HTTPRedirectHandler):
    """Follow a redirect, but send the token only to the host it was meant for (helper-85: a redirect to
    another host received `Authorization`; urllib copies every header but the content ones)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001, ANN201 - urllib's signature
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None:
            before, after = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(new.full_url)
            if (before.scheme, before.netloc.lower()) != (after.scheme, after.netloc.lower()):
                for name in list(new.headers):
                    if name.lower() in ("authorization", "private-token"):
                        del new.headers[name]
        return new

    def http_error_302(self, req, fp, code, msg, headers):  # noqa: ANN001, ANN201 - urllib's signature
        try:
            return super().http_error_302(req, fp, code, msg, headers)
        except ValueError as exc:         # a Location urllib cannot parse (helper-86): its answer is closed
            fp.close()
            raise urllib.error.URLError(f"a redirect to an unusable URL ({exc})") from None

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


_OPENER = urllib.request.build_opener(_SameHostAuth)


def _json(body: bytes, url: str) -> Any:
    try:
        return load_json(body.decode("utf-8"))
    except ValueError:
        raise ForgeError(f"the forge's answer to {redact(url)} is not JSON") from None


def _read_cache(path: Path) -> dict[str, dict[str, Any]]:
    """The cached answers at PATH; an entry that is not an object is none, a field of the wrong type its default
    (h246: a hand edit, `7` for an answer or a `next` page, was a traceback in `status --offline`)."""
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out = {}
    for url, entry in data.items():
        if isinstance(entry, dict):
            out[url] = {**entry, "etag": entry.get("etag") if isinstance(entry.get("etag"), str) else None,
                        "status": entry.get("status") if type(entry.get("status")) is int else 0}
            if "next" in entry and not isinstance(entry["next"], str):
                out[url]["next"] = None
    return out
