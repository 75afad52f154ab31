"""How long `carrytool verify` takes with 100 asserts on a large file (run it and read the figures).

    .venv/bin/python -m bench --verify            (or: .venv/bin/python bench/verify_speed.py)

Writes a ~6,000-line Python module (classes of methods with branches, loops, try blocks and calls) and a
manifest of 100 asserts over it (calls with times/min/max, order, guarded_by, not_calls, mentions,
defines, text checks), then times the engine in process and the whole `carrytool verify --path` process.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

CHECKS = ("calls", "order", "guarded_by", "not_calls", "mentions", "defines", "contains", "matches")


def big_module(classes: int = 60, methods: int = 8) -> str:
    out = ['"""A large generated module."""', "import torch", ""]
    for c in range(classes):
        out.append(f"class Worker{c}:")
        for m in range(methods):
            out += [f"    def step{m}(self, tags=None, flag=False):",
                    f"        backend = self._backend{m}()",
                    "        if flag and tags:",
                    "            try:",
                    "                backend.resume(tags)",
                    "            except RuntimeError:",
                    "                self.log('failed')",
                    "            self.handshake(1)",
                    "        elif tags is None:",
                    "            backend.resume(None)",
                    "        else:",
                    "            for tag in tags:",
                    "                self.note(tag)",
                    "            backend.resume(tags)",
                    "        torch.cuda.synchronize()",
                    "        return self.finish()",
                    ""]
    return "\n".join(out) + "\n"


def asserts(n: int = 100, classes: int = 60, methods: int = 8, seed: int = 3) -> list[dict]:
    rng = random.Random(seed)
    out: list[dict] = []
    for i in range(n):
        scope = f"Worker{rng.randrange(classes)}.step{rng.randrange(methods)}"
        kind = CHECKS[i % len(CHECKS)]
        spec: dict = {"name": f"a{i}", "file": "big.py", "in": scope}
        if kind == "calls":
            spec.update(calls="backend.resume", times=1)
        elif kind == "order":
            spec["order"] = ["backend.resume", "torch.cuda.synchronize"]
        elif kind == "guarded_by":
            spec.update(calls="handshake", guarded_by="flag")
        elif kind == "not_calls":
            spec["not_calls"] = "allocator.wake_up"
        elif kind == "mentions":
            spec["mentions"] = "tags"
        elif kind == "defines":
            spec.pop("in")
            spec["defines"] = scope
        elif kind == "contains":
            spec["contains"] = "torch.cuda.synchronize()"
        else:
            spec["matches"] = r"backend\.resume\((tags|None)\)"
        out.append(spec)
    return out


def run() -> str:
    with tempfile.TemporaryDirectory(prefix="carrytool-verify-bench-") as tmp:
        root = Path(tmp)
        source = big_module()
        (root / "big.py").write_text(source)
        manifest = root / "manifest.yaml"
        manifest.write_text(yaml.safe_dump({"version": 1, "upstream": {"url": "."}, "fork": {"branch": "b"},
                                            "asserts": asserts()}, sort_keys=False))
        from carrytool.asserts import evaluate_all
        from carrytool.manifest.load import load_manifest

        loaded = load_manifest(manifest)
        data = source.encode()
        start = time.perf_counter()
        outcomes = evaluate_all(loaded.asserts, lambda _path: data)
        engine = time.perf_counter() - start
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "carrytool", "verify", "-m", str(manifest), "--path", str(root),
                               "--format", "json"], capture_output=True)
        whole = time.perf_counter() - start
        held = sum(o.ok for o in outcomes)
        return (f"verify: {len(loaded.asserts)} asserts on one {source.count(chr(10)):,}-line file "
                f"({held} hold): engine {engine * 1000:.0f} ms in process; whole `carrytool verify --path` "
                f"{whole * 1000:.0f} ms (exit {proc.returncode})")


if __name__ == "__main__":
    print(run())
