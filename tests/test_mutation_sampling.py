"""bench/mutation.py's statistics (the run itself is `make mutation`, never part of `make test`)."""

from __future__ import annotations

from bench.mutation import draw, in_population, package_of, wilson


def test_wilson_interval() -> None:
    lo, hi = wilson(90, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.8256, 0.9448)
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(50, 50)
    assert hi == 1.0 and 0.92 < lo < 0.93


def test_sample_is_seeded_and_proportional_per_package() -> None:
    population = [f"carrytool.pipeline.m.x_f__mutmut_{i}" for i in range(600)] + \
                 [f"carrytool.union.m.x_f__mutmut_{i}" for i in range(300)] + \
                 [f"carrytool.gitlayer.urls.x_f__mutmut_{i}" for i in range(100)]
    first = draw(population, 100, 7)
    assert first == draw(list(reversed(population)), 100, 7) and first != draw(population, 100, 8)
    counts = {p: sum(1 for n in first if package_of(n) == p) for p in ("pipeline", "union", "gitlayer")}
    assert counts == {"pipeline": 60, "union": 30, "gitlayer": 10}


def test_only_the_ref_code_of_git_py_is_in_the_population() -> None:
    assert in_population("carrytool.gitlayer.git.xǁGitǁupdate_ref__mutmut_3")
    assert in_population("carrytool.gitlayer.git.x__subcommand__mutmut_1")
    assert not in_population("carrytool.gitlayer.git.xǁGitǁmerge_trees__mutmut_3")
    assert in_population("carrytool.gitlayer.urls.x_redact__mutmut_1")
