"""fixbot: from a red CI run to a minimal, verified fix PR."""
