"""fixbot inside GitHub Actions: which event to act on (`event.py`) and how to talk back to the runner
(`runner_io.py`). `fixbot ci` (bot/cli/ci_cmd.py) ties them to the fix pipeline and bot.github."""
