"""Remote URLs and ref names: what git may be handed, and what may be shown."""

from __future__ import annotations

import re
from pathlib import Path

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_TRANSPORT = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)::")
_SCP = re.compile(r"^[^/@:\s]+@[^/:\s]+:")
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/@]*)@")
_HTTP_USERINFO = re.compile(r"(https?://)[^/?#\s]*@", re.IGNORECASE)
_PASSWORD_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s@:]*:[^/?#\s]*@")
_SECRET_PARAM = re.compile(r"([?&;][^=&;#\s]*(?:token|passw|secret|key|auth|sig|cred)[^=&;#\s]*)=[^&;#\s]*",
                           re.IGNORECASE)
_ALLOWED_SCHEMES = {"https", "http", "ssh", "git", "file", "git+ssh", "ssh+git"}


def url_problem(url: str) -> str | None:
    """Why URL must not reach git, or None. Local paths are fine; transports that run code are not."""
    if not url or url != url.strip():
        return "an empty URL or one with surrounding spaces"
    if url.startswith("-"):
        return f"a URL that starts with '-' ({redact(url)}): git would read it as an option"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        return "a URL with control characters"
    transport = _TRANSPORT.match(url)
    if transport:
        return f"a '{transport.group(1)}::' transport URL: carrytool does not run remote helpers from a manifest"
    scheme = _SCHEME.match(url)
    if scheme and scheme.group(1).lower() not in _ALLOWED_SCHEMES:
        return f"an unsupported URL scheme '{scheme.group(1)}' (use https, ssh, git, file or a path)"
    return None


def is_local(url: str) -> bool:
    """Whether git takes URL for a local path: no `scheme://` and no `host:path` (git's rule: a colon
    before any slash makes it scp-like ssh, with or without a user part; `./a:b` and `/a:b` are paths)."""
    if _SCHEME.match(url) or _SCP.match(url):
        return False
    colon, slash = url.find(":"), url.find("/")
    return colon < 0 or (0 <= slash < colon)


def resolve_local(url: str, base: Path) -> str:
    """A local path is taken relative to BASE (the manifest's directory); other URLs pass through."""
    if url.startswith("file://"):
        return url
    if is_local(url):
        path = Path(url).expanduser()
        return str(path if path.is_absolute() else (base / path).resolve())
    return url


def redact(text: str) -> str:
    """Hide credentials in URLs anywhere in TEXT: `https://user:tok@host` -> `https://***@host`.

    Over http(s) any user part goes (a bare `https://TOKEN@host` is how forges take tokens); over other
    schemes a `user:password` does, while `ssh://git@host` and `git@host:path` keep their user name.
    Query parameters that name a secret (`access_token`, `private_token`, `password`, `api_key`, ...) too.
    """
    text = _HTTP_USERINFO.sub(r"\1***@", text)
    text = _PASSWORD_USERINFO.sub(r"\1***@", text)
    return _SECRET_PARAM.sub(lambda m: m.group(1) + "=***", text)


def refname_problem(name: str, *, branch: bool = False) -> str | None:
    """Why NAME is not a valid git ref name (the rules of `git check-ref-format`), or None."""
    if not name:
        return "an empty name"
    if name.startswith("-"):
        return f"'{name}' starts with '-'"
    if name == "@" or "@{" in name:
        return f"'{name}' contains '@{{' or is '@'"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F or ch in " ~^:?*[\\" for ch in name):
        return f"'{name}' contains a space, a control character or one of ~ ^ : ? * [ \\"
    if ".." in name or "//" in name or name.startswith("/") or name.endswith("/") or name.endswith("."):
        return f"'{name}' contains '..' or '//', or starts/ends with '/' or ends with '.'"
    for part in name.split("/"):
        if part.startswith(".") or part.endswith(".lock"):
            return f"'{name}' has a component that starts with '.' or ends with '.lock'"
    if branch and name == "HEAD":
        return "'HEAD' is not a branch name"
    return None
