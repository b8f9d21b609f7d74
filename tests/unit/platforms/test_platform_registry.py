"""The platform interface: every platform.kind is registered, each implements its part, and what it lacks says
which platforms have it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from humeval.costs import _fee_rate
from humeval.errors import PlatformError, ProtocolError
from humeval.platforms.base import OPERATIONS, CrowdPlatform
from humeval.platforms.completion import completion_json
from humeval.platforms.entry import platform_fields
from humeval.platforms.registry import PLATFORMS, platform_of
from humeval.protocol.models import PANEL_KINDS, Platform, Protocol
from humeval.protocol.platform_kinds import PlatformKind

SRC = Path(__file__).resolve().parents[3] / "src" / "humeval"


def test_the_protocol_takes_the_registered_platform_kinds_and_nothing_else():
    schema = Protocol.model_json_schema()["$defs"]["Platform"]["properties"]["kind"]
    assert tuple(schema["enum"]) == PLATFORMS.names() == ("local", "prolific", "connect", "sona", "panel", "files")
    assert all(f"`{k}`: " in schema["description"] for k in PLATFORMS.names())
    assert all(Platform(kind=k, id_parameter="pid" if k == "panel" else "").kind == k for k in PLATFORMS.names())
    assert all(platform_of(k).name == k for k in PLATFORMS.names())
    with pytest.raises(ProtocolError, match="platform.kind: unknown platform 'prolifc'. Did you mean 'prolific'"):
        platform_of("prolifc")
    with pytest.raises(ValidationError, match="unknown platform 'prolifc'. Did you mean 'prolific'"):
        Platform(kind="prolifc")
    with pytest.raises(ValidationError, match="Turk closed on 2026-09-30"):
        Platform(kind="mturk")


def test_the_facts_give_the_entry_routes_and_the_currencies():
    assert PANEL_KINDS == ("prolific", "connect", "sona", "panel")
    assert Platform(kind="connect").routes == ("platform",) and Platform(kind="local").routes == ("open",)
    with pytest.raises(ValidationError, match="pay.currency: Prolific pays in GBP or USD, got 'EUR'"):
        Protocol.model_validate({"version": 1, "study": {"name": "s", "seed": 1}, "data": {"files": ["o.jsonl"]},
                                 "systems": ["a", "b"], "criteria": [{"name": "q", "type": "2afc", "question": "?"}],
                                 "platform": {"kind": "prolific"}, "pay": {"currency": "EUR"}})


def test_entry_parameters_and_completion_links_come_from_the_platform():
    assert platform_fields(Platform(kind="prolific")) == ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
    assert platform_fields(Platform(kind="panel", id_parameter="pid")) == ("pid",)
    assert platform_fields(Platform(kind="local")) == ()
    done = completion_json(Platform(kind="prolific", completion_code="C0DE 1"), "p1")
    assert done["url"] == "https://app.prolific.com/submissions/complete?cc=C0DE%201"
    assert completion_json(Platform(kind="connect", completion_code="C0DE"), "p1")["url"] == ""
    sona = Platform(kind="sona", completion_url="https://x.sona-systems.com/webstudy_credit.aspx?experiment_id=1&survey_code=XXXX")
    assert completion_json(sona, "42")["url"].endswith("experiment_id=1&survey_code=42")


def test_prolific_implements_every_operation_and_a_panel_none():
    assert platform_of("prolific").operations() == OPERATIONS
    for kind in ("local", "connect", "sona", "panel", "files"):
        assert platform_of(kind).operations() == ()
        with pytest.raises(PlatformError, match=rf"'{kind}' has no 'recruit_every': humeval drives that on prolific only"):
            platform_of(kind).recruit_every(None, 30, db=None, say=print)  # type: ignore[arg-type]


def test_the_budget_takes_the_fee_from_the_platform():
    prolific = Protocol.model_validate({"version": 1, "study": {"name": "s", "seed": 1}, "data": {"files": ["o.jsonl"]},
                                        "systems": ["a", "b"], "criteria": [{"name": "q", "type": "2afc", "question": "?"}],
                                        "platform": {"kind": "prolific"}})
    assert _fee_rate(prolific) == PLATFORMS.get("prolific").fee
    assert PLATFORMS.get("prolific").fee[0] == 0.428  # type: ignore[index]
    connect = prolific.model_copy(update={"platform": Platform(kind="connect")})
    assert _fee_rate(connect) == (0.0, "none known for platform 'connect' (declare pay.fee_rate)")


def test_a_new_platform_is_its_facts_and_at_most_one_subclass():
    class Lab(CrowdPlatform):
        def personal_url(self, url: str, participant_id: str) -> str:
            return f"{url}#{participant_id}"

    lab = Lab(PlatformKind("lab", "the lab", entry_parameters=("seat",)))
    assert lab.name == "lab" and lab.title == "the lab"
    assert lab.entry_fields(Platform()) == ("seat",) and lab.operations() == () and lab.hook_routes(
        None, "s", db=None, first_delivery=lambda *a, **k: True, forget_delivery=print) == []  # type: ignore[arg-type]
    assert lab.personal_url("u", "p") == "u#p"
    plain = CrowdPlatform(PlatformKind("kiosk", "the kiosk"))
    assert plain.entry_fields(Platform()) == () and plain.personal_url("u", "p") == "u"


def test_each_adapter_is_loaded_by_name_and_made_from_its_facts():
    for entry in PLATFORMS.entries():
        adapter = platform_of(entry.name)
        assert adapter.kind is entry.value and adapter is platform_of(entry.name)  # once, then cached
        assert f"{type(adapter).__module__}:{type(adapter).__name__}" == entry.value.adapter


def test_reading_the_facts_imports_no_platform():
    """validate and the budget read the facts; the adapters (Prolific's client, its lock checks) are not imported."""
    code = ("import sys; from humeval.protocol.platform_kinds import platform_kind; "
            "platform_kind('prolific').fee; "
            "print(sorted(m for m in sys.modules if m.startswith('humeval.platforms')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_server_collect_and_costs_name_no_platform():
    """They ask the study's platform (humeval.platforms.registry), never compare its kind with a name."""
    for name in ("server/app.py", "server/pages.py", "server/platform_entry.py", "server/recruitment.py", "server/config.py",
                 "collect.py", "costs.py", "validate.py"):
        text = (SRC / name).read_text(encoding="utf-8")
        assert '= "prolific"' not in text and "platforms.prolific" not in text, name
