"""`carrytool status` as text: one line per PR (state, suggestion, why), then what --write changed."""

from __future__ import annotations

from carrytool.render.commands import Invocation
from carrytool.render.safe import printable
from carrytool.review.status import StatusResult


def render_status_text(result: StatusResult, *, invocation: Invocation | None = None, verbose: bool = False) -> str:
    """The status for a terminal; untrusted titles and labels escaped, next-step commands completed."""
    source = "this repository: upstream.url is a local path, with no forge" if result.local else \
        "the forge API" if result.source == "api" else "the cache"
    lines = [f"carrytool status (from {source})"]
    for item in result.entries:
        head = (item["head"] or "")[:12]
        title = f" {item['title']!r}" if item["title"] else ""
        lines.append(f"  {item['id']} {item['state']}{title} {head}".rstrip())
        why = invocation.rewrite(item["why"]) if invocation else item["why"]
        lines.append(f"      {item['suggestion']}: {why}")
        if verbose and item["labels"]:
            lines.append(f"      labels: {', '.join(item['labels'])}")
    counts: dict[str, int] = {}
    for item in result.entries:
        counts[item["suggestion"]] = counts.get(item["suggestion"], 0) + 1
    lines.append(", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no PRs carried")
    lines += [f"wrote: {line}" for line in result.written]
    return "\n".join(printable(line, newlines=False) for line in lines) + "\n"
