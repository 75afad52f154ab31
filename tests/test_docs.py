"""The docs say what carrytool does: every manifest key documented with its real default, every example
valid, every carrytool command line parseable, every link pointing somewhere."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from carrytool.errors import EXIT_CONFLICT, EXIT_ENV, EXIT_INPUT, EXIT_OK, EXIT_VERIFY
from carrytool.manifest.load import load_manifest
from carrytool.manifest.model import SCHEMA, Key
from carrytool.manifest.schema import manifest_schema
from carrytool.pipeline.plan import plan_static
from tests.conftest import Cli
from tests.test_examples import (
    ROOT_COMMAND,
    action_commands,
    carrytool_commands,
    parse_command,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MINE = ("manifest.md", "ci.md", "migrating.md")

# the heading of each SCHEMA section in docs/manifest.md
HEADINGS = {"manifest": "Top level", "upstream": "`upstream`", "fork": "`fork`", "identity": "`identity`",
            "policy": "`policy`", "precompiled": "`policy.precompiled`",
            "structured_merge": "`policy.structured_merge`", "entry": "`entries[]`",
            "supersede": "`entries[].supersedes[]`", "drop": "`entries[].supersedes[].drops[]`",
            "assert": "`asserts[]`"}
TYPE_WORDS = {"int": "integer", "str": "string", "bool": "boolean", "sha": "hex SHA", "url": "URL",
              "branch": "branch name", "ref": "ref pattern", "path": "path", "regex": "regular expression",
              "dotted": "dotted name", "call": "call target", "name": "name", "enum": "one of", "list": "list", "map": "mapping",
              "entry": "entry"}


def sections(text: str) -> dict[str, str]:
    """Heading text -> the body up to the next heading of any level."""
    parts = re.split(r"^(#{2,3}) (.+)$", text, flags=re.M)
    return {parts[i + 1].strip(): parts[i + 2] for i in range(1, len(parts) - 2, 3)}


def table_rows(body: str) -> dict[str, list[str]]:
    """`key` -> its cells, for the rows of the markdown tables in BODY."""
    rows = {}
    for line in body.splitlines():
        match = re.match(r"^\| `([\w]+)` \|(.*)\|$", line)
        if match:
            rows[match[1]] = [c.strip() for c in re.split(r"(?<!\\)\|", match[2])]
    return rows


def code_blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.M | re.S)


def expected_default(section: str, key: Key) -> str:
    if key.required:
        return "required"
    if key.default is True:
        return "`true`"
    if key.default == []:
        return "`[]`"
    if key.default is not None:
        return f"`{key.default}`"
    return ""


# --------------------------------------------------------------------------------------------------------
# docs/manifest.md


def test_every_schema_key_is_documented_in_its_section_with_its_default() -> None:
    text = (DOCS / "manifest.md").read_text()
    found = sections(text)
    for section, keys in SCHEMA.items():
        heading = HEADINGS[section]
        assert heading in found, f"docs/manifest.md has no section '{heading}' for {section}"
        rows = table_rows(found[heading])
        assert set(rows) == {k.name for k in keys}, f"{heading}: {sorted(set(rows) ^ {k.name for k in keys})}"
        for key in keys:
            kind, default, meaning = rows[key.name]
            assert TYPE_WORDS[key.type] in kind, f"{section}.{key.name}: type '{kind}'"
            for choice in key.choices if key.type == "enum" else ():
                assert f"`{choice}`" in kind, f"{section}.{key.name}: choice {choice}"
            want = expected_default(section, key)
            if want:
                assert default == want, f"{section}.{key.name}: default '{default}', the loader says {want}"
            else:
                assert default.startswith(("—", "`")) or "derived" in default, f"{section}.{key.name}: '{default}'"
            assert len(meaning) > 20, f"{section}.{key.name}: say what it does"


def test_every_section_of_manifest_md_has_a_yaml_example() -> None:
    found = sections((DOCS / "manifest.md").read_text())
    for section in SCHEMA:
        if section == "manifest":
            continue
        assert "```yaml" in found[HEADINGS[section]], f"{HEADINGS[section]}: no YAML example"


def skeleton(snippet: dict) -> dict:
    """A minimal manifest around a snippet, for the snippets that are not whole manifests."""
    doc = {"version": 1, "upstream": {"url": "https://example.com/up.git"}, "fork": {"branch": "dev"}}
    if "supersedes" not in snippet:
        doc.update(snippet)
    else:
        doc["entries"] = [{"carry": "u", "patch": "u.patch", **snippet}]
    return doc


@pytest.mark.parametrize("name", MINE)
def test_yaml_examples_are_valid(name: str, tmp_path: Path, cli: Cli) -> None:
    schema = manifest_schema()
    blocks = code_blocks((DOCS / name).read_text(), "yaml")
    assert blocks or name == "ci.md"
    for i, block in enumerate(blocks):
        data = yaml.safe_load(block)
        if data is None:                     # the schema line alone
            assert block.startswith("# yaml-language-server: $schema=")
        elif "version" in data:
            path = tmp_path / f"{i}.yaml"
            path.write_text(block)
            result = cli("check", "-m", path)
            assert result.exit_code == 0, f"{name} block {i}: {result.stderr}"
        else:
            jsonschema.validate(skeleton(data), schema)


def test_the_first_manifest_example_is_complete(cli: Cli, tmp_path: Path) -> None:
    block = code_blocks((DOCS / "manifest.md").read_text(), "yaml")[1]
    path = tmp_path / "m.yaml"
    path.write_text(block)
    manifest = load_manifest(path)
    used = {"upstream", "fork", "identity", "policy", "entries", "asserts"}
    assert used <= set(yaml.safe_load(block)) and manifest.entries and manifest.asserts


# --------------------------------------------------------------------------------------------------------
# carrytool command lines in the docs, links, exit codes


def doc_commands() -> list[tuple[str, list[str], bool]]:
    """(where, argv, whole): whole command lines from sh blocks; inline `carrytool ...` mentions in prose."""
    out = []
    for name in MINE:
        text = (DOCS / name).read_text()
        for block in code_blocks(text, "(?:sh|bash)"):
            out += [(f"{name}: {' '.join(argv)}", argv, True) for argv in carrytool_commands(block)]
        for inline in re.findall(r"`(carrytool [^`]+)`", text):
            out += [(f"{name}: `{inline}`", argv, False) for argv in carrytool_commands(inline)]
    return out


def check_mention(argv: list[str]) -> None:
    """A command named in prose: the command exists and every --option it shows is one of its options."""
    cmd = ROOT_COMMAND
    args = argv[1:]
    while hasattr(cmd, "commands"):
        assert args and args[0] in cmd.commands, f"no command {' '.join(argv)}"
        cmd, args = cmd.commands[args[0]], args[1:]
    known = {opt for param in cmd.params for opt in param.opts}
    for arg in args:
        if arg.startswith("-"):
            assert arg.split("=")[0] in known, f"{' '.join(argv)}: no option {arg}"


@pytest.mark.parametrize("where,argv,whole", doc_commands(), ids=[c[0] for c in doc_commands()])
def test_every_carrytool_command_in_the_docs_parses(where: str, argv: list[str], whole: bool) -> None:
    if whole:
        parse_command(argv)
    else:
        check_mention(argv)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@pytest.mark.parametrize("name", MINE + ("assertions.md",))
def test_links_resolve(name: str) -> None:
    text = (DOCS / name).read_text()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        file = (DOCS / path).resolve() if path else DOCS / name
        assert file.exists(), f"{name}: broken link {target}"
        if anchor:
            headings = re.findall(r"^#{1,6} (.+)$", file.read_text(), flags=re.M)
            assert anchor in {slug(h) for h in headings}, f"{name}: no heading #{anchor} in {file.name}"


def test_ci_md_exit_codes_are_carrytools() -> None:
    text = (DOCS / "ci.md").read_text()
    table = sections(text)["Exit codes, and what CI should do with each"]
    codes = [int(m) for m in re.findall(r"^\| (\d) \|", table, flags=re.M)]
    assert codes == [EXIT_OK, EXIT_VERIFY, EXIT_INPUT, EXIT_CONFLICT, EXIT_ENV]
    for needed in ("--rebuild", "--locked", "--wait", "--push", "lease", "insteadOf", ".lock", "schedule"):
        assert needed in text, needed


def test_ci_md_describes_the_shipped_examples() -> None:
    text = (DOCS / "ci.md").read_text()
    for example in ("examples/github/nightly-sync.yml", "examples/github/verify.yml",
                    "examples/gitlab/.gitlab-ci.yml", "examples/pre-commit-config.yaml"):
        assert f"(../{example})" in text and (ROOT / example).exists()
    nightly = [" ".join(argv) for argv in action_commands(ROOT / "examples/github/nightly-sync.yml")]
    assert nightly[0] == "carrytool sync --repo . --report sync-report.json --push --wait 600"
    assert "carrytool sync --repo . --push --wait 600 --report sync-report.json" in text
    assert "(../action.yml)" in text and "persist-credentials: false" in text


# --------------------------------------------------------------------------------------------------------
# docs/migrating.md: the before and the after say the same thing


def bash_array(script: str, name: str) -> list[str]:
    match = re.search(rf"^{name}=\((.*?)\)", script, flags=re.M | re.S)
    assert match, name
    return [w for line in match[1].splitlines() for w in line.split("#", 1)[0].split()]


def test_migration_before_and_after_match(tmp_path: Path) -> None:
    text = (DOCS / "migrating.md").read_text()
    before = code_blocks(text, "bash")[0]
    assert subprocess.run(["bash", "-n"], input=before, text=True).returncode == 0
    path = tmp_path / "after.yaml"
    path.write_text(code_blocks(text, "yaml")[0])
    after = load_manifest(path)
    open_prs = [int(n) for n in bash_array(before, "OPEN_PRS")]
    assert [e.number for e in after.entries if e.kind == "pr"] == open_prs
    steps = {s.entry.number: s for s in plan_static(after, {}) if s.entry.kind == "pr"}
    lines = path.read_text().splitlines()
    for number in map(int, bash_array(before, "PRECOMPILED_WHEEL_SKIP_PRS")):
        step = steps[number]
        entry_lines = "\n".join(lines[step.entry.line - 1:step.entry.line + 3])
        assert step.reason in ("superseded", "disabled") or "precompiled" in entry_lines, number
    carried = [e.commit for e in after.entries if e.kind == "carry"]
    assert carried == bash_array(before, "FORK_CARRIED_COMMITS")
    for item in bash_array(before, "CARRY_HOTPATH_ASSERTS"):
        file, marker = item.split(":")
        targets = {t for a in after.asserts if a.file == file
                   for t in (a.target if isinstance(a.target, tuple) else (a.target,))}
        assert marker in targets, f"the marker {item} has no assert"


def test_migration_names_the_seeds_vocabulary() -> None:
    text = (DOCS / "migrating.md").read_text()
    for word in ("PRECOMPILED_WHEEL_SKIP_PRS", "FORK_CARRIED_COMMITS", "CARRY_HOTPATH_ASSERTS", "-X theirs",
                 "supersedes", "owns", "excludes", "enabled: false", "policy.precompiled"):
        assert word in text, word


def test_assertions_md_recipes_load(tmp_path: Path) -> None:
    """docs/assertions.md's vLLM recipes are a valid asserts list."""
    block = next(b for b in code_blocks((DOCS / "assertions.md").read_text(), "yaml") if "wake-handshake-min" in b)
    data = {"version": 1, "upstream": {"url": "../up"}, "fork": {"branch": "dev"},
            "entries": [{"pr": 44778}, {"pr": 45617}, {"pr": 45610}, {"pr": 45615}, {"pr": 45552},
                        {"carry": "wake-path-union", "patch": "u.patch"}], **yaml.safe_load(block)}
    path = tmp_path / "m.yaml"
    path.write_text(json.dumps(data))
    assert len(load_manifest(path).asserts) == 10
