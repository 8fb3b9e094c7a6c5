"""bench/antipatterns.py: the rules checked on fixes that are right (HumanEvalFix's canonical solutions, the real
corpus's dev-split developer fixes, read from ../shared/data), one row each, and its table in bench/tables.py."""
from __future__ import annotations

import json
from pathlib import Path

import antipatterns
import tables
from realbugs_corpus import load_manifest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_every_right_fix_is_checked_once_and_the_holdout_is_not_read(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(antipatterns, "rows_path", lambda bench, commit, out: tmp_path / f"{bench}-abc1234.jsonl")
    assert antipatterns.main(["--data", str(DATA), "--out", str(tmp_path / "out")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "antipatterns-abc1234.jsonl").read_text().splitlines()]
    bugs = load_manifest(DATA / "realbugs")
    dev = {b.id for b in bugs if b.split == "dev"}
    assert {r["item"] for r in rows if r["source"] == "realbugs-dev"} == dev
    assert len([r for r in rows if r["source"] == "humanevalfix"]) == 164
    assert not {r["item"] for r in rows} & {b.id for b in bugs if b.split == "holdout"}
    fired = [r for r in rows if r["rules"]]
    assert all(r["rules"] and all(": " in rule for rule in r["rules"]) for r in fired)
    printed = capsys.readouterr().out
    assert f"humanevalfix: {sum(r['source'] == 'humanevalfix' for r in fired)} of 164 right fixes" in printed
    assert f"realbugs-dev: {sum(r['source'] == 'realbugs-dev' for r in fired)} of {len(dev)} right fixes" in printed

    monkeypatch.setattr(tables, "RESULTS", tmp_path)
    head, table, _ = tables.section("antipatterns", tmp_path / "antipatterns-abc1234.jsonl", rows)
    assert head[:3] == ["right fixes", "checked", "break a rule"]
    assert [line[:2] for line in table] == [["humanevalfix", "164"], ["realbugs-dev", str(len(dev))]]
    assert "Anti-pattern rules" in tables.render("abc1234", markdown=True)
