"""`codeblanks platforms ...` and `codeblanks keys ...`: LTI administration from the shell."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from service.cli.command_context import Context

if TYPE_CHECKING:
    from service.lti.keys import KeyRing
    from service.settings import Settings
    from service.store import Store

# the heavy imports (SQLAlchemy, cryptography, pylti1p3) wait for a command that needs them,
# so that `codeblanks grade` starts fast


@contextmanager
def _store(settings: Settings) -> Iterator[Store]:
    from service.instance import prepare
    from service.store import Store
    from service.store.migrate import upgrade

    prepare(settings.instance_dir)
    store = Store(settings.database)
    try:
        upgrade(store)
        yield store
    finally:
        store.dispose()


@click.group()
def platforms() -> None:
    """Register LMS platforms (Moodle, Canvas, ...) by hand."""


@platforms.command("add")
@click.option("--issuer", required=True, help="The platform's issuer (iss), e.g. its URL.")
@click.option("--client-id", required=True, help="The client id the LMS gave this tool.")
@click.option(
    "--deployment-id",
    "deployment_ids",
    multiple=True,
    required=True,
    help="A deployment id (repeat for several).",
)
@click.option("--auth-login-url", required=True, help="The platform's OIDC auth endpoint.")
@click.option("--auth-token-url", required=True, help="The platform's OAuth2 token endpoint.")
@click.option("--key-set-url", required=True, help="The platform's public keys (JWKS).")
@click.option("--name", default="", help="A name for admins.")
@click.option(
    "--token-audience",
    default=None,
    help="The `aud` the token endpoint wants in the tool's client assertion, when it is not "
    "the token URL (Brightspace: its OAuth2 Audience).",
)
@click.option(
    "--auto-add-deployments",
    is_flag=True,
    help="Accept deployments not listed here when launches bring them.",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Change the URLs of a platform registered already with this issuer and client id.",
)
@click.pass_obj
def platforms_add(obj: Context, /, replace: bool, **fields: Any) -> None:
    """Register a platform (or add deployments to one already registered)."""
    from service.lti import registration
    from service.store.platform_rows import PlatformFields

    # click passes each option by its name, and the options are named as PlatformFields's
    # fields: the record is made here, once, and travels whole
    platform = PlatformFields(**fields)
    with _store(obj.settings) as store:
        try:
            found = registration.add_platform(store, platform, replace=replace)
        except ValueError as exc:
            click.echo(f"codeblanks: {exc}", err=True)
            sys.exit(2)
    click.echo(
        f"registered platform {found.id}: {found.name} ({found.issuer}), client id "
        f"{found.client_id}, deployments {', '.join(found.deployment_ids)}"
    )
    click.echo(
        f"after a first launch from a course, test it: codeblanks platforms check {found.id}"
    )


@platforms.command("register-url")
@click.option("--name", default="", help="A name for the platform it registers.")
@click.option(
    "--valid-hours",
    type=int,
    default=24,
    show_default=True,
    help="Hours until the URL expires, up to 720 (it works once).",
)
@click.option(
    "--replace",
    "replaces_id",
    type=int,
    help="The id of a registered platform whose URLs this registration may change.",
)
@click.pass_obj
def platforms_register_url(
    obj: Context, name: str, valid_hours: int, replaces_id: int | None
) -> None:
    """Print a single-use URL for an LMS's dynamic registration (the tool URL to paste).

    Moodle: Site administration > Plugins > Activity modules > External tool > Manage tools,
    paste it as the tool URL, then "Add LTI Advantage".
    """
    from service.lti import registration
    from service.store.models import utcnow

    with _store(obj.settings) as store:
        try:
            url = registration.registration_url(
                store,
                obj.settings.base_url,
                name=name,
                valid_hours=valid_hours,
                replaces_id=replaces_id,
                now=utcnow(),
            )
        except ValueError as exc:
            click.echo(f"codeblanks: {exc}", err=True)
            sys.exit(2)
    click.echo(url)


@platforms.command("list")
@click.pass_obj
def platforms_list(obj: Context) -> None:
    """List registered platforms with their deployments."""
    from service.lti import registration

    with _store(obj.settings) as store:
        found = registration.list_platforms(store)
    if not found:
        click.echo("no platforms registered (codeblanks platforms add --help)")
    for p in found:
        click.echo(
            f"{p.id}\t{p.name}\t{p.issuer}\tclient {p.client_id}\t"
            f"deployments {','.join(p.deployment_ids) or '-'}"
            + ("\t(adds deployments)" if p.auto_add_deployments else "")
            + (f"\ttoken audience {p.token_audience}" if p.token_audience else "")
        )


@platforms.command("check")
@click.argument("platform_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def platforms_check(obj: Context, platform_id: int, as_json: bool) -> None:
    """Self-test a platform: what it granted, a throwaway line item and score, the traps.

    Exit 0 when grades can be sent, 1 when a trap blocks them, 2 for an unknown platform.
    """
    import json

    from core.lessons import Catalog
    from service.lti import self_test
    from service.lti.tool import make_context

    with _store(obj.settings) as store:
        # the self-test reads no lesson: an empty catalog spares loading them all
        lti = make_context(obj.settings, store, Catalog({}, {}))
        found = self_test.run(lti, platform_id)
    if found is None:
        click.echo(f"codeblanks: no platform {platform_id}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps({"platform_id": platform_id, **found.to_json()}))
    else:
        for check in found.checks:
            click.echo(f"{check.status.value:8}{check.name:12}{check.words}")
        for trap in found.traps:
            blocks = "blocks grades" if trap.blocks_grades else "warning"
            click.echo(f"trap    {trap.id} ({blocks}): {trap.words}\n        fix: {trap.fix}")
        click.echo("grades can be sent" if found.grades_ok else "grades cannot be sent")
    sys.exit(0 if found.grades_ok else 1)


@platforms.command("remove")
@click.argument("platform_id", type=int)
@click.pass_obj
def platforms_remove(obj: Context, platform_id: int) -> None:
    """Remove a platform and everything recorded for it."""
    from service.lti import registration

    with _store(obj.settings) as store:
        if not registration.remove_platform(store, platform_id):
            click.echo(f"codeblanks: no platform {platform_id}", err=True)
            sys.exit(2)
    click.echo(f"removed platform {platform_id}")


@click.group()
def keys() -> None:
    """The tool's signing keys (published at /lti/jwks)."""


@keys.command("rotate")
@click.pass_obj
def keys_rotate(obj: Context) -> None:
    """Make a new signing key; the old one stays published for a grace period."""
    ring = _ring(obj.settings)
    old = ring.current()
    new = ring.rotate()
    click.echo(
        f"signing with {new.kid}; {old.kid} stays in /lti/jwks for {ring.grace_s // 3600} hours"
    )


@keys.command("list")
@click.pass_obj
def keys_list(obj: Context) -> None:
    """Show the published key ids, the signing one first."""
    for jwk in _ring(obj.settings).jwks()["keys"]:
        click.echo(jwk["kid"])


def _ring(settings: Settings) -> KeyRing:
    from service.instance import prepare
    from service.lti.keys import KeyRing

    return KeyRing(prepare(settings.instance_dir) / "keys")
