"""What the LMS calls and opens: OIDC login, launch, key set, configuration, dynamic
registration, and the lesson picker; the protocol itself is service.lti (no Flask)."""
