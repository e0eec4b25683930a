"""The framework-free domain: lessons, runs, output comparison, question scoring, grades.

Nothing here imports Flask, Celery, Redis, SQLAlchemy, Docker or pylti1p3.
"""
