"""The participant pages in the study's language (``presentation.language``).

Every participant-facing string of the templates, of the small script and of the error
texts is a gettext message (domain ``humeval``) with English msgids; the catalogues live
in ``server/locale/<lang>/LC_MESSAGES/humeval.po`` and are committed compiled (``.mo``,
so an installed package needs no build step; ``tests/unit/server/test_i18n.py`` fails when
a ``.mo`` is older than its ``.po`` or a message is untranslated). Regenerate with::

    python -m humeval.server.i18n   # extract humeval.pot, update every .po, compile every .mo

The messages of each task type (its attention check, what is valid beside a refused answer, its
template partial) live in its module, :mod:`humeval.tasks`, and are extracted with these; so are the refusals of an
arena's typed prompt (:data:`humeval.arena.prompts.MESSAGES`, shown through :func:`translations`).

Pages get ``lang`` and ``dir`` (``rtl`` for right-to-left languages); the admin pages stay
in English. Error texts: the store and the API refuse with English developer messages and
a ``code``; participants see the translated sentence of the code (:func:`participant_error`).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jinja2
from babel.support import NullTranslations, Translations
from markupsafe import Markup

from humeval.protocol.models import Criterion
from humeval.tasks import TASK_TYPES

__all__ = ["LANGUAGES", "RTL", "FieldProblem", "direction", "field_problem", "install_i18n", "own_messages",
           "participant_error", "translations"]

LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "humeval"
#: the languages with a shipped catalogue (English is the msgids themselves)
LANGUAGES = ("en", "de", "zh", "ar")
#: right-to-left scripts (a page in one of these languages has ``dir="rtl"``)
RTL = frozenset({"ar", "he", "fa", "ur", "yi"})


def direction(language: str) -> str:
    """``rtl`` or ``ltr`` for a language code (``ar-EG`` -> ``rtl``)."""
    return "rtl" if language.split("-")[0].lower() in RTL else "ltr"


@cache
def translations(language: str) -> NullTranslations:
    """The catalogue of ``language`` (English: the identity), with the task types' own translations of their
    messages (:attr:`humeval.tasks.TaskType.translations`)."""
    if language == "en":
        return NullTranslations()
    catalogue = Translations.load(str(LOCALE_DIR), [language], domain=DOMAIN)
    own = {msgid: text for entry in TASK_TYPES.entries()
           for msgid, text in entry.value.translations.get(language, {}).items()}
    if own and isinstance(catalogue, Translations):
        from babel.messages.catalog import Catalog
        from babel.messages.mofile import write_mo

        extra, compiled = Catalog(locale=language), io.BytesIO()
        for msgid, text in own.items():
            extra.add(msgid, text)
        write_mo(compiled, extra)
        compiled.seek(0)
        catalogue.merge(Translations(compiled, domain=DOMAIN))
    return catalogue


def own_messages() -> dict[str, set[str]]:
    """The messages each task type translates itself (:attr:`humeval.tasks.TaskType.translations`), by type."""
    return {e.name: set().union(*map(set, e.value.translations.values())) for e in TASK_TYPES.entries()
            if e.value.translations}


def _(message: str) -> str:
    """Mark ``message`` for extraction; translated where it is shown (:func:`participant_error`)."""
    return message


#: the participant-facing sentence of each refusal code (English msgids)
_ERRORS = {
    "no_session": _("Your session was not found. Please open the link you were given to start the study again; "
                    "your progress is kept."),
    "unknown_participant": _("Your session was not found. Please open the link you were given to start the study "
                             "again; your progress is kept."),
    "unauthorized": _("Your session was not found. Please open the link you were given to start the study again; "
                      "your progress is kept."),
    "invalid_confirmation": _("This confirmation is no longer valid. Please open your study link again."),
    "route_not_accepted": _("This study is entered only through the link you were given. Please open that link."),
    "entry_route_mismatch": _("Please enter the study the same way as the first time (with the same link)."),
    "entry_session_mismatch": _("You are already taking part in this study in another session. Please continue "
                                "with the link you opened first."),
    "no_platform_submission": _("Prolific has no place in this study reserved for you. Please open the study from "
                                "your Prolific account."),
    "invalid_invite": _("This invitation link is not valid. Please check that you opened the whole link."),
    "study_full": _("This study has all the participants it needs. Thank you for your interest."),
    "throttled": _("Too many people are starting at once. Please wait a minute and open the link again."),
    "too_many_new_participants": _("Too many people are starting at once. Please wait a minute and open the link "
                                   "again."),
    "entry_rate": _("Too many people are starting at once. Please wait a minute and open the link again."),
    "lease_expired": _("This task expired and was given to someone else. Please continue with the next task."),
    "lease_withdrawn": _("This task is no longer needed. Please continue with the next task."),
    "generation_pending": _("The two answers are not shown in full yet. Please wait for them, then vote."),
    "not_found": _("This page does not exist."),
}
_GENERIC = _("The request could not be processed. Please go back and try again.")
_ANSWER = _("Please answer this question: %(question)s")


def participant_error(code: str, field: str | None, questions: dict[str, str], language: str) -> str:
    """What a participant reads for a refusal ``code`` (in ``language``): for an invalid answer the
    question concerned, else the sentence of the code, else a generic sentence."""
    gettext = translations(language).gettext
    name = re.split(r"[.\[]", field.removeprefix("values."))[0] if field else ""
    if code == "invalid_value" and name in questions:
        return gettext(_ANSWER) % {"question": questions[name]}
    return gettext(_ERRORS.get(code, _GENERIC))


@dataclass(frozen=True)
class FieldProblem:
    """A refused answer as the task page shows it: ``criterion`` names the fieldset, ``input`` the
    form field (``name``, ``name.score``, ``name.2``), ``message`` says what is valid there;
    ``missing``: the form had no answer there."""

    criterion: str
    input: str
    message: str
    missing: bool = False


def field_problem(field: str | None, criteria: dict[str, Criterion], answers: dict[str, str],
                  language: str) -> FieldProblem | None:
    """Where a refused answer (the store's ``field``, e.g. ``values.naturalness`` or ``values.overall[1]``)
    is on the task page and what a participant reads beside it: "Please answer this question." when the
    form had nothing there, else what is valid for that criterion. None for a field that is not an answer."""
    gettext = translations(language).gettext
    m = re.fullmatch(r"values\.([A-Za-z][A-Za-z0-9_-]*)(?:\[(\d+)\]|\.(score|spans))?(?:\[.*)?", field or "")
    if m is None or m.group(1) not in criteria:
        return None
    c = criteria[m.group(1)]
    name = c.task.problem_input(c, m.group(2), m.group(3))
    if answers.get(name, "").strip() == "" and not name.endswith(".spans"):
        return FieldProblem(c.name, name, gettext(_("Please answer this question.")), missing=True)
    text = c.task.problem_text(c, name, gettext)
    return FieldProblem(c.name, name, text)


def _attention(criterion: dict[str, Any], language: str, expected: Any = None) -> str:
    """The attention check's instruction in ``language`` (the stored English text is for the researcher), asking
    for ``expected`` (the check's answer, :func:`humeval.design.lists.check_answers`; None: the criterion's first)."""
    return TASK_TYPES.get(criterion["type"]).attention_text(criterion, expected, translations(language).gettext)


def install_i18n(env: jinja2.Environment, language: str, questions: dict[str, str]) -> None:
    """Install the catalogue of ``language`` into ``env`` (``_()``, ``gettext()`` and ``ngettext()`` in templates) and
    the page globals ``ui_lang``, ``ui_dir``, ``error_text(code, field)`` and ``attention_text(criterion, expected)``.

    The gettext functions do what Jinja's i18n extension installs with ``newstyle=True`` in an autoescaped
    environment: the translated message is trusted markup, each variable is escaped into it, and ``%`` formatting
    always applies (``%%`` is a percent sign). They are plain functions, one call from the template, and each
    message is translated once (and, used without variables, formatted once). The extension makes three nested
    calls per message: with it a pairwise task page rendered in 451-487 µs, with these in 272-325 µs
    (docs/collection.md, Measuring; ``tests/unit/server/test_i18n.py`` compares what the two render)."""
    catalogue = translations(language)

    @lru_cache(maxsize=1024)
    def message(text: str) -> Markup:
        return Markup(catalogue.gettext(text))  # the study's catalogue: trusted, as the templates are

    @lru_cache(maxsize=1024)
    def alone(text: str) -> Markup:
        return message(text) % {}

    def gettext(text: str, **variables: Any) -> Markup:
        return message(text) % variables if variables else alone(text)

    def ngettext(singular: str, plural: str, num: int, **variables: Any) -> Markup:
        return Markup(catalogue.ngettext(singular, plural, num)) % {"num": num, **variables}

    env.globals.update(
        _=gettext, gettext=gettext, ngettext=ngettext, ui_lang=language, ui_dir=direction(language),
        error_text=lambda code, field=None: participant_error(code, field, questions, language),
        attention_text=lambda criterion, expected=None: _attention(criterion, language, expected),
    )


def _update_catalogues() -> None:  # pragma: no cover - a maintainer's command
    """Extract messages from the templates, the script's strings and this module; update and compile."""
    import subprocess
    import sys

    here = Path(__file__).parent
    cfg = here / "locale" / "babel.cfg"
    tasks = here.parent / "tasks"  # the task types' messages and partials
    prompts = here.parent / "arena" / "prompts.py"  # the refusals of a typed prompt (humeval.arena.prompts.MESSAGES)
    pot = LOCALE_DIR / f"{DOMAIN}.pot"
    babel = [sys.executable, "-m", "babel.messages.frontend"]
    subprocess.run([*babel, "extract", "-F", str(cfg), "--no-location", "--omit-header", "-o", str(pot), str(here),
                    str(tasks), str(prompts)],
                   check=True)
    owned = set().union(*own_messages().values())  # translated in their task type's module, not here
    if owned:
        from babel.messages.pofile import read_po, write_po

        with pot.open("rb") as fh:
            template = read_po(fh)
        for msgid in owned & {m.id for m in template}:
            template.delete(msgid)
        with pot.open("wb") as fh:
            write_po(fh, template, omit_header=True, no_location=True)
    for lang in LANGUAGES[1:]:
        po = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
        if po.exists():
            subprocess.run([*babel, "update", "-D", DOMAIN, "-i", str(pot), "-d", str(LOCALE_DIR), "-l", lang,
                            "--no-fuzzy-matching", "--omit-header"], check=True)
        else:
            subprocess.run([*babel, "init", "-D", DOMAIN, "-i", str(pot), "-d", str(LOCALE_DIR), "-l", lang], check=True)
    subprocess.run([*babel, "compile", "-D", DOMAIN, "-d", str(LOCALE_DIR), "--use-fuzzy"], check=True)


if __name__ == "__main__":  # pragma: no cover
    _update_catalogues()
