"""The end of a study on each platform: the completion (or screen-out) code and link, and the way out.

=============  ===========================================================================
``prolific``    ``https://app.prolific.com/submissions/complete?cc=<code>`` from the
                completion code (or the screen-out code), unless a URL is given
``connect``     the project's completion redirect URL (``completion_url``) and/or its
                completion code; ``screenout_url`` for Connect's partial-complete redirect
``sona``        SONA's client-side completion URL with ``survey_code`` set to the
                participant's survey code (their id), which grants the credit
``panel``       ``completion_url`` / ``screenout_url`` with ``{participant_id}`` replaced
                (on every platform: a URL with the placeholder gets the id there)
``local``       the completion code and URL, if any
=============  ===========================================================================

A participant who failed the attention checks (the protocol's ``attention`` rule) gets the
screen-out code and link when the protocol declares one, else the completion ones.
"""

from __future__ import annotations

from urllib.parse import quote

from humeval.platforms.registry import platform_of
from humeval.protocol.models import Platform

__all__ = ["completion_json", "return_link"]

PLACEHOLDER = "{participant_id}"


def _personal(platform: Platform, url: str, participant_id: str) -> str:
    if not url or PLACEHOLDER in url:
        return url.replace(PLACEHOLDER, quote(participant_id, safe=""))
    return platform_of(platform.kind).personal_url(url, participant_id)


def completion_json(platform: Platform, participant_id: str = "", *, screened_out: bool = False) -> dict[str, str | bool]:
    """``{"code", "url", "screened_out"}``: what the participant is shown (and sent to) at the end."""
    out = screened_out and bool(platform.screenout_code or platform.screenout_url)
    code = platform.screenout_code if out and platform.screenout_code else platform.completion_code
    url = platform.screenout_url if out and platform.screenout_url else platform.completion_url
    if out and not platform.screenout_url and platform.screenout_code:
        url = ""  # a screen-out code without its own link: never send the participant to the completion link
    if not url:
        url = platform_of(platform.kind).completion_url(platform, code)  # Prolific's link from the code
    return {"code": code, "url": _personal(platform, url, participant_id), "screened_out": out}


def return_link(platform: Platform) -> str:
    """Where a participant who declines consent is sent back to (empty: nowhere; they close the page)."""
    return platform.return_url
