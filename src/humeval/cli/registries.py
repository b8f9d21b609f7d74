"""The docs' tables of every registry (task types, arena model kinds, stopping rules, labelling strategies, samplers, import sources, platforms), by the
name their ``<!-- registry:NAME -->`` markers give.

``humeval schema --format registries --output docs/PAGE.md`` rewrites the tables of a page; a test checks that
every page is current and that every registry has its table.
"""

from __future__ import annotations

__all__ = ["registry_tables"]


def registry_tables() -> dict[str, str]:
    """Marker name -> the Markdown table generated from that registry."""
    from humeval.arena.models import ENDPOINT_KINDS
    from humeval.formats.external import JUDGEMENT_FORMATS
    from humeval.platforms.registry import PLATFORMS, platform_of
    from humeval.policies.registry import STRATEGIES
    from humeval.sampling.registry import SAMPLERS
    from humeval.stages.imports import IMPORT_SOURCES
    from humeval.stopping.registry import RULES
    from humeval.tasks.registry import TASK_TYPES, docs_columns

    def gives(name: str) -> str:
        if name not in JUDGEMENT_FORMATS:
            return "a platform's file"
        return f"another tool's judgements (criterion type: {JUDGEMENT_FORMATS.get(name).criterion_type or 'named in the file'})"

    return {
        "task-types": TASK_TYPES.markdown(docs_columns()),
        "arena-models": ENDPOINT_KINDS.markdown(),
        "stopping-rules": RULES.markdown({
            "decides A when": lambda e: e.value.decides, "ever decides wrongly": lambda e: e.value.errs,
            "anytime-valid": lambda e: "yes" if e.value.anytime_valid else "no",
            "`tuned_for`": lambda e: "yes" if e.value.tunable else "no"}),
        "strategies": STRATEGIES.markdown({"labels per request": lambda e: e.value.labels,
                                           "when": lambda e: e.value.when}),
        "samplers": SAMPLERS.markdown({"parameters (`sampling.params`)": lambda e: e.value.parameters}),
        "import-sources": IMPORT_SOURCES.markdown({"what it gives": lambda e: gives(e.name)}),
        "platforms": PLATFORMS.markdown({
            "entry parameters": lambda e: ", ".join(f"`{p}`" for p in e.value.entry_parameters)
            or ("`platform.id_parameter`" if e.name == "panel" else "—"),
            "API operations": lambda e: ", ".join(f"`{op}`" for op in platform_of(e.name).operations()) or "—",
            "fee, minimum pay": lambda e: (f"{e.value.fee[0]:.1%}, " if e.value.fee else "—, ")
            + (" / ".join(f"{v:.2f} {k}" for k, v in e.value.minimum_hourly.items()) or "—")}),
    }
