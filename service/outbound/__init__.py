"""Outbound requests: the one client, and the rule for which addresses it may reach."""

from service.outbound.addresses import Allowed, check_url, loopback
from service.outbound.client import MAX_BYTES, Client, OutboundError, Policy, Reason

__all__ = [
    "MAX_BYTES",
    "Allowed",
    "Client",
    "OutboundError",
    "Policy",
    "Reason",
    "check_url",
    "loopback",
]
