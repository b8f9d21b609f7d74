"""The end of a study on each platform: the completion code and where to send the participant."""

from __future__ import annotations

from urllib.parse import quote

from humeval.protocol.models import Platform

__all__ = ["PROLIFIC_COMPLETE", "completion_json"]

PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete?cc="


def completion_json(platform: Platform) -> dict[str, str]:
    """``{"code", "url"}``: Prolific gets its completion link built from the code when no URL is set."""
    url = platform.completion_url
    if not url and platform.kind == "prolific" and platform.completion_code:
        url = PROLIFIC_COMPLETE + quote(platform.completion_code)
    return {"code": platform.completion_code, "url": url}
