"""`fixbot graph`: the agent's graph as Mermaid."""
from __future__ import annotations

import argparse


def cmd_graph(args: argparse.Namespace) -> int:
    from bot.agent import mermaid

    print(mermaid(args.agent))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from bot.agent.types import AGENTS

    p = sub.add_parser("graph", help="print the repair agent's graph as Mermaid")
    p.add_argument("--agent", choices=AGENTS, default="reflect", help="which design's graph (default reflect)")
    p.set_defaults(handler=cmd_graph)
