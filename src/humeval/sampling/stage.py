"""The ``sample`` stage: select the items of a study and write ``items.jsonl``."""

from __future__ import annotations

from humeval.data.outputs import load_outputs
from humeval.data.readers import write_jsonl
from humeval.pipeline import StageOutput
from humeval.sampling import get_sampler, sample_size
from humeval.sampling.simple import item_ids
from humeval.study import Study

__all__ = ["sample_stage"]


def sample_stage(study: Study) -> StageOutput:
    """Run the protocol's sampler over the study's outputs; write the selected items in order."""
    protocol = study.protocol
    spec = protocol.sampling
    seed = spec.seed if spec.seed is not None else protocol.study.seed
    outputs = load_outputs(protocol, study.root)
    n_items = len(item_ids(outputs))
    size = sample_size(n_items, spec.rate)
    selection = get_sampler(spec.method, **spec.params).select(outputs, size, seed)
    rows = [
        {"item_id": item, "order": i, "phase": phase}
        for i, (item, phase) in enumerate(zip(selection.item_ids, selection.phases, strict=True))
    ]
    write_jsonl(study.items_file, rows)
    return StageOutput(
        outputs=[study.items_file],
        seed=seed,
        parameters={"method": spec.method, "rate": spec.rate, "params": spec.params},
        summary={"items_available": n_items, "items_selected": len(rows)},
    )
