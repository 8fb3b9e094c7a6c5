"""HumanEvalFix replay: the agent and the sandbox measured on 164 buggy functions."""
