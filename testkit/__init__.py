"""Helpers the tests and the benchmarks share: servers started and stopped, seeds, waits, fakes."""
