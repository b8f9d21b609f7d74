"""The crowd platforms by name (:data:`PLATFORMS`, the names ``platform.kind`` takes)."""

from __future__ import annotations

from humeval.errors import ProtocolError
from humeval.platforms.base import CrowdPlatform
from humeval.platforms.panels import Connect, Files, Local, Panel, Sona
from humeval.platforms.prolific.platform import Prolific
from humeval.registry import Registry

__all__ = ["PLATFORMS", "platform_of"]

PLATFORMS: Registry[CrowdPlatform] = Registry("platform", "platform.kind", error=ProtocolError)
PLATFORMS.add("local", Local(), summary="humeval's web server: people you invite, or anyone with the link")
PLATFORMS.add("prolific", Prolific(), summary="Prolific, driven through its REST API (`humeval prolific`)")
PLATFORMS.add("connect", Connect(), summary="CloudResearch Connect, a URL-parameter panel")
PLATFORMS.add("sona", Sona(), summary="SONA Systems, a URL-parameter panel granting credit")
PLATFORMS.add("panel", Panel(), summary="a generic URL-parameter panel (`platform.id_parameter`)")
PLATFORMS.add("files", Files(), summary="spreadsheets handed out, or judgements imported from files")


def platform_of(kind: str) -> CrowdPlatform:
    """The platform ``platform.kind`` names."""
    return PLATFORMS.get(kind)
