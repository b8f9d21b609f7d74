"""The collection web app: JSON API v1, participant pages, admin pages (Starlette + Jinja2).

Public API: :func:`create_app` (the app factory), :class:`ServerConfig`,
:func:`openapi_spec`, and the token helpers :func:`make_invite` / :func:`make_token`.
"""

from humeval.server.app import app_from_env, create_app
from humeval.server.config import ServerConfig
from humeval.server.openapi import openapi_spec
from humeval.server.tokens import make_invite, make_token

__all__ = ["ServerConfig", "app_from_env", "create_app", "make_invite", "make_token", "openapi_spec"]
