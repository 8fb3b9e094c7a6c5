"""A shopping cart keyed by SKU."""
