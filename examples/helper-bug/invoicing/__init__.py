"""Invoice totals with discount codes."""
