"""Outbound requests: the one client, and the rule for which addresses it may reach."""

from service.outbound.addresses import Allowed, check_url, loopback
from service.outbound.client import MAX_BYTES, Client, Policy
from service.outbound.reading import document
from service.outbound.refusals import (
    Fault,
    OutboundError,
    Reason,
    Unreadable,
    explain,
    status_of,
    unanswered,
)

__all__ = [
    "MAX_BYTES",
    "Allowed",
    "Client",
    "Fault",
    "OutboundError",
    "Policy",
    "Reason",
    "Unreadable",
    "check_url",
    "document",
    "explain",
    "loopback",
    "status_of",
    "unanswered",
]
