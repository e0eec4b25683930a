"""Registered platforms (LMSs) and their deployments: found, saved, listed and removed."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from service.store.database import Store
from service.store.models import Deployment, Platform


@dataclass(frozen=True)
class PlatformFields:
    """A platform as its registration gives it: who it is, its deployments, its endpoints."""

    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    auth_login_url: str
    auth_token_url: str
    key_set_url: str
    name: str = ""
    auto_add_deployments: bool = False  # accept the deployments launches bring
    token_audience: str | None = None  # the assertion's `aud` when not the token URL


def get(session: Session, platform_id: int) -> Platform | None:
    """Return the platform, or None."""
    return session.get(Platform, platform_id)


def find(store: Store, platform_id: int) -> Platform | None:
    """Return the platform, read in a transaction of its own, or None."""
    with store.session() as session:
        return session.get(Platform, platform_id)


def with_issuer(store: Store, issuer: str, client_id: str | None) -> list[Platform]:
    """Return up to two platforms with the issuer (and client id, when given): one is a match,
    two say the issuer alone is ambiguous."""
    with store.session() as session:
        query = select(Platform).where(Platform.issuer == issuer)
        if client_id:
            query = query.where(Platform.client_id == client_id)
        return list(session.scalars(query.limit(2)))


def save(store: Store, fields: PlatformFields, *, replace: bool, only: int | None) -> int:
    """Store a platform, or add deployments to one; return its id, or raise ValueError.

    A registration that exists already keeps its URLs and settings unless `replace` says
    they may change; `only`, when given, is the one platform this call may touch.
    """
    issuer, client_id = fields.issuer, fields.client_id
    wanted = (
        fields.auth_login_url,
        fields.auth_token_url,
        fields.key_set_url,
        fields.auto_add_deployments,
        fields.token_audience or None,
    )
    with store.session() as session:
        platform = session.scalar(
            select(Platform).where(Platform.issuer == issuer, Platform.client_id == client_id)
        )
        if platform is None and only is not None:
            raise ValueError(
                f"this registration was to replace platform {only}, but the LMS registered "
                f"a new client id {client_id!r}; nothing was changed"
            )
        if platform is None:
            platform = Platform(issuer=issuer, client_id=client_id)
            platform.name = fields.name or urlsplit(issuer).hostname or issuer
            session.add(platform)
            replace = True
        elif only is not None and platform.id != only:
            raise ValueError(f"this registration may change platform {only} only")
        current = (
            platform.auth_login_url,
            platform.auth_token_url,
            platform.key_set_url,
            platform.auto_add_deployments,
            platform.token_audience,
        )
        if current != wanted and not replace:
            raise ValueError(
                f"platform {platform.id} ({platform.name}) is registered already with issuer "
                f"{issuer!r} and client id {client_id!r}, with other URLs or settings; they "
                "are kept. To change them, ask for it: `codeblanks platforms add --replace`, "
                "the admin page's replace box, or a registration URL made with "
                f"`codeblanks platforms register-url --replace {platform.id}`"
            )
        if replace:
            (
                platform.auth_login_url,
                platform.auth_token_url,
                platform.key_set_url,
                platform.auto_add_deployments,
                platform.token_audience,
            ) = wanted
            platform.name = fields.name or platform.name
        session.flush()
        known = set(
            session.scalars(
                select(Deployment.deployment_id).where(Deployment.platform_id == platform.id)
            )
        )
        for deployment_id in dict.fromkeys(fields.deployment_ids):
            if deployment_id not in known:
                session.add(Deployment(platform_id=platform.id, deployment_id=deployment_id))
        return platform.id


def with_deployments(store: Store) -> list[tuple[Platform, tuple[str, ...]]]:
    """Return every platform with its deployment ids, both in the order they were made."""
    with store.session() as session:
        platforms = list(session.scalars(select(Platform).order_by(Platform.id)))
        deployments = list(session.scalars(select(Deployment).order_by(Deployment.id)))
    return [
        (p, tuple(d.deployment_id for d in deployments if d.platform_id == p.id)) for p in platforms
    ]


def remove(store: Store, platform_id: int) -> bool:
    """Delete a platform (and, by cascade, its deployments and data); return if found."""
    with store.session() as session:
        platform = session.get(Platform, platform_id)
        if platform is None:
            return False
        session.delete(platform)
    return True


def knows_deployment(store: Store, platform_id: int, deployment_id: str) -> bool:
    """Return whether a deployment is registered, adding it if the platform opted in."""
    with store.session() as session:
        if session.scalar(
            select(Deployment.id).where(
                Deployment.platform_id == platform_id, Deployment.deployment_id == deployment_id
            )
        ):
            return True
        platform = session.get(Platform, platform_id)
        if platform is None or not platform.auto_add_deployments:
            return False
    try:
        with store.session() as session:
            session.add(Deployment(platform_id=platform_id, deployment_id=deployment_id))
    except IntegrityError:
        pass  # a concurrent launch added it first
    return True
