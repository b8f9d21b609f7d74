"""``presentation.language``: the participant pages in German, Chinese and Arabic carry ``lang`` and
``dir`` and no English word from humeval itself (issue 12 acceptance), checked on the served HTML."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from babel.messages.pofile import read_po

from humeval.server.i18n import LOCALE_DIR
from tests.integration.server.server import ServerProcess
from tests.integration.server.studies import rendering_study

pytestmark = pytest.mark.timeout(120)
WORD = re.compile(r"[^\W\d_]{2,}")
# the study's own texts, written in the study's language by the researcher
OWN = {
    "de": ("Welche Antwort ist besser?", "Antworten", "Lesen Sie beide Antworten."),
    "zh": ("哪个回答更好？", "回答", "请阅读两个回答。"),
    "ar": ("أي إجابة أفضل؟", "إجابات", "اقرأ الإجابتين."),
}


class _Visible(HTMLParser):
    """Text a participant can read or hear: text nodes (not script/style) and aria-label/placeholder/title."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0
        self.root: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "html":
            self.root = dict(attrs)
        if tag in ("script", "style"):
            self._skip += 1
        self.parts += [v for k, v in attrs if k in ("aria-label", "placeholder", "title") and v]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _english_only_words(lang: str) -> set[str]:
    with (LOCALE_DIR / lang / "LC_MESSAGES" / "humeval.po").open("rb") as fh:
        catalog = read_po(fh, locale=lang)
    def words(texts: str | tuple[str, ...]) -> set[str]:
        texts = (texts,) if isinstance(texts, str) else texts
        return {w.lower() for t in texts for w in WORD.findall(re.sub(r"%\(\w+\)s", "", t))}

    english = {w for m in catalog if m.id for w in words(m.id)}
    native = {w for m in catalog if m.id for w in words(m.string)}
    return english - native


@pytest.mark.parametrize("lang", ["de", "zh", "ar"])
def test_pages_in_the_study_language(tmp_path: Path, lang: str) -> None:
    question, title, instructions = OWN[lang]
    study = rendering_study(tmp_path / "s", language=lang, question=question, title=title, instructions=instructions)
    outputs_text = {"Here", "is", "bold", "text", "def", "add", "return", "system", "score", "script", "window",
                    "pwned", "img", "src", "onerror", "user", "assistant", "What", "It", "question"}
    forbidden = _english_only_words(lang)
    server = ServerProcess(study.root, None).start()
    try:
        with httpx.Client(base_url=server.url, follow_redirects=True) as c:
            pages = {"instructions": c.get("/?participant_id=L1"), "task": c.get("/task"),
                     "error": c.get("/no-such-page")}
            for name, response in pages.items():
                parser = _Visible()
                parser.feed(response.text)
                assert parser.root == {"lang": lang, "dir": "rtl" if lang == "ar" else "ltr"}, name
                words = {w for part in parser.parts for w in WORD.findall(part)} - outputs_text
                words -= {w for own in OWN[lang] for w in WORD.findall(own)}
                english = {w for w in words if w.lower() in forbidden or (lang != "de" and re.fullmatch(r"[A-Za-z]+", w))}
                assert not english, f"{lang} {name}: English words from humeval: {sorted(english)}"
            task = pages["task"].text
            assert {"de": "Absenden", "zh": "提交", "ar": "إرسال"}[lang] in task
            assert 'dir="auto"' in task and question in task
    finally:
        server.stop()
