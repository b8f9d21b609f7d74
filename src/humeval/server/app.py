"""The Starlette application factory (nothing is created at import time).

``create_app(config)`` opens the store (already migrated and seeded by ``humeval serve``)
and mounts the JSON API, the participant pages, the admin pages and the static files.
``app_from_env()`` is the factory uvicorn calls in each worker process: it reads the
configuration file ``humeval serve`` wrote (:mod:`humeval.server.config`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from humeval.platforms.registry import platform_of
from humeval.server.admin import admin_routes
from humeval.server.api import api_routes
from humeval.server.battle import battle_routes, prompt_pool
from humeval.server.config import ServerConfig
from humeval.server.errors import install_handlers
from humeval.server.guard import install_guard
from humeval.server.health import health_routes
from humeval.server.i18n import install_i18n
from humeval.server.pages import page_routes
from humeval.server.platform_entry import submission_check
from humeval.server.security import SecurityMiddleware
from humeval.server.throttle import TrustedProxies
from humeval.server.view import install_view
from humeval.store.alive import ALIVE_EVERY
from humeval.store.store import Store
from humeval.study import StudyFolder
from humeval.tasks import PARTIALS

__all__ = ["app_from_env", "create_app"]

HERE = Path(__file__).parent
_log = logging.getLogger(__name__)


def create_app(config: ServerConfig, store: Store | None = None) -> Starlette:
    """The web app for ``config``; ``store`` defaults to the study's store (must be prepared)."""
    study = StudyFolder.open(config.study_dir)
    store = store or Store.open(study, config.db, sqlite_sync=config.sqlite_sync)
    _ = store.context  # load protocol, tasks and texts now: the first request is not slower
    store.keep_alive()  # the service starts: a downtime since the last beat moves the leases it would have ended

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        beating = asyncio.create_task(_beat(store))
        yield
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
        store.close()

    # the templates are the package's: not checked for changes on every page (auto_reload); the task types'
    # partials are included as tasks/<type>.html
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(HERE / "templates"),
                                  jinja2.PrefixLoader({"tasks": jinja2.FileSystemLoader(PARTIALS)})])
    env = jinja2.Environment(loader=loader, autoescape=True, auto_reload=False)
    protocol = store.context.protocol
    install_i18n(env, protocol.presentation.language, {c.name: c.question for c in protocol.criteria})
    install_view(env, protocol.presentation)
    routes = [*api_routes(), *page_routes(), *battle_routes(), *admin_routes(), *health_routes(), *_hook_routes(study, config, store),
              Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static")]
    app = Starlette(routes=routes, lifespan=lifespan,
                    middleware=[Middleware(SecurityMiddleware, allowed_origins=config.allowed_origins,
                                           public_url=config.public_url,
                                           trusted=TrustedProxies(config.trusted_proxies))])
    app.state.store = store
    app.state.config = config
    app.state.templates = Jinja2Templates(env=env)
    install_handlers(app)
    install_guard(app, config, store)
    app.state.submission_check = submission_check(study, config.check_entries)
    arena = protocol.arena
    if arena is not None and arena.models and (arena.prompts.typed or arena.prompts.file):
        # read the prompt file now: one that breaks the prompt rules stops the server, naming them
        app.state.prompt_pool = prompt_pool(store, study.root)
    return app


async def _beat(store: Store) -> None:
    """The process's heartbeat while it serves (:mod:`humeval.store.alive`): a beat every ``ALIVE_EVERY`` seconds,
    with or without requests, so that time the service runs idle counts as the participants' inactivity and only a
    time when no process ran is moved (the process reaps only while the beat is fresh). A beat that fails (the store
    unreachable) is logged and tried again at the next. Each beat also reaps (:meth:`Store.areap`): a quitter's place
    opens a lease after they stopped even when no participant asks for a task meanwhile."""
    while True:
        await asyncio.sleep(ALIVE_EVERY)
        try:
            await store.akeep_alive(beating=True)
            await store.areap()
        except Exception:  # noqa: BLE001 - the loop outlives a failed write: without beats the process stops reaping
            _log.exception("the heartbeat could not write to the store (%s); trying again in %g s", store.where,
                           ALIVE_EVERY)


def _hook_routes(study: StudyFolder, config: ServerConfig, store: Store) -> list[Any]:
    """The routes the study's platform's hooks call, when its hook secret is configured (none otherwise)."""
    if not config.hook_secret:
        return []
    return platform_of(study.protocol.platform.kind).hook_routes(
        study, config.hook_secret, db=config.db, first_delivery=store.first_delivery,
        forget_delivery=store.forget_delivery)


def app_from_env() -> Starlette:
    """uvicorn's ``--factory`` entry: the configuration from the file ``$HUMEVAL_SERVER_CONFIG_FILE`` names.

    The objects made so far (the protocol, the task and text caches of every item) live as long as the
    server process: they are moved out of the garbage collector's reach (:func:`gc.freeze`), so that no
    later full collection walks them again (for a study of 30,000 items, a full collection of a worker
    took tens of milliseconds, and every request in flight on the process waited for it)."""
    app = create_app(ServerConfig.from_env())
    gc.freeze()
    return app
