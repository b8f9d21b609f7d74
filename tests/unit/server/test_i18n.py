"""The participant UI catalogues: complete, compiled, current, placeholders kept; right-to-left languages."""

from __future__ import annotations

import re

import jinja2
import pytest
from babel.messages.extract import extract_from_dir, extract_from_file
from babel.messages.pofile import read_po
from babel.support import Translations

from humeval.server.i18n import (
    LANGUAGES,
    LOCALE_DIR,
    direction,
    install_i18n,
    own_messages,
    participant_error,
    translations,
)
from humeval.tasks import TASK_TYPES

PLACEHOLDER = re.compile(r"%\([a-z_]+\)s")
SERVER = LOCALE_DIR.parent


def _po(lang: str):  # type: ignore[no-untyped-def]
    with (LOCALE_DIR / lang / "LC_MESSAGES" / "humeval.po").open("rb") as fh:
        return read_po(fh, locale=lang)


def _extracted() -> set[str | tuple[str, str]]:
    """Every message id of the code: a string, or (singular, plural) for a message with plural forms."""
    method_map = [("**/templates/**.html", "jinja2"), ("**.py", "python")]
    options = {"**/templates/**.html": {"extensions": "jinja2.ext.i18n"}}
    # the server's templates and modules, and the task types' modules and partials (humeval.tasks)
    ids = [m[2] for root in (SERVER, SERVER.parent / "tasks") for m in extract_from_dir(str(root), method_map, options)]
    # and the refusals of a typed prompt (humeval.arena.prompts.MESSAGES)
    ids += [m[1] for m in extract_from_file("python", str(SERVER.parent / "arena" / "prompts.py"))]
    return {i if isinstance(i, str) else tuple(i[:2]) for i in ids if isinstance(i, str) or (len(i) >= 2 and all(i[:2]))}


def _catalogued() -> set[str | tuple[str, str]]:
    """The messages of the server's catalogues: every one extracted but those a task type translates itself."""
    return _extracted() - set().union(*own_messages().values())


def test_template_catalogue_is_current() -> None:
    with (LOCALE_DIR / "humeval.pot").open("rb") as fh:
        pot = {m.id for m in read_po(fh) if m.id}
    assert _catalogued() == pot, "run: python -m humeval.server.i18n"


def test_a_task_type_s_own_translations_cover_its_messages_in_every_language() -> None:
    assert own_messages()  # mqm translates its own
    extracted = _extracted()
    for name, owned in own_messages().items():
        task = TASK_TYPES.get(name)
        assert owned <= extracted, f"{name}: translates messages its module and partial do not have"
        for lang in LANGUAGES[1:]:
            mine = task.translations[lang]
            assert set(mine) == owned and all(mine.values()), (name, lang)
            for msgid, text in mine.items():
                assert sorted(PLACEHOLDER.findall(msgid)) == sorted(PLACEHOLDER.findall(text)), (name, lang, msgid)
                assert translations(lang).gettext(msgid) == text
        # the server's messages are still there beside them
        assert translations("de").gettext("Submit") != "Submit"


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_every_message_translated_compiled_and_placeholders_kept(lang: str) -> None:
    catalog = _po(lang)
    compiled = Translations.load(str(LOCALE_DIR), [lang], domain="humeval")
    ids = {m.id for m in catalog if m.id}
    assert ids == _catalogued()
    for m in catalog:
        if not m.id:
            continue
        forms = m.string if isinstance(m.string, tuple) else (m.string,)
        assert all(forms) and "fuzzy" not in m.flags, f"{lang}: untranslated {m.id!r}"
        source = m.id[-1] if isinstance(m.id, tuple) else m.id
        for form in forms:
            assert sorted(PLACEHOLDER.findall(source)) == sorted(PLACEHOLDER.findall(form)), (lang, m.id)
        if isinstance(m.id, tuple):
            shown = {compiled.ngettext(*m.id, n) for n in range(120)}
            assert shown == set(forms), f"{lang}: the .mo is older than the .po (python -m humeval.server.i18n)"
        else:
            assert compiled.gettext(m.id) == m.string, f"{lang}: the .mo is older than the .po (python -m humeval.server.i18n)"


def test_direction_and_errors() -> None:
    assert direction("ar") == "rtl" and direction("he") == "rtl" and direction("ar-EG") == "rtl"
    assert direction("de") == "ltr" and direction("zh") == "ltr"
    questions = {"fluency": "Wie flüssig?"}
    assert participant_error("invalid_value", "values.fluency", questions, "de") == "Bitte beantworten Sie diese Frage: Wie flüssig?"
    assert participant_error("lease_expired", "assignment_id", questions, "zh") == translations("zh").gettext(
        "This task expired and was given to someone else. Please continue with the next task.")
    assert participant_error("some_new_code", None, questions, "en").startswith("The request could not be processed")


#: the uses of the gettext functions the templates make: plain, with variables (one carrying markup, which is
#: escaped), a literal percent sign, and plural forms; each message but one is in the catalogues
_USES = """{{ _("Submit") }}|{{ gettext("Task %(n)s of %(total)s", n=3, total=10) }}|\
{{ _("Please check your answer to: %(question)s", question="<b>Wie & warum?</b>") }}|\
{{ _("Score from 0 (%(low)s) to 100 (%(high)s)", low=_("worst"), high="100%") }}|\
{{ _("A message of no catalogue, 100%% sure") }}|\
{% for n in (1, 2, 5) %}{{ ngettext("You have completed the study (%(num)s task).", \
"You have completed the study (%(num)s tasks).", n) }}{% endfor %}"""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_templates_gettext_is_jinjas_newstyle_gettext(lang: str) -> None:
    """``install_i18n``'s gettext functions render what Jinja's i18n extension (``newstyle=True``) renders."""
    ours = jinja2.Environment(autoescape=True)
    install_i18n(ours, lang, {})
    jinjas = jinja2.Environment(autoescape=True, extensions=["jinja2.ext.i18n"])
    jinjas.install_gettext_translations(translations(lang), newstyle=True)  # type: ignore[attr-defined]
    shown = ours.from_string(_USES).render()
    assert shown == jinjas.from_string(_USES).render()
    assert "&lt;b&gt;Wie &amp; warum?&lt;/b&gt;" in shown and "<b>" not in shown and "100% sure" in shown
    if lang != "en":
        assert translations(lang).gettext("Submit") in shown and "Submit|" not in shown
