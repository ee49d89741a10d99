"""typer's ``CliRunner``, running an evalhouse command as the console script does.

``runner.invoke(app, [...])`` with the full app (``evalhouse.cli.app``) invokes the app the console
script builds for those arguments (:func:`evalhouse.cli.modules_for`): the command's own modules,
or all of them for help and unknown commands. typer builds a click command from an app on every
invoke, reading every registered command's signature; one test run invokes the CLI in-process
about a thousand times, and for one command's modules that costs a fraction of the whole app's
17 ms. Each set of modules is built into an app once per process. Any other app (a test's own) is
invoked as given.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import typer
import typer.testing

from evalhouse import cli


@cache
def _app(modules: tuple[str, ...]) -> typer.Typer:
    return cli.build_app(modules)


class CliRunner(typer.testing.CliRunner):
    def invoke(self, app: typer.Typer, args: str | Sequence[str] | None = None, **kwargs: Any) -> Any:
        if app is cli.app and not isinstance(args, str):
            app = _app(cli.modules_for([str(a) for a in args or ()]))
        return super().invoke(app, args, **kwargs)
