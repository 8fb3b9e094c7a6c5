"""Tests of the naming conventions."""
from ormnames.conventions import foreign_key, join_table, model_name, table_name


def test_table_name_is_plural_snake_case():
    assert table_name("BlogPost") == "blog_posts"
    assert table_name("Category") == "categories"


def test_model_name_inverts_table_name():
    assert model_name("blog_posts") == "BlogPost"
    assert model_name(table_name("Category")) == "Category"


def test_join_table_is_sorted():
    assert join_table("Tag", "Article") == join_table("Article", "Tag") == "articles_tags"


def test_foreign_key_is_singular():
    assert foreign_key("BlogPost") == "blog_post_id"
    assert foreign_key("Category") == "category_id"
