"""The tool's LTI context: what the LTI views, the AGS poster and the roster reads share.

Made once per process: by the web app's factory and by the worker at its start. No Flask.
"""

from __future__ import annotations

from dataclasses import dataclass

import requests

from core.lessons import Catalog
from service.lti.keys import KeyRing
from service.lti.keysets import KeySets
from service.lti.services import PlatformAccess, TokenCache
from service.outbound import Client, Policy
from service.settings import Settings
from service.store.database import Store
from service.store.models import Platform


@dataclass
class LtiContext:
    """Everything the LTI views and the AGS poster share in one process."""

    settings: Settings
    store: Store
    catalog: Catalog
    keys: KeyRing
    key_sets: KeySets
    tokens: TokenCache
    http: requests.Session

    @property
    def base_url(self) -> str:
        """Return the tool's public base URL, without a trailing slash."""
        return self.settings.base_url.rstrip("/")

    @property
    def launch_url(self) -> str:
        """Return the URL every LTI message is sent to."""
        return self.base_url + "/lti/launch"

    @property
    def review_url(self) -> str:
        """Return the URL the LMS opens a student's work at (a launch, see service.lti.reviews)."""
        return self.base_url + "/lti/review"

    def access(self, platform: Platform) -> PlatformAccess:
        """Return what calls to this platform's services need."""
        return PlatformAccess(
            platform.id,
            platform.issuer,
            platform.client_id,
            platform.auth_token_url,
            self.keys.current(),
            platform.token_audience,
        )


def make_context(settings: Settings, store: Store, catalog: Catalog) -> LtiContext:
    """Make the LTI context from the settings, the store and the catalog."""
    http = Client(Policy.from_settings(settings))  # every outbound request goes through it
    return LtiContext(
        settings=settings,
        store=store,
        catalog=catalog,
        keys=KeyRing(settings.instance_dir / "keys"),
        key_sets=KeySets(http),
        tokens=TokenCache(),
        http=http,
    )
