"""The URL-parameter panels with behaviour beyond their facts (SONA's completion link, a generic panel's id).

A URL-parameter panel (CloudResearch Connect, SONA Systems, a generic panel) sends each participant
to the study link with its parameters and takes them back at the end through a completion link;
places, payments and reviews are set on the panel (docs/panels.md). The study's own server, files and
Connect have nothing beyond their facts (:mod:`humeval.protocol.platform_kinds`): they are
:class:`~humeval.platforms.base.CrowdPlatform` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from humeval.platforms.base import CrowdPlatform

if TYPE_CHECKING:
    from humeval.protocol.models import Platform

__all__ = ["Panel", "Sona", "with_query"]


def with_query(url: str, key: str, value: str) -> str:
    """``url`` with the query parameter ``key`` set to ``value`` (replaced if present, else added)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != key]
    return urlunsplit(parts._replace(query=urlencode([*query, (key, value)])))


class Sona(CrowdPlatform):
    """SONA Systems: the completion link grants the credit."""

    def personal_url(self, url: str, participant_id: str) -> str:
        """SONA's client-side completion URL with ``survey_code`` set to the participant's survey code (their id),
        which grants the credit."""
        return with_query(url, "survey_code", participant_id) if url and participant_id else url


class Panel(CrowdPlatform):
    """A generic panel: the participant id's parameter is the protocol's."""

    def entry_fields(self, platform: Platform) -> tuple[str, ...]:
        """The protocol's ``platform.id_parameter``."""
        return (platform.id_parameter,)
