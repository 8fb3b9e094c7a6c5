"""The naming conventions: a model `BlogPost` lives in the table `blog_posts`, and rows that point at one of
its rows do so through the column `blog_post_id`."""
from __future__ import annotations

import inflection


def table_name(model: str) -> str:
    """The table of a model: its class name in snake case, plural (`BlogPost` -> `blog_posts`)."""
    return inflection.pluralize(inflection.underscore(model))


def model_name(table: str) -> str:
    """The model class name of a table, the inverse of `table_name` (`blog_posts` -> `BlogPost`)."""
    return inflection.camelize(inflection.singularize(table))


def foreign_key(model: str) -> str:
    """The column that refers to a row of `model`: its singular snake-case name and `_id` (`BlogPost` ->
    `blog_post_id`)."""
    return inflection.pluralize(inflection.underscore(model)) + "_id"


def join_table(first: str, second: str) -> str:
    """The table that links two models in a many-to-many relation: both table names, sorted, joined by `_`."""
    return "_".join(sorted([table_name(first), table_name(second)]))
