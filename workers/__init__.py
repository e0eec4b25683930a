"""Celery workers, the sandbox backends they run code in, and their tasks."""
