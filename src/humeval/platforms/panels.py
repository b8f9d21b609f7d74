"""The platforms without an API humeval drives: the study's own server, files, and URL-parameter panels.

A URL-parameter panel (CloudResearch Connect, SONA Systems, a generic panel) sends each participant
to the study link with its parameters and takes them back at the end through a completion link;
places, payments and reviews are set on the panel (docs/panels.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from humeval.platforms.base import CrowdPlatform

if TYPE_CHECKING:
    from humeval.protocol.models import Platform

__all__ = ["Connect", "Files", "Local", "Panel", "Sona", "with_query"]


def with_query(url: str, key: str, value: str) -> str:
    """``url`` with the query parameter ``key`` set to ``value`` (replaced if present, else added)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != key]
    return urlunsplit(parts._replace(query=urlencode([*query, (key, value)])))


class Local(CrowdPlatform):
    name, title = "local", "humeval's server"


class Files(CrowdPlatform):
    name, title = "files", "files"


class Connect(CrowdPlatform):
    name, title = "connect", "CloudResearch Connect"
    entry_parameters = ("participantId", "assignmentId", "projectId")


class Sona(CrowdPlatform):
    name, title = "sona", "SONA Systems"
    entry_parameters = ("id",)

    def personal_url(self, url: str, participant_id: str) -> str:
        """SONA's client-side completion URL with ``survey_code`` set to the participant's survey code (their id),
        which grants the credit."""
        return with_query(url, "survey_code", participant_id) if url and participant_id else url


class Panel(CrowdPlatform):
    name, title = "panel", "the panel"

    def entry_fields(self, platform: Platform) -> tuple[str, ...]:
        """The protocol's ``platform.id_parameter``."""
        return (platform.id_parameter,)
