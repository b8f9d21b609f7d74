"""The collection web app: JSON API v1, participant pages, admin pages (Starlette + Jinja2).

Public API: :func:`create_app` (the app factory), :class:`ServerConfig`, :func:`openapi_spec`
(generated from the request and response models of :mod:`humeval.server.contract`), the
refusal the server raises before the store is asked (:class:`HttpError`), and the token
helpers :func:`make_invite` / :func:`make_token`.
"""

from humeval.server.app import app_from_env, create_app
from humeval.server.config import ServerConfig
from humeval.server.errors import HttpError
from humeval.server.openapi import openapi_spec
from humeval.server.tokens import make_invite, make_token

__all__ = ["HttpError", "ServerConfig", "app_from_env", "create_app", "make_invite", "make_token", "openapi_spec"]
