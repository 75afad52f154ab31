"""Tables for people (markdown pipes, fine in a terminal) and JSON for machines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .runners import STARTUP_RUNS
from .session import Summary


def _s(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def _yes(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """A markdown table with columns padded to their widest cell."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def render_compare(summaries: Sequence[Summary], repeat: int) -> str:
    """The side-by-side table: medians of REPEAT interleaved runs, ratios, counts and carrytool's RSS."""
    header = ["workload", "naive s", "chain s", "carrytool s", "(warm) s", "naive/carrytool",
              "carrytool/chain", "naive/(warm)", "(warm)/chain", "applied naive", "applied chain",
              "applied carrytool", "same tree as chain", "carrytool RSS MB"]
    rows = []
    for s in summaries:
        naive, chain, tool = s.median("naive"), s.median("chain"), s.median("carrytool")
        warm = s.median_extra("carrytool", "warm_seconds")
        rows.append([_label(s), _s(naive), _s(chain), _s(tool), _s(warm), _ratio(naive, tool), _ratio(tool, chain),
                     _ratio(naive, warm), _ratio(warm, chain), _n(s.applied("naive")), _n(s.applied("chain")),
                     _n(s.applied("carrytool")), _yes(s.same_tree()), _s(s.peak_rss("carrytool"), 0)])
    cpu_header = ["workload", "naive CPU s", "chain CPU s", "carrytool CPU s", "(warm) CPU s",
                  "naive/carrytool", "carrytool/chain", "naive/(warm)", "(warm)/chain"]
    cpu_rows = []
    for s in summaries:
        naive, chain, tool = s.median_cpu("naive"), s.median_cpu("chain"), s.median_cpu("carrytool")
        warm = s.median_extra("carrytool", "warm_cpu_seconds")
        cpu_rows.append([_label(s), _s(naive), _s(chain), _s(tool), _s(warm), _ratio(naive, tool),
                         _ratio(tool, chain), _ratio(naive, warm), _ratio(warm, chain)])
    explain = render_explain(summaries)
    startup = [[_label(s), _s(s.median("startup"), 3), _s(s.median_extra("startup", "help_seconds"), 3),
                _s(s.median_cpu("startup"), 3), _s(s.median_extra("startup", "help_cpu_seconds"), 3)]
               for s in summaries if s.runs.get("startup")]
    startup_text = (f"\n\nCLI start-up (median over runs of the median of {STARTUP_RUNS} interleaved "
                    "`carrytool --version` and `carrytool sync --help`; the goal is at most 0.15 s)\n\n"
                    + table(startup, ["workload", "--version s", "sync --help s", "--version CPU s",
                                      "sync --help CPU s"])) if startup else ""
    return (f"wall time, median of {repeat} interleaved run(s). carrytool = the whole `sync` process including "
            "its fetch of upstream's and every PR's ref (the objects are already there, as in the other runners' "
            "clones, whose set-up is not timed); (warm) = a second sync into the same repository: nothing to fetch "
            "(the naive and chain loops fetch nothing either) and the composed objects already written\n\n"
            + table(rows, header)
            + "\n\nCPU time (user + sys of every process; steadier than wall time on a busy machine)\n\n"
            + table(cpu_rows, cpu_header) + explain
            + startup_text)


def render_explain(summaries: Sequence[Summary]) -> str:
    """explain beside sync, when the carrytool runner timed it (Inputs.explain); else nothing."""
    rows = []
    for s in summaries:
        tool, cold, warm = (s.median("carrytool"), s.median_extra("carrytool", "explain_seconds"),
                            s.median_extra("carrytool", "explain_warm_seconds"))
        if cold is None:
            continue
        tool_cpu = s.median_cpu("carrytool")
        cold_cpu, warm_cpu = (s.median_extra("carrytool", "explain_cpu_seconds"),
                              s.median_extra("carrytool", "explain_warm_cpu_seconds"))
        rss = max(s.median_extra("carrytool", "explain_rss_mb") or 0, s.median_extra("carrytool", "explain_warm_rss_mb") or 0)
        rows.append([_label(s), _s(tool), _s(cold), _s(warm), _ratio(cold, tool), _ratio(warm, tool),
                     _s(tool_cpu), _s(cold_cpu), _s(warm_cpu), _ratio(cold_cpu, tool_cpu), _ratio(warm_cpu, tool_cpu),
                     _s(rss, 0)])
    if not rows:
        return ""
    header = ["workload", "sync s", "explain s", "explain (warm) s", "explain/sync", "explain (warm)/sync",
              "sync CPU s", "explain CPU s", "explain (warm) CPU s", "explain/sync CPU", "explain (warm)/sync CPU",
              "explain RSS MB"]
    return ("\n\nexplain beside sync: `explain --offline` in the carrytool runner's repository right after its syncs "
            "(sync = the cold sync above); explain = nothing an explain keeps (no scope cache: every Python blob it "
            "needs parsed; no pair decisions: every pair merged), what the syncs kept (merges, the landing checks' "
            "findings) found as after the nightly sync; "
            "(warm) = again, with the cache the first run wrote\n\n" + table(rows, header))


def render_scale(summaries: Sequence[Summary], repeat: int) -> str:
    """Time per entry as entries grow (should be flat: linear total) and as the tree grows (should be flat)."""
    header = ["sweep", "files", "entries", "chain s", "chain ms/entry", "carrytool s", "carrytool ms/entry",
              "(warm) ms/entry", "chain CPU ms/entry", "carrytool CPU ms/entry", "carrytool/chain", "applied",
              "RSS MB"]
    rows = []
    for s in summaries:
        n = len(s.inputs.prs)
        chain, tool = s.median("chain"), s.median("carrytool")
        warm = s.median_extra("carrytool", "warm_seconds")
        rows.append([s.group, f"{s.inputs.files:,}" if s.inputs.files else "-", str(n), _s(chain),
                     _per(chain, n), _s(tool), _per(tool, n), _per(warm, n), _per(s.median_cpu("chain"), n),
                     _per(s.median_cpu("carrytool"), n), _ratio(tool, chain), _n(s.applied("carrytool")),
                     _s(s.peak_rss("carrytool"), 0)])
    return f"wall time, median of {repeat} interleaved run(s)\n\n" + table(rows, header) + "\n\n" + \
        render_fits([s for s in summaries if s.group == "entries"])


def fit_line(points: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """Least-squares (intercept, slope) of y over x, or None with fewer than two distinct x."""
    if len({x for x, _ in points}) < 2:
        return None
    n = len(points)
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return my - slope * mx, slope


def render_fits(summaries: Sequence[Summary]) -> str:
    """Time = fixed + per-entry cost, fitted over the entries sweep: the marginal cost of one more entry."""
    lines = ["time ~ fixed + slope x entries (least squares over the entries sweep):"]
    for runner in ("chain", "carrytool"):
        for label, value in (("wall", Summary.median), ("CPU", Summary.median_cpu)):
            points = [(len(s.inputs.prs), value(s, runner)) for s in summaries]
            fit = fit_line([(x, y) for x, y in points if y is not None])
            if fit:
                lines.append(f"  {runner:<9} {label:<4}  fixed {fit[0]:6.2f} s  + {1000 * fit[1]:6.2f} ms/entry")
    return "\n".join(lines)


def _per(seconds: float | None, entries: int) -> str:
    return "-" if seconds is None or not entries else f"{1000 * seconds / entries:.2f}"


def _label(s: Summary) -> str:
    size = f" ({s.inputs.files:,} files, {len(s.inputs.prs)} PRs)" if s.inputs.files else f" ({len(s.inputs.prs)} PRs)"
    return s.inputs.name + size


def to_json(summaries: Sequence[Summary]) -> dict[str, object]:
    """Every measurement, for tracking over time and for tests."""
    out = []
    for s in summaries:
        out.append({
            "workload": s.inputs.name, "group": s.group, "files": s.inputs.files, "entries": len(s.inputs.prs),
            "runners": {name: {"median_seconds": s.median(name), "applied": s.applied(name),
                               "peak_rss_mb": s.peak_rss(name),
                               "median_cpu_seconds": s.median_cpu(name),
                               "runs": [{"seconds": m.seconds, "applied": m.applied, "rss_mb": m.rss_mb,
                                         "cpu_seconds": m.cpu_seconds, **m.extra}
                                        for m in runs]}
                        for name, runs in s.runs.items()},
        })
    return {"workloads": out}


def write_json(summaries: Sequence[Summary], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(summaries), indent=2) + "\n")
