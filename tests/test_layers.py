"""The house's rules hold (scripts/check_layers.py): no import circle, no import from a later step into an earlier
one, no module over 400 lines; and the checker sees an offence where there is one."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("check_layers", ROOT / "scripts" / "check_layers.py")
assert spec is not None and spec.loader is not None
check_layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_layers)


def test_no_circle_and_no_upward_import():
    assert check_layers.offences() == []


def test_the_checker_finds_a_circle_and_ranks_the_steps():
    assert check_layers.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert check_layers.cycles({"a": {"b"}, "b": set()}) == []
    assert check_layers.layer("bot.fix.reproduce.runs") < check_layers.layer("bot.fix.locate.rank") \
        < check_layers.layer("bot.fix.pipeline")
    assert check_layers.layer("bot.environment.prepare") < check_layers.layer("bot.fix.types")
    assert check_layers.layer("bot.fix.verify.patch") < check_layers.layer("bot.fix.loop.targets") \
        < check_layers.layer("bot.fix.pipeline")
    assert check_layers.layer("sandbox.runner") < check_layers.layer("bot.llm.spec")


def test_no_module_over_400_lines():
    files = [p for package in ("bot", "sandbox", "eval") for p in (ROOT / package).rglob("*.py")]
    long = {str(p.relative_to(ROOT)): n for p in files if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}


def test_the_flow_s_folders_keep_their_tops_small():
    # a newcomer reads `ls bot/fix bot/agent` as the flow: its steps are folders, few modules sit beside them
    def modules(folder: str) -> list[str]:
        return sorted(p.name for p in (ROOT / folder).glob("*.py") if p.name != "__init__.py")

    assert len(modules("bot/fix")) <= 8, modules("bot/fix")
    assert len(modules("bot/agent")) <= 10, modules("bot/agent")
    assert all((p / "__init__.py").read_text(encoding="utf-8").lstrip().startswith('"""')
               for p in (ROOT / "bot").rglob("*") if p.is_dir() and (p / "__init__.py").exists())
