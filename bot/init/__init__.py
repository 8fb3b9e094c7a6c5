"""`fixbot init`: sets fixbot up in a repository (a workflow for one of the three triggers and
`.github/fixbot.yml`), from the test command and Python the repository already uses."""
