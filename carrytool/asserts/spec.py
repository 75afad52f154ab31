"""What an assertion asks and what it answered: the data the engine and the manifest share."""

from __future__ import annotations

from dataclasses import dataclass

# Every check key of the contract. Python checks parse the file with `ast`; text checks read it as text.
PYTHON_CHECKS = ("defines", "mentions", "calls", "not_calls", "order", "reads")
TEXT_CHECKS = ("contains", "absent", "matches")
CHECKS = PYTHON_CHECKS + TEXT_CHECKS
# Which paths `times`/`min`/`max` judge: every path, or only those ending by `return` or falling off the end.
PATHS = ("all", "returning")


@dataclass(frozen=True)
class AssertSpec:
    """One hot-path assertion from the manifest's `asserts:` list."""

    name: str
    file: str                              # path in the tree, '/'-separated
    check: str                             # one of CHECKS
    target: str | tuple[str, ...]          # the check's value; a tuple for `order`
    scope: str | None = None               # `in:` Class.method, function, Outer.Inner.method
    times: int | None = None               # calls: exactly N on every path
    min: int | None = None                 # calls: at least N on every path
    max: int | None = None                 # calls: at most N on every path
    guarded_by: str | None = None          # calls: every call sits in the true branch of an `if` mentioning it
    paths: str = "all"                     # calls with bounds: judge `all` paths or only `returning` ones
    why: str | None = None                 # shown on failure
    entry: str | None = None               # the entry id it guards (pr/N, carry/NAME)
    line: int | None = None                # where it is declared in the manifest
    through: str | None = None             # calls/not_calls/order: "local" follows same-file callees
    args: tuple[tuple[str | int, str], ...] | None = None  # calls/not_calls: only calls with these arguments
    after: tuple[str, ...] | None = None   # calls: no call of these can run once the target was called
    in_try: bool | None = None             # calls: a call sits in a `try` body with an `except` handler


@dataclass(frozen=True)
class AssertOutcome:
    """The answer to one assertion on one tree."""

    name: str
    file: str
    ok: bool
    message: str
    line: int | None = None                # the line in `file` the message is about, when there is one
    entry: str | None = None
    why: str | None = None
    unparsable: bool = False               # the file does not parse (on this Python): the check was not judged

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"name": self.name, "file": self.file, "ok": self.ok,
                                   "message": self.message, "line": self.line}
        if self.entry:
            data["entry"] = self.entry
        if self.why:
            data["why"] = self.why
        return data
