"""Prolific's hook subscriptions and the workspace's signing secret, as Prolific's API manages them.

=====================================================  ===============================================
request                                                what it does
=====================================================  ===============================================
``POST /api/v1/hooks/secrets/`` ``{workspace_id}``     creates the workspace's signing secret, or
                                                       replaces it (one per workspace): the value of
                                                       ``$PROLIFIC_HOOK_SECRET`` for ``humeval serve``
``GET /api/v1/hooks/secrets/?workspace_id=``           the workspace's secrets (ids; whether one exists)
``POST /api/v1/hooks/subscriptions/``                  subscribes a target URL to an event type; the
``{workspace_id, event_type, target_url}``             subscription is disabled until confirmed, and the
                                                       answer's ``X-Hook-Secret`` header confirms it
``POST /api/v1/hooks/subscriptions/{id}/`` ``{secret}``  the confirmation: the subscription is enabled
``GET /api/v1/hooks/subscriptions/?workspace_id=``     the workspace's subscriptions (``is_enabled=true``
                                                       and ``false`` asked for separately)
``DELETE /api/v1/hooks/subscriptions/{id}/``           removes a subscription
=====================================================  ===============================================

Sources: Prolific's API reference, "Webhooks" (docs.prolific.com/api-reference/webhooks/subscribing,
.../create-secret, .../create-subscription, .../confirm-subscription) and the prolific-oss/cli client
(``CreateHookSecret``, ``CreateHookSubscription`` reading ``X-Hook-Secret``, ``ConfirmHookSubscription``,
``GetHooks``, ``DeleteHookSubscription``). Prolific signs every delivery with the workspace secret
(:mod:`humeval.platforms.prolific.webhooks` verifies it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from humeval.platforms.prolific.client import ProlificClient, ProlificError

__all__ = [
    "DEFAULT_EVENTS",
    "HookSecret",
    "Subscription",
    "create_secret",
    "delete_subscription",
    "list_secrets",
    "list_subscriptions",
    "subscribe",
]

#: the event humeval's hook handles: a submission returned, timed out, submitted, approved ...
DEFAULT_EVENTS = ("submission.status.change",)
SECRETS = "/api/v1/hooks/secrets/"
SUBSCRIPTIONS = "/api/v1/hooks/subscriptions/"
HOOK_SECRET_HEADER = "x-hook-secret"


@dataclass(frozen=True)
class HookSecret:
    """The workspace's signing secret (``value`` is empty when listed: Prolific shows it at creation)."""

    id: str
    workspace_id: str
    value: str = ""


@dataclass(frozen=True)
class Subscription:
    id: str
    event_type: str
    target_url: str
    is_enabled: bool
    workspace_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Subscription:
        return cls(str(data.get("id", "")), str(data.get("event_type", "")), str(data.get("target_url", "")),
                   bool(data.get("is_enabled", False)), str(data.get("workspace_id", "")))


def _workspace(workspace_id: str) -> str:
    workspace_id = workspace_id.strip()
    if not workspace_id or any(c in workspace_id for c in "/?&#% "):
        raise ProlificError(f"workspace id: the id of a Prolific workspace (letters and digits, e.g. "
                            f"63519c1d5b139662f8cde482), got {workspace_id!r}")
    return workspace_id


def list_secrets(client: ProlificClient, workspace_id: str) -> list[HookSecret]:
    """The workspace's signing secrets (at most one is active)."""
    ws = _workspace(workspace_id)
    page = client.get(SECRETS, params={"workspace_id": ws}) or {}
    return [HookSecret(str(r.get("id", "")), str(r.get("workspace_id", ws)), "") for r in page.get("results", [])]


def create_secret(client: ProlificClient, workspace_id: str, *, replace: bool = False) -> HookSecret | None:
    """Create the workspace's signing secret; its ``value`` is what ``$PROLIFIC_HOOK_SECRET`` must hold.

    Prolific keeps one secret per workspace and a new one replaces the old at once, so a running
    server verifying with the old value would refuse every hook: unless ``replace``, a workspace
    that has a secret already is refused. None in a dry run.
    """
    ws = _workspace(workspace_id)
    if not replace and client.dry_run is None and list_secrets(client, ws):
        raise ProlificError(f"workspace {ws} has a hook secret already; creating one replaces it, and a server "
                            "verifying hooks with the old value would refuse them all. Use the value you kept, or "
                            "pass --replace and restart `humeval serve` with the new $PROLIFIC_HOOK_SECRET")
    made = client.post(SECRETS, {"workspace_id": ws})
    if client.dry_run is not None:
        return None
    if not isinstance(made, dict) or not made.get("value"):
        raise ProlificError(f"Prolific: POST {SECRETS} answered without a secret value: {str(made)[:200]}")
    return HookSecret(str(made.get("id", "")), str(made.get("workspace_id", ws)), str(made["value"]))


def _created(body: Any, event_type: str, target_url: str) -> dict[str, Any]:
    """The new subscription in the answer: the object itself, or the one of ``results`` that matches."""
    if isinstance(body, dict) and body.get("id"):
        return body
    rows = body.get("results", []) if isinstance(body, dict) else []
    found = [r for r in rows if isinstance(r, dict) and r.get("event_type") == event_type
             and r.get("target_url") == target_url and r.get("id")]
    if not found:
        raise ProlificError(f"Prolific: POST {SUBSCRIPTIONS} answered without the new subscription's id: {str(body)[:200]}")
    return found[-1]


def subscribe(client: ProlificClient, workspace_id: str, target_url: str,
              event_types: tuple[str, ...] = DEFAULT_EVENTS) -> list[Subscription]:
    """Subscribe ``target_url`` to each event type and confirm each subscription (enabled only then).

    The answer to the subscription carries the confirmation secret in its ``X-Hook-Secret``
    header; it is sent back to ``/api/v1/hooks/subscriptions/{id}/``. A subscription Prolific
    does not report as enabled after that raises :class:`ProlificError`. Empty in a dry run.
    """
    ws = _workspace(workspace_id)
    if not target_url.startswith("https://"):
        raise ProlificError(f"target URL: Prolific delivers hooks to a public https:// address only, got {target_url!r}")
    if not event_types:
        raise ProlificError("event types: give at least one (e.g. submission.status.change)")
    out: list[Subscription] = []
    for event in event_types:
        reply = client.send("POST", SUBSCRIPTIONS, body={"workspace_id": ws, "event_type": event,
                                                         "target_url": target_url})
        if client.dry_run is not None:
            client.post(f"{SUBSCRIPTIONS}<subscription id from the answer>/",
                        {"secret": "<X-Hook-Secret header of the answer>"})
            continue
        made = _created(reply.body, event, target_url)
        secret = reply.headers.get(HOOK_SECRET_HEADER, "")
        if not secret:
            raise ProlificError(f"Prolific: POST {SUBSCRIPTIONS} answered without the X-Hook-Secret header that "
                                f"confirms subscription {made['id']}; it stays disabled (delete it with "
                                f"`humeval prolific hooks delete {made['id']}`)")
        confirmed = client.post(f"{SUBSCRIPTIONS}{made['id']}/", {"secret": secret})
        sub = Subscription.of({**made, **(confirmed if isinstance(confirmed, dict) else {})})
        if not sub.is_enabled:
            raise ProlificError(f"Prolific: subscription {sub.id} ({event}) is still disabled after its confirmation")
        out.append(sub)
    return out


def list_subscriptions(client: ProlificClient, workspace_id: str) -> list[Subscription]:
    """Every subscription of the workspace, enabled or not (an unconfirmed one is disabled)."""
    ws = _workspace(workspace_id)
    rows: list[Subscription] = []
    for enabled in ("true", "false"):
        query = urlencode({"workspace_id": ws, "is_enabled": enabled})
        rows += [Subscription.of(r) for r in client.pages(f"{SUBSCRIPTIONS}?{query}")]
    return rows


def delete_subscription(client: ProlificClient, subscription_id: str) -> None:
    """Remove a subscription (Prolific stops delivering to its target URL)."""
    sid = subscription_id.strip()
    if not sid or any(c in sid for c in "/?&#% "):
        raise ProlificError(f"subscription id: an id from `humeval prolific hooks list`, got {subscription_id!r}")
    client.delete(f"{SUBSCRIPTIONS}{sid}/")
