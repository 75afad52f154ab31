"""Build the demo scenario in a directory: upstream (with PR refs), the fork (with its union), a manifest.

Everything is written with git plumbing, a fixed identity and fixed dates: the same SHAs every time,
on every machine, with no network.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from carrytool.demo import pr_texts, sources
from carrytool.gitlayer.git import Git, Signature, scrubbed_env
from carrytool.union.resolutions import ConflictHunk, split_conflicts
from carrytool.union.store import Store
from carrytool.union.upstream_hunks import around_hunks, upstream_of_resolution

T0 = 1_781_000_000          # 2026-06-09, around when the seed's PRs were opened
UNION_NAME = "wake-path-union"
FORK_BRANCH = "intarweb-dev"


@dataclass
class Scenario:
    root: Path
    upstream: Path
    fork: Path
    work: Path
    manifest: Path
    upstream_head: str = ""
    base: str = ""
    prs: dict[int, list[str]] = field(default_factory=dict)     # PR -> its commits, oldest first
    union: str = ""

    def head(self, number: int) -> str:
        return self.prs[number][-1]


def _init_bare(path: Path) -> Git:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True, env=scrubbed_env())
    return Git(path)


class _Builder:
    def __init__(self, git: Git) -> None:
        self.git = git
        self.clock = T0

    def commit(self, parent: str | None, changes: dict, message: str, author: str = "upstream-dev") -> str:
        """A commit on PARENT with CHANGES ({path: full text | [(old, new)...] | None})."""
        self.clock += 3600
        base_tree = self.git.tree_of(parent) if parent else None
        edits = {}
        for path, change in changes.items():
            if change is None:
                edits[path] = None
                continue
            if isinstance(change, list):
                current = self._read(base_tree, path)
                change = sources.apply_edits(current, change, path)
            edits[path] = ("100644", self.git.write_blob(change.encode()))
        tree = self.git.edit_tree(base_tree or "4b825dc642cb6eb9a060e54bf8d69288fbee4904", edits)
        sig = Signature(author, f"{author}@users.noreply.example.com", self.clock)
        return self.git.write_commit(tree, [parent] if parent else [], sig, sig, message + "\n")

    def _read(self, tree: str | None, path: str) -> str:
        found = self.git.blob_at(tree, path) if tree else None
        if found is None:
            raise ValueError(f"demo source: {path} does not exist at the edit's parent")
        return self.git.read_blob(found[1]).decode()


def build(root: Path) -> Scenario:
    """Create the scenario under ROOT (which must be empty or absent) and return where things are."""
    root.mkdir(parents=True, exist_ok=True)
    sc = Scenario(root, root / "upstream.git", root / "fork.git", root / "work.git", root / "carries" / "manifest.yaml")
    with _init_bare(sc.upstream) as up:
        b = _Builder(up)
        sc.base = b.commit(None, dict(sources.UPSTREAM_FILES), "Initial import of the demo upstream")
        for number, title, commits in sources.PRS:
            parent, shas = sc.base, []
            for i, changes in enumerate(commits):
                message = title if i == 0 else f"{title} (part {i + 1})"
                parent = b.commit(parent, changes, message, author=f"contributor-{number}")
                shas.append(parent)
            sc.prs[number] = shas
            up.update_ref(f"refs/pull/{number}/head", parent, None, "demo")
        head = sc.base
        for message, changes in sources.UPSTREAM_LATER:
            head = b.commit(head, changes, message)
        sc.upstream_head = head
        up.update_ref("refs/heads/main", head, None, "demo")
        record_adjacency_resolution(up, sc, root / "carries" / "resolutions")
    with _init_bare(sc.fork) as fork:
        fork.run("fetch", "-q", str(sc.upstream), "refs/heads/main:refs/heads/main")
        fb = _Builder(fork)
        fb.clock = b.clock
        message = _union_message(sc)
        sc.union = fb.commit(sc.upstream_head, dict(sources.UNION_FILES_EDITS), message, author="intarweb-fork")
        fork.update_ref(f"refs/heads/carry/{UNION_NAME}", sc.union, None, "demo")
    _init_bare(sc.work).close()
    sc.manifest.parent.mkdir(parents=True, exist_ok=True)
    sc.manifest.write_text(manifest_text(sc))
    return sc


def record_adjacency_resolution(git: Git, sc: Scenario, store_root: Path) -> None:
    """The fork resolved the gpu_model_runner.py adjacency (#44778 x #45617) once, by an ordered 3-way
    merge (the seed's words): ship that resolution in the store, so a fold of the union stops only on
    the genuine gpu_worker.py overlap."""
    onto = git.merge_trees([(sc.upstream_head, sc.head(44778))])[0]
    sig = Signature("intarweb-fork", "intarweb-fork@users.noreply.example.com", T0)
    first = git.write_commit(onto.tree, [sc.upstream_head], sig, sig, "carrytool demo: #44778 on upstream\n")
    merged = git.merge_trees([(first, sc.head(45617))])[0]
    found = git.blob_at(merged.tree, sources.RUNNER)
    conflicted = git.read_blob(found[1]) if found else b""
    parts = split_conflicts(conflicted) if found else None
    # with upstream's lines each resolution drops and keeps, as `union continue` records them
    theirs = git.blob_at(git.tree_of(sc.upstream_head), sources.RUNNER)
    around: dict[str, list] = {}
    for at in around_hunks(git.read_blob(theirs[1]) if theirs else None, conflicted, sources.RUNNER):
        around.setdefault(at.hunk.key, []).append(at)
    store = Store(store_root, ".".join(map(str, git.version)))
    for part in parts or []:
        if isinstance(part, ConflictHunk):
            resolution = pr_texts.resolve_kv_adjacency(part)
            store.record(UNION_NAME, sources.RUNNER, part.key, part, resolution, ["pr/44778", "pr/45617"],
                         [upstream_of_resolution(at, resolution) for at in around.get(part.key, [])] or None,
                         [at.scope for at in around.get(part.key, [])])


def _union_message(sc: Scenario) -> str:
    lines = [f"carry: {UNION_NAME}: one coherent fork carry for the wake path", "",
             "gpu_worker.py is rewritten by four PRs that touch the same sleep()/wake_up() methods",
             "(genuine overlap, not adjacency); gpu_model_runner.py by three. Composed once, by hand:"]
    for number, title, _commits in sources.PRS:
        if number in sources.UNION_SUPERSEDES:
            lines.append(f"  #{number} {title} (head {sc.prs[number][-1 if number != 45610 else 1][:12]})")
    lines += ["", "cumem.py deliberately excluded: #45552 and #45554 carry it on their own."]
    return "\n".join(lines)


def manifest_text(sc: Scenario) -> str:
    """The demo manifest, with the union's SHA and the folded head of #45610 filled in."""
    folded = sc.prs[45610][1]
    return MANIFEST_TEMPLATE.format(union=sc.union, folded=folded, worker=sources.WORKER, runner=sources.RUNNER,
                                    cumem=sources.CUMEM_PY, pp_utils=sources.PP_UTILS_PY)


MANIFEST_TEMPLATE = """\
# carrytool demo manifest: a fork of a (pared-down) vLLM that carries the wake-path PRs.
version: 1
upstream:
  url: ../upstream.git            # relative to this file; a real fork uses https://github.com/vllm-project/vllm.git
  branch: main
fork:
  url: ../fork.git                # where the union commit lives
  branch: intarweb-dev
identity: {{name: carrytool, email: carrytool@localhost}}
policy:
  on_conflict: fail
  precompiled:                    # the fork ships a precompiled wheel: no C++/CUDA changes
    paths: ["csrc/**", "**/*.cu", "CMakeLists.txt"]
entries:
  - pr: 45552
    title: "cumem: synchronize at wake exit"
  - pr: 45554
    title: "cumem: drain in-flight kernels before unmap in sleep()"
  - pr: 45398
    title: "pluggable sleep-mode backend"
  - pr: 45619
    title: "gate level-2 buffer restore on the weights wake tag"
  - pr: 45620
    title: "do not crash sleep() on a shared-GPU free drop"
  - pr: 45612
    title: "symmetric gloo wake handshake"
  - pr: 44778
    title: "_iter_kv_cache_tensors: zero nested KV caches on wake"
  - pr: 45617
    title: "scale_specs: restore FP8 KV scales on wake"
  - pr: 45610
    title: "PP cudagraph consensus, hoisted before irecv_tensor_dict"
  - pr: 45565
    title: "C++ cuMemCreate retry"
  - pr: 45499
    title: "README: sleep-mode backends"
  - carry: {union_name}
    title: "wake-path union"
    commit: {union}
    supersedes:
      - 45398
      - 45619
      - 45620
      - {{pr: 45612, paths: [{worker}, tests/v1/worker/test_gpu_worker_wake_barrier.py]}}
      - 44778
      - 45617
      - {{pr: 45610, head: {folded}}}
    owns: [{worker}, {runner}]
    excludes: [{cumem}]
asserts:
  - name: resume-once
    file: {worker}
    in: Worker.wake_up
    calls: backend.resume
    times: 1
    why: "the #45612 handshake must gate backend.resume (#45398) exactly once on every path"
    entry: carry/{union_name}
  - name: no-raw-allocator-wake
    file: {worker}
    in: Worker.wake_up
    not_calls: allocator.wake_up
    why: "a raw allocator wake next to backend.resume wakes twice"
  - name: wake-handshake
    file: {worker}
    in: Worker.wake_up
    calls: _wake_handshake
    guarded_by: needs_wake_sync
    entry: pr/45612
  - name: kv-nested-zeroing
    file: {runner}
    in: GPUModelRunner.post_kv_cache_wake_up
    calls: _iter_kv_cache_tensors
    entry: pr/44778
  - name: fp8-scale-restore
    file: {runner}
    in: GPUModelRunner.post_kv_cache_wake_up
    mentions: scale_specs
    entry: pr/45617
  - name: pp-consensus-before-irecv
    file: {worker}
    in: Worker.execute_model
    order: [coordinate_cudagraph_mode_across_pp, irecv_tensor_dict]
    entry: pr/45610
  - name: runner-no-all-reduce
    file: {runner}
    in: GPUModelRunner.execute_model
    not_calls: all_reduce
  - name: pp-all-reduce-gated
    file: {pp_utils}
    in: coordinate_cudagraph_mode_across_pp
    calls: dist.all_reduce
    guarded_by: coordinate_pp_cudagraph_mode
  - name: sync-before-unmap
    file: {cumem}
    in: CuMemAllocator.sleep
    order: [torch.cuda.synchronize, unmap_and_release]
    entry: pr/45554
  - name: no-kernel-retry
    file: csrc/cumem_allocator.cpp
    absent: CUDA_ERROR_OUT_OF_MEMORY
    why: "the precompiled wheel cannot take C++ changes"
""".replace("{union_name}", UNION_NAME)
