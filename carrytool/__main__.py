"""The console script and `python -m carrytool`: `--version` is answered here, without importing the CLI
(typer and click take most of start-up); everything else goes to `carrytool.cli.main`."""

import os
import sys


def _real_package() -> None:
    """`python -m carrytool` run where a folder `carrytool/` is (a bare repository carrytool ran in keeps its
    cache there) imports that folder, as a namespace package, ahead of an editable install, which finds
    this module but not the package's own names (helper-102: an ImportError traceback). Then the folder is
    dropped and the real package imported; a console script never has the current directory on its path."""
    package = sys.modules.get("carrytool")
    if package is None or getattr(package, "__file__", None) is not None:
        return
    here = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".", here)]
    del sys.modules["carrytool"]
    import carrytool  # noqa: F401 - the real package, found where the install put it


_real_package()


def main() -> None:
    """The CLI, returning (or raising SystemExit) as any callable does: for callers in-process."""
    if sys.argv[1:] == ["--version"]:
        from carrytool import __version__

        sys.stdout.write(f"carrytool {__version__}\n")     # what the CLI's own --version prints
        sys.stdout.flush()
        return
    import warnings

    # typer < 0.20 (pinned for start-up time) reads a helper click 8.5 deprecates: with PYTHONWARNINGS=error
    # every command stopped at import, exit 1 ("verification failed" to CI; helper-113)
    warnings.filterwarnings("ignore", message=r".*click\.utils\.get_(binary|text)_stream.*",
                            category=DeprecationWarning)
    try:
        from carrytool.cli import main as cli_main
    except KeyboardInterrupt:          # Ctrl-C while starting: nothing was done yet (helper-103: a traceback)
        sys.stderr.write("carrytool: interrupted; nothing was done\n")
        raise SystemExit(130) from None
    cli_main()


class _Unbroken:
    """A standard stream whose reader may leave (`carrytool sync | head -1`): from the first broken pipe on,
    its file descriptor points at /dev/null and the run goes on, so that what it does and its exit code do
    not depend on when the reader left (a write that raised stopped the run wherever it was: before
    composing, for a diagnostic line, with exit 0)."""

    def __init__(self, stream) -> None:  # noqa: ANN001 - a text stream
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            if not _gone(exc):
                raise
            self._drop()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            if not _gone(exc):
                raise
            self._drop()

    def _drop(self) -> None:
        to_devnull(self._stream)

    def __getattr__(self, name: str):  # noqa: ANN204 - everything else is the stream's
        return getattr(self._stream, name)


def to_devnull(stream) -> None:  # noqa: ANN001 - a text stream
    """Point STREAM's file descriptor at /dev/null: what is left in its buffer must not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _gone(exc: OSError) -> bool:
    """Whether EXC says the reader left (a broken pipe) or the descriptor was closed under the stream."""
    import errno

    return isinstance(exc, BrokenPipeError) or exc.errno == errno.EBADF


def _stream(stream):  # noqa: ANN001, ANN202 - a text stream, or None when the descriptor was closed
    """STREAM, whose reader may leave (_Unbroken); a closed one (`carrytool sync >&-`: Python has None)
    writes to /dev/null."""
    if stream is None:
        stream = open(os.devnull, "w", encoding="utf-8")   # noqa: SIM115 - for the life of the process
    return _Unbroken(stream)


def entry() -> None:
    """Console entry point (also `python -m carrytool`): `main`, then out of the process without the
    interpreter's teardown, which frees every object a large run made (25-40 ms after a sync of 60 real PRs)
    for nothing. The work is done by then: every git process was waited for, every file written and closed
    by the command; the standard streams are flushed here. An exit that is not plain (a message instead of
    a status, a stream that cannot be flushed) is left to the interpreter, which reports it as it always has."""
    sys.stdout, sys.stderr = _stream(sys.stdout), _stream(sys.stderr)   # type: ignore[assignment]
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code
    if not isinstance(code, int):
        raise SystemExit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code & 0xFF)


if __name__ == "__main__":
    entry()
