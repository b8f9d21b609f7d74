"""The study file: models, loading, lock and signature.

Names are imported from their module on first use (PEP 562): ``humeval.protocol.load``'s
constants do not build the pydantic models, which ``humeval log`` never needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from humeval.lazy import lazy_exports

_EXPORTS = {
    "PROTOCOL_FILE": "humeval.protocol.load",
    "load_protocol": "humeval.protocol.load",
    "parse_protocol": "humeval.protocol.load",
    "PROTOCOL_VERSION": "humeval.protocol.models",
    "Analysis": "humeval.protocol.models",
    "Assignment": "humeval.protocol.models",
    "AttentionExclusion": "humeval.protocol.models",
    "Criterion": "humeval.protocol.models",
    "DataSpec": "humeval.protocol.models",
    "Design": "humeval.protocol.models",
    "DryRun": "humeval.protocol.models",
    "ExclusionRule": "humeval.protocol.models",
    "InconsistentExclusion": "humeval.protocol.models",
    "Likert": "humeval.protocol.models",
    "Magnitude": "humeval.protocol.models",
    "MinTimeExclusion": "humeval.protocol.models",
    "Platform": "humeval.protocol.models",
    "Presentation": "humeval.protocol.models",
    "Protocol": "humeval.protocol.models",
    "RankME": "humeval.protocol.models",
    "SameSideExclusion": "humeval.protocol.models",
    "VoteCapExclusion": "humeval.protocol.models",
    "VoteOutlierExclusion": "humeval.protocol.models",
    "Sampling": "humeval.protocol.models",
    "Slider": "humeval.protocol.models",
    "StandardItem": "humeval.protocol.models",
    "Stopping": "humeval.protocol.models",
    "StraightLiningExclusion": "humeval.protocol.models",
    "StudyInfo": "humeval.protocol.models",
    "TwoAFC": "humeval.protocol.models",
    "signature": "humeval.protocol.signature",
}

__all__ = [
    "PROTOCOL_FILE",
    "PROTOCOL_VERSION",
    "Analysis",
    "Assignment",
    "AttentionExclusion",
    "Criterion",
    "DataSpec",
    "Design",
    "DryRun",
    "ExclusionRule",
    "InconsistentExclusion",
    "Likert",
    "Magnitude",
    "MinTimeExclusion",
    "Platform",
    "Presentation",
    "Protocol",
    "RankME",
    "SameSideExclusion",
    "VoteCapExclusion",
    "VoteOutlierExclusion",
    "Sampling",
    "Slider",
    "StandardItem",
    "Stopping",
    "StraightLiningExclusion",
    "StudyInfo",
    "TwoAFC",
    "load_protocol",
    "parse_protocol",
    "signature",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from humeval.protocol.load import PROTOCOL_FILE, load_protocol, parse_protocol
    from humeval.protocol.models import (
        PROTOCOL_VERSION,
        Analysis,
        Assignment,
        AttentionExclusion,
        Criterion,
        DataSpec,
        Design,
        DryRun,
        ExclusionRule,
        InconsistentExclusion,
        Likert,
        Magnitude,
        MinTimeExclusion,
        Platform,
        Presentation,
        Protocol,
        RankME,
        SameSideExclusion,
        Sampling,
        Slider,
        StandardItem,
        Stopping,
        StraightLiningExclusion,
        StudyInfo,
        TwoAFC,
        VoteCapExclusion,
        VoteOutlierExclusion,
    )
    from humeval.protocol.signature import signature
