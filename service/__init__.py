"""The Flask LTI tool: app factory, LTI, student and teacher pages, JSON API, store, CLI."""
