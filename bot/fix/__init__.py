"""bot/fix."""
