"""Building the explorer: never over a folder that is not a site, never half a site."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from clirunner import CliRunner

from evalhouse.cli import app
from evalhouse.site import build as site_build

runner = CliRunner()


def test_a_folder_that_is_not_a_site_is_refused(real_snapshot: Path, tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.txt").write_text("keep me")
    result = runner.invoke(app, ["site", str(target), "--snapshot", str(real_snapshot), "--no-analyses"])
    assert result.exit_code == 2 and "not an evalhouse site" in result.output
    assert [p.name for p in target.iterdir()] == ["notes.txt"]


def test_a_failed_rebuild_keeps_the_previous_site_and_leaves_no_partial_folder(
    real_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "site"
    first = runner.invoke(app, ["site", str(target), "--snapshot", str(real_snapshot), "--no-analyses", "--json"])
    assert first.exit_code == 0, first.output
    index = (target / "index.html").read_text()
    pages = sorted(p.relative_to(target).as_posix() for p in target.rglob("*.html"))

    def interrupted(writer, data, sections, note) -> None:
        (writer.staging / "index.html").write_text("half a site")
        raise KeyboardInterrupt

    monkeypatch.setattr(site_build, "_write_pages", interrupted)
    again = runner.invoke(app, ["site", str(target), "--snapshot", str(real_snapshot), "--no-analyses"])
    assert again.exit_code == 130 and "interrupted" in again.output
    assert (target / "index.html").read_text() == index
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*.html")) == pages
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no .site.partial-* left behind


def test_a_site_without_analyses_never_imports_the_plotting_and_fitting_libraries(
    real_snapshot: Path, tmp_path: Path
) -> None:
    """matplotlib, scipy.stats and sklearn cost seconds to import; ``--no-analyses`` needs none of them
    (checked in a fresh interpreter: the test process has imported them all)."""
    script = (
        "import sys\n"
        "from evalhouse.site import build\n"
        "build._write_pages = lambda *a: None\n"  # the pages are the other tests' business
        f"build.build_site({str(real_snapshot)!r}, {str(tmp_path / 'site')!r}, analyses=False)\n"
        "print(sorted(m for m in ('matplotlib', 'scipy.stats', 'sklearn', 'altair') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout


def test_a_dict_row_reads_the_same_as_under_jinjas_own_lookup() -> None:
    """``row.name`` on a dict row is read as a key at once; the pages must not change: a key, a name
    that is a dict method (the method, as Jinja gives it), a missing key (an error, StrictUndefined),
    and an object's attribute all read as under a stock environment."""
    import jinja2

    class Obj:
        name = "attribute"

    row = {"name": "value", "items": "a key named like a method", "n": 0}
    template = "{{ r.name }}|{{ r.items is callable }}|{{ r.n }}|{{ o.name }}|{{ r.get('name') }}"
    stock = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=True)
    ours = site_build.environment()
    assert type(ours) is not jinja2.Environment  # the lookup under test is really in use
    for env in (stock, ours):
        assert env.from_string(template).render(r=row, o=Obj()) == "value|True|0|attribute|value"
        with pytest.raises(jinja2.UndefinedError, match="missing"):
            env.from_string("{{ r.missing }}").render(r=row)
