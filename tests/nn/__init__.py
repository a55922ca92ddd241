"""Tests of tracegrad.nn and tracegrad.optim (a package so that test module names do not clash)."""
