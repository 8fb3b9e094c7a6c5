"""An attempt summed up in a line (bot/agent/steps/prompts.py, `change`): what the next prompt's history and
report.md's attempts table say it changed."""
from __future__ import annotations

from bot.agent.steps.prompts import change

TABLE = '''def convert(data):
    NAMES = (
        ('http://a/ns', [
            'http://a/old1',
            'http://a/old2',
        ]),
    )
    return data.encode('utf-8')
'''


def test_a_rewritten_block_is_read_by_what_it_put_instead():
    after = TABLE.replace("('http", "(b'http").replace("            'http", "            b'http")
    assert change(TABLE, after) == ("-        ('http://a/ns', [; -            'http://a/old1',; "
                                    "+        (b'http://a/ns', [; +            b'http://a/old1',")


def test_one_line_changes_read_old_then_new_each():
    after = TABLE.replace("'http://a/old2'", "'http://a/new2'").replace(".encode('utf-8')", "")
    assert change(TABLE, after) == ("-            'http://a/old2',; +            'http://a/new2',; "
                                    "-    return data.encode('utf-8'); +    return data")
    assert change(TABLE, TABLE) == "no change"
