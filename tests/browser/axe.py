"""Run axe-core (vendored, test-only) on a Playwright page and return its serious and critical violations."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
SEVERE = ("serious", "critical")


@cache
def _source() -> str:
    return AXE.read_text(encoding="utf-8")


def severe_violations(page: Any) -> list[dict[str, Any]]:  # a playwright Page
    """axe-core's WCAG 2.x A/AA and best-practice rules on the page; violations of impact serious or critical,
    as ``{id, impact, help, targets}``. Evaluated through the DevTools protocol, so the page's CSP allows it."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(_source())
    result = page.evaluate("""async () => {
        const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}});
        return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                        targets: v.nodes.slice(0, 5).map(n => n.target.join(' '))}));
    }""")
    return [v for v in result if v["impact"] in SEVERE]
