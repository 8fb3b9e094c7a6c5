"""One family of exceptions for the mistakes a user can make with models.

Every message is one line that says what went wrong and what to do, because the CLI prints
`str(exc)` as is, without a traceback.
"""
from __future__ import annotations


class LLMError(Exception):
    """Base of every error `bot.llm` raises on purpose."""


class BadModelSpec(LLMError):
    """The model spec string (or an option given with it) cannot be understood."""


class MissingAPIKey(LLMError):
    """A hosted OpenAI-compatible server needs a key and none was given."""


class BadAPIKey(LLMError):
    """Every API key given was rejected by the server (HTTP 401/403)."""


class ModelUnavailable(LLMError):
    """The model cannot be found, assembled, downloaded or loaded."""


class LLMRequestFailed(LLMError):
    """A request failed for good: not retryable, or still failing after the last retry."""


class PromptTooLong(LLMRequestFailed):
    """The prompt does not fit the model's context window: a failure of what was asked (one target's evidence),
    not of the model, so the run can go on with the next target."""


class ScriptExhausted(LLMError):
    """A scripted model was asked for more answers than its script holds."""


class ToolsUnsupported(LLMError):
    """The agent needs function calling and this backend has none."""


class ScoringUnsupported(LLMError):
    """A text's likelihood was asked of a backend that cannot give it (a hosted API, a scripted model)."""
