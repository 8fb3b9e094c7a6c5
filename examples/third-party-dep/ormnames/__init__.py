"""Table, column and join-table names derived from model class names."""
