"""`fixbot fix`: from a checkout whose tests fail to a verified, minimal patch, in steps whose folders name them.

    reproduce/  the test command, the whole suite in the sandbox, why each failing test fails (code or environment)
    locate/     which functions to blame: tracebacks, per-test coverage, the spans of project code
    repair/     what the agent is told, the harness its candidates run in, the steps besides the agent (a rename,
                a stub for a missing function, a caller and its helper together)
    verify/     the one diff, its scope and `git apply --check`; the report of what was done
    loop/       the repair loop: the search and the agent over the ranked targets, each fix verified by the whole
                suite; work.py, what the run has found and done
    pipeline.py the flow: reproduce, the steps besides the agent, the loop, the patch; run.py builds its
                dependencies (environment, sandbox, model)

Records every step shares: types.py (TestRun, CodeTarget, EnvCause), result.py (the FixResult artifact and its
parts), context.py (FixRun, the run's dependencies), options.py (FixOptions). The environment is
bot/environment/, the checkout bot/checkout/, the agent bot/agent/. Nothing here publishes anything (bot/github/
does) or touches the user's tree (the CLI applies a patch on request).
"""
