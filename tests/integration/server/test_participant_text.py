"""What participants read: only participant-facing texts on the welcome page, the completion count in the
right number, a refused answer explained at its field, the ESA score anchors of the protocol, an icon.

In-process (httpx.ASGITransport) on SQLite.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from humeval.server.i18n import field_problem, translations
from tests.integration.server.inprocess import InProcess
from tests.integration.server.studies import all_types_study, esa_study
from tests.integration.server.test_entry import PAIR, RATINGS, make_study

pytestmark = pytest.mark.timeout(120)


def _form(page: str) -> dict[str, str]:
    return {name: re.search(rf'name="{name}" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
            for name in ("assignment_id", "idempotency_key")}


def _fieldset(page: str, name: str) -> str:
    return re.search(rf'<fieldset[^>]*id="criterion-{name}".*?</fieldset>', page, re.DOTALL).group(0)  # type: ignore[union-attr]


def test_the_welcome_page_never_shows_the_researchers_description(tmp_path: Path) -> None:
    study = all_types_study(tmp_path / "s")
    assert study.protocol.study.description == "Every response type"
    server = InProcess(study)
    try:
        page = server.run(lambda c: c.get("/"))
        assert page.status_code == 200 and "Welcome" in page.text
        assert "Every response type" not in page.text
    finally:
        server.close()


@pytest.mark.parametrize(("tasks", "sentence"), [(1, "You have completed the study (1 task)."),
                                                 (2, "You have completed the study (2 tasks).")])
def test_the_completion_page_counts_in_the_right_number(tmp_path: Path, tasks: int, sentence: str) -> None:
    server = InProcess(make_study(tmp_path / "s", criteria=PAIR, per_participant=tasks))

    async def body(c: httpx.AsyncClient) -> str:
        await c.get("/", params={"participant_id": "p1"})
        for _ in range(tasks):
            r = await c.post("/task", data=_form((await c.get("/task")).text) | {"quality": "A"})
            assert r.status_code == 303
        assert (await c.get("/task")).headers["location"] == "/done"
        return (await c.get("/done")).text

    try:
        page = server.run(body)
    finally:
        server.close()
    assert sentence in page
    header = re.search(r"<header>.*?</header>", page, re.DOTALL).group(0)  # type: ignore[union-attr]
    assert "Finished" in header and "Task " not in header


def test_a_refused_answer_is_explained_at_its_field(tmp_path: Path) -> None:
    server = InProcess(make_study(tmp_path / "s", criteria=RATINGS, setup="joint"))

    async def body(c: httpx.AsyncClient) -> None:
        await c.get("/", params={"participant_id": "p1"})
        form = _form((await c.get("/task")).text) | {"fluency": "4", "adequacy": "80"}
        zero = await c.post("/task", data=form | {"naturalness": "0"})
        assert zero.status_code == 422
        field = _fieldset(zero.text, "naturalness")
        assert '<p class="error field-error" id="problem-naturalness">Give a number greater than 0 and at most ' \
               "1000000000.</p>" in field
        assert re.search(r'name="naturalness"[^>]*aria-invalid="true" aria-describedby="problem-naturalness"', field)
        top = re.search(r'<p class="error" role="alert" id="error">.*?</p>', zero.text, re.DOTALL).group(0)  # type: ignore[union-attr]
        assert "Please check your answer to: How natural is it?" in top and 'href="#criterion-naturalness"' in top
        assert "field-error" not in _fieldset(zero.text, "adequacy")
        wide = await c.post("/task", data=form | {"adequacy": "150", "naturalness": "120"})
        assert "Give a number from 0 to 100." in _fieldset(wide.text, "adequacy")
        missing = await c.post("/task", data=form | {"fluency": "", "naturalness": "120"})
        assert "Please answer this question." in _fieldset(missing.text, "fluency")
        assert "Please answer this question: How fluent is it?" in missing.text

    try:
        server.run(body)
    finally:
        server.close()


def test_field_problems_name_what_is_valid_for_each_type(tmp_path: Path) -> None:
    criteria = {c.name: c for c in all_types_study(tmp_path / "s").protocol.criteria}
    answers = {"quality": "C", "fluency": "9", "naturalness": "-1", "overall.1": "0", "adequacy": "101"}
    got = {f: field_problem(f"values.{f}", criteria, answers, "en") for f in ("quality", "fluency", "overall[1]")}
    assert got["quality"].message == "Choose one of the options."  # type: ignore[union-attr]
    assert got["fluency"].message == "Choose one of the points from 1 to 5."  # type: ignore[union-attr]
    assert got["overall[1]"].input == "overall.1"  # type: ignore[union-attr]
    assert field_problem("values.overall[0]", criteria, answers, "en").missing  # type: ignore[union-attr]
    assert field_problem("comment", criteria, answers, "en") is None
    assert field_problem("values.unknown", criteria, answers, "en") is None
    # the sentence the page already used in the browser is translated: the server says the same
    assert translations("de").gettext("Give a number greater than 0.") != "Give a number greater than 0."


@pytest.mark.parametrize(("extra", "anchor"), [
    ("", "Score from 0 (worst) to 100 (best)"),
    (', low_anchor: "not helpful at all", high_anchor: "very <b>helpful</b>"',
     "Score from 0 (not helpful at all) to 100 (very &lt;b&gt;helpful&lt;/b&gt;)"),
])
def test_esa_score_anchors_come_from_the_protocol(tmp_path: Path, extra: str, anchor: str) -> None:
    server = InProcess(esa_study(tmp_path / "s", items=2, per_item=1, per_participant=2, esa_extra=extra))

    async def body(c: httpx.AsyncClient) -> str:
        await c.get("/", params={"participant_id": "p1"})
        return (await c.get("/task")).text

    try:
        page = server.run(body)
    finally:
        server.close()
    assert anchor in page and "no meaning preserved" not in page


def test_every_page_has_an_icon(tmp_path: Path) -> None:
    server = InProcess(make_study(tmp_path / "s", criteria=PAIR))

    async def body(c: httpx.AsyncClient) -> None:
        page = (await c.get("/")).text
        href = re.search(r'<link rel="icon" href="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        for url in (href, "/favicon.ico"):
            r = await c.get(url)
            assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
            assert r.text.startswith("<svg")

    try:
        server.run(body)
    finally:
        server.close()
